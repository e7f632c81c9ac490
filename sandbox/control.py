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

"""The control interface: a loopback JSON API for what no public API can do.

    POST /computes/<host>/stop | /computes/<host>/start
    POST /computes/<host>/unmap | /computes/<host>/map   (host mapping)
    POST /cells/<name>/down | /cells/<name>/slow | /cells/<name>/up
                                (up --cells 2: cell2)
    POST /instances/<uuid>/soft-delete-behind-nova
    POST /incidents/<name>      GET /incidents
    POST /snapshots/<name>      (Nova's and Placement's databases now)
    POST /snapshots/<name>/restore
    POST /nova-manage/placement-audit
    POST /periodic/<host>
    POST /shutdown
    GET  /                      (this list)
"""
import json
import logging
import traceback

from werkzeug import wrappers

LOG = logging.getLogger('sandbox.control')


def _json(data, status=200):
    return wrappers.Response(json.dumps(data, indent=2, sort_keys=True) + '\n',
                             status=status, mimetype='application/json')


class ControlApp:
    def __init__(self, sandbox):
        self.sb = sandbox   # sandbox.up.Running

    def __call__(self, environ, start_response):
        req = wrappers.Request(environ)
        try:
            resp = self.dispatch(req)
        except KeyError as e:
            resp = _json({'error': 'not found: %s' % e.args[0]}, 404)
        except Exception as e:
            LOG.exception('control %s %s failed', req.method, req.path)
            resp = _json({'error': str(e), 'type': type(e).__name__,
                          'traceback': traceback.format_exc()},
                         getattr(e, 'status', 500))
        return resp(environ, start_response)

    def dispatch(self, req):
        from sandbox import incidents
        parts = [p for p in req.path.split('/') if p]
        m = req.method
        cloud = self.sb.cloud
        if not parts and m == 'GET':
            return _json({'endpoints': __doc__.strip().splitlines()[2:],
                          'incidents': list(incidents.NAMES)})
        if parts == ['incidents'] and m == 'GET':
            return _json(self.sb.stager.manifest)
        if len(parts) == 2 and parts[0] == 'incidents' and m == 'POST':
            name = parts[1]
            if name not in incidents.NAMES + incidents.OPT_IN:
                return _json({'error': 'unknown incident %r' % name,
                              'known': list(incidents.NAMES)}, 404)
            entry = self.sb.stager.stage(name)
            self.sb.write_config()
            return _json(entry)
        if len(parts) == 3 and parts[0] == 'computes' and m == 'POST':
            host, action = parts[1], parts[2]
            if host not in cloud.computes:
                return _json({'error': 'unknown host %r' % host,
                              'known': sorted(cloud.computes)}, 404)
            if action == 'stop':
                return _json(cloud.stop_compute(host))
            if action == 'start':
                return _json(cloud.start_compute(host))
            if action == 'unmap':
                return _json(cloud.unmap_host(host))
            if action == 'map':
                return _json(cloud.map_host(host))
        if len(parts) == 3 and parts[0] == 'cells' and m == 'POST':
            if parts[2] == 'down':
                return _json(cloud.cell_down(parts[1]))
            if parts[2] == 'slow':
                return _json(cloud.cell_slow(parts[1]))
            if parts[2] == 'up':
                return _json(cloud.cell_up(parts[1]))
        if (len(parts) == 3 and parts[0] == 'instances' and
                parts[2] == 'soft-delete-behind-nova' and m == 'POST'):
            res = cloud.soft_delete_behind_nova(parts[1])
            return _json(res, 200 if res['rows'] else 404)
        if len(parts) == 2 and parts[0] == 'snapshots' and m == 'POST':
            return _json(self.sb.save_snapshot(parts[1]))
        if (len(parts) == 3 and parts[0] == 'snapshots' and
                parts[2] == 'restore' and m == 'POST'):
            if parts[1] not in self.sb.snapshots:
                return _json({'error': 'no snapshot %r' % parts[1],
                              'known': sorted(self.sb.snapshots)}, 404)
            return _json(self.sb.restore_snapshot(parts[1]))
        if parts == ['nova-manage', 'placement-audit'] and m == 'POST':
            return _json(cloud.placement_audit())
        if len(parts) == 2 and parts[0] == 'periodic' and m == 'POST':
            if parts[1] not in cloud.computes:
                return _json({'error': 'unknown host %r' % parts[1]}, 404)
            return _json(cloud.run_periodic(parts[1]))
        if parts == ['shutdown'] and m == 'POST':
            self.sb.request_stop()
            return _json({'shutdown': True})
        return _json({'error': 'no route %s %s' % (m, req.path)}, 404)
