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

"""The panel's index page and Horizon's ``get_providers``, timed in Django.

    SANDBOX_JSON=.../sandbox.json python -m bench.page --repeat 3 [--gc-freeze]

Runs in a process of its own because Django's settings
(``bench.horizon_settings``: the demo's, with the real Keystone)
are per process and each size has its own sandbox.  Logs in through
``openstack_auth`` with Django's test client (no template
instrumentation); loads the index on a cold cache (the first sweep starts
in the background), then again and again while that sweep runs, then
``repeat`` times warm (and the worst hypervisor's page), then clicks
*Refresh* and loads the index and that hypervisor's page in turn during
that full sweep and once after it; then times Horizon's own
``openstack_dashboard.api.placement.get_providers`` with a minimal request.
``service.report`` is timed on its own too (``warm_report_s``).  Every
page during a sweep that takes over ``SLOW`` seconds is traced
(``slow_pages``): when into the sweep, its CPU seconds (little CPU: it
waited), the seconds of the cyclic garbage collector's passes during it
(``gc_s``, and ``gc_full`` of the oldest generation: each walks every
object the process holds; ``tracked``, how many the collector tracked
after the page), the sweep's progress then (``sweep/``'s
``read``: done and total per kind), and the HTTP requests it made.
With ``--gc-freeze`` Horizon's own objects are frozen once warm, by the
call a deployment's WSGI script makes (``orphan_dashboard.wsgi.frozen``,
``doc/source/operations.md``).
Prints one JSON object.
"""
import argparse
import gc
import json
import os
import re
import resource
import statistics
import sys
import threading
import time
import types
import weakref

INDEX = '/admin/orphaned_allocations/'
SLOW = 0.3


def _timed(func):
    t0 = time.perf_counter()
    result = func()
    return time.perf_counter() - t0, result


class _Request:
    """What ``get_providers`` reads of a request: the user's token and
    catalog (from a real Keystone login).  Hashable like Django's, so
    Horizon's ``@memoized make_adapter`` builds one session per request."""

    def __init__(self, session, sandbox):
        access = session.auth.get_access(session)
        self.user = types.SimpleNamespace(
            token=types.SimpleNamespace(id=access.auth_token),
            project_id=access.project_id, project_name=access.project_name,
            domain_id=access.project_domain_id,
            service_catalog=access.service_catalog.catalog,
            services_region=sandbox['region'])


