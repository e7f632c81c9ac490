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

"""Horizon served as the distributions serve it: Debian's ``apache2`` with
``libapache2-mod-wsgi-py3``, under ``WEBROOT = '/dashboard/'``, its static
files offline-compressed and served by Apache itself.

A private Apache instance (its configuration, logs, pid and sockets in a
directory of its own, listening on a free loopback port) in front of the
browser tier's sandbox cloud.  Apache's request limits stay its defaults
(``LimitRequestLine`` 8190): what production rejects, this rejects.
"""

import json
import os
import pwd
import shutil
import signal
import subprocess
import sysconfig

from sandbox import common
from tests.browser import conftest

APACHE = '/usr/sbin/apache2'
MODULES = '/usr/lib/apache2/modules'
MOD_WSGI = os.path.join(MODULES, 'mod_wsgi.so')
WEBROOT = '/dashboard/'

CONFIG = """\
ServerRoot {root}
ServerName 127.0.0.1
Listen 127.0.0.1:{port}
PidFile {root}/apache2.pid
DefaultRuntimeDir {root}
ErrorLog {root}/error.log
LogFormat "%h \\"%r\\" %>s %b %D" brief
CustomLog {root}/access.log brief

LoadModule mpm_event_module {modules}/mod_mpm_event.so
LoadModule authz_core_module {modules}/mod_authz_core.so
LoadModule alias_module {modules}/mod_alias.so
LoadModule mime_module {modules}/mod_mime.so
LoadModule wsgi_module {modules}/mod_wsgi.so
TypesConfig /etc/mime.types
StartServers 1
ServerLimit 1
ThreadsPerChild 16
MaxRequestWorkers 16

WSGISocketPrefix {root}/wsgi
WSGIDaemonProcess horizon processes=1 threads=8 home={repo}
WSGIProcessGroup horizon
WSGIApplicationGroup %{{GLOBAL}}
WSGIScriptAlias {prefix} {root}/horizon.wsgi
Alias {prefix}/static {static}

<Directory {root}>
    <Files horizon.wsgi>
        Require all granted
    </Files>
</Directory>
<Directory {static}>
    Require all granted
</Directory>
"""

WSGI = """\
import site
import sys

# Debian's interpreter, this test's packages: the virtualenv's
# site-packages (its .pth files too) and the checkout come first, Debian's
# dist-packages not at all.
sys.path[:] = [p for p in sys.path if not p.endswith('dist-packages')]
_debian = list(sys.path)
site.addsitedir({site_packages!r})
sys.path[:] = {paths!r} + [p for p in sys.path if p not in _debian] + _debian

from django.core.wsgi import get_wsgi_application  # noqa: E402

application = get_wsgi_application()
"""


def available():
    return os.path.exists(APACHE) and os.path.exists(MOD_WSGI)


def _unprivileged():
    """The command prefix that runs Apache as a user other than root.

    Apache will not serve, nor mod_wsgi run Python, as root; but the
    checkout, the virtualenv's interpreter and the sandbox's state may be
    readable by root only.  In a user namespace mapping www-data's uid onto
    root's, Apache runs as www-data and reads these files as their owner.
    """
    if os.geteuid():
        return []
    www = pwd.getpwnam('www-data')
    return ['unshare', '--user', '--map-user=%d' % www.pw_uid,
            '--map-group=%d' % www.pw_gid]


class ApacheHorizon:
    """Horizon behind Apache under ``/dashboard/`` over ``sandbox``: its own
    process, cache, journal and static files (compressed for its webroot,
    their URLs under it)."""

    def __init__(self, sandbox, root):
        self.sandbox = sandbox
        self.config = sandbox.config
        self.root = root
        static = os.path.join(root, 'static')
        env = conftest.horizon_env(sandbox)
        env['SANDBOX_HORIZON_WEBROOT'] = WEBROOT
        env['SANDBOX_HORIZON_STATIC_ROOT'] = static
        settings = json.loads(env.get('SANDBOX_ORPHAN_SETTINGS') or '{}')
        settings['ORPHAN_AUDIT_JOURNAL_DIR'] = root
        env['SANDBOX_ORPHAN_SETTINGS'] = json.dumps(settings)
        conftest.collect_and_compress(env)
        paths = [p for p in env['PYTHONPATH'].split(os.pathsep) if p]
        with open(os.path.join(root, 'horizon.wsgi'), 'w') as script:
            script.write(WSGI.format(
                site_packages=sysconfig.get_paths()['purelib'],
                paths=paths))
        port = common.choose_port(0)
        conf = os.path.join(root, 'apache2.conf')
        with open(conf, 'w') as config:
            config.write(CONFIG.format(
                root=root, port=port, modules=MODULES, repo=conftest.ROOT,
                prefix=WEBROOT.rstrip('/'), static=static))
        self.url = 'http://127.0.0.1:%d%s' % (port, WEBROOT.rstrip('/'))
        self.proc = subprocess.Popen(
            _unprivileged() + [APACHE, '-f', conf, '-DFOREGROUND'],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
            start_new_session=True)
        try:
            common.wait_http(self.url + '/auth/login/', 120, self.proc)
        except Exception:
            self.stop()
            raise

    def log(self, name):
        with open(os.path.join(self.root, name)) as log:
            return log.read()

    def stop(self):
        """Apache, its children and mod_wsgi's daemon, whatever state the
        tests left them in; its logs go to the artifacts."""
        common.stop_process(self.proc, 20)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.makedirs(conftest.ARTIFACTS, exist_ok=True)
        for name in ('error.log', 'access.log'):
            path = os.path.join(self.root, name)
            if os.path.exists(path):
                shutil.copy(path, os.path.join(conftest.ARTIFACTS,
                                               'apache-' + name))
