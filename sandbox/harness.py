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

"""Start a sandbox from tests.

    from sandbox.harness import Sandbox

    with Sandbox(incidents=['healthy']) as sb:
        sess = sb.admin_session()
        sb.stage('evacuation')
        print(sb.placement_audit()['output'])

pytest::

    @pytest.fixture(scope='module')
    def sandbox():
        yield from sandbox_fixture()

``Sandbox`` runs ``python -m sandbox up`` as a subprocess in its own session
with a temporary state dir and free ports, waits for ``SANDBOX READY`` and
kills the whole process group on ``stop()``.

One sandbox serves many modules: ``reset(incidents)`` puts Nova's and
Placement's databases back to a snapshot of those incidents staged on the
cloud as it started (staging them, then saving the snapshot, the first
time), in well under a second where starting a cloud takes a minute.
"""
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class SandboxError(RuntimeError):
    pass


class Sandbox:
    # The staged incidents saved as a snapshot once started, for reset().
    resettable = True

    def __init__(self, incidents=(), state_dir=None, timeout=180,
                 python=None, ports=None, keep_state=False, neutron=False,
                 cells=1, pci=False, cyborg=False):
        self.incidents = list(incidents)
        self.neutron = neutron
        self.pci = pci
        self.cyborg = cyborg
        self.cells = cells
        self.staged = None
        self._tmp = None
        if state_dir is None:
            self._tmp = tempfile.mkdtemp(prefix='sandbox-')
            state_dir = self._tmp
        self.state_dir = os.path.abspath(state_dir)
        self.timeout = timeout
        self.python = python or sys.executable
        self.ports = ports or {}
        self.keep_state = keep_state
        self.proc = None
        self.config = None
        self.output = []
        self.ready_seconds = None

    # -------------------------------------------------------- lifecycle
    def command(self):
        cmd = [self.python, '-m', 'sandbox', 'up',
               '--state-dir', self.state_dir,
               '--incidents', ','.join(self.incidents) or 'none']
        for name in ('keystone', 'nova', 'placement', 'control'):
            cmd += ['--%s-port' % name, str(self.ports.get(name, 0))]
        if self.neutron:
            cmd += ['--neutron',
                    '--neutron-port', str(self.ports.get('neutron', 0))]
        if self.cells != 1:
            cmd += ['--cells', str(self.cells)]
        if self.pci:
            cmd += ['--pci']
        if self.cyborg:
            cmd += ['--cyborg',
                    '--cyborg-port', str(self.ports.get('cyborg', 0))]
        return cmd

    def start(self):
        env = dict(os.environ)
        env['PYTHONPATH'] = REPO + os.pathsep + env.get('PYTHONPATH', '')
        env['PYTHONUNBUFFERED'] = '1'
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            self.command(), cwd=REPO, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True)
        ready = threading.Event()
        path = []

        def reader():
            for line in self.proc.stdout:
                self.output.append(line)
                if line.startswith('SANDBOX READY '):
                    path.append(line.split(' ', 2)[2].strip())
                    ready.set()
            ready.set()
        threading.Thread(target=reader, daemon=True).start()
        if not ready.wait(self.timeout) or not path:
            out = ''.join(self.output[-60:])
            self.stop()
            raise SandboxError('sandbox not ready after %ss:\n%s'
                               % (self.timeout, out))
        self.ready_seconds = time.monotonic() - t0
        self.reload()
        if self.resettable:
            self.staged = snapshot_name(self.incidents)
            self._ok('POST', '/snapshots/%s' % self.staged)
        return self

    def reload(self):
        with open(os.path.join(self.state_dir, 'sandbox.json')) as f:
            self.config = json.load(f)
        return self.config

    def pause(self):
        """Freeze the cloud's processes (Nova and Placement, Keystone,
        Neutron) between the test modules that use it: idle, its services'
        many threads still wake and take CPU from the tests that run."""
        self._signal(signal.SIGSTOP)

    def resume(self):
        """Thaw what :meth:`pause` froze."""
        self._signal(signal.SIGCONT)

    @contextlib.contextmanager
    def nova_and_placement_held(self):
        """Nova and Placement (and the control API: one process) frozen
        for the block, Keystone and Neutron still answering: Horizon still
        logs in and renders what it has, and a sweep waits on its first
        read, as on a cloud slow to answer, until the block ends."""
        self._signal(signal.SIGSTOP, group=False)
        try:
            yield self
        finally:
            self._signal(signal.SIGCONT, group=False)

    def _signal(self, signum, group=True):
        """``signum`` to the cloud's process group, or with ``group``
        False to its own process only (Nova and Placement)."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                (os.killpg if group else os.kill)(self.proc.pid, signum)
            except ProcessLookupError:
                pass

    def stop(self, timeout=20):
        self.resume()
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)   # whatever is left
            except ProcessLookupError:
                pass
            proc.wait()
        if self._tmp and not self.keep_state:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ---------------------------------------------------------- clients
    def _session(self, who):
        from keystoneauth1.identity import v3
        from keystoneauth1 import session as ks_session
        c = self.config[who]
        auth = v3.Password(auth_url=self.config['auth_url'],
                           username=c['username'], password=c['password'],
                           project_name=c['project_name'],
                           user_domain_name=c['user_domain_name'],
                           project_domain_name=c['project_domain_name'])
        return ks_session.Session(auth=auth)

    def admin_session(self):
        """keystoneauth1 session: admin user, project admin."""
        return self._session('admin')

    def member_session(self):
        """keystoneauth1 session: user member, role member in project demo."""
        return self._session('member')

    @property
    def nova_url(self):
        return self.config['nova']['url']

    @property
    def placement_url(self):
        return self.config['placement']['url']

    @property
    def neutron_url(self):
        return self.config['neutron']['url']

    def control(self, method, path, timeout=120):
        """Call the control API; returns (status, parsed JSON)."""
        url = self.config['control']['url'] + '/' + path.lstrip('/')
        req = urllib.request.Request(url, method=method.upper(),
                                     data=b'' if method.upper() == 'POST'
                                     else None)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read() or b'null')
        except urllib.error.HTTPError as e:
            body = e.read()
            try:
                return e.code, json.loads(body)
            except ValueError:
                return e.code, body.decode(errors='replace')

    def _ok(self, method, path):
        status, body = self.control(method, path)
        if status != 200:
            raise SandboxError('%s %s -> %s: %s\nthe sandbox said last:\n%s'
                               % (method, path, status, body,
                                  ''.join(self.output[-60:])))
        return body

    def stage(self, name):
        """Stage an incident; returns its manifest entry."""
        entry = self._ok('POST', '/incidents/%s' % name)
        self.reload()
        return entry

    def reset(self, incidents=()):
        """The cloud as it started with ``incidents`` staged in this
        order: their snapshot restored, or the first time the snapshot of
        the cloud as it started restored, ``incidents`` staged and their
        snapshot saved.  Keystone and the processes stay."""
        name = snapshot_name(incidents)
        status, body = self.control('POST', '/snapshots/%s/restore' % name)
        if status == 404:
            self._ok('POST', '/snapshots/%s/restore' % snapshot_name(()))
            for incident in expand(incidents):
                self.stage(incident)
            self._ok('POST', '/snapshots/%s' % name)
        elif status != 200:
            raise SandboxError('restoring %s -> %s: %s' % (name, status, body))
        self.staged = name
        return self.reload()

    def incidents_manifest(self):
        return self._ok('GET', '/incidents')

    def placement_audit(self):
        """{'exit_code': int, 'output': str} of nova-manage placement audit
        --verbose run against the sandbox's databases."""
        return self._ok('POST', '/nova-manage/placement-audit')

    def stop_compute(self, host):
        return self._ok('POST', '/computes/%s/stop' % host)

    def start_compute(self, host):
        return self._ok('POST', '/computes/%s/start' % host)

    def run_periodic(self, host):
        return self._ok('POST', '/periodic/%s' % host)


def expand(incidents):
    """Incident names (a comma list or a sequence) as ``up --incidents``
    reads them (:func:`incidents_names.parse`)."""
    from sandbox import incidents_names
    if not isinstance(incidents, str):
        incidents = ','.join(incidents)
    return incidents_names.parse(incidents)


SNAPSHOT_NAME_MAX = 120
"""Characters of a snapshot's name, which is a folder of the state dir (a
file name has at most 255 bytes): longer lists of incidents (the demo's)
are named by a digest of their order."""


def snapshot_name(incidents):
    """The snapshot of ``incidents`` staged in this order."""
    name = ','.join(expand(incidents)) or 'none'
    if len(name) <= SNAPSHOT_NAME_MAX:
        return name
    import hashlib
    return 'staged-%d-%s' % (len(expand(incidents)),
                             hashlib.sha256(name.encode()).hexdigest()[:16])


def sandbox_fixture(incidents=(), **kwargs):
    """Generator for a pytest fixture: ``yield from sandbox_fixture()``."""
    sb = Sandbox(incidents=incidents, **kwargs)
    sb.start()
    try:
        yield sb
    finally:
        sb.stop()
