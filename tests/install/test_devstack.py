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

"""The DevStack plugin's phases against a real Horizon laid out as DevStack
lays it out (``HORIZON_DIR/openstack_dashboard/local/``, its
``local_settings.py`` from the example), with a real memcached: ``stack
install`` and ``stack post-config``, then what DevStack's ``init_horizon``
runs (collectstatic, compress), Django's check, the panel registered and a
journal write in a throwaway MariaDB server, DevStack's database as the
stub of DevStack's functions gives it, and Horizon's site in Apache
pointed at the WSGI script that freezes Horizon's objects, which serves
the login page (``ORPHAN_DASHBOARD_GC_FREEZE=False`` leaves the site
alone); ``clean`` leaves ``local/`` as it found it."""

import os
import shutil
import subprocess

import pytest

from tests.install.conftest import compress
from tests.install.conftest import FROZEN
from tests.install.conftest import local_files
from tests.install.conftest import REGISTERED
from tests.install.conftest import ROOT
from tests.install.conftest import run
from tests import mariadb
from tests import memcached as memcached_server

# The panel's title in the Russian catalog, as Horizon's settings load it.
RUSSIAN = '''
import django
django.setup()
from django.utils import translation
translation.activate('ru')
print(translation.gettext('Orphaned Allocations'))
'''
# What DevStack's configure_horizon writes as Horizon's Apache site, from
# its files/apache-horizon.template: the lines about the WSGI script, the
# daemon's user, group and display name left out.
HORIZON_SITE = '''<VirtualHost *:80>
    WSGIScriptAlias /dashboard %(horizon)s/openstack_dashboard/wsgi.py
    WSGIDaemonProcess horizon processes=3 threads=10 home=%(horizon)s
    WSGIApplicationGroup %%{GLOBAL}
    WSGIProcessGroup horizon
    <Directory %(horizon)s/>
        Require all granted
    </Directory>
</VirtualHost>
'''
STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    'devstack_functions.sh')
# What DevStack's configure_horizon appends to the example settings.
DEVSTACK_SETTINGS = '''
WEBROOT = "/dashboard/"
COMPRESS_OFFLINE = True
ALLOWED_HOSTS = ["*"]
STATIC_ROOT = %r
'''

pytestmark = [
    memcached_server.MISSING,
    pytest.mark.skipif(mariadb.MISSING,
                       reason="Debian's mariadb-server is not installed")]


@pytest.fixture
def memcached():
    with memcached_server.running() as address:
        yield address


def plugin(env, *phase):
    """Source the stub, the plugin's settings and plugin.sh, as DevStack
    sources them, for one phase."""
    return run(['bash', '-ec', 'source "$1"; source devstack/settings; '
                'source devstack/plugin.sh "${@:2}"', 'devstack', STUB,
                *phase], env=env, cwd=ROOT)


def test_devstack_plugin_post_config_and_clean(dashboard, memcached,
                                               tmp_path):
    # What DevStack installs for Horizon's memcached and for MySQL.
    run(dashboard.pip + ['pymemcache', 'PyMySQL'])
    local = os.path.join(dashboard.dashboard, 'local')
    shutil.copy(os.path.join(local, 'local_settings.py.example'),
                os.path.join(local, 'local_settings.py'))
    with open(os.path.join(local, 'local_settings.py'), 'a') as settings:
        settings.write(DEVSTACK_SETTINGS % str(tmp_path / 'static'))
    env = dict(os.environ,
               DJANGO_SETTINGS_MODULE='openstack_dashboard.settings')
    env.pop('PYTHONPATH', None)
    django = [dashboard.python, '-m', 'django']
    # Horizon as DevStack leaves it before the plugin's post-config.
    run(django + ['check'], env=env, cwd=str(tmp_path))
    before = local_files(dashboard.dashboard)

    with mariadb.server() as socket:
        _stack_and_clean(dashboard, env, socket, memcached, tmp_path, before)