class _Tracer:
    """The HTTP requests a page makes (``requests`` underlies keystoneauth
    and so every OpenStack client Horizon uses), and the slow pages."""

    def __init__(self):
        import requests
        self.calls = []
        self.slow = []
        self.collected = []
        """``(generation, seconds)`` of each garbage collector pass."""
        self._began = None
        gc.callbacks.append(self._collecting)
        send = requests.Session.request

        def request(session, method, url, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return send(session, method, url, *args, **kwargs)
            finally:
                self.calls.append([method, url.split('?')[0][-60:], round(
                    time.perf_counter() - t0, 3)])
        requests.Session.request = request

    def _collecting(self, phase, info):
        if phase == 'start':
            self._began = time.perf_counter()
        elif self._began is not None:
            self.collected.append((info['generation'],
                                   time.perf_counter() - self._began))
            self._began = None

    def page(self, sweep, started, what, load, progress):
        """``load()`` timed; traced if slow."""
        del self.calls[:]
        del self.collected[:]
        cpu = time.process_time()
        elapsed = _timed(load)[0]
        if elapsed > SLOW:
            done = (progress or {}).get('read', {})
            self.slow.append({
                'sweep': sweep, 'at_s': round(time.perf_counter() - started,
                                              2),
                'page': what, 'seconds': round(elapsed, 3),
                'cpu_s': round(time.process_time() - cpu, 3),
                'gc_s': round(sum(s for _g, s in self.collected), 3),
                'gc_full': sum(1 for g, _s in self.collected if g == 2),
                'tracked': len(gc.get_objects()),
                'progress': done, 'requests': list(self.calls)})
        return elapsed


def forget_reconnections(client):
    """Drop the finalizers Django's test ``client`` leaves on each request.

    Per request it connects one of its own methods to
    ``got_request_exception``, and its handler connects
    ``close_old_connections`` to ``request_started`` and
    ``request_finished`` again, each weakly: each connection registers a
    ``weakref.finalize`` on its receiver, kept after the receiver is
    disconnected until the receiver is collected, which a module's
    function and a client in use never are.  A sweep polled for minutes
    leaves tens of thousands, and each pass of the garbage collector walks
    them, as it walks nothing of the kind in a Horizon behind a web
    server.  Detached, they lose nothing: the function is never collected,
    and between requests the client's method is connected nowhere.
    """
    from django.db import close_old_connections
    for finalizer in list(weakref.finalize._registry):
        alive = finalizer.peek()
        if alive and (alive[0] is close_old_connections or
                      alive[0] is client):
            finalizer.detach()


ATTENTION = re.compile(rb'(\d+) of \d+ hypervisors needs? attention')
"""The index's line above its table (``index.html``), in English: the
bench logs in with Horizon's default language."""


def attention(page):
    """How many hypervisors need attention, as the index page says, or
    None where it does not (before the first sweep)."""
    found = ATTENTION.search(page)
    return int(found.group(1)) if found else None


def sweepers_peak_rss_mb():
    """The largest resident set of the background sweepers this process
    started (the first sweep's and *Refresh*'s), once each has exited and
    been waited for."""
    from orphan_dashboard.sweep import worker
    for thread in threading.enumerate():
        if thread.name.startswith(worker.SWEEPER_THREAD):
            thread.join(600)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m bench.page')
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument(
        '--gc-freeze', action='store_true',
        help="freeze Horizon's objects once warm, as "
        "doc/source/operations.md shows for a WSGI script")
    args = parser.parse_args(argv)
    os.environ['DJANGO_SETTINGS_MODULE'] = 'bench.horizon_settings'
    import django
    django.setup()
    from django.test import Client
    from openstack_dashboard.api import placement as horizon_placement
    from sandbox import rest

    from orphan_dashboard.content.orphaned_allocations import service
    from orphan_dashboard import wsgi

    report_times = []
    report = service.report

    def timed_report(*args, **kwargs):
        elapsed, result = _timed(lambda: report(*args, **kwargs))
        report_times.append(elapsed)
        return result
    service.report = timed_report
    tracer = _Tracer()
    with open(os.environ['SANDBOX_JSON']) as f:
        sandbox = json.load(f)
    admin = sandbox['admin']
    out = {}
    client = Client()
    login = client.get('/auth/login/').content
    region = (re.search(rb'name="region"[^>]*value="([^"]*)"', login) or
              re.search(rb'value="([^"]*)"[^>]*name="region"', login))
    out['login_s'], resp = _timed(lambda: client.post('/auth/login/', {
        'username': admin['username'], 'password': admin['password'],
        'domain': admin['user_domain_name'],
        'region': region.group(1).decode() if region else ''}))
    if resp.status_code != 302:
        raise SystemExit('login failed: %s' % resp.status_code)

    def page(url=INDEX):
        resp = client.get(url)
        if resp.status_code != 200:
            raise SystemExit('%s answered %s' % (url, resp.status_code))
        return resp

    def sweep_state():
        """(whether a sweep runs, its progress)"""
        forget_reconnections(client)
        state = client.get(INDEX + 'sweep/').json()
        return state['sweeping'], state.get('progress')

    # Horizon itself warm (templates, menus), as a running one is.
    out['warm_up_s'] = _timed(lambda: client.get('/settings/'))[0]
    if args.gc_freeze:
        wsgi.frozen(client.handler)
        out['gc_frozen'] = gc.get_freeze_count()
    # The first page of a cold cache starts the sweep in the background and
    # renders at once; pages during the sweep render at once too.
    started = time.perf_counter()
    out['cold_page_s'], resp = _timed(page)
    out['cold_page_shows_progress'] = b'orphan-first-sweep' in resp.content
    during = []
    sweeping, progress = sweep_state()
    while sweeping:
        during.append(tracer.page('first', started, 'index', page, progress))
        time.sleep(0.2)
        sweeping, progress = sweep_state()
    out['first_sweep_s'] = time.perf_counter() - started
    out['sweep_pages'] = len(during)
    out['sweep_page_s'] = during
    out['sweep_page_max_s'] = max(during) if during else None
    out['first_loaded_page_s'], resp = _timed(page)
    out['rows'] = resp.content.count(b'data-object-id=')
    out['attention'] = attention(resp.content)
    out['page_bytes'] = len(resp.content)
    # The worst hypervisor's own page: its tree loaded whole.
    detail = '%s%s/' % (INDEX, re.search(
        rb'data-object-id="([^"]+)"', resp.content).group(1).decode())
    out['first_detail_page_s'] = _timed(lambda: page(detail))[0]
    del report_times[:]
    warm = [_timed(page)[0] for _ in range(args.repeat)]
    out['warm_report_s'] = report_times
    out['warm_page_s'] = warm
    out['warm_page_median_s'] = statistics.median(warm)
    out['warm_detail_page_s'] = [_timed(lambda: page(detail))[0]
                                 for _ in range(args.repeat)]
    # *Refresh*: a full sweep in the background; the index and the
    # hypervisor's page in turn meanwhile, and once it is published.
    started = time.perf_counter()
    out['refresh_click_s'] = _timed(
        lambda: client.post(INDEX, {'action': 'providers__refresh'}))[0]
    during = {INDEX: [], detail: []}
    sweeping, progress = sweep_state()
    while sweeping:
        url = INDEX if len(during[INDEX]) <= len(during[detail]) else detail
        during[url].append(tracer.page(
            'refresh', started, 'index' if url == INDEX else 'hypervisor',
            lambda: page(url), progress))
        time.sleep(0.2)
        sweeping, progress = sweep_state()
    out['refresh_pages'] = len(during[INDEX]) + len(during[detail])
    out['refresh_page_max_s'] = max(during[INDEX], default=None)
    out['refresh_detail_page_max_s'] = max(during[detail], default=None)
    out['after_refresh_page_s'] = _timed(page)[0]
    out['after_refresh_detail_page_s'] = _timed(lambda: page(detail))[0]

    session = rest.password_session(sandbox['auth_url'], admin['username'],
                                    admin['password'], admin['project_name'])
    session.get_token()
    times = []
    for _ in range(args.repeat):
        request = _Request(session, sandbox)
        elapsed, providers = _timed(
            lambda: horizon_placement.get_providers(request))
        times.append(elapsed)
    out['get_providers_s'] = times
    out['get_providers_median_s'] = statistics.median(times)
    out['get_providers_requests'] = 1 + 2 * len(providers)
    out['slow_pages'] = tracer.slow
    out['sweeper_peak_rss_mb'] = sweepers_peak_rss_mb()
    json.dump(out, sys.stdout)
    sys.stdout.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
