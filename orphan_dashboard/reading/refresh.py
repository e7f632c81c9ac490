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

"""Reading again what changed: the incremental refresh of a snapshot, the
choice between it and a full sweep (:mod:`collect`), and the narrow
re-read of a few consumers around a repair (I/O).
"""

import concurrent.futures
import datetime
import threading

from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import refresh
from orphan_dashboard import conf
from orphan_dashboard.reading import collect
from orphan_dashboard.reading.progress import NO_PROGRESS


def reread_consumers(placement_client, snapshot, uuids,
                     concurrency=collect.DEFAULT_CONCURRENCY):
    """These consumers read again into ``snapshot``, after writes."""
    for uuid, body in collect.concurrently(
            lambda u: placement.consumer_allocations(placement_client, u),
            sorted(uuids), concurrency).items():
        consumer = parse.consumer(uuid, body)
        if consumer.allocations:
            snapshot.consumers[uuid] = consumer
        else:
            snapshot.consumers.pop(uuid, None)


CLOCK_MARGIN = datetime.timedelta(seconds=5)
"""Overlap between refreshes, for clock skew between us and Nova."""


class _Rereads(collect.ProviderReads):
    """A refresh's reads, in ``pool`` as soon as a listing names them,
    each once, overlapping Nova's listings instead of following them: the
    allocations and inventories of each provider :func:`refresh.moved`
    names, and the allocations of each provider the consumers Nova or we
    changed held (:func:`refresh.held`); none of the others."""

    def __init__(self, pool, placement_client, old, progress=NO_PROGRESS):
        super().__init__(placement_client, old, pool)
        self._before = old
        self._progress = progress
        self._lock = threading.Lock()
        self._allocations = {}

    def listed(self, providers):
        self.providers(refresh.moved(self._before, providers))
        super().listed(providers)

    def consumers(self, uuids):
        """``uuids`` changed since ``old``."""
        self.providers(sorted(refresh.held(self._before, uuids)))

    def providers(self, uuids):
        """These providers' allocations are read again."""
        with self._lock:
            for uuid in uuids:
                if uuid not in self._allocations:
                    self._allocations[uuid] = self._pool.submit(
                        collect.read_allocations, self._client, uuid,
                        self._progress)
            self._progress.total('providers', len(self._allocations))

    def allocations(self):
        """``{provider: {consumer: allocation}}`` of each provider read
        again (:func:`collect.read_allocations`)."""
        with self._lock:
            reads = dict(self._allocations)
        return {rp: f.result() for rp, f in reads.items()}


def refresh_snapshot(placement_client, nova_client, old,
                     concurrency=collect.DEFAULT_CONCURRENCY, touched=(),
                     progress=NO_PROGRESS, network_client=None):
    """Bring ``old`` up to date reading only what changed since.

    Nova answers ``changes-since`` for servers (deleted ones included) and
    migrations: the providers their consumers held are read again (each
    page's as soon as it is listed), as are those of the consumers we wrote
    (``touched``) and every provider whose generation moved, which
    Placement's provider list says (:class:`_Rereads`).  Each is read whole,
    as a full sweep reads it: whatever another service or an operator
    wrote there is seen.  A ``DELETE /allocations``, or a PUT that drops a
    provider, bumps no generation of the providers it empties: Nova's and
    ours are named, others' wait for the next full sweep (see
    :func:`snapshot`).  Owner and age are read, as in a full sweep, for
    the consumers the audit may act on (:func:`collect.identify`), looked
    for only among those whose verdict may have changed
    (:func:`refresh.reconsidered`).

    The ports that request resources are read whole again: Neutron has no
    ``changes-since``, and a port deleted behind Nova's back, the leak
    looked for, changes nothing in Placement or Nova that a refresh sees.
    """
    taken_at = collect.now()
    collect.hold_connections(concurrency, placement_client, nova_client,
                             network_client)
    since = (old.taken_at - CLOCK_MARGIN).isoformat()
    with concurrent.futures.ThreadPoolExecutor(concurrency + 2) as pool:
        reads = _Rereads(pool, placement_client, old, progress)
        server_changes = pool.submit(
            nova.server_list, nova_client,
            on_page=collect.on_page(progress, 'servers', lambda page: (
                reads.consumers(s['id'] for s in page))),
            **{'changes-since': since})
        migration_changes = pool.submit(
            collect.timed, nova.migration_list, nova_client,
            on_page=collect.on_page(progress, 'migrations', lambda page: (
                reads.consumers(u for g in page for u in (
                    g['uuid'], g['instance_uuid'])))),
            **{'changes-since': since})
        incomplete = pool.submit(placement.project_usages,
                                 placement_client, m.INCOMPLETE)
        port_read = pool.submit(collect.read_ports, network_client)
        reads.consumers(touched)
        down_cell = collect.DownCellListing(nova_client)
        topo = collect.read_topology(placement_client, nova_client, old,
                                     reads, down_cell)
        providers = topo['providers']

        servers = dict(old.servers)
        changed = server_changes.result()
        for body in changed:
            if body.get('status') == 'DELETED':
                servers.pop(body['id'], None)
            else:
                servers[body['id']] = refresh.relisted(
                    old.servers.get(body['id']), parse.server(body))
        servers.update(down_cell.servers(
            topo, {body['id'] for body in changed}))
        migrations = dict(old.migrations)
        migration_changes, seconds = migration_changes.result()
        migrations.update((g.uuid, g) for g in map(
            parse.migration, migration_changes))
        fresh = reads.allocations()
        inventories = reads.inventories()

    consumers = refresh.merged(old, refresh.carried_over(old, providers), {
        rp: allocations for rp, allocations in fresh.items()
        if rp in providers})
    snapshot = m.Snapshot(
        consumers=consumers, servers=servers, migrations=migrations,
        known_instances=frozenset(
            u for u in old.known_instances if u in consumers),
        unresolved=frozenset(u for u in old.unresolved if u in consumers),
        taken_at=taken_at, full_sweep_at=old.full_sweep_at,
        inventories=inventories, **port_read.result(),
        **collect.prove(topo, servers.values()))
    collect.confirm_nodes(nova_client, snapshot, concurrency)
    collect.shown_alone(snapshot, nova_client, concurrency)
    snapshot.port_candidates = collect.read_port_candidates(
        placement_client, snapshot, concurrency)
    suspected = collect.judged_with_boot_images(
        snapshot, nova_client, refresh.reconsidered(old, snapshot) | {
            u for u, s in servers.items()
            if s.image_fault == m.IMAGE_DOWN or
            u not in consumers and s != old.servers.get(u)}, concurrency)
    unidentified = [u for u in suspected
                    if u not in old.consumers or u not in consumers or
                    consumers[u].modified is None]
    collect.identify(snapshot, placement_client, nova_client, unidentified,
                     concurrency, keep_known=True)
    # A host read whole before stays so while the changes since are whole.
    collect.read_host_migrations(
        nova_client, snapshot, concurrency,
        old.migration_hosts if collect.within_cell_timeout(
            nova_client, seconds) else ())
    collect.identify_owners(snapshot, placement_client, concurrency,
                            incomplete.result())
    return snapshot


