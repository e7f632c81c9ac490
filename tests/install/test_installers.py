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

"""The recipes in ``contrib/`` for OpenStack-Ansible and Kolla, checked as
far as they can be here: on the wheel installed in a plain Horizon, what
each installer would do to it (no container is built and no playbook
runs; ``doc/source/install.md`` says so), and each one's WSGI script,
which freezes Horizon's objects once loaded, run and serving a page."""

import configparser
import os
import re
import subprocess

import yaml

from tests.install.conftest import FROZEN
from tests.install.conftest import LOCAL_SETTINGS
from tests.install.conftest import REGISTERED
from tests.install.conftest import ROOT
from tests.install.conftest import run

CONTRIB = os.path.join(ROOT, 'contrib')

# openstack-ansible-os_horizon, tasks/horizon_post_install_source.yml and
# vars/source_install.yml: the folders it searches and what it links.
OSA_DASHBOARDS = r'^.*(dashboard|ui)$'
OSA_PANELS = ('/enabled', '/conf', '/local/enabled')
OSA_SETTINGS = ('/local_settings.d', '/local/local_settings.d')
OSA_FILES = r'^_[0-9]{2,4}_.*.py$'
OSA_POLICIES = r'^.*_policy.(json|yaml)$'
# A page of Horizon's that needs no template compressed offline, nor a
# login: its JavaScript catalog.
CATALOG = '/i18n/js/horizon/'


def site_packages(python):
    return run([python, '-c', 'import sysconfig; '
                'print(sysconfig.get_paths()["purelib"])']).strip()


def found(folders, pattern):
    return sorted(os.path.join(folder, name)
                  for folder in folders if os.path.isdir(folder)
                  for name in os.listdir(folder) if re.match(pattern, name))


def osa_discovery(site):
    """What the role links, as ``(source, destination folder)`` pairs:
    destinations relative to ``openstack_dashboard``."""
    dashboards = [os.path.join(site, name) for name in os.listdir(site)
                  if re.match(OSA_DASHBOARDS, name) and
                  name != 'openstack_dashboard' and
                  os.path.isdir(os.path.join(site, name))]
    links = []
    for dashboard in dashboards:
        panels = [dashboard + path for path in OSA_PANELS]
        settings = [dashboard + path for path in OSA_SETTINGS]
        links += [(f, 'local/enabled') for f in found(panels, OSA_FILES)]
        links += [(f, 'local/local_settings.d')
                  for f in found(settings, OSA_FILES)]
        links += [(f, 'conf') for f in found(panels, OSA_POLICIES)]
    return links


def django_env():
    env = dict(os.environ,
               DJANGO_SETTINGS_MODULE='openstack_dashboard.settings')
    env.pop('PYTHONPATH', None)
    return env


def write_local_settings(dashboard, tmp_path):
    with open(os.path.join(dashboard.dashboard, 'local', 'local_settings.py'),
              'w') as settings:
        settings.write(LOCAL_SETTINGS % {'static': str(tmp_path / 'static'),
                                         'journal': str(tmp_path / 'j')})


