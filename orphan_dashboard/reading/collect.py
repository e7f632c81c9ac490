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

"""Reading Nova and Placement into a :class:`~audit.model.Snapshot` (I/O).

Two shapes: the full sweep behind the index and ``orphan-audit``, and the
narrow re-read of a few consumers that every repair does at submit time.
"""

import concurrent.futures
import dataclasses
import datetime
import logging
import threading

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import client
from orphan_dashboard.api import glance
from orphan_dashboard.api import keystone
from orphan_dashboard.api import neutron
from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import ports
from orphan_dashboard.audit import refresh
from orphan_dashboard.audit.topology import proven_hypervisors
from orphan_dashboard.audit.topology import unconfirmed_held_roots
from orphan_dashboard import conf

LOG = logging.getLogger(__name__)
DEFAULT_CONCURRENCY = conf.CONCURRENCY.default
KINDS = ('servers', 'migrations', 'providers')
"""What a sweep reports progress on: servers and migrations listed,
providers' allocations read."""


class Progress:
    """What a sweep has read so far, out of what it expects; this one
    ignores it (see :class:`snapshots.CacheProgress` and the CLI's bar).
    Called from the sweep's threads."""

    def total(self, kind, count):
        """``count`` of ``kind`` are expected (an estimate for servers and
        migrations: the last snapshot's)."""

    def advance(self, kind, count=1):
        """``count`` more of ``kind`` were read."""

    def flush(self, force=False):
        """Show what was read (throttled unless ``force``)."""

    def close(self):
        """The sweep is over."""


NO_PROGRESS = Progress()


class Tee(Progress):
    """Progress told to several listeners (the cache and a terminal)."""

    def __init__(self, *listeners):
        self.listeners = listeners

    def total(self, kind, count):
        for listener in self.listeners:
            listener.total(kind, count)

    def advance(self, kind, count=1):
        for listener in self.listeners:
            listener.advance(kind, count)

    def flush(self, force=False):
        for listener in self.listeners:
            listener.flush(force)


def _hold_connections(concurrency, *clients):
    """A connection kept for each request a sweep has in flight at most:
    ``concurrency`` reads (providers' and consumers') beside its four
    listings (servers, migrations, the pre-1.8 owners, ports) and the five
    of its topology."""
    for each in clients:
        client.hold_connections(each, concurrency + 9)


def _map(func, items, concurrency):
    """``{item: func(item)}`` with at most ``concurrency`` calls in flight."""
    items = list(items)
    if not items:
        return {}
    workers = max(1, min(concurrency, len(items)))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return dict(zip(items, pool.map(func, items)))


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def _roots(providers):
    return {p.root_uuid for p in providers.values()}


def read_topology(placement_client, nova_client, old=None, reads=None):
    """Providers, sharing providers, hypervisors, compute services and
    the ``OWNER_*`` traits of the providers.

    The five listings are independent: they go out together; the listing
    of the providers carrying each ``OWNER_*`` trait follows as soon as
    Placement has said which exist, and the sweep's ``reads`` of each
    provider (:class:`_ProviderReads`) as soon as it has listed them.  The
    hypervisor listing is the costly one: it is reused from ``old`` while
    the set of root providers stays the same and ``old`` had it whole.
    Nova fails it (500) while any cell is down: then ``hypervisors`` are
    the ones the services and ``old`` prove (see :func:`prove`) and
    ``hypervisors_listed`` is False.
    """
    reuse = old is not None and old.hypervisors_listed
    if reads is None:
        reads = _ProviderReads(placement_client, old)
    with concurrent.futures.ThreadPoolExecutor(5) as pool:
        provider_list = pool.submit(placement.provider_list, placement_client)
        sharing = pool.submit(placement.sharing_provider_uuids,
                              placement_client)
        owner_traits = pool.submit(placement.owner_traits, placement_client)
        services = pool.submit(nova.service_list, nova_client)
        hypervisor_list = (pool.submit(nova.hypervisor_list, nova_client)
                           if not reuse else None)
        holders = {trait: pool.submit(placement.trait_holders,
                                      placement_client, trait)
                   for trait in owner_traits.result()}
        providers = {p['uuid']: parse.provider(p)
                     for p in provider_list.result()}
        reads.listed(providers)
        services = {s.host: s for s in map(parse.service, services.result())}
        listed = True
        if reuse and _roots(old.providers) == _roots(providers):
            hypervisors = dict(old.hypervisors)
        else:
            try:
                hypervisors = {h.uuid: h for h in map(
                    parse.hypervisor, (hypervisor_list or pool.submit(
                        nova.hypervisor_list, nova_client)).result())}
            except ks_exc.InternalServerError as exc:
                LOG.warning('Nova could not list its hypervisors (%s): a '
                            'cell is down, the audit is partial', exc)
                listed = False
                hypervisors = proven_hypervisors(
                    providers, services,
                    known=old.hypervisors.values() if old else ())
        tagged = _owner_traits({t: f.result() for t, f in holders.items()})
        sharing_providers = frozenset(sharing.result())
        return dict(
            providers=providers,
            sharing_providers=sharing_providers,
            hypervisors=hypervisors,
            hypervisors_listed=listed,
            services=services,
            owner_traits=tagged,
            inventory_classes=_inventory_classes(
                reads, providers, hypervisors,
                set(tagged) | sharing_providers),
        )