def full_sweep_due(cached, full_sweep_interval=conf.FULL_SWEEP.default):
    """Whether a sweep after ``cached`` reads everything again: nothing
    cached, ``cached`` partial (a down cell's servers show in no
    refresh), or its last full sweep as old as ``full_sweep_interval``."""
    return cached is None or cached.full_sweep_at is None or \
        cached.down_cells or (collect.now() - cached.full_sweep_at
                              ).total_seconds() >= full_sweep_interval


def snapshot(placement_client, nova_client, cached=None,
             full_sweep_interval=conf.FULL_SWEEP.default,
             concurrency=collect.DEFAULT_CONCURRENCY,
             touched=(), progress=NO_PROGRESS, full=False,
             network_client=None):
    """A full sweep (when asked or :func:`full_sweep_due`), or a refresh
    of ``cached``; ``touched`` are the consumers written since ``cached``
    was taken."""
    if full or full_sweep_due(cached, full_sweep_interval):
        return collect.full_snapshot(placement_client, nova_client,
                                     concurrency, progress, previous=cached,
                                     network_client=network_client)
    return refresh_snapshot(placement_client, nova_client, cached,
                            concurrency, touched, progress,
                            network_client=network_client)


def _read_other_sides(clients, snapshot, uuids, concurrency):
    """The other consumer of each move in progress that one of ``uuids``
    is a side of (the migration's, or its server and the server's): a
    stuck move is put right by one write of both
    (:data:`~audit.model.MOVE_BACK`), which is judged from both as read
    now."""
    moving = [g for g in snapshot.migrations.values()
              if g.status in m.MIGRATION_IN_PROGRESS and
              (g.uuid in uuids or g.instance_uuid in uuids)]
    servers = sorted({g.instance_uuid for g in moving} -
                     set(snapshot.servers))
    for uuid, body in collect.ask_each(
            lambda u: nova.server_get(clients.nova, u), servers, concurrency,
            'its allocations are protected').items():
        if isinstance(body, dict):
            snapshot.servers[uuid] = parse.server(body)
    sides = sorted({u for g in moving for u in (g.uuid, g.instance_uuid)} -
                   set(snapshot.consumers))
    snapshot.consumers.update(
        (u, parse.consumer(u, body)) for u, body in collect.concurrently(
            lambda u: placement.consumer_allocations(clients.placement, u),
            sides, concurrency).items())


