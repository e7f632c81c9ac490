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

"""``python -m bench.server --size N``: the sandbox, with the bench cloud.

The sandbox's ``up`` (Keystone child, Nova API and Placement behind
keystonemiddleware, the control API) with :class:`bench.cloud.BenchCloud`
in place of the three-compute cloud (with ``--neutron``, the sandbox's
real Neutron too, its ports seeded by :mod:`bench.neutron`), and two more
control calls:

    GET  /bench/info                    size, hosts, seeded verdicts, timings
    POST /bench/churn?count=N&seed=S    N servers created/deleted/migrated/
                                        evacuated now (rows + allocations)
"""
import argparse
import os
import sys
import time

os.environ.setdefault('OS_NOVA_DISABLE_EVENTLET_PATCHING', '1')

from sandbox import common  # noqa: E402
from sandbox import control  # noqa: E402
from sandbox import up  # noqa: E402


class BenchControl(control.ControlApp):
    def dispatch(self, req):
        cloud = self.sb.cloud
        if req.path == '/bench/info' and req.method == 'GET':
            return control._json({
                'size': cloud.size, 'hosts': cloud.meta['hosts'],
                'expected': cloud.meta['expected'],
                'counts': cloud.meta['counts'],
                'seed_seconds': cloud.seed_seconds,
                'restored_seconds': cloud.restored_seconds,
                'neutron': cloud.meta.get('neutron'),
                'cache_dir': cloud.cache_dir})
        if req.path == '/bench/churn' and req.method == 'POST':
            return control._json(cloud.churn(int(req.args['count']),
                                             int(req.args.get('seed', 0))))
        return super().dispatch(req)


class BenchRunning(up.Running):
    def neutron_database(self):
        from bench import cloud as bench_cloud
        return bench_cloud.BenchCloud.cached_neutron_database()

    def report_agents(self, hosts, timeout=120):
        """Restored with Neutron's database: its agents and NIC providers
        are there already.  Otherwise each host's agent state report (until
        Neutron's placement plugin made the host's ``br-phys`` provider),
        then Neutron's ports seeded and every database cached."""
        cloud = self.cloud
        if cloud.meta.get('neutron'):
            common.wait_http(self.urls['neutron'] + '/', timeout,
                             self.neutron)
            self.nics = dict(cloud.meta['neutron']['nics'])
            return self.nics
        common.wait_http(self.urls['neutron'] + '/', timeout, self.neutron)
        pending = set(hosts)
        for _ in range(5):
            for host in sorted(pending):
                self.report_agent(host)
            pending = self._await_nics(pending, timeout)
            if not pending:
                break
            common.log('no br-phys provider for %d hosts yet: their agents '
                       'report again' % len(pending))
        if pending:
            raise TimeoutError('no br-phys provider in Placement for %s'
                               % ', '.join(sorted(pending)))
        from bench import neutron as bench_neutron
        cloud.meta['neutron'] = bench_neutron.seed(self)
        common.log('neutron seeded in %.1fs' % (
            cloud.meta['neutron']['seed_seconds']))
        cloud.save(cloud.cache_dir,
                   neutron=bench_neutron.database(self.state_dir))
        return self.nics

    def _await_nics(self, hosts, timeout):
        """The ``hosts`` whose ``br-phys`` provider is still missing after
        ``timeout`` (a report's sync can fail on sqlite's lock in
        Neutron's placement thread, then only a new report retries it);
        the others' go to ``nics``."""
        deadline = time.monotonic() + timeout
        pending = set(hosts)
        while pending and time.monotonic() < deadline:
            time.sleep(1)
            named = {rp['name']: rp['uuid'] for rp in self.api.placement(
                'GET', '/resource_providers', mv='1.14')[
                    'resource_providers']}
            for host in sorted(pending):
                uuid = named.get('%s:Open vSwitch agent:br-phys' % host)
                if uuid:
                    self.nics[host] = uuid
                    pending.discard(host)
        return pending

    def report_agent(self, host, tries=10):
        """Asked again after a 500: Neutron's placement plugin writes the
        sqlite database from its own thread meanwhile, which hundreds of
        reports in a row meet as "database is locked"."""
        import urllib.error
        for _ in range(tries - 1):
            try:
                return super().report_agent(host)
            except urllib.error.HTTPError as exc:
                if exc.code < 500:
                    raise
                common.log('agent report of %s -> %s, asked again' % (
                    host, exc.code))
                time.sleep(1)
        return super().report_agent(host)

    def start_control(self):
        from sandbox.cloud import _QuietHandler
        from werkzeug import serving
        self.control_server = serving.make_server(
            '127.0.0.1', self.ports['control'], BenchControl(self),
            threaded=True, request_handler=_QuietHandler)
        import threading
        threading.Thread(target=self.control_server.serve_forever,
                         daemon=True, name='bench-control').start()


def build(cells=1, neutron=None, pci=False, cyborg=None):
    """The bench cloud in place of :func:`sandbox.cloud.build`, called as
    ``up`` calls that.  Nova keeps its in-process NeutronFixture: no server
    is booted here, the audit reads the real Neutron itself; no compute
    service runs, so none reports PCI devices, and none boots a server
    with Cyborg's accelerators."""
    if pci:
        raise SystemExit('the bench cloud runs no compute service to report '
                         'PCI devices')
    if cyborg:
        raise SystemExit('the bench cloud boots no server to hold an '
                         'accelerator')
    from bench import cloud as bench_cloud
    tc = bench_cloud.BenchCloud('runTest')
    tc.NUMBER_OF_CELLS = cells
    tc.setUp()
    return tc


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m bench.server')
    parser.add_argument('--size', type=int, required=True)
    parser.add_argument('--state-dir', required=True)
    parser.add_argument('--cache-dir', default=None)
    parser.add_argument('--neutron', action='store_true',
                        help="a real Neutron, the bench's ports seeded")
    args = parser.parse_args(argv)
    args.neutron_port = 0
    args.incidents = []
    args.debug = False
    args.password = up.ADMIN_PASSWORD
    for name in ('keystone', 'nova', 'placement', 'control'):
        setattr(args, name + '_port', 0)

    from bench import cloud as bench_cloud
    from sandbox import cloud as sb_cloud

    bench_cloud.BenchCloud.size = args.size
    bench_cloud.BenchCloud.neutron = args.neutron
    if args.cache_dir:
        bench_cloud.BenchCloud.cache_root = args.cache_dir

    sb_cloud.build = build
    up.Running = BenchRunning
    return up.main(args)


if __name__ == '__main__':
    sys.exit(main())