def _owner_traits(holders):
    """``{provider uuid: its OWNER_* traits}`` from ``{trait: uuids of
    the providers carrying it}``."""
    tagged = {}
    for trait, uuids in holders.items():
        for uuid in uuids:
            tagged.setdefault(uuid, set()).add(trait)
    return {uuid: frozenset(traits) for uuid, traits in tagged.items()}


def read_ports(network_client, servers=None):
    """``dict(ports=..., neutron=...)``: the ports that request resources
    (those of ``servers`` only, when given) and :data:`~model.NEUTRON_READ`,
    or no ports and why Neutron could not be read: absent from the
    catalog, refusing, or down.  Never raises: port allocations are then
    protected, the rest of the audit goes on."""
    if network_client is None:
        return dict(ports=None, neutron=m.NEUTRON_ABSENT)
    try:
        bodies = (neutron.resource_ports(network_client) if servers is None
                  else neutron.server_ports(network_client, servers)
                  if servers else [])
    except (ks_exc.EndpointNotFound, ks_exc.EmptyCatalog):
        return dict(ports=None, neutron=m.NEUTRON_ABSENT)
    except (ks_exc.Forbidden, ks_exc.Unauthorized) as exc:
        LOG.warning('Neutron refused to list ports (%s): port allocations '
                    'are protected', exc)
        return dict(ports=None, neutron=m.NEUTRON_FORBIDDEN)
    except Exception as exc:
        LOG.warning('Neutron could not be read (%s): port allocations are '
                    'protected', exc)
        return dict(ports=None, neutron=m.NEUTRON_DOWN)
    return dict(ports={p.id: p for p in map(parse.port, bodies)},
                neutron=m.NEUTRON_READ)


def read_images(image_client, servers, concurrency=DEFAULT_CONCURRENCY,
                known=None):
    """``servers`` (``{uuid: Server}``) with their images' properties,
    each image read once, ``concurrency`` at a time (``known``: ``{image
    id: properties}`` read before, not read again); where an image cannot
    be read, why (deleted, no image service in the catalog, refused, no
    answer).  Never raises: what an image could explain is then never
    rewritten, the rest of the audit goes on."""
    found = dict(known or {})
    wanted = sorted({s.image_ref for s in servers.values()
                     if s.image_ref and not s.down_cell} - set(found))

    def read(image_id):
        if image_client is None:
            return m.IMAGE_ABSENT
        try:
            body = glance.image_get(image_client, image_id)
        except (ks_exc.EndpointNotFound, ks_exc.EmptyCatalog):
            return m.IMAGE_ABSENT
        except (ks_exc.Forbidden, ks_exc.Unauthorized) as exc:
            LOG.warning('Glance refused to show image %s (%s)', image_id,
                        exc)
            return m.IMAGE_FORBIDDEN
        except Exception as exc:
            LOG.warning('Glance could not be read (%s)', exc)
            return m.IMAGE_DOWN
        return m.IMAGE_GONE if body is None else \
            parse.image_properties(body)

    faults = {}
    for image_id, got in _map(read, wanted, concurrency).items():
        if isinstance(got, dict):
            found[image_id] = got
        else:
            faults[image_id] = got
    return {uuid: dataclasses.replace(
        server, image_properties=found.get(server.image_ref),
        image_fault=faults.get(server.image_ref))
        if server.image_ref and not server.down_cell else server
        for uuid, server in servers.items()}


