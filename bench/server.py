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
in place of the three-compute cloud, and two more control calls:

    GET  /bench/info                    size, hosts, seeded verdicts, timings
    POST /bench/churn?count=N&seed=S    N servers created/deleted/migrated/
                                        evacuated now (rows + allocations)
"""
import argparse
import os
import sys

os.environ.setdefault('OS_NOVA_DISABLE_EVENTLET_PATCHING', '1')

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
                'cache_dir': cloud.cache_dir})
        if req.path == '/bench/churn' and req.method == 'POST':
            return control._json(cloud.churn(int(req.args['count']),
                                             int(req.args.get('seed', 0))))
        return super().dispatch(req)


class BenchRunning(up.Running):
    def start_control(self):
        from sandbox.cloud import _QuietHandler
        from werkzeug import serving
        self.control_server = serving.make_server(
            '127.0.0.1', self.ports['control'], BenchControl(self),
            threaded=True, request_handler=_QuietHandler)
        import threading
        threading.Thread(target=self.control_server.serve_forever,
                         daemon=True, name='bench-control').start()


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m bench.server')
    parser.add_argument('--size', type=int, required=True)
    parser.add_argument('--state-dir', required=True)
    parser.add_argument('--cache-dir', default=None)
    args = parser.parse_args(argv)
    args.incidents = []
    args.debug = False
    args.password = up.ADMIN_PASSWORD
    for name in ('keystone', 'nova', 'placement', 'control'):
        setattr(args, name + '_port', 0)

    from bench import cloud as bench_cloud
    from sandbox import cloud as sb_cloud

    def build(cells=1, neutron=None):
        # The bench cloud has no Neutron: ``neutron`` is always None here.
        bench_cloud.BenchCloud.size = args.size
        if args.cache_dir:
            bench_cloud.BenchCloud.cache_root = args.cache_dir
        tc = bench_cloud.BenchCloud('runTest')
        tc.NUMBER_OF_CELLS = cells
        tc.setUp()
        return tc
    sb_cloud.build = build
    up.Running = BenchRunning
    return up.main(args)


if __name__ == '__main__':
    sys.exit(main())
