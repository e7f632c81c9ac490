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

"""The production install, as ``doc/source/install.md`` tells it, into a plain
virtualenv: an existing Horizon (27, or the series
``ORPHAN_INSTALL_REQUIREMENTS`` names), then this package with its
dependencies (a real wheel, not editable), which must leave Horizon and
Django as they were; copy the enabled file into
openstack_dashboard/local/enabled/: Django's check passes with a warning,
the panel is registered and its journal written; then the settings snippet
into local_settings.d/: no warning, and collectstatic and offline compress
work."""

import os
import shutil
import subprocess

from tests.install.conftest import compress
from tests.install.conftest import LOCAL_SETTINGS
from tests.install.conftest import REGISTERED
from tests.install.conftest import run
from tests.install.conftest import versions


def test_pip_install_into_a_plain_virtualenv(dashboard, tmp_path):
    python = dashboard.python
    run(dashboard.pip + [str(dashboard.wheel)])
    assert versions(python) == dashboard.versions
    contents = run([python, '-m', 'zipfile', '-l', str(dashboard.wheel)])
    assert 'templates/orphaned_allocations/index.html' in contents
    assert 'orphan_dashboard/migrations/0001_initial.py' in contents
    assert 'orphan_dashboard/static/orphan_dashboard/js/sweep.js' in contents
    snippet = 'local_settings.d/_90_orphan_dashboard.py'
    assert 'orphan_dashboard/' + snippet in contents
    assert 'tests/' not in contents and 'sandbox/' not in contents

    local = os.path.join(dashboard.dashboard, 'local')
    package = run([python, '-c', 'import orphan_dashboard, os; '
                   'print(os.path.dirname(orphan_dashboard.__file__))'
                   ], cwd=str(tmp_path)).strip()
    assert package.startswith(os.path.dirname(dashboard.dashboard))
    enabled = '_2170_admin_orphaned_allocations_panel.py'
    shutil.copy(os.path.join(package, 'enabled', enabled),
                os.path.join(local, 'enabled', enabled))
    with open(os.path.join(local, 'local_settings.py'), 'w') as settings:
        settings.write(LOCAL_SETTINGS % {'static': str(tmp_path / 'static'),
                                         'journal': str(tmp_path / 'j')})
    env = dict(os.environ,
               DJANGO_SETTINGS_MODULE='openstack_dashboard.settings')
    env.pop('PYTHONPATH', None)
    django = [python, '-m', 'django']
    # The enabled file alone (what Kolla and OpenStack-Ansible copy): the
    # check passes, warning that the journal is this node's sqlite file.
    alone = subprocess.run(django + ['check'], env=env, cwd=str(tmp_path),
                           capture_output=True, text=True)
    assert alone.returncode == 0, alone.stderr
    assert 'orphan_dashboard.W001' in alone.stderr
    assert "DATABASES['orphan_journal']" in alone.stderr
    assert 'orphan_dashboard.E00' not in alone.stderr
    out = run([python, '-c', REGISTERED], env=env, cwd=str(tmp_path))
    assert '/admin/orphaned_allocations/' in out
    assert 'Orphaned Allocations' in out
    assert 'service-1 applied entries: 1' in out
    assert str(tmp_path / 'j' / 'journal.sqlite3') in out
    assert (tmp_path / 'j' / 'journal.sqlite3').exists()
    # With the snippet the journal is the settings' own: no warning.
    shutil.copy(os.path.join(package, snippet),
                os.path.join(local, 'local_settings.d',
                             os.path.basename(snippet)))
    checked = subprocess.run(django + ['check'], env=env, cwd=str(tmp_path),
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert 'no issues' in checked.stdout, checked.stderr
    assert 'orphan_dashboard.W' not in checked.stderr, checked.stderr
    run(django + ['collectstatic', '--noinput', '-v', '0'], env=env,
        cwd=str(tmp_path))
    compress(django[0], env=env, cwd=str(tmp_path))
    assert (tmp_path / 'static' / 'dashboard' / 'manifest.json').exists()
    out = run([python, '-c', REGISTERED], env=env, cwd=str(tmp_path))
    assert '/admin/orphaned_allocations/' in out
    # The snippet keeps the journal the app had chosen.
    assert 'service-1 applied entries: 2' in out