def read_port_candidates(placement_client, snapshot,
                         concurrency=DEFAULT_CONCURRENCY):
    """``{server uuid: ({group: provider}, ...)}``: Placement's allocation
    candidates for the request groups of each server's ports that their
    binding places nowhere in the tree of its node
    (:func:`ports.to_place`) and that it does not already hold there
    (:func:`ports.held_unclaimed`), one request per such server (there are
    normally none).  A request Placement refuses (a trait it does not
    know) is no candidate; one it does not answer is None (unknown), and
    the rest of the sweep goes on."""
    if not snapshot.ports:
        return {}
    topology = classify.Topology(snapshot)
    asked = {}
    for server in snapshot.servers.values():
        placing = ports.to_place(topology, server)
        root = topology.server_root(server)
        if placing and root is not None and \
                ports.held_unclaimed(topology, server, placing) is None:
            asked[server.uuid] = (root, {
                g: (snapshot.ports[p].requests[g],
                    snapshot.ports[p].required.get(g, ()))
                for p, groups in placing.items() for g in groups})

    def read(server_uuid):
        root, groups = asked[server_uuid]
        try:
            return tuple(placement.port_candidates(placement_client, groups,
                                                   root))
        except ks_exc.BadRequest as exc:
            LOG.warning('Placement refused the allocation candidates of '
                        "server %s's ports (%s)", server_uuid, exc)
            return ()
        except ks_exc.ClientException as exc:
            LOG.warning('Placement did not give the allocation candidates '
                        "of server %s's ports (%s): they are not healed "
                        'this time', server_uuid, exc)
            return None

    return _map(read, sorted(asked), concurrency)


def _down_cell_servers(nova_client, topo):
    """``{uuid: Server}``, the partial records of a down cell's servers
    when ``topo`` shows one (none of Nova's paged listings has them)."""
    if topo.get('hypervisors_listed', True) and not any(
            s.status == m.DOWN_CELL_STATUS for s in topo['services'].values()):
        return {}
    return {s.uuid: s for s in map(parse.server,
                                   nova.down_cell_servers(nova_client))}


def prove(topo, servers):
    """``topo`` (:func:`read_topology`'s) with the compute nodes that
    ``servers`` (the healthy cells' live on them) prove, when Nova's
    hypervisor listing failed."""
    if not topo.get('hypervisors_listed', True):
        topo['hypervisors'] = proven_hypervisors(
            topo['providers'], topo['services'], servers,
            known=topo['hypervisors'].values())
    return topo


def confirm_nodes(nova_client, snapshot, concurrency):
    """``snapshot`` with the compute nodes Nova shows one by one (``GET
    /os-hypervisors/{uuid}``) among those its failed listing left
    unconfirmed and that hold an allocation
    (:func:`unconfirmed_held_roots`): an Ironic node of a healthy cell has
    neither a name nor a server that proves it.  A node Nova does not show
    stays unconfirmed."""
    shown = _map(lambda u: nova.hypervisor_get(nova_client, u),
                 unconfirmed_held_roots(snapshot), concurrency)
    snapshot.hypervisors = dict(snapshot.hypervisors, **{
        u: parse.hypervisor(body) for u, body in shown.items()
        if body is not None})
    return snapshot