def assert_working_panel(dashboard, tmp_path):
    python = dashboard.python
    checked = subprocess.run([python, '-m', 'django', 'check'],
                             env=django_env(), cwd=str(tmp_path),
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert 'orphan_dashboard.W' not in checked.stderr, checked.stderr
    out = run([python, '-c', REGISTERED], env=django_env(),
              cwd=str(tmp_path))
    assert '/admin/orphaned_allocations/' in out
    assert 'Orphaned Allocations' in out


def served(dashboard, script, tmp_path):
    """``script`` run as a WSGI server runs it: its application's class,
    whether the process froze anything, a page's status."""
    return run([dashboard.python, '-c', FROZEN, script, '', CATALOG],
               env=django_env(), cwd=str(tmp_path)).split()


def test_openstack_ansible_finds_the_enabled_file_and_the_snippet(
        dashboard, tmp_path):
    with open(os.path.join(CONTRIB, 'openstack-ansible',
                           'user_variables.yml')) as f:
        variables = yaml.safe_load(f)
    assert variables['horizon_user_pip_packages'] == ['orphan-dashboard']
    run(dashboard.pip + [str(dashboard.wheel)])
    # horizon_lib_dir: Horizon's site-packages, where the role finds
    # openstack_dashboard/wsgi.py.
    script = variables['horizon_lib_wsgi_file'].replace(
        '{{ horizon_lib_dir }}', site_packages(dashboard.python))
    links = osa_discovery(site_packages(dashboard.python))
    ours = {(os.path.relpath(src, site_packages(dashboard.python)), dest)
            for src, dest in links if '/orphan_dashboard/' in src}
    assert ours == {
        ('orphan_dashboard/enabled/'
         '_2170_admin_orphaned_allocations_panel.py', 'local/enabled'),
        ('orphan_dashboard/local_settings.d/_90_orphan_dashboard.py',
         'local/local_settings.d'),
        ('orphan_dashboard/conf/placement_policy.yaml', 'conf'),
    }
    made = []
    try:
        for src, dest in links:
            if '/orphan_dashboard/' not in src:
                continue
            target = os.path.join(dashboard.dashboard, dest,
                                  os.path.basename(src))
            if dest == 'conf' and os.path.exists(target):
                continue
            os.symlink(src, target)
            made.append(target)
        write_local_settings(dashboard, tmp_path)
        assert_working_panel(dashboard, tmp_path)
        assert served(dashboard, script, tmp_path) == [
            'WSGIHandler', 'True', '200', 'OK']
    finally:
        for path in made:
            os.remove(path)


def test_kolla_builds_the_panel_into_the_horizon_image(dashboard, tmp_path):
    conf = configparser.ConfigParser()
    conf.read(os.path.join(CONTRIB, 'kolla', 'kolla-build.conf'))
    section = conf['horizon-plugin-orphan-dashboard']
    assert section['type'] in ('url', 'git', 'local')
    assert section['location']
    with open(os.path.join(CONTRIB, 'kolla', 'template-overrides.j2')) as f:
        template = f.read()
    assert '{% extends parent_template %}' in template
    block = re.search(r'{% block horizon_footer %}(.*?){% endblock %}',
                      template, re.S).group(1)
    # One Dockerfile instruction: RUN, its lines continued by backslashes.
    assert block.strip().startswith('RUN ') and block.count('RUN ') == 1
    command = block.strip()[len('RUN '):].replace('\\\n', '').replace(
        '/var/lib/kolla/venv/bin/python', dashboard.python)
    # The image's pip install of plugins-archive, then the footer's RUN,
    # which adds to Horizon's own WSGI script (given back afterwards: the
    # plain Horizon is shared).
    run(dashboard.pip + [str(dashboard.wheel)])
    horizons = os.path.join(dashboard.dashboard, 'wsgi.py')
    with open(horizons) as f:
        original = f.read()
    write_local_settings(dashboard, tmp_path)
    assert served(dashboard, horizons, tmp_path) == [
        'WSGIHandler', 'False', '200', 'OK']
    try:
        run(['/bin/sh', '-c', command], cwd=str(tmp_path))
        local = os.path.join(dashboard.dashboard, 'local')
        assert os.path.exists(os.path.join(
            local, 'enabled', '_2170_admin_orphaned_allocations_panel.py'))
        assert os.path.exists(os.path.join(
            local, 'local_settings.d', '_90_orphan_dashboard.py'))
        assert_working_panel(dashboard, tmp_path)
        # What Kolla's uWSGI serves: openstack_dashboard.wsgi:application.
        assert served(dashboard, horizons, tmp_path) == [
            'WSGIHandler', 'True', '200', 'OK']
    finally:
        with open(horizons, 'w') as f:
            f.write(original)
