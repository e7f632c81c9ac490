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

"""Keystone in its own process: set up sqlite + fernet, then serve.

    python -m sandbox.keystone_proc --state-dir DIR --port N --password PW

Run by ``python -m sandbox up``; not meant to be used alone.
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

from sandbox import common

CONF_TEMPLATE = """[DEFAULT]
debug = false
use_stderr = true
[database]
connection = sqlite:///{dir}/keystone.db
[token]
provider = fernet
expiration = 86400
[fernet_tokens]
key_repository = {dir}/fernet-keys
[fernet_receipts]
key_repository = {dir}/fernet-keys
[credential]
key_repository = {dir}/credential-keys
[identity]
password_hash_rounds = 4
[cache]
enabled = true
backend = oslo_cache.dict
[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
"""


def _manage_cmd(conf, *args):
    exe = os.path.join(os.path.dirname(sys.executable), 'keystone-manage')
    return [exe, '--config-file', conf] + list(args)


def keystone_manage(conf, *cmds):
    """Run keystone-manage commands concurrently; fail if any fails."""
    procs = [(c[0], subprocess.Popen(_manage_cmd(conf, *c),
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     preexec_fn=common.die_with_parent))
             for c in cmds]
    for name, p in procs:
        out, _ = p.communicate()
        if p.returncode:
            sys.stderr.write(out)
            raise SystemExit('keystone-manage %s failed (%s)'
                             % (name, p.returncode))


def _cache_dir(password):
    """A set-up keystone (db + keys) to copy instead of redoing
    keystone-manage; keyed by keystone version, admin password and the
    configuration (the admin's password hash is made with its rounds).
    SANDBOX_NO_CACHE=1 disables it."""
    if os.environ.get('SANDBOX_NO_CACHE'):
        return None
    from importlib import metadata
    try:
        version = metadata.version('keystone')
    except metadata.PackageNotFoundError:
        return None
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(
        os.path.expanduser('~'), '.cache')
    key = hashlib.sha256(
        (password + CONF_TEMPLATE).encode()).hexdigest()[:12]
    return os.path.join(base, 'orphan-dashboard-sandbox',
                        'keystone-%s-%s' % (version, key))


_PAYLOAD = ('keystone.db', 'fernet-keys', 'credential-keys')


def _copy_payload(src, dst):
    for name in _PAYLOAD:
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if os.path.isdir(s):
            shutil.copytree(s, d, dirs_exist_ok=True)
        else:
            shutil.copy2(s, d)


def setup(kdir, port, password):
    """db_sync, fernet/credential keys, bootstrap (admin, RegionOne).

    The identity endpoints are not bootstrapped here (they carry the port);
    ``sandbox.up`` creates them with the other catalog entries.
    """
    os.makedirs(kdir, exist_ok=True)
    conf = os.path.join(kdir, 'keystone.conf')
    with open(conf, 'w') as f:
        f.write(CONF_TEMPLATE.format(dir=kdir))
    for sub in ('fernet-keys', 'credential-keys'):
        os.makedirs(os.path.join(kdir, sub), mode=0o700, exist_ok=True)
    t0 = time.monotonic()
    cache = _cache_dir(password)
    if cache and os.path.isfile(os.path.join(cache, 'keystone.db')):
        _copy_payload(cache, kdir)
        common.log('keystone copied from cache %s in %.1fs'
                   % (cache, time.monotonic() - t0))
        return conf
    user = str(os.getuid())
    group = str(os.getgid())
    keystone_manage(conf, ('db_sync',),
                    ('fernet_setup', '--keystone-user', user,
                     '--keystone-group', group),
                    ('credential_setup', '--keystone-user', user,
                     '--keystone-group', group))
    keystone_manage(conf, ('bootstrap', '--bootstrap-password', password,
                           '--bootstrap-region-id', 'RegionOne'))
    common.log('keystone set up in %.1fs' % (time.monotonic() - t0))
    if cache:
        try:
            os.makedirs(os.path.dirname(cache), exist_ok=True)
            tmp = tempfile.mkdtemp(dir=os.path.dirname(cache))
            _copy_payload(kdir, tmp)
            try:
                os.rename(tmp, cache)
            except OSError:      # another sandbox filled it first
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError as e:
            common.log('not caching keystone: %s' % e)
    return conf


def serve(conf, port):
    os.environ['OS_KEYSTONE_CONFIG_FILES'] = conf
    sys.argv = ['keystone']          # keystone parses sys.argv
    from keystone.server import wsgi as ks_wsgi
    common.serve_wsgi(ks_wsgi.initialize_public_application(), port,
                      'keystone', path='/v3')


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--state-dir', required=True)
    p.add_argument('--port', type=int, required=True)
    p.add_argument('--password', required=True)
    a = p.parse_args()
    kdir = os.path.join(os.path.abspath(a.state_dir), 'keystone')
    conf = setup(kdir, a.port, a.password)
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve(conf, a.port)


if __name__ == '__main__':
    main()