def _inventory_classes(reads, providers, hypervisors, known):
    """The resource classes of the roots Nova lists no compute node for
    (and that are not ``known``: tagged with an ``OWNER_*`` trait, or
    sharing): whose they are depends on them.  Taken from the inventories
    the sweep ``reads``; a provider deleted meanwhile is left out."""
    classes = {}
    for uuid, provider in providers.items():
        if uuid == provider.root_uuid and uuid not in hypervisors and \
                uuid not in known:
            inventories = reads.inventory(uuid)
            if inventories is not None:
                classes[uuid] = tuple(sorted(inventories))
    return classes


class _ProviderReads:
    """What a sweep reads of each provider, sent to ``pool`` as soon as
    :func:`read_topology` has listed the providers (:meth:`listed`), as on
    the floor's schedule, not after Nova's hypervisors: their inventories,
    ``old``'s kept where a provider's generation has not moved (every
    inventory write bumps it).  Without a ``pool`` (a topology read
    alone) an inventory is read only when :meth:`inventory` asks."""

    def __init__(self, placement_client, old=None, pool=None):
        self._client = placement_client
        self._old = old if old is not None and \
            old.inventories is not None else None
        self._pool = pool
        self._providers = {}
        self._inventories = {}

    def listed(self, providers):
        """``providers`` (``{uuid: Provider}``) are listed."""
        self._providers = providers
        if self._pool is not None:
            for uuid, provider in providers.items():
                if not self._kept(uuid, provider):
                    self._inventories[uuid] = self._pool.submit(
                        self._read_inventories, uuid)

    def _kept(self, uuid, provider):
        return self._old is not None and uuid in self._old.inventories \
            and self._old.providers.get(uuid) == provider

    def _read_inventories(self, uuid):
        try:
            return placement.provider_inventories(self._client, uuid)
        except ks_exc.NotFound:
            return None

    def inventory(self, uuid):
        """``{class: inventory}`` of the listed provider ``uuid``, None if
        it was deleted since the listing."""
        if uuid in self._inventories:
            return self._inventories[uuid].result()
        if self._kept(uuid, self._providers[uuid]):
            return self._old.inventories[uuid]
        return self._read_inventories(uuid)

    def inventories(self):
        """``{provider: {class: inventory}}`` of every listed provider
        still there."""
        found = {u: self.inventory(u) for u in self._providers}
        return {u: i for u, i in found.items() if i is not None}


class _SweepReads(_ProviderReads):
    """A full sweep's reads of each provider: its inventories and its
    allocations, ``concurrency`` at a time between them (see
    :func:`full_snapshot`)."""

    def __init__(self, placement_client, pool, progress):
        super().__init__(placement_client, pool=pool)
        self._progress = progress
        self._allocations = {}

    def listed(self, providers):
        super().listed(providers)
        self._progress.total('providers', len(providers))
        for uuid in providers:
            self._allocations[uuid] = self._pool.submit(
                _read_allocations, self._client, self._progress, uuid)

    def allocations(self):
        """``{provider: allocations}`` of every listed provider."""
        return {u: f.result() for u, f in self._allocations.items()}


def _identify(snapshot, placement_client, nova_client, uuids, concurrency,
              keep_known=False, fresh=frozenset()):
    """Read details of consumers the audit may act on.

    Project, user and age come only from ``GET /allocations/{consumer}``
    (not read again for the ``fresh`` consumers, whose entry in
    ``snapshot`` this sweep took from it); whether Nova knew a non-server
    consumer only from its instance actions (unresolved when Nova would not
    say), asked in the same round.  A consumer the sweep saw holding
    nothing (a server missing its allocations) has nothing to identify: it
    is not read.
    """
    def holds(uuid):
        consumer = snapshot.consumers.get(uuid)
        return bool(consumer and consumer.allocations)

    uuids = [u for u in uuids if holds(u)]
    strangers = [u for u in uuids if u not in snapshot.servers and
                 u not in snapshot.migrations]
    calls = [('details', u) for u in uuids if u not in fresh] + \
        [('known', u) for u in strangers]
    answers = _map(lambda call: (
        placement.consumer_allocations(placement_client, call[1])
        if call[0] == 'details' else
        nova.instance_known(nova_client, call[1])), calls, concurrency)
    for uuid in uuids:
        if uuid not in fresh:
            snapshot.consumers[uuid] = parse.consumer(
                uuid, answers[('details', uuid)])
    known = {u: answers[('known', u)] for u in strangers if holds(u)}
    asked = set(known)
    snapshot.known_instances = frozenset(
        (snapshot.known_instances - asked if keep_known else set()) |
        {u for u, k in known.items() if k})
    snapshot.unresolved = frozenset(
        (snapshot.unresolved - asked if keep_known else set()) |
        {u for u, k in known.items() if k is None})


