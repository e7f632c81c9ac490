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

"""The production install, as the README tells it, into a plain virtualenv:
an existing Horizon (27, or the series ``ORPHAN_INSTALL_REQUIREMENTS``
names), then this package with its dependencies (a real wheel, not
editable), which must leave Horizon and Django as they were; copy the
enabled file into openstack_dashboard/local/enabled/ and the settings
snippet into local_settings.d/, then Django's check, collectstatic and
offline compress; the panel must be registered and its journal created."""

import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
LOCAL_SETTINGS = '''
CACHES = {'default': {
    'BACKEND': 'django.core.cache.backends.locmem.LocMemCache'}}
STATIC_ROOT = %(static)r
COMPRESS_ENABLED = True
COMPRESS_OFFLINE = True
ORPHAN_AUDIT_JOURNAL_DIR = %(journal)r
'''
VERSIONS = '''
from importlib import metadata
print(metadata.version('horizon'), metadata.version('Django'))
'''
REGISTERED = '''
import django
django.setup()
from django.urls import reverse
import horizon
print(reverse('horizon:admin:orphaned_allocations:index'))
panel = horizon.get_dashboard('admin').get_panel('orphaned_allocations')
group = horizon.get_dashboard('admin').get_panel_group('compute')
assert panel in list(group), list(group)
print(panel.name)
from orphan_dashboard import journal
journal.ensure_ready()
'''


def run(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, (args, result.stdout[-3000:],
                                    result.stderr[-3000:])
    return result.stdout


def _versions(python):
    return run([python, '-c', VERSIONS]).strip()


def test_pip_install_into_a_plain_virtualenv(tmp_path):
    venv = tmp_path / 'venv'
    run([sys.executable, '-m', 'venv', str(venv)])
    python = str(venv / 'bin' / 'python')
    pip = [python, '-m', 'pip', 'install', '-q']
    older = os.environ.get('ORPHAN_INSTALL_REQUIREMENTS')
    if older:
        run(pip + ['-r', older])
    else:
        run(pip + ['-c', os.path.join(ROOT, 'constraints.txt'),
                   'horizon==27.0.0', 'Django<6'])
    dashboard_versions = _versions(python)
    wheels = tmp_path / 'wheels'
    run([python, '-m', 'pip', 'wheel', '-q', '--no-deps', '-w', str(wheels),
         ROOT])
    (wheel,) = wheels.iterdir()
    run(pip + [str(wheel)])
    assert _versions(python) == dashboard_versions
    contents = run([python, '-m', 'zipfile', '-l', str(wheel)])
    assert 'templates/orphaned_allocations/index.html' in contents
    assert 'orphan_dashboard/migrations/0001_initial.py' in contents
    assert 'orphan_dashboard/static/orphan_dashboard/js/sweep.js' in contents
    snippet = 'local/local_settings.d/_90_orphan_dashboard.py'
    assert 'orphan_dashboard/' + snippet in contents
    assert 'tests/' not in contents and 'sandbox/' not in contents

    dashboard = run([python, '-c', 'import openstack_dashboard, os; '
                     'print(os.path.dirname(openstack_dashboard.__file__))'
                     ]).strip()
    package = run([python, '-c', 'import orphan_dashboard, os; '
                   'print(os.path.dirname(orphan_dashboard.__file__))'
                   ]).strip()
    enabled = '_2170_admin_orphaned_allocations_panel.py'
    shutil.copy(os.path.join(package, 'enabled', enabled),
                os.path.join(dashboard, 'local', 'enabled', enabled))
    with open(os.path.join(dashboard, 'local', 'local_settings.py'),
              'w') as settings:
        settings.write(LOCAL_SETTINGS % {'static': str(tmp_path / 'static'),
                                         'journal': str(tmp_path / 'j')})
    env = dict(os.environ,
               DJANGO_SETTINGS_MODULE='openstack_dashboard.settings')
    env.pop('PYTHONPATH', None)
    django = [python, '-m', 'django']
    # Without the snippet the check names what is missing.
    unconfigured = subprocess.run(django + ['check'], env=env,
                                  cwd=str(tmp_path), capture_output=True,
                                  text=True)
    assert unconfigured.returncode != 0
    assert 'orphan_dashboard.E001' in unconfigured.stderr
    assert 'local_settings.d' in unconfigured.stderr
    shutil.copy(os.path.join(package, snippet),
                os.path.join(dashboard, 'local', 'local_settings.d',
                             os.path.basename(snippet)))
    run(django + ['check'], env=env, cwd=str(tmp_path))
    run(django + ['collectstatic', '--noinput', '-v', '0'], env=env,
        cwd=str(tmp_path))
    run(django + ['compress', '--force'], env=env, cwd=str(tmp_path))
    assert (tmp_path / 'static' / 'dashboard' / 'manifest.json').exists()
    out = run([python, '-c', REGISTERED], env=env, cwd=str(tmp_path))
    assert '/admin/orphaned_allocations/' in out
    assert 'Orphaned Allocations' in out
    assert (tmp_path / 'j' / 'journal.sqlite3').exists()