def consumer_snapshot(clients, consumer_uuids, instance_hints=(),
                      providers=(), topology=None,
                      concurrency=collect.DEFAULT_CONCURRENCY):
    """Just these consumers, read now by ``clients`` (an
    :class:`~api.client.Clients`), for a preview or a submit.

    What each consumer is comes from Nova, never from the request: a server
    answers ``GET /servers/{id}``; a migration consumer is found among the
    migrations of the compute hosts its allocations are on (Nova lists
    migrations by host or instance, not by uuid), or those of ``providers``
    (where a restore would put it); a host whose listing answered within
    Nova's cell timeout is one whose migrations own none of the other
    consumers (``migration_hosts``).  ``instance_hints`` are server uuids
    from the snapshot the operator was shown (server side) whose
    migrations are read too.  Where a provider's host is unknown (no
    compute node left), every migration is read, as a sweep does.
    ``topology`` is :func:`collect.read_topology`'s, if the caller read it
    after the click (:func:`collect.topology_of` a sweep's).  The
    servers' ports that request resources are read from
    Neutron; each server's answer carries the properties of the image Nova
    booted it from (:func:`nova.server_get`).  The compute nodes of the
    trees the consumers hold, the servers live on and ``providers`` name
    (a decommission's, a restore's) that Nova's listing left out are asked
    for alone (:func:`collect.confirm_nodes`).  A consumer Nova did not
    answer ``GET /servers/{id}`` for (a timeout, a 5xx: its cell slow or
    down) is unresolved: what it holds is protected, the others are read
    and judged as usual.
    """
    taken_at = collect.now()
    placement_client, nova_client, network_client = (
        clients.placement, clients.nova, clients.network)
    collect.hold_connections(concurrency, placement_client, nova_client,
                             network_client)
    uuids = sorted(set(consumer_uuids))

    def read_migrations(queries):
        """``({uuid: Migration}, hosts)`` of ``queries`` (``(field,
        value)``) of Nova's migrations, concurrently: ``hosts`` are those
        whose listing answered within Nova's cell timeout, all of whose
        migrations are then known."""
        migrations, hosts = {}, set()
        for query, (listed, seconds) in collect.concurrently(
                lambda q: collect.timed(nova.migration_list, nova_client,
                                        **{q[0]: q[1]}),
                queries, concurrency).items():
            migrations.update((g.uuid, g) for g in map(
                parse.migration, listed))
            if query[0] == 'host' and collect.within_cell_timeout(
                    nova_client, seconds):
                hosts.add(query[1])
        return migrations, hosts

    # With a cell slow, each of Nova's listings waits for it: the
    # servers' migrations are listed as soon as the servers answered,
    # beside the topology and the hosts' migrations.
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        read = pool.submit(lambda: topology or collect.read_topology(
            placement_client, nova_client))
        details = pool.submit(collect.concurrently, lambda u: (
            placement.consumer_allocations(placement_client, u)), uuids,
            concurrency)
        found = collect.ask_each(
            lambda u: nova.server_get(nova_client, u), uuids, concurrency,
            'its allocations are protected')
        servers = {u: parse.server(b) for u, b in found.items()
                   if isinstance(b, dict)}
        of_servers = pool.submit(read_migrations, [
            ('instance_uuid', u)
            for u in sorted(set(servers) | set(instance_hints))])
        snapshot = m.Snapshot(
            consumers={}, servers=servers, migrations={}, taken_at=taken_at,
            **collect.prove(dict(read.result()), servers.values()))
        snapshot.consumers.update(
            (u, parse.consumer(u, body)) for u, body in
            details.result().items())
        topo = classify.Topology(snapshot)
        collect.confirm_nodes(nova_client, snapshot, concurrency, among={
            topo.root(p) for p in set(providers).union(*(
                c.allocations for c in snapshot.consumers.values()))} | {
            topo.server_root(s) for s in servers.values()})
        topo = classify.Topology(snapshot)
        unshown = {u for u, b in found.items() if b is collect.NOT_SHOWN}
        strangers = [u for u in uuids
                     if u not in snapshot.servers and u not in unshown]
        places = set(providers) | {
            p for u in strangers for p in snapshot.consumers[u].allocations}
        migrations, listed_hosts = read_migrations(
            [('host', h) for h in
             sorted({topo.migration_host(p) for p in places})])
        migrations.update(of_servers.result()[0])
    snapshot.migration_hosts |= listed_hosts
    if any(topo.host(p) is None for p in places) and \
            not all(u in migrations for u in strangers):
        migrations.update((g.uuid, g) for g in map(
            parse.migration, nova.migration_list(nova_client)))
    snapshot.migrations = migrations
    _read_other_sides(clients, snapshot, uuids, concurrency)

    unknown = [u for u in strangers if u not in migrations]
    known = collect.concurrently(
        lambda u: nova.instance_known(nova_client, u), unknown, concurrency)
    snapshot.known_instances = frozenset(u for u, k in known.items() if k)
    snapshot.unresolved = frozenset(
        u for u, k in known.items() if k is None) | unshown
    for field, value in collect.read_ports(
            network_client, sorted(snapshot.servers)).items():
        setattr(snapshot, field, value)
    snapshot.port_candidates = collect.read_port_candidates(
        placement_client, snapshot, concurrency)
    return snapshot