def _read_allocations(placement_client, progress, provider):
    """One provider's allocations, counted as read."""
    allocations = placement.provider_allocations(placement_client, provider)
    progress.advance('providers')
    return allocations


def _provider_reads(placement_client, providers, concurrency, progress):
    progress.total('providers', len(providers))
    return _map(lambda rp: _read_allocations(placement_client, progress, rp),
                providers, concurrency)


def _estimate(progress, old):
    """The last snapshot's counts stand for the totals of a listing."""
    if old is not None:
        progress.total('servers', len(old.servers))
        progress.total('migrations', len(old.migrations))


def _listed(progress, kind, then=None):
    """An ``on_page`` for Nova's listings: progress, then ``then(page)``."""
    def on_page(page):
        progress.advance(kind, len(page))
        if then is not None:
            then(page)
    return on_page


def full_snapshot(placement_client, nova_client,
                  concurrency=DEFAULT_CONCURRENCY, progress=NO_PROGRESS,
                  previous=None, network_client=None, image_client=None):
    """Everything, once: the input of the index page and ``orphan-audit``.
    ``previous`` (an older snapshot) only sizes the progress report."""
    taken_at = _now()
    _hold_connections(concurrency, placement_client, nova_client,
                      network_client, image_client)
    _estimate(progress, previous)
    with concurrent.futures.ThreadPoolExecutor(4) as pool, \
            concurrent.futures.ThreadPoolExecutor(concurrency) as per_provider:
        # Nova's server list is the longest read by far: Placement is read
        # meanwhile.
        server_list = pool.submit(nova.server_list, nova_client,
                                  on_page=_listed(progress, 'servers'))
        migration_list = pool.submit(nova.migration_list, nova_client,
                                     on_page=_listed(progress, 'migrations'))
        incomplete = pool.submit(placement.incomplete_usages,
                                 placement_client, m.INCOMPLETE)
        port_read = pool.submit(read_ports, network_client)
        reads = _SweepReads(placement_client, per_provider, progress)
        topo = read_topology(placement_client, nova_client, reads=reads)
        allocations = reads.allocations()
        servers = read_images(image_client, {
            s.uuid: s for s in map(parse.server, server_list.result())},
            concurrency)
        servers.update(_down_cell_servers(nova_client, topo))
        snapshot = m.Snapshot(
            consumers=parse.consumers_from_providers(allocations),
            servers=servers,
            migrations={g.uuid: g for g in map(
                parse.migration, migration_list.result())},
            taken_at=taken_at, full_sweep_at=taken_at,
            inventories=reads.inventories(), **port_read.result(),
            **prove(topo, servers.values()))
    confirm_nodes(nova_client, snapshot, concurrency)
    snapshot.port_candidates = read_port_candidates(placement_client,
                                                    snapshot, concurrency)
    _identify(snapshot, placement_client, nova_client,
              refresh.suspects(snapshot, snapshot.consumers), concurrency)
    _identify_owners(snapshot, placement_client, concurrency,
                     incomplete.result())
    return snapshot


