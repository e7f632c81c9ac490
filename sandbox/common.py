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

"""Small helpers shared by the sandbox processes (no OpenStack imports)."""
import ctypes
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request

PR_SET_PDEATHSIG = 1

SLOW_CELL_TIMEOUT = 5
"""Seconds Nova waits for each cell of a listing while a cell is slow
(``nova.context.CELL_TIMEOUT``, 60 in Nova, read at each call): the
sandbox's Horizon and ``openrc`` give the plugin the same
(``ORPHAN_AUDIT_NOVA_CELL_TIMEOUT``), so that it knows a listing that took
longer for one its timer may have cut."""

STUCK_MIGRATION_AGE = 1
"""``ORPHAN_AUDIT_STUCK_MIGRATION_AGE`` of the sandbox's Horizon and
``openrc``: its stuck migration is staged seconds before it is audited,
where a cloud waits an hour (no move under way in the sandbox goes a
second without its server's task set)."""

MAX_SHARE = 100
"""``ORPHAN_AUDIT_MAX_SHARE`` of ``orphan-audit`` against the sandbox
(its ``openrc``): the sandbox's consumers are mostly staged leftovers, far
past the share a command line takes unattended where none is set."""


ADMIN_AUTH = """auth_type = password
auth_url = {keystone}
username = admin
password = {password}
project_name = admin
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
"""
"""How a service of the sandbox (Neutron, Cyborg) logs in to Keystone,
Placement and Nova in its configuration file: as the sandbox's admin."""


def die_with_parent():
    """preexec_fn: have the kernel SIGTERM this child when its parent dies."""
    try:
        libc = ctypes.CDLL('libc.so.6', use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:  # pragma: no cover - not Linux
        pass


def port_free(port, host='127.0.0.1'):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        return True
    except OSError:
        return False
    finally:
        s.close()


EPHEMERAL = '/proc/sys/net/ipv4/ip_local_port_range'
OWN_PORTS = 20000
"""How many ports below the kernel's ephemeral range ours are drawn from."""


def free_port(host='127.0.0.1'):
    """A port free now, drawn at random below the kernel's ephemeral
    range: the caller's server binds it seconds later (a sandbox cloud
    after its imports), and a port the kernel gives out itself (to a
    server binding port 0, to a connection's own end) could be given to
    another process meanwhile, as it was when two test streams started
    their services at once."""
    try:
        with open(EPHEMERAL) as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    draw = random.SystemRandom()
    if low - OWN_PORTS > 1024:
        for _ in range(100):
            port = draw.randrange(low - OWN_PORTS, low)
            if port_free(port, host):
                return port
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def choose_port(wanted, taken=()):
    """The wanted port if free (0 means any), else a free one."""
    if wanted and wanted not in taken and port_free(wanted):
        return wanted
    while True:
        p = free_port()
        if p not in taken:
            return p


def wait_for_port(port, timeout=60, host='127.0.0.1', proc=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError('process exited with %s' % proc.returncode)
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError('nothing listening on %s:%s after %ss'
                       % (host, port, timeout))


def log(msg):
    sys.stderr.write('[sandbox] %s\n' % msg)
    sys.stderr.flush()


def write_json(path, data):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write('\n')
    os.replace(tmp, path)


def wait_http(url, timeout, proc):
    """Until ``url`` answers at all (any HTTP status); ``proc`` must live."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError('%s exited with %s' % (proc.args[0],
                                                      proc.returncode))
        try:
            urllib.request.urlopen(url, timeout=5)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError('nothing answers at %s' % url)


def copy_sqlite(source, target):
    """``source``'s SQLite database into ``target`` with SQLite's backup
    API: consistent while either is open elsewhere, in place (the target's
    other connections see the copy on their next transaction)."""
    with sqlite3.connect(source) as src, sqlite3.connect(target,
                                                         timeout=60) as dst:
        src.backup(dst)


def stop_process(proc, timeout):
    """SIGTERM ``proc``, and SIGKILL it if it has not exited in ``timeout``
    seconds."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def child_arguments():
    """The arguments ``up`` starts a service's child process with
    (``up.Running._child``)."""
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument('--state-dir', required=True)
    p.add_argument('--port', type=int, required=True)
    p.add_argument('--keystone-url', required=True)
    p.add_argument('--password', required=True)
    return p


def with_agent_hook(app, report):
    """A service's WSGI ``app`` plus the sandbox's agent hook: ``POST
    /_sandbox/agents/<host>`` (loopback, no token) answers ``report(host)``
    as JSON, what that host's agent would have reported."""
    prefix = '/_sandbox/agents/'

    def hooked(environ, start_response):
        path = environ.get('PATH_INFO', '')
        if not path.startswith(prefix):
            return app(environ, start_response)
        if environ['REQUEST_METHOD'] != 'POST':
            start_response('405 Method Not Allowed', [])
            return [b'']
        body = json.dumps(report(path[len(prefix):])).encode()
        start_response('200 OK', [('Content-Type', 'application/json'),
                                  ('Content-Length', str(len(body)))])
        return [body]
    return hooked


def serve_wsgi(app, port, name, path=''):
    """Serve a service's WSGI application on loopback until killed."""
    from werkzeug import serving
    server = serving.make_server('127.0.0.1', port, app, threaded=True)
    log('%s listening on http://127.0.0.1:%d%s' % (name, port, path))
    try:
        server.serve_forever()
    finally:
        server.server_close()
