# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""What a repair leaves in Cyborg, on the sandbox with a real Cyborg and
Neutron (the ``neutron`` topology): a server booted through Nova with one
of Cyborg's FPGAs, then deleted behind Nova's back
(``accelerator_deleted_behind_nova``).  Its leftovers on host3 and on
host3's device provider are one delete; the panel's preview and
``orphan-audit apply`` name the ARQ Cyborg keeps bound to it and the call
that deletes it.  The repair writes nothing to Cyborg; the call shown,
run as printed, deletes the ARQ."""

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip('cyborg')

from orphan_dashboard.audit import model as m  # noqa: E402
from tests.e2e.conftest import audited  # noqa: E402
from tests.e2e.conftest import held  # noqa: E402
from tests.e2e.conftest import INDEX  # noqa: E402
from tests.e2e.conftest import module_cloud  # noqa: E402
from tests.e2e.conftest import orphan_audit  # noqa: E402

pytestmark = [pytest.mark.django_db(databases=['default', 'orphan_journal']),
              pytest.mark.topology('neutron')]
INCIDENT = 'accelerator_deleted_behind_nova'
cloud = module_cloud(INCIDENT)


def staged(cloud):
    """``(server, its ARQ, host3, host3's device provider)``."""
    entry = cloud.incidents[INCIDENT]
    (arq,) = entry['checks']['arqs']
    return (entry['servers'][0]['uuid'], arq, cloud.config['hosts']['host3'],
            cloud.config['cyborg']['devices']['host3'])


def arqs(clients, server):
    """``{uuid: state}`` of the ARQs Cyborg holds for ``server`` now."""
    body = clients.accelerator.get('/accelerator_requests',
                                   params={'instance': server}).json()
    return {a['uuid']: a['state'] for a in body['arqs']}


def test_the_panels_preview_names_the_bound_arq_and_its_call(cloud,
                                                             horizon):
    server, arq, host3, device = staged(cloud)
    clients = cloud.clients()
    assert set(held(clients, server)) == {host3, device}
    audited(horizon)
    preview = horizon.get(INDEX + 'repair/', {
        'sel': '%s:%s:%s' % (server, host3, m.DELETE)})
    assert preview.status_code == 200
    (row,) = preview.context['rows']
    assert row.plan.after == {}
    page = preview.content.decode()
    assert 'Cyborg keeps accelerator requests bound' in page
    assert '%s (Bound, device profile sb-fpga, on host3)' % arq in page
    assert 'accelerator_requests?instance=%s' % server in page
    assert arqs(clients, server) == {arq: 'Bound'}


def test_orphan_audit_apply_says_it_and_leaves_cyborg_to_the_call(
        cloud, tmp_path):
    server, arq, host3, device = staged(cloud)
    clients = cloud.clients()
    done = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                        '--provider', 'host3', '--only', 'deleted_instance')
    assert done.returncode == 4, done.stdout + done.stderr   # applied
    notes = [line for line in done.stdout.splitlines()
             if line.startswith('note: Cyborg keeps')]
    assert len(notes) == 1, done.stdout
    (note,) = notes
    assert arq in note
    assert held(clients, server) == {}
    assert arqs(clients, server) == {arq: 'Bound'}

    # The call the note shows, run as printed: the sandbox's admin has the
    # service role, as Nova's service user has it.
    command = re.search(r"with (curl .*), where SERVICE_TOKEN", note).group(1)
    env = dict(os.environ,
               OS_CLIENT_CONFIG_FILE=cloud.config['clouds_yaml'],
               OS_CLOUD='sandbox',
               PATH=os.path.dirname(sys.executable) + os.pathsep +
               os.environ.get('PATH', ''),
               SERVICE_TOKEN=clients.accelerator.session.get_token())
    env.pop('OS_AUTH_URL', None)
    ran = subprocess.run(['bash', '-c', command + ' -sSf'], env=env,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert arqs(clients, server) == {}