def _identify_owners(snapshot, placement_client, concurrency, incomplete):
    """Read the owner of every consumer when some are ``incomplete``.

    The per-provider listing names no project: only ``GET /usages`` of the
    pre-1.8 placeholder project tells, in one request, that such consumers
    exist (they are rare: written before Pike; a sweep asks it with its
    first reads); then each consumer whose owner is not known yet is read.
    """
    if not incomplete:
        return
    unknown = [u for u, c in snapshot.consumers.items()
               if c.allocations and c.project_id is None]
    for uuid, body in _map(lambda u: placement.consumer_allocations(
            placement_client, u), unknown, concurrency).items():
        snapshot.consumers[uuid] = parse.consumer(uuid, body)


def owner_names(identity_client):
    """``{'projects': {id: name}, 'users': {id: name}}`` from Keystone,
    empty where it will not say (no Keystone endpoint, no permission):
    names are shown next to ids, never a reason to fail a sweep."""
    names = {'projects': {}, 'users': {}}
    if identity_client is None:
        return names
    for kind, read in (('projects', keystone.project_names),
                       ('users', keystone.user_names)):
        try:
            names[kind] = read(identity_client)
        except Exception as exc:
            LOG.warning('Keystone did not list %s (%s): ids are shown '
                        'without names', kind, exc)
    return names


def reread_consumers(placement_client, snapshot, uuids,
                     concurrency=DEFAULT_CONCURRENCY):
    """These consumers read again into ``snapshot``, after writes."""
    for uuid, body in _map(lambda u: placement.consumer_allocations(
            placement_client, u), sorted(uuids), concurrency).items():
        consumer = parse.consumer(uuid, body)
        if consumer.allocations:
            snapshot.consumers[uuid] = consumer
        else:
            snapshot.consumers.pop(uuid, None)


CLOCK_MARGIN = datetime.timedelta(seconds=5)
"""Overlap between refreshes, for clock skew between us and Nova."""


class _Rereads(_ProviderReads):
    """A refresh's reads, in ``pool`` as soon as a listing names them,
    each once, overlapping Nova's listings instead of following them:
    consumers' details, and of each provider whose generation moved since
    ``old``, its usages and its inventories (none of the others)."""

    def __init__(self, pool, placement_client, old):
        super().__init__(placement_client, old, pool)
        self._before = old.providers
        self._lock = threading.Lock()
        self._consumers = {}
        self._usages = {}

    def listed(self, providers):
        self.usages(_moved(self._before, providers))
        super().listed(providers)

    def consumers(self, uuids):
        self._submit(self._consumers, placement.consumer_allocations, uuids)

    def usages(self, providers):
        self._submit(self._usages, placement.provider_usages, providers)

    def _submit(self, reads, read, keys):
        with self._lock:
            for key in keys:
                if key not in reads:
                    reads[key] = self._pool.submit(read, self._client, key)

    def results(self):
        """``({consumer: allocations body}, {provider: usages})``."""
        with self._lock:
            consumers, usages = dict(self._consumers), dict(self._usages)
        return ({u: f.result() for u, f in consumers.items()},
                {rp: f.result() for rp, f in usages.items()})


def _moved(old_providers, providers):
    """Providers whose generation moved since ``old_providers``."""
    return [uuid for uuid, provider in providers.items()
            if uuid in old_providers and
            old_providers[uuid].generation != provider.generation]


