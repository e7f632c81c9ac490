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

"""The quota charged by orphans against the sandbox's real Keystone
unified limits.

Two consumers Nova does not know hold resources on host3, one owned by
project ``admin``, one by ``demo``: both projects are charged.  With no
limit in Keystone their rows have none, and nothing fails.  Then the
compute service gets registered limits in RegionOne (the defaults Nova
enforces) and ``demo`` a limit of its own; a second region and another
service get limits of the same classes, which Nova in RegionOne never
applies.  The rows of the application layer (as the command line and
the panel build their clients) and ``orphan-audit report --by project``
then show ``demo``'s own limit and the RegionOne default for ``admin``.
"""

import json
import logging
import os
import uuid

import pytest

pytest.importorskip('nova')
pytest.importorskip('placement')
pytest.importorskip('keystone')

from orphan_dashboard.api import client  # noqa: E402
from orphan_dashboard.api import placement  # noqa: E402
from orphan_dashboard import conf  # noqa: E402
from orphan_dashboard.operations import capacity as capacity_ops  # noqa
from tests import clouds  # noqa: E402
from tests.e2e.conftest import orphan_audit  # noqa: E402

ALLOCATION = {'VCPU': 2, 'MEMORY_MB': 1024}


@pytest.fixture(scope='module')
def sb(request):
    """The run's sandbox; the limits and region this module puts in
    Keystone (not in a snapshot) removed after it."""
    sandbox = clouds.staged(request, ())
    yield sandbox
    for kind in ('limits', 'registered_limits'):
        for found in keystone(sandbox, 'GET', '/' + kind)[kind]:
            keystone(sandbox, 'DELETE', '/%s/%s' % (kind, found['id']))
    sandbox.admin_session().delete(
        sandbox.config['auth_url'] + '/regions/RegionTwo', raise_exc=False)


def keystone(sb, method, path, **kwargs):
    """Keystone's API as its admin."""
    response = sb.admin_session().request(
        sb.config['auth_url'] + path, method, raise_exc=False, **kwargs)
    assert response.status_code < 300, (path, response.text)
    return response.json() if response.text else None


def service_id(sb, kind):
    (service,) = keystone(sb, 'GET', '/services?type=%s' % kind)['services']
    return service['id']


@pytest.fixture(scope='module')
def projects(sb):
    """``{name: project id}``, each charged by an unknown consumer."""
    session = sb.admin_session()
    owners = {'admin': (session.get_project_id(), session.get_user_id()),
              'demo': (sb.config['member']['project_id'],
                       session.get_user_id())}
    connected = cli_clients(sb)
    for project, user in owners.values():
        placement.put_allocations(
            connected.placement, str(uuid.uuid4()),
            {sb.config['hosts']['host3']: ALLOCATION}, None, project, user)
    return {name: owner[0] for name, owner in owners.items()}


def cli_clients(sb):
    """The clients ``orphan-audit`` and the ``openstack`` plugin build."""
    os.environ['OS_CLIENT_CONFIG_FILE'] = sb.config['clouds_yaml']
    return client.for_cloud('sandbox')


def panel_clients(sb):
    """The clients the panel builds: the user's token at the endpoints of
    its catalog, the region none of them carries."""
    session = sb.admin_session()
    return client.for_credentials(client.Credentials(
        session.get_token(), sb.placement_url, sb.nova_url,
        client.keystone_root(sb.config['auth_url']), True), timeout=60)


def limits_by_layer(connected):
    """``{project id: limits}`` of the charged projects, as both front
    ends read them."""
    settings = conf.RunSettings(min_age=0, concurrency=4)
    _, found = capacity_ops.audit(connected, settings)
    return {row.project: row.limits
            for row in capacity_ops.projects(connected, found, settings)}


def limits_by_cli(sb, tmp_path):
    done = orphan_audit(sb, tmp_path, 'report', '--by', 'project', '--json',
                        '--min-age', '0')
    assert done.returncode == 3, (done.stdout, done.stderr)
    return {row['project_id']: row['limits']
            for row in json.loads(done.stdout)['projects']}


def ours(caplog):
    """What the plugin logged: a warning here is a limit not shown."""
    return [r.getMessage() for r in caplog.records
            if r.name.startswith('orphan_dashboard')]


def test_no_limits_in_keystone_no_limit_and_no_error(sb, projects, tmp_path,
                                                     caplog):
    caplog.set_level(logging.WARNING, logger='orphan_dashboard')
    nothing = {projects['admin']: {}, projects['demo']: {}}
    assert limits_by_layer(cli_clients(sb)) == nothing
    assert limits_by_layer(panel_clients(sb)) == nothing
    assert limits_by_cli(sb, tmp_path) == nothing
    assert ours(caplog) == []


def test_nova_s_limits_the_project_s_own_else_the_registered_default(
        sb, projects, tmp_path, caplog):
    compute = service_id(sb, 'compute')
    keystone(sb, 'POST', '/regions', json={'region': {'id': 'RegionTwo'}})

    def registered(service, region, name, limit):
        return {'service_id': service, 'region_id': region,
                'resource_name': name, 'default_limit': limit}

    keystone(sb, 'POST', '/registered_limits', json={'registered_limits': [
        registered(compute, 'RegionOne', 'class:VCPU', 20),
        registered(compute, 'RegionOne', 'class:MEMORY_MB', 40960),
        registered(compute, 'RegionOne', 'servers', 10),
        # Not what Nova enforces in RegionOne.
        registered(compute, 'RegionTwo', 'class:VCPU', 50),
        registered(service_id(sb, 'placement'), 'RegionOne',
                   'class:DISK_GB', 7)]})

    def limit(region, project, name, value):
        return {'service_id': compute, 'region_id': region,
                'project_id': project, 'resource_name': name,
                'resource_limit': value}

    keystone(sb, 'POST', '/limits', json={'limits': [
        limit('RegionOne', projects['demo'], 'class:VCPU', 4),
        limit('RegionTwo', projects['admin'], 'class:VCPU', 999)]})

    caplog.set_level(logging.WARNING, logger='orphan_dashboard')
    expected = {projects['demo']: {'VCPU': 4, 'MEMORY_MB': 40960},
                projects['admin']: {'VCPU': 20, 'MEMORY_MB': 40960}}
    assert limits_by_layer(cli_clients(sb)) == expected
    assert limits_by_layer(panel_clients(sb)) == expected
    assert limits_by_cli(sb, tmp_path) == expected
    assert ours(caplog) == []
