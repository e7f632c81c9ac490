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

"""An HTTP proxy in front of the real Placement that injects faults.

Forwards every request unchanged, except the ``nth`` request matching a
method and path prefix, which it answers with a 409, a 500, a 503 (a load
balancer's page while the service restarts), a 504 (a gateway that gave
up: the upstream never sees it), or not at all
(it hangs until released or the client gives up), or forwards and then
answers late (the upstream did it; the client gave up waiting), with a
502 (the upstream did it; a gateway lost its answer) or with a body that
is not JSON, or answers a 504 at once and forwards it ``delay`` seconds
later (a gateway gave up while the upstream still works on it), or
forwards and answers the page of a listing emptied, with no next link
(Nova's hypervisor listing filters a page after cutting it: every row
of a page can go), or forwards it twice and answers the second's answer
(a gateway that lost the upstream's first answer and sent the request
again, as nginx's ``proxy_next_upstream`` does with an idempotent PUT).
It works in front of any service (Placement, Nova, Neutron).
"""

import json
import threading

from keystoneauth1 import adapter
from keystoneauth1 import session
import requests
from werkzeug import serving
from werkzeug import wrappers

HANG = 'hang'
LATE = 'late'
LOST = 'lost'
GARBAGE = 'garbage'
EARLY = 'early'
EMPTIED = 'emptied'
RETRIED = 'retried'


class FaultProxy:
    def __init__(self, upstream):
        self.upstream = upstream.rstrip('/')
        self.faults = []
        self.seen = {}
        self.forwarded = []
        self.release = threading.Event()
        self.delay = 1.0
        """Seconds an :data:`EARLY` request waits before it is
        forwarded."""
        self.lock = threading.Lock()
        self.server = serving.make_server('127.0.0.1', 0, self.app,
                                          threaded=True)
        self.url = 'http://127.0.0.1:%d' % self.server.server_port
        threading.Thread(target=self.server.serve_forever,
                         daemon=True).start()

    def clients(self, clients, service, timeout=None):
        """``clients`` (an :class:`~api.client.Clients`) with ``service``
        (``'nova'``, ``'placement'``, ``'network'``) reached through this
        proxy; with ``timeout``, in a session of its own that gives up on
        an answer after that many seconds."""
        client = getattr(clients, service)
        sent_by = client.session if timeout is None else session.Session(
            auth=client.session.auth, timeout=timeout)
        return clients._replace(**{service: adapter.Adapter(
            sent_by, service_type=client.service_type,
            endpoint_override=self.url)})

    def inject(self, method, prefix, nth, fault):
        """Answer the ``nth`` (1-based) matching request with ``fault``."""
        self.faults.append((method, prefix, nth, fault))

    def _fault_for(self, request):
        """The fault of this request: each request counts once for each
        method and prefix it matches, however many faults they have."""
        with self.lock:
            counted = set()
            for method, prefix, nth, fault in self.faults:
                if request.method == method and request.path.startswith(
                        prefix):
                    key = (method, prefix)
                    if key not in counted:
                        counted.add(key)
                        self.seen[key] = self.seen.get(key, 0) + 1
                    if self.seen[key] == nth:
                        return fault
        return None

    @wrappers.Request.application
    def app(self, request):
        fault = self._fault_for(request)
        if fault == HANG:
            self.release.wait(120)
            return wrappers.Response('released', status=503)
        if fault == 409:
            return wrappers.Response(
                '{"errors": [{"status": 409, "title": "Conflict", "detail":'
                ' "injected conflict", "code": "placement.undefined_code"}]}',
                status=409, content_type='application/json')
        if fault == 503:
            return wrappers.Response(
                '<html><body><h1>503 Service Unavailable</h1></body></html>',
                status=503, content_type='text/html')
        if fault == GARBAGE:
            return wrappers.Response('<html>proxy error</html>', status=200,
                                     content_type='text/html')
        if fault == 500:
            return wrappers.Response(
                '{"errors": [{"status": 500, "title": "Internal Server Error",'
                ' "detail": "injected failure"}]}', status=500,
                content_type='application/json')
        if fault in (504, EARLY):
            if fault == EARLY:
                threading.Thread(target=self._forward, args=(
                    request.method, request.full_path, request.path,
                    dict(request.headers), request.get_data(), self.delay),
                    daemon=True).start()
            return wrappers.Response(
                '<html><body><h1>504 Gateway Time-out</h1></body></html>',
                status=504, content_type='text/html')
        upstream = self._forward(request.method, request.full_path,
                                 request.path, request.headers,
                                 request.get_data())
        if fault == RETRIED:
            upstream = self._forward(request.method, request.full_path,
                                     request.path, request.headers,
                                     request.get_data())
        if fault == LATE:
            self.release.wait(120)
        if fault == EMPTIED:
            body = {key: [] if isinstance(value, list) else value
                    for key, value in upstream.json().items()
                    if not key.endswith('_links')}
            return wrappers.Response(json.dumps(body), status=200,
                                     content_type='application/json')
        if fault == LOST:
            return wrappers.Response(
                '{"errors": [{"status": 502, "title": "Bad Gateway", '
                '"detail": "injected: the answer was lost"}]}', status=502,
                content_type='application/json')
        excluded = ('content-encoding', 'transfer-encoding', 'connection',
                    'content-length')
        return wrappers.Response(
            upstream.content, status=upstream.status_code,
            headers=[(k, v) for k, v in upstream.headers.items()
                     if k.lower() not in excluded])

    def _forward(self, method, full_path, path, headers, data, delay=0):
        if delay and self.release.wait(delay):
            return None
        upstream = requests.request(
            method, self.upstream + full_path.rstrip('?'),
            headers={k: v for k, v in headers.items()
                     if k.lower() not in ('host', 'content-length')},
            data=data, timeout=60)
        with self.lock:
            self.forwarded.append((method, path))
        return upstream

    def close(self):
        self.release.set()
        self.server.shutdown()