def refresh_snapshot(placement_client, nova_client, old,
                     concurrency=DEFAULT_CONCURRENCY, touched=(),
                     progress=NO_PROGRESS, network_client=None,
                     image_client=None):
    """Bring ``old`` up to date reading only what changed since.

    Nova answers ``changes-since`` for servers (deleted ones included) and
    migrations, whose consumers are re-read one by one (each page's as
    soon as it is listed), as are the ones we wrote (``touched``);
    Placement's provider list says whose generation moved (see
    :func:`_bring_up_to_date`).  A ``DELETE /allocations``, or a PUT that
    drops a provider, bumps no generation of the providers it empties: our
    own writes are named in ``touched``, others' wait for the next full
    sweep (see :func:`snapshot`).

    The ports that request resources are read whole again: Neutron has no
    ``changes-since``, and a port deleted behind Nova's back, the leak
    looked for, changes nothing in Placement or Nova that a refresh sees.
    """
    taken_at = _now()
    _hold_connections(concurrency, placement_client, nova_client,
                      network_client, image_client)
    since = (old.taken_at - CLOCK_MARGIN).isoformat()
    with concurrent.futures.ThreadPoolExecutor(concurrency + 2) as pool:
        reads = _Rereads(pool, placement_client, old)
        server_changes = pool.submit(
            nova.server_list, nova_client,
            on_page=_listed(progress, 'servers', lambda page: reads.consumers(
                s['id'] for s in page)),
            **{'changes-since': since})
        migration_changes = pool.submit(
            nova.migration_list, nova_client,
            on_page=_listed(progress, 'migrations', lambda page: (
                reads.consumers(u for g in page for u in (
                    g['uuid'], g['instance_uuid'])))),
            **{'changes-since': since})
        incomplete = pool.submit(placement.incomplete_usages,
                                 placement_client, m.INCOMPLETE)
        port_read = pool.submit(read_ports, network_client)
        reads.consumers(touched)
        topo = read_topology(placement_client, nova_client, old, reads)
        providers = topo['providers']

        servers = dict(old.servers)
        for body in server_changes.result():
            if body.get('status') == 'DELETED':
                servers.pop(body['id'], None)
            else:
                servers[body['id']] = parse.server(body)
        servers.update(read_images(image_client, {
            u: s for u, s in servers.items()
            if s is not old.servers.get(u) or (
                s.image_unknown and s.image_fault != m.IMAGE_GONE)},
            concurrency, known={
                s.image_ref: s.image_properties
                for s in old.servers.values()
                if s.image_properties is not None}))
        servers.update(_down_cell_servers(nova_client, topo))
        migrations = dict(old.migrations)
        migrations.update((g.uuid, g) for g in map(
            parse.migration, migration_changes.result()))
        changed, usages = reads.results()
        inventories = reads.inventories()

    consumers = _bring_up_to_date(placement_client, old, providers, changed,
                                  usages, concurrency, progress)
    snapshot = m.Snapshot(
        consumers=consumers, servers=servers, migrations=migrations,
        known_instances=frozenset(
            u for u in old.known_instances if u in consumers),
        unresolved=frozenset(u for u in old.unresolved if u in consumers),
        taken_at=taken_at, full_sweep_at=old.full_sweep_at,
        inventories=inventories, **port_read.result(),
        **prove(topo, servers.values()))
    confirm_nodes(nova_client, snapshot, concurrency)
    snapshot.port_candidates = read_port_candidates(placement_client,
                                                    snapshot, concurrency)
    unidentified = refresh.suspects(snapshot, [
        u for u, consumer in consumers.items()
        if u in changed or u not in old.consumers or
        consumer.modified is None])
    _identify(snapshot, placement_client, nova_client, unidentified,
              concurrency, keep_known=True,
              fresh={u for u in changed if u in consumers and
                     consumers[u].modified is not None})
    _identify_owners(snapshot, placement_client, concurrency,
                     incomplete.result())
    return snapshot


def _bring_up_to_date(placement_client, old, providers, changed, usages,
                      concurrency, progress):
    """``old``'s consumers brought up to date.

    ``changed`` are the allocations bodies of the consumers Nova or we
    changed, read one by one.  A provider whose generation moved for
    anything else (another service, an operator's ``allocation set``)
    shows it in its ``usages``: where they are not what the consumers now
    hold, the provider is re-read whole, as is every new provider.  (A
    change that keeps a provider's every total, between consumers Nova does
    not know, waits for the next full sweep.)
    """
    consumers = refresh.carried_over(old, providers, changed)
    fresh = _provider_reads(
        placement_client, refresh.to_reread(old, providers, consumers, usages),
        concurrency, progress)
    return refresh.merged(old, consumers, fresh)


