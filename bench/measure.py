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

"""Client-side measurements against a running bench cloud.

Every function takes :class:`Clients` (a recording keystoneauth session and
the adapters the panel uses) and returns plain numbers, so ``__main__``
only formats them.
"""
import concurrent.futures
import pickle
import re
import statistics
import threading
import time
import tracemalloc
import urllib.parse

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session

from orphan_dashboard.api import client as api_client
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import refresh as reconsidering
from orphan_dashboard.reading import collect
from orphan_dashboard.reading import refresh as incremental

CONCURRENCY = collect.DEFAULT_CONCURRENCY


class RecordingSession(ks_session.Session):
    """A keystoneauth session that notes every request it sends."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.records = []
        self._lock = threading.Lock()

    def request(self, url, method, *args, **kwargs):
        response = None
        try:
            response = super().request(url, method, *args, **kwargs)
            return response
        except ks_exc.HttpError as exc:
            response = exc.response
            raise
        finally:
            if response is not None:
                with self._lock:
                    self.records.append((
                        method, response.url,
                        response.request.headers.get(
                            'OpenStack-API-Version')))

    def take(self):
        with self._lock:
            records, self.records = self.records, []
        return records


class Clients:
    def __init__(self, sandbox):
        from keystoneauth1.identity import v3
        admin = sandbox.config['admin']
        self.auth = v3.Password(
            auth_url=sandbox.config['auth_url'],
            username=admin['username'], password=admin['password'],
            project_name=admin['project_name'],
            user_domain_name=admin['user_domain_name'],
            project_domain_name=admin['project_domain_name'])
        self.session = RecordingSession(auth=self.auth)
        kwargs = dict(region_name=sandbox.config['region'],
                      interface='public')
        adapter = api_client.service_adapter
        self.placement = adapter(self.session, 'placement', **kwargs)
        self.nova = adapter(self.session, 'compute', **kwargs)
        self.network = (adapter(self.session, 'network', **kwargs)
                        if sandbox.config.get('neutron') else None)
        # Token validated by every service before anything is timed.
        self.placement.get('/resource_providers', microversion='1.18')
        self.nova.get('/os-services', microversion='2.53')
        if self.network is not None:
            self.network.get('/v2.0/networks', params={'fields': 'id'})
        self.session.take()


def median(values):
    return statistics.median(values)


def timed(func):
    t0 = time.perf_counter()
    result = func()
    return time.perf_counter() - t0, result


def cold_sweep(clients, concurrency=CONCURRENCY, network=False):
    """``full_snapshot`` + ``audit`` after the token's validation by each
    service (a token older than keystonemiddleware's cache is validated
    again), reading Neutron's ports if ``network``: (seconds, snapshot,
    report, requests)."""
    clients.session.take()

    def sweep():
        api_client.validate_token(clients)  # as every sweep of ours does
        snapshot = collect.full_snapshot(
            clients.placement, clients.nova, concurrency,
            network_client=clients.network if network else None)
        return snapshot, classify.audit(snapshot, min_age=0)
    seconds, (snapshot, report) = timed(sweep)
    return seconds, snapshot, report, clients.session.take()


def peak_memory(clients, concurrency=CONCURRENCY):
    """Peak bytes traced (tracemalloc) during a cold sweep + audit."""
    tracemalloc.start()
    try:
        snapshot = collect.full_snapshot(clients.placement, clients.nova,
                                         concurrency)
        classify.audit(snapshot, min_age=0)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        clients.session.take()


def snapshot_bytes(snapshot):
    return len(pickle.dumps(snapshot, protocol=pickle.HIGHEST_PROTOCOL))


KINDS = ((r'/servers/detail$', 'servers'), (r'/os-migrations$', 'migrations'),
         (r'/servers/[^/]+$', 'server alone'),
         (r'/os-instance-actions$', 'known'),
         (r'/resource_providers/[^/]+/allocations$', 'provider allocations'),
         (r'/allocations/[^/]+$', 'details'))
"""What a request is, by its path; the rest are topology listings."""


def _kind(url):
    path = urllib.parse.urlsplit(url).path
    for pattern, kind in KINDS:
        if re.search(pattern, path):
            return kind
    return 'other'


def floor(clients, records, concurrency=CONCURRENCY):
    """The same requests from a bare keystoneauth session, nothing parsed.

    Sent on the sweep's schedule: the server and migration pages one after
    another (a client needs each page's marker) alongside the topology
    listings, then each provider's inventories and allocations without
    waiting for the listings to be in, ``concurrency`` at a time; once all
    are in, the servers read alone (their boot images: which to read, the
    allocations say), then consumer details and instance actions (whose,
    the boot images say).  Returns seconds.
    """
    bare = ks_session.Session(auth=clients.auth)
    bare.get_token()
    kinds = {}
    for record in records:
        kinds.setdefault(_kind(record[1]), []).append(record)

    def send(record):
        method, url, version = record
        headers = {'Accept': 'application/json'}
        if version:
            headers['OpenStack-API-Version'] = version
        bare.request(url, method, headers=headers, raise_exc=False)

    def chain(kind):
        for record in kinds.get(kind, ()):
            send(record)

    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool, \
            concurrent.futures.ThreadPoolExecutor(2) as listings:
        t0 = time.perf_counter()
        pages = [listings.submit(chain, 'servers'),
                 listings.submit(chain, 'migrations')]
        list(pool.map(send, kinds.get('other', []) +
                      kinds.get('provider allocations', [])))
        for future in pages:
            future.result()
        list(pool.map(send, kinds.get('server alone', [])))
        list(pool.map(send, kinds.get('details', []) +
                      kinds.get('known', [])))
        return time.perf_counter() - t0


def refresh(clients, old, last, concurrency=CONCURRENCY):
    """``refresh_snapshot`` + its report, validation first as for
    :func:`cold_sweep`; the report takes ``last``'s findings (``old``'s
    report) where nothing changed, as a sweep takes them from the cache
    (:func:`report_after`): (seconds, snapshot, report, requests)."""
    clients.session.take()

    def run():
        api_client.validate_token(clients)
        snapshot = incremental.refresh_snapshot(
            clients.placement, clients.nova, old, concurrency)
        return snapshot, report_after(old, last, snapshot)
    seconds, (snapshot, report) = timed(run)
    return seconds, snapshot, report, clients.session.take()


def report_after(old, last, snapshot):
    """The report of ``snapshot``, a refresh of ``old``, whose report was
    ``last``."""
    return classify.audit(snapshot, min_age=0, known=reconsidering.reusable(
        old, snapshot, lambda: last.findings))


def findings_load(snapshot, report):
    """Seconds a sweep takes to load ``report``'s findings from the cache
    before it refreshes ``snapshot`` (:meth:`Store.load_findings`), from
    a process-local cache: no network, the unpickling alone."""
    from django.core.cache.backends import locmem

    from orphan_dashboard.sweep import store as stores
    store = stores.Store('bench', cache=locmem.LocMemCache(
        'bench', {'OPTIONS': {'MAX_ENTRIES': 10 ** 9}}))
    version = store.save(snapshot, report, 0)
    seconds, findings = timed(lambda: store.load_findings(version))
    assert len(findings) == len(report.findings)
    return seconds


def findings(report):
    """Every finding as a comparable tuple."""
    return {(f.consumer, f.provider, f.verdict, f.reason,
             tuple(sorted(f.resources.items())), f.nova, f.host,
             f.instance, f.project_id) for f in report.findings}


def usage(report):
    return {p.provider.uuid: (tuple(sorted(p.usage.items())),
                              tuple(sorted(p.needed.items())))
            for p in report.providers}


NOVA_MANAGE_LINE = re.compile(
    r'Allocations for consumer UUID (\S+) on Resource Provider (\S+) can '
    r'be deleted')


def nova_manage_pairs(output):
    return set(NOVA_MANAGE_LINE.findall(output))


OVERLAP = ('evacuated_source', 'moved', 'deleted_instance',
           'stale_migration', 'unknown_consumer')
"""Our verdicts for allocations nova-manage would also flag: the consumer
is neither a server on that node nor an in-progress migration there."""


def agreement(report, nova_manage):
    """Both tools' sets where their rules overlap, and the differences with
    our verdict for each pair only nova-manage flags."""
    ours = {(f.consumer, f.provider) for f in report.findings
            if f.verdict in OVERLAP}
    verdicts = {(f.consumer, f.provider): f.verdict
                for f in report.findings}
    only_nova = nova_manage - ours
    why = {}
    for pair in only_nova:
        verdict = verdicts.get(pair, 'none')
        why[verdict] = why.get(verdict, 0) + 1
    return {'ours': len(ours), 'nova_manage': len(nova_manage),
            'both': len(ours & nova_manage),
            'only_ours': len(ours - nova_manage),
            'only_nova_manage': len(only_nova),
            'only_nova_manage_our_verdicts': why}


def nova_reads(clients):
    """Seconds for the sweep's two Nova listings (every server, every
    migration) as raw REST reads over the keystoneauth adapter (what the
    sweep did before) and through ``api.nova`` (python-novaclient, as
    Horizon's ``api.nova``), same microversions and page size, each read
    twice alternately; the smaller of each."""
    from orphan_dashboard.api import microversions as mv
    from orphan_dashboard.api import nova

    def raw_listing(path, key, version, marker_key):
        items, params = [], {'limit': nova.PAGE}
        if key == 'servers':
            params['all_tenants'] = 1
        while True:
            body = clients.nova.get(path, microversion=version,
                                    params=params).json()
            items.extend(body[key])
            if not any(link.get('rel') == 'next'
                       for link in body.get(key + '_links') or []):
                return items
            params['marker'] = body[key][-1][marker_key]

    def raw():
        return (len(raw_listing('/servers/detail', 'servers', mv.SERVERS,
                                'id')),
                len(raw_listing('/os-migrations', 'migrations',
                                mv.MIGRATIONS, 'uuid')))

    def with_novaclient():
        return (len(nova.server_list(clients.nova)),
                len(nova.migration_list(clients.nova)))

    raw_s, nc_s = [], []
    for _ in range(2):
        seconds, raw_counts = timed(raw)
        raw_s.append(seconds)
        seconds, nc_counts = timed(with_novaclient)
        nc_s.append(seconds)
    clients.session.take()
    assert raw_counts == nc_counts, (raw_counts, nc_counts)
    return min(raw_s), min(nc_s), raw_counts


def server_list_split(clients, hosts, concurrency=CONCURRENCY):
    """Seconds for the paged all-tenants server list, and for one list per
    host (``host=`` filter) with ``concurrency`` in flight."""
    from orphan_dashboard.api import nova
    serial, servers = timed(lambda: nova.server_list(clients.nova))

    def by_host():
        with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
            return sum(map(len, pool.map(
                lambda host: nova.server_list(clients.nova, host=host),
                hosts)))
    split, count = timed(by_host)
    clients.session.take()
    return serial, split, len(servers), count


def qos_port_check(clients, expected):
    """What Neutron's API says of a seeded QoS server's port
    (``expected``: server, NIC provider, verdict): its request groups, and
    whether ``binding:profile.allocation`` places each on that
    provider."""
    server, nic, _ = expected
    ports = clients.network.get('/v2.0/ports', params={
        'device_id': server}).json()['ports']
    clients.session.take()
    groups = [g['id'] for p in ports
              for g in (p.get('resource_request') or {}).get(
                  'request_groups', ())]
    placed = {g: p['binding:profile'].get('allocation', {}).get(g)
              for p in ports for g in groups}
    return {'server': server, 'ports': len(ports), 'groups': groups,
            'resources': [g['resources'] for p in ports
                          for g in p['resource_request']['request_groups']],
            'placed_on_nic': bool(groups) and all(
                rp == nic for rp in placed.values())}


def port_listing(clients, fields=None):
    """Every port of the cloud, paged as ``api.neutron`` pages, with all
    their fields or only ``fields``: the ports."""
    from orphan_dashboard.api import neutron
    ports, params = [], {'limit': neutron.PAGE}
    if fields:
        params['fields'] = list(fields)
    while True:
        body = clients.network.get('/v2.0/ports', params=params).json()
        ports.extend(body['ports'])
        if not body['ports'] or not any(
                link.get('rel') == 'next'
                for link in body.get('ports_links') or ()):
            return ports
        params['marker'] = body['ports'][-1]['id']


PAGE_SIZES = (500, 1000, 2000, 5000, 0)
"""Page sizes the port read is timed with besides its own (0: one
request, Neutron pages nothing)."""


def port_reads(clients, repeat):
    """The sweep's port read (``api.neutron.resource_ports``) against a
    plain listing of every port (all fields), a listing of every port with
    only the fields the audit reads, and the port read with other page
    sizes (:data:`PAGE_SIZES`), alternately, ``repeat`` times:
    ``{name: {'s': [seconds], 'requests': n, 'ports': n}}``."""
    from orphan_dashboard.api import neutron

    def paged(size):
        def read():
            page, neutron.PAGE = neutron.PAGE, size
            try:
                return neutron.resource_ports(clients.network)
            finally:
                neutron.PAGE = page
        return read

    reads = [('resource_ports',
              lambda: neutron.resource_ports(clients.network)),
             ('plain_listing', lambda: port_listing(clients)),
             ('fields_listing', lambda: port_listing(
                 clients, neutron.PORT_FIELDS))]
    reads += [('resource_ports_page_%d' % size, paged(size))
              for size in PAGE_SIZES if size != neutron.PAGE]
    out = {name: {'s': []} for name, _ in reads}
    clients.session.take()
    for _ in range(repeat):
        for name, read in reads:
            seconds, ports = timed(read)
            out[name]['s'].append(seconds)
            out[name]['requests'] = len(clients.session.take())
            out[name]['ports'] = len(ports)
    return out
