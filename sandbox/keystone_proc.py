"""Keystone in its own process: set up sqlite + fernet, then serve.

    python -m sandbox.keystone_proc --state-dir DIR --port N --password PW

Run by ``python -m sandbox up``; not meant to be used alone.
"""
import argparse
import os
import subprocess
import sys
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
[cache]
enabled = false
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


def setup(kdir, port, password):
    os.makedirs(kdir, exist_ok=True)
    conf = os.path.join(kdir, 'keystone.conf')
    with open(conf, 'w') as f:
        f.write(CONF_TEMPLATE.format(dir=kdir))
    for sub in ('fernet-keys', 'credential-keys'):
        os.makedirs(os.path.join(kdir, sub), mode=0o700, exist_ok=True)
    url = 'http://127.0.0.1:%d/v3/' % port
    user = str(os.getuid())
    group = str(os.getgid())
    t0 = time.monotonic()
    keystone_manage(conf, ('db_sync',),
                    ('fernet_setup', '--keystone-user', user,
                     '--keystone-group', group),
                    ('credential_setup', '--keystone-user', user,
                     '--keystone-group', group))
    keystone_manage(conf, ('bootstrap', '--bootstrap-password', password,
                           '--bootstrap-admin-url', url,
                           '--bootstrap-internal-url', url,
                           '--bootstrap-public-url', url,
                           '--bootstrap-region-id', 'RegionOne'))
    common.log('keystone set up in %.1fs' % (time.monotonic() - t0))
    return conf


def serve(conf, port):
    os.environ['OS_KEYSTONE_CONFIG_FILES'] = conf
    sys.argv = ['keystone']          # keystone parses sys.argv
    from keystone.server import wsgi as ks_wsgi
    from werkzeug import serving
    app = ks_wsgi.initialize_public_application()
    server = serving.make_server('127.0.0.1', port, app, threaded=True)
    common.log('keystone listening on http://127.0.0.1:%d/v3' % port)
    try:
        server.serve_forever()
    finally:
        server.server_close()


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