def snapshot(placement_client, nova_client, cached=None,
             full_sweep_interval=conf.FULL_SWEEP.default,
             concurrency=DEFAULT_CONCURRENCY,
             touched=(), progress=NO_PROGRESS, full=False,
             network_client=None, image_client=None):
    """A full sweep (when asked, due, or ``cached`` is partial: a down
    cell's servers show in no refresh), or a refresh of ``cached``;
    ``touched`` are the consumers written since ``cached`` was taken."""
    if full or cached is None or cached.full_sweep_at is None or (
            cached.down_cells) or (
            _now() - cached.full_sweep_at).total_seconds() >= \
            full_sweep_interval:
        return full_snapshot(placement_client, nova_client, concurrency,
                             progress, previous=cached,
                             network_client=network_client,
                             image_client=image_client)
    return refresh_snapshot(placement_client, nova_client, cached,
                            concurrency, touched, progress,
                            network_client=network_client,
                            image_client=image_client)


def consumer_snapshot(placement_client, nova_client, consumer_uuids,
                      instance_hints=(), providers=(), topology=None,
                      concurrency=DEFAULT_CONCURRENCY, network_client=None,
                      image_client=None):
    """Just these consumers, read now, for a preview or a submit.

    What each consumer is comes from Nova, never from the request: a server
    answers ``GET /servers/{id}``; a migration consumer is found among the
    migrations of the compute hosts its allocations are on (Nova lists
    migrations by host or instance, not by uuid), or those of ``providers``
    (where a restore would put it).  ``instance_hints`` are server uuids
    from the snapshot the operator was shown (server side) whose
    migrations are read too.  Where a provider's host is unknown (no
    compute node left), every migration is read, as a sweep does.
    ``topology`` is :func:`read_topology`'s, if the caller just read it.
    The servers' ports that request resources are read from Neutron, their
    images from Glance.
    """
    taken_at = _now()
    _hold_connections(concurrency, placement_client, nova_client,
                      network_client, image_client)
    uuids = sorted(set(consumer_uuids))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        read = pool.submit(lambda: topology or read_topology(
            placement_client, nova_client))
        found = _map(lambda u: nova.server_get(nova_client, u), uuids,
                     concurrency)
        servers = read_images(image_client, {
            u: parse.server(b) for u, b in found.items() if b is not None},
            concurrency)
        snapshot = m.Snapshot(
            consumers={}, servers=servers, migrations={}, taken_at=taken_at,
            **prove(dict(read.result()), servers.values()))
    details = _map(lambda u: placement.consumer_allocations(
        placement_client, u), uuids, concurrency)
    snapshot.consumers.update(
        (u, parse.consumer(u, body)) for u, body in details.items())
    confirm_nodes(nova_client, snapshot, concurrency)

    topo = classify.Topology(snapshot)
    strangers = [u for u in uuids if u not in snapshot.servers]
    places = set(providers) | {p for u in strangers
                               for p in snapshot.consumers[u].allocations}
    hosts = {topo.host(p) or topo.name(topo.root(p)) for p in places}
    hostless = any(topo.host(p) is None for p in places)
    queries = [('instance_uuid', u) for u in
               sorted(set(snapshot.servers) | set(instance_hints))]
    queries += [('host', h) for h in sorted(hosts)]
    migrations = {}
    for listed in _map(lambda q: nova.migration_list(nova_client, **{
            q[0]: q[1]}), queries, concurrency).values():
        migrations.update((g.uuid, g) for g in map(parse.migration, listed))
    if hostless and not all(u in migrations for u in strangers):
        migrations.update((g.uuid, g) for g in map(
            parse.migration, nova.migration_list(nova_client)))
    snapshot.migrations = migrations

    unknown = [u for u in strangers if u not in migrations]
    known = _map(lambda u: nova.instance_known(nova_client, u), unknown,
                 concurrency)
    snapshot.known_instances = frozenset(u for u, k in known.items() if k)
    snapshot.unresolved = frozenset(u for u, k in known.items() if k is None)
    for field, value in read_ports(network_client,
                                   sorted(snapshot.servers)).items():
        setattr(snapshot, field, value)
    snapshot.port_candidates = read_port_candidates(placement_client,
                                                    snapshot, concurrency)
    return snapshot
