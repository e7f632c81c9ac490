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

"""``python -m sandbox demo``: the sandbox with every incident, then Horizon.

With a real Neutron and Cyborg, and their incidents, unless
``--no-neutron``; with
``--cells 2``, Nova's second cell (host5, the ``second_cell`` incident) and
the control calls that take it down or slow, to see a partial audit beside
a healthy cell.

Horizon runs as ``django-admin runserver --insecure --noreload`` with
DJANGO_SETTINGS_MODULE=sandbox.horizon_settings in a child process.
Ctrl-C / SIGTERM stops Horizon and the sandbox.
"""
import os
import signal
import subprocess
import sys
import threading
import time

from sandbox import common
from sandbox import incidents_names

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PANEL = '/admin/orphaned_allocations/'


def horizon_command(port):
    return [sys.executable, '-c',
            'from django.core.management import execute_from_command_line;'
            'import sys; execute_from_command_line(sys.argv)',
            'runserver', '--insecure', '--noreload', '127.0.0.1:%d' % port]


def horizon_env(sandbox_json):
    env = dict(os.environ)
    env['PYTHONPATH'] = REPO + os.pathsep + env.get('PYTHONPATH', '')
    env['DJANGO_SETTINGS_MODULE'] = 'sandbox.horizon_settings'
    env['SANDBOX_JSON'] = sandbox_json
    return env


def up_command(args, state_dir):
    """The ``python -m sandbox up`` the demo runs: every demo incident,
    Neutron's and Cyborg's unless ``--no-neutron``, and with ``--cells 2``
    the second cell and its incident."""
    incidents = incidents_names.DEMO
    if args.neutron:
        incidents += incidents_names.NEUTRON + incidents_names.CYBORG
    if args.cells == 2:
        incidents += ('second_cell',)
    cmd = [sys.executable, '-m', 'sandbox', 'up',
           '--incidents', ','.join(incidents),
           '--state-dir', state_dir,
           '--keystone-port', str(args.keystone_port),
           '--nova-port', str(args.nova_port),
           '--placement-port', str(args.placement_port),
           '--control-port', str(args.control_port),
           '--password', args.password]
    if args.neutron:
        cmd += ['--neutron', '--neutron-port', str(args.neutron_port),
                '--cyborg', '--cyborg-port', str(args.cyborg_port)]
    if args.cells == 2:
        cmd += ['--cells', '2']
    return cmd


def cell_controls(args):
    """What takes cell2 down, slow and up again, as the demo prints it."""
    if args.cells != 2:
        return []
    return ['  cell2 (host5): curl -X POST http://127.0.0.1:%d/cells/cell2/%s'
            % (args.control_port, state) + note
            for state, note in (('down', '   (Nova cannot reach it)'),
                                ('slow', "   (it answers after Nova's cell "
                                         'timeout)'),
                                ('up', '     (back)'))]


def main(args):
    state_dir = os.path.abspath(args.state_dir)
    port = common.choose_port(args.port)
    if port != args.port:
        common.log('port %d is busy; Horizon will use %d' % (args.port, port))
    cmd = up_command(args, state_dir)
    env = dict(os.environ)
    env['PYTHONPATH'] = REPO + os.pathsep + env.get('PYTHONPATH', '')
    env['PYTHONUNBUFFERED'] = '1'
    children = []
    stopping = []

    def stop_all(*_):
        if stopping:
            return
        stopping.append(1)
        for p in reversed(children):
            if p.poll() is None:
                p.terminate()
        for p in reversed(children):
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def on_signal(signum, frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        sb = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                              text=True, preexec_fn=common.die_with_parent)
        children.append(sb)
        sandbox_json = None
        for line in sb.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            if line.startswith('SANDBOX READY '):
                sandbox_json = line.split(' ', 2)[2].strip()
                break
        if sandbox_json is None:
            sb.wait()
            return sb.returncode or 1

        def drain():   # echo the rest (endpoints) and never let the pipe fill
            for rest in sb.stdout:
                sys.stdout.write(rest)
                sys.stdout.flush()
        threading.Thread(target=drain, daemon=True).start()
        time.sleep(0.2)
        log = open(os.path.join(state_dir, 'horizon-server.log'), 'w')
        hz = subprocess.Popen(horizon_command(port), cwd=REPO,
                              env=horizon_env(sandbox_json), stdout=log,
                              stderr=subprocess.STDOUT,
                              preexec_fn=common.die_with_parent)
        children.append(hz)
        common.wait_http('http://127.0.0.1:%d/auth/login/' % port, 120, hz)
        import json
        with open(sandbox_json) as f:
            cfg = json.load(f)
        print('HORIZON READY http://127.0.0.1:%d/' % port)
        print('  log in as admin / %s (domain Default)'
              % cfg['admin']['password'])
        print('  panel: http://127.0.0.1:%d%s' % (port, PANEL))
        for line in cell_controls(args):
            print(line)
        print('  Ctrl-C stops everything')
        sys.stdout.flush()
        while True:
            for p in children:
                if p.poll() is not None:
                    common.log('%s exited (%s); stopping'
                               % ('sandbox' if p is sb else 'horizon',
                                  p.returncode))
                    return 1
            # keep draining the sandbox's stdout (it prints little)
            time.sleep(0.5)
    except KeyboardInterrupt:
        return 0
    finally:
        common.log('stopping Horizon and the sandbox')
        stop_all()