def _stack_and_clean(dashboard, env, socket, memcached, tmp_path, before):
    local = os.path.join(dashboard.dashboard, 'local')
    django = [dashboard.python, '-m', 'django']
    # What a previous stack left: recreate_database must drop it.
    left = mariadb.sql(socket, 'CREATE DATABASE orphan_journal; '
                       'CREATE TABLE orphan_journal.old (id INT)')
    assert left.returncode == 0, left.stderr
    devstack = dict(env, DEST=str(tmp_path), ORPHAN_DASHBOARD_DIR=ROOT,
                    HORIZON_DIR=os.path.dirname(dashboard.dashboard),
                    PYTHON=dashboard.python, STUB_MYSQL=mariadb.CLIENT,
                    STUB_MYSQL_SOCKET=socket,
                    ENABLED_SERVICES='key,n-api,placement-api,horizon',
                    MEMCACHE_SERVERS=memcached,
                    STUB_APACHE_CONF_DIR=str(tmp_path))
    site = tmp_path / 'horizon.conf'
    written_site = HORIZON_SITE % {'horizon': devstack['HORIZON_DIR']}
    site.write_text(written_site)
    try:
        plugin(devstack, 'stack', 'install')
        package = run([dashboard.python, '-c', 'import orphan_dashboard; '
                       'print(orphan_dashboard.__file__)'],
                      env=env, cwd=str(tmp_path))
        assert package.startswith(os.path.join(ROOT, 'orphan_dashboard'))
        plugin(devstack, 'stack', 'post-config')
        written = open(os.path.join(
            local, 'local_settings.d', '_85_orphan_dashboard_devstack.py'
        )).read()
        assert 'import pymysql' in written
        assert repr('mysql+pymysql://root@localhost/orphan_journal'
                    '?charset=utf8&unix_socket=' + socket) in written
        assert repr([memcached]) in written
        assert os.path.exists(os.path.join(
            local, 'enabled', '_2170_admin_orphaned_allocations_panel.py'))

        checked = subprocess.run(django + ['check'], env=env,
                                 cwd=str(tmp_path), capture_output=True,
                                 text=True)
        assert checked.returncode == 0, checked.stderr
        assert 'orphan_dashboard.' not in checked.stderr, checked.stderr
        # DevStack's init_horizon; compress goes through memcached.
        run(django + ['collectstatic', '--noinput', '-v', '0'], env=env,
            cwd=str(tmp_path))
        compress(django[0], env=env, cwd=str(tmp_path))
        assert (tmp_path / 'static' / 'dashboard' / 'manifest.json').exists()
        out = run([dashboard.python, '-c', REGISTERED], env=env,
                  cwd=str(tmp_path))
        assert '/admin/orphaned_allocations/' in out
        assert 'service-1 applied entries: 1' in out
        # compilemessages ran: the panel speaks Russian.
        out = run([dashboard.python, '-c', RUSSIAN], env=env,
                  cwd=str(tmp_path))
        assert out.strip() == 'Осиротевшие выделения'
        # In MariaDB, read with its own client: the old table is gone.
        tables = mariadb.sql(socket, 'SHOW TABLES FROM orphan_journal')
        assert 'orphan_dashboard_journalentry' in tables.stdout
        assert 'old' not in tables.stdout.split()
        rows = mariadb.sql(socket, 'SELECT subject, status FROM '
                           'orphan_journal.orphan_dashboard_journalentry')
        assert rows.stdout.split()[-2:] == ['service-1', 'applied']
        # Apache's Horizon: its script in local/, the site pointed at it.
        script = os.path.join(local, 'horizon_frozen.wsgi')
        assert site.read_text() == written_site.replace(
            '/dashboard %s/openstack_dashboard/wsgi.py' %
            devstack['HORIZON_DIR'], '/dashboard ' + script)
        out = run([dashboard.python, '-c', FROZEN, script,
                   '/dashboard', '/auth/login/'], env=env, cwd=str(tmp_path))
        assert out.split() == ['WSGIHandler', 'True', '200', 'OK']

        plugin(devstack, 'clean')
        assert local_files(dashboard.dashboard) == before

        site.write_text(written_site)
        plugin(dict(devstack, ORPHAN_DASHBOARD_GC_FREEZE='False'),
               'stack', 'post-config')
        assert site.read_text() == written_site
        assert not os.path.exists(script)
        plugin(devstack, 'clean')
    finally:
        run(dashboard.pip[:-2] + ['uninstall', '-y', 'orphan-dashboard'])
