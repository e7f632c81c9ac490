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

The full sweep behind the index and ``orphan-audit``, and the readers it
shares with the refresh and the re-reads of :mod:`refresh`.
"""

import concurrent.futures
import dataclasses
import datetime
import logging
import time

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import client
from orphan_dashboard.api import keystone
from orphan_dashboard.api import neutron
from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import ownership
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import ports
from orphan_dashboard.audit import refresh
from orphan_dashboard.audit.topology import proven_hypervisors
from orphan_dashboard.audit.topology import unlisted_roots
from orphan_dashboard import conf
from orphan_dashboard.reading.progress import NO_PROGRESS

LOG = logging.getLogger(__name__)
DEFAULT_CONCURRENCY = conf.CONCURRENCY.default


def hold_connections(concurrency, *clients):
    """A connection kept for each request a sweep has in flight at most:
    ``concurrency`` reads (providers' and consumers') beside its four
    listings (servers, migrations, the pre-1.8 owners, ports) and the five
    of its topology."""
    for each in clients:
        client.hold_connections(each, concurrency + 9)


def concurrently(func, items, concurrency):
    """``{item: func(item)}`` with at most ``concurrency`` calls in flight."""
    items = list(items)
    if not items:
        return {}
    workers = max(1, min(concurrency, len(items)))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return dict(zip(items, pool.map(func, items)))


def read_capacity(placement_client, providers, concurrency):
    """``({provider: inventories}, {provider: usages})`` of ``providers``
    read now, as ``GET .../inventories`` and ``.../usages`` give them; a
    provider deleted meanwhile, or that Placement did not answer for, is
    in neither (what it takes is then known from the write's answer
    only)."""
    def read(uuid):
        try:
            return (placement.provider_inventories(placement_client, uuid),
                    placement.provider_usages(placement_client, uuid))
        except ks_exc.NotFound:
            return None
        except ks_exc.ClientException as exc:
            LOG.warning('capacity of provider %s not read: %s', uuid, exc)
            return None
    found = {u: r for u, r in concurrently(
        read, sorted(providers), concurrency).items() if r is not None}
    return ({u: r[0] for u, r in found.items()},
            {u: r[1] for u, r in found.items()})


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def _roots(providers):
    return {p.root_uuid for p in providers.values()}


def read_topology(placement_client, nova_client, old=None, reads=None,
                  down_cell=None):
    """Providers, sharing providers, hypervisors, compute services and
    the ``OWNER_*`` traits of the providers.

    The five listings are independent: they go out together; the listing
    of the providers carrying each ``OWNER_*`` trait follows as soon as
    Placement has said which exist, the sweep's ``reads`` of each
    provider (:class:`ProviderReads`) as soon as it has listed them, and
    its ``down_cell`` listing (:class:`DownCellListing`) as soon as Nova's
    services show a cell it did not reach.  The
    hypervisor listing is the costly one: it is reused from ``old`` while
    the set of root providers stays the same and ``old`` had it whole.
    Nova fails it (500) while any cell is down: then ``hypervisors`` are
    the ones the services and ``old`` prove (see :func:`prove`) and
    ``hypervisors_listed`` is False.
    """
    reuse = old is not None and old.hypervisors_listed
    if reads is None:
        reads = ProviderReads(placement_client, old)
    with concurrent.futures.ThreadPoolExecutor(5) as pool:
        provider_list = pool.submit(placement.provider_list, placement_client)
        sharing = pool.submit(placement.sharing_provider_uuids,
                              placement_client)
        owner_traits = pool.submit(placement.owner_traits, placement_client)
        service_list = pool.submit(_services, nova_client)

        def cell_missing():
            try:
                listed, _seconds = service_list.result()
            except Exception:
                return False
            return bool(m.down_hosts(listed.values()))

        def list_hypervisors():
            return pool.submit(nova.hypervisor_list, nova_client,
                               cell_missing)
        hypervisor_list = list_hypervisors() if not reuse else None
        holders = {trait: pool.submit(placement.trait_holders,
                                      placement_client, trait)
                   for trait in owner_traits.result()}
        providers = {p['uuid']: parse.provider(p)
                     for p in provider_list.result()}
        reads.listed(providers)
        services, services_wait = service_list.result()
        if down_cell is not None and cell_missing():
            down_cell.start()
        listed = True
        if reuse and _roots(old.providers) == _roots(providers):
            hypervisors = dict(old.hypervisors)
        else:
            try:
                hypervisors = {h.uuid: h for h in map(
                    parse.hypervisor,
                    (hypervisor_list or list_hypervisors()).result())}
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
            services_wait=services_wait,
            services_timed_out=not within_cell_timeout(nova_client,
                                                       services_wait),
            owner_traits=tagged,
            inventory_classes=_inventory_classes(
                reads, providers, hypervisors,
                set(tagged) | sharing_providers),
        )


TOPOLOGY = ('providers', 'sharing_providers', 'hypervisors',
            'hypervisors_listed', 'services', 'services_wait',
            'services_timed_out', 'owner_traits', 'inventory_classes')
"""What :func:`read_topology` reads, as a snapshot keeps it."""


def topology_of(snapshot):
    """``snapshot``'s topology, as :func:`read_topology` returned it: a
    snapshot read after the click (the command line's own sweep) spares
    the consumers' re-read its listings."""
    return {field: getattr(snapshot, field) for field in TOPOLOGY}


def _services(nova_client):
    """``({host: Service}, the seconds Nova took to list them)``."""
    listed, seconds = timed(nova.service_list, nova_client)
    return {s.host: s for s in map(parse.service, listed)}, seconds


def timed(read, *args, **kwargs):
    """``(read(*args, **kwargs), the seconds it took)``."""
    started = time.monotonic()
    return read(*args, **kwargs), time.monotonic() - started


def within_cell_timeout(nova_client, seconds):
    """A Nova listing that took ``seconds`` answered before its cells'
    timer ran out (``nova.compute.multi_cell_list`` checks one timer for
    every cell between records): it dropped none of a healthy cell's
    records.  A client that names no timeout waits Nova's default."""
    limit = getattr(nova_client, 'cell_timeout', None)
    if not isinstance(limit, (int, float)):
        limit = conf.NOVA_CELL_TIMEOUT.default
    return seconds < limit


def read_host_migrations(nova_client, snapshot, concurrency,
                         complete=frozenset()):
    """``snapshot`` with the migrations of each host holding a consumer
    nothing identifies (no server, migration or instance Nova knows),
    listed by host (``os-migrations?host=``), concurrently, once: what
    a listing cut short left out is found, and
    ``snapshot.migration_hosts`` are the hosts whose listing answered
    within Nova's cell timeout (:func:`within_cell_timeout`), ``complete``
    (hosts read so already) with them.  One Nova does not answer for stays
    unread, and what it may own protected."""
    topo = classify.Topology(snapshot)
    hosts = {topo.migration_host(p) for u in strangers(snapshot)
             for p in snapshot.consumers[u].allocations} - set(complete)
    snapshot.migration_hosts = frozenset(complete) | by_host(
        nova_client, snapshot, hosts, concurrency,
        'its consumers stay protected')
    return snapshot


def by_host(nova_client, snapshot, hosts, concurrency, meaning):
    """``snapshot``'s migrations with those Nova lists for each of
    ``hosts`` (``os-migrations?host=``), concurrently; the hosts whose
    listing answered within Nova's cell timeout.  One Nova does not
    answer for is not read (logged with its ``meaning``)."""
    whole = set()
    for host, answer in ask_each(
            lambda h: timed(nova.migration_list, nova_client, host=h),
            sorted(hosts), concurrency, meaning).items():
        if answer is NOT_SHOWN:
            continue
        listed, seconds = answer
        snapshot.migrations.update(
            (g.uuid, g) for g in map(parse.migration, listed))
        if within_cell_timeout(nova_client, seconds):
            whole.add(host)
    return whole


def strangers(snapshot):
    """The consumers holding allocations that no server, migration or
    instance Nova knows of identifies."""
    return [u for u, c in snapshot.consumers.items()
            if c.allocations and u not in snapshot.servers and
            u not in snapshot.migrations and
            u not in snapshot.known_instances]


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
    catalog, refusing, hiding a field the audit reads, or down.  Never
    raises: port allocations are then protected, the rest of the audit
    goes on."""
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
    except neutron.FieldsHidden as exc:
        LOG.warning("Neutron's policy hid %s of the ports: port "
                    'allocations are protected', exc)
        return dict(ports=None, neutron=m.NEUTRON_HIDDEN)
    except Exception as exc:
        LOG.warning('Neutron could not be read (%s): port allocations are '
                    'protected', exc)
        return dict(ports=None, neutron=m.NEUTRON_DOWN)
    return dict(ports={p.id: p for p in map(parse.port, bodies)},
                neutron=m.NEUTRON_READ)


def read_boot_images(nova_client, snapshot, uuids,
                     concurrency=DEFAULT_CONCURRENCY):
    """The servers ``uuids`` of ``snapshot`` with the properties of the
    image Nova booted each from, read one by one (``GET /servers/{id}``,
    :func:`nova.server_get`), ``concurrency`` at a time; where Nova did not
    show them, why.  Never Glance: an image's owner may change its
    properties after boot, and Nova allocated from its own copy.  Never
    raises: what an image could explain is then never rewritten, the rest
    of the audit goes on."""
    def read(uuid):
        try:
            body = nova.server_get(nova_client, uuid)
        except (ks_exc.Forbidden, ks_exc.Unauthorized) as exc:
            LOG.warning('Nova refused to show server %s (%s)', uuid, exc)
            return None, m.IMAGE_FORBIDDEN
        except Exception as exc:
            LOG.warning('Nova did not show server %s (%s)', uuid, exc)
            return None, m.IMAGE_DOWN
        if body is None:
            return None, m.IMAGE_GONE
        shown = parse.server(body)
        return shown.image_properties, shown.image_fault

    for uuid, (properties, fault) in concurrently(
            read, sorted(uuids), concurrency).items():
        snapshot.servers[uuid] = dataclasses.replace(
            snapshot.servers[uuid], image_properties=properties,
            image_fault=fault)


def judged_with_boot_images(snapshot, nova_client, uuids, concurrency):
    """Of ``uuids`` (consumers and servers), those a sweep identifies
    (:func:`refresh.suspects`), judged once the servers among them whose
    verdict rests on an image Nova did not show
    (:func:`refresh.image_unknown`) have had their boot image read."""
    suspected = refresh.suspects(snapshot, uuids)
    booted = refresh.image_unknown(snapshot, suspected)
    if not booted:
        return suspected
    read_boot_images(nova_client, snapshot, booted, concurrency)
    return (suspected - booted) | refresh.suspects(snapshot, booted)


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

    return concurrently(read, sorted(asked), concurrency)


class DownCellListing:
    """The partial records of a down cell's servers
    (:func:`nova.down_cell_servers`: none of Nova's paged listings has
    them), asked for in a thread of its own (behind no provider read) as
    soon as :func:`read_topology` has Nova's services showing a cell it
    did not reach (:meth:`start`), beside the sweep's other listings: a
    slow cell, which each of them waits for, then costs the sweep one
    wait, not one more."""

    def __init__(self, nova_client):
        self._client = nova_client
        self._listing = None

    def start(self):
        if self._listing is None:
            thread = concurrent.futures.ThreadPoolExecutor(1)
            self._listing = thread.submit(nova.down_cell_servers,
                                          self._client)
            thread.shutdown(wait=False)

    def servers(self, topo, listed):
        """``{uuid: Server}``, the partial records when ``topo`` shows a
        down cell (its listing asked for now if :meth:`start` was not
        called), but for the servers this sweep ``listed`` in full."""
        if topo.get('hypervisors_listed', True) and \
                not m.down_hosts(topo['services'].values()):
            return {}
        self.start()
        return {s.uuid: s for s in map(parse.server, self._listing.result())
                if s.uuid not in listed}


def shown_alone(snapshot, nova_client, concurrency):
    """``snapshot`` with each server Nova gave as a partial record (a down
    cell's) that holds on a compute node of a cell Nova reached read
    alone (``GET /servers/{id}``).  Nova runs one ``CELL_TIMEOUT`` for
    every cell of a server listing (``nova.compute.multi_cell_list``):
    after a slow cell, it gives up on the healthy cells' servers it had
    not yet returned, and returns them partial too (from their cell
    mappings: a server deleted by hand in its cell's database among
    them).  Alone, a server is read from its own cell; one Nova answers
    404 for is not live, and its consumer is judged as any other Nova
    does not list; one Nova does not answer for stays partial, and what
    it holds protected."""
    topo = classify.Topology(snapshot)
    asked = [u for u, s in snapshot.servers.items()
             if s.down_cell and u in snapshot.consumers and any(
                 topo.root(p) in snapshot.hypervisors and
                 topo.cut_off(p) == (None, None)
                 for p in snapshot.consumers[u].allocations)]
    for uuid, body in ask_each(
            lambda u: nova.server_get(nova_client, u), asked, concurrency,
            'it stays a partial record').items():
        if body is None:
            del snapshot.servers[uuid]
        elif body is not NOT_SHOWN:
            snapshot.servers[uuid] = parse.server(body)
    return snapshot


def prove(topo, servers):
    """``topo`` (:func:`read_topology`'s) with the compute nodes that
    ``servers`` (the healthy cells' live on them) prove, when Nova's
    hypervisor listing failed."""
    if not topo.get('hypervisors_listed', True):
        topo['hypervisors'] = proven_hypervisors(
            topo['providers'], topo['services'], servers,
            known=topo['hypervisors'].values())
    return topo


def confirm_nodes(nova_client, snapshot, concurrency, among=None):
    """``snapshot`` with each root provider Nova's hypervisor listing left
    out that may be its compute node (:func:`unlisted_roots`, those
    ``among`` these where given) asked about
    alone (``GET /os-hypervisors/{uuid}``): shown, it is a node (an Ironic
    node of a healthy cell, a node after a page Nova cut short); answered
    404 while every cell answers, it is gone (``nodes_gone``); else it
    stays unconfirmed, and what it holds protected."""
    shown = ask_each(lambda u: nova.hypervisor_get(nova_client, u),
                     [r for r in unlisted_roots(snapshot)
                      if among is None or r in among], concurrency,
                     'the compute node stays unconfirmed')
    snapshot.hypervisors = dict(snapshot.hypervisors, **{
        u: parse.hypervisor(body) for u, body in shown.items()
        if isinstance(body, dict)})
    snapshot.nodes_gone = frozenset() if snapshot.down_cells else frozenset(
        u for u, body in shown.items() if body is None)
    return snapshot


def name_migrations(nova_client, snapshot, roots, concurrency):
    """``snapshot`` with the migrations Nova lists for each of ``roots``
    that only its inventory makes look like a compute node
    (:func:`ownership.suspected`), by its name as a host
    (``os-migrations?host=``): Nova's own record that a host of that name
    was its, which a snapshot read without migrations would miss.  One
    Nova does not answer for stays unproven."""
    suspects = {snapshot.providers[r].name for r in roots
                if r in snapshot.providers and ownership.suspected(
                    ownership.root_ownership(snapshot, r))}
    by_host(nova_client, snapshot, suspects, concurrency,
            'its provider stays unproven')
    return snapshot


NOT_SHOWN = object()
"""An item Nova did not answer for: neither there nor gone."""


def ask_each(read, uuids, concurrency, meaning):
    """``{uuid: read(uuid)}``, the one-item reads that prove a verdict,
    ``concurrency`` at a time; :data:`NOT_SHOWN` where Nova did not
    answer (logged with its ``meaning``).  Never raises."""
    def ask(uuid):
        try:
            return read(uuid)
        except Exception as exc:
            LOG.warning('Nova did not answer for %s (%s): %s', uuid, exc,
                        meaning)
            return NOT_SHOWN
    return concurrently(ask, uuids, concurrency)


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


class ProviderReads:
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


class _SweepReads(ProviderReads):
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
                read_allocations, self._client, uuid, self._progress)

    def allocations(self):
        """``{provider: allocations}`` of every listed provider."""
        return {u: f.result() for u, f in self._allocations.items()}


def identify(snapshot, placement_client, nova_client, uuids, concurrency,
             keep_known=False, fresh=frozenset()):
    """Read details of consumers the audit may act on.

    Project, user and age come only from ``GET /allocations/{consumer}``
    (not read again for the ``fresh`` consumers, whose entry in
    ``snapshot`` this sweep took from it); whether Nova knew a non-server
    consumer only from its instance actions (unresolved when Nova would not
    say), asked in the same round, and whether one its actions know is
    a server Nova still shows alone (:func:`_live_after_all`).  A
    consumer the sweep saw holding nothing (a server missing its
    allocations) has nothing to identify: it is not read.
    """
    def holds(uuid):
        consumer = snapshot.consumers.get(uuid)
        return bool(consumer and consumer.allocations)

    uuids = [u for u in uuids if holds(u)]
    strangers = [u for u in uuids if u not in snapshot.servers and
                 u not in snapshot.migrations]
    calls = [('details', u) for u in uuids if u not in fresh] + \
        [('known', u) for u in strangers]
    answers = concurrently(lambda call: (
        placement.consumer_allocations(placement_client, call[1])
        if call[0] == 'details' else
        nova.instance_known(nova_client, call[1])), calls, concurrency)
    for uuid in uuids:
        if uuid not in fresh:
            snapshot.consumers[uuid] = parse.consumer(
                uuid, answers[('details', uuid)])
    known = {u: answers[('known', u)] for u in strangers if holds(u)}
    known.update(_live_after_all(snapshot, nova_client, [
        u for u, k in known.items() if k], concurrency))
    known = {u: k for u, k in known.items() if u not in snapshot.servers}
    asked = set(known)
    snapshot.known_instances = frozenset(
        (snapshot.known_instances - asked if keep_known else set()) |
        {u for u, k in known.items() if k})
    snapshot.unresolved = frozenset(
        (snapshot.unresolved - asked if keep_known else set()) |
        {u for u, k in known.items() if k is None})


def _live_after_all(snapshot, nova_client, uuids, concurrency):
    """The servers among ``uuids`` (consumers whose instance actions
    answer, which a deleted server's do as well as a live one's) that
    Nova still shows alone (``GET /servers/{id}``), added to ``snapshot``:
    a listing cut short, or a server created after its page, left them
    out, and absence from a listing is never proof of a deletion.
    ``{uuid: None}`` of those Nova did not answer for: unresolved."""
    unanswered = {}
    for uuid, body in ask_each(
            lambda u: nova.server_get(nova_client, u), uuids, concurrency,
            'its allocations are protected').items():
        if body is NOT_SHOWN:
            unanswered[uuid] = None
        elif body is not None:
            snapshot.servers[uuid] = parse.server(body)
    return unanswered


def read_allocations(placement_client, provider, progress=NO_PROGRESS):
    """One listed provider's allocations, counted as read; none where it
    was deleted since the listing: Placement deletes only a provider that
    holds nothing (409 "has allocations" else), so a sweep goes on."""
    try:
        return placement.provider_allocations(placement_client, provider)
    except ks_exc.NotFound:
        return {}
    finally:
        progress.advance('providers')


def _estimate(progress, old):
    """The last snapshot's counts stand for the totals of a listing."""
    if old is not None:
        progress.total('servers', len(old.servers))
        progress.total('migrations', len(old.migrations))


def on_page(progress, kind, then=None):
    """An ``on_page`` for Nova's listings: progress, then ``then(page)``."""
    def on_page(page):
        progress.advance(kind, len(page))
        if then is not None:
            then(page)
    return on_page


def full_snapshot(placement_client, nova_client,
                  concurrency=DEFAULT_CONCURRENCY, progress=NO_PROGRESS,
                  previous=None, network_client=None):
    """Everything, once: the input of the index page and ``orphan-audit``.
    ``previous`` (an older snapshot) only sizes the progress report."""
    taken_at = now()
    hold_connections(concurrency, placement_client, nova_client,
                     network_client)
    _estimate(progress, previous)
    with concurrent.futures.ThreadPoolExecutor(4) as pool, \
            concurrent.futures.ThreadPoolExecutor(concurrency) as per_provider:
        # Nova's server list is the longest read by far: Placement is read
        # meanwhile.
        server_list = pool.submit(nova.server_list, nova_client,
                                  on_page=on_page(progress, 'servers'))
        migration_list = pool.submit(nova.migration_list, nova_client,
                                     on_page=on_page(progress, 'migrations'))
        incomplete = pool.submit(placement.project_usages,
                                 placement_client, m.INCOMPLETE)
        port_read = pool.submit(read_ports, network_client)
        reads = _SweepReads(placement_client, per_provider, progress)
        down_cell = DownCellListing(nova_client)
        topo = read_topology(placement_client, nova_client, reads=reads,
                             down_cell=down_cell)
        allocations = reads.allocations()
        servers = {s.uuid: s for s in map(parse.server,
                                          server_list.result())}
        servers.update(down_cell.servers(topo, servers))
        snapshot = m.Snapshot(
            consumers=parse.consumers_from_providers(allocations),
            servers=servers,
            migrations={g.uuid: g for g in map(
                parse.migration, migration_list.result())},
            taken_at=taken_at, full_sweep_at=taken_at,
            inventories=reads.inventories(), **port_read.result(),
            **prove(topo, servers.values()))
    confirm_nodes(nova_client, snapshot, concurrency)
    shown_alone(snapshot, nova_client, concurrency)
    snapshot.port_candidates = read_port_candidates(placement_client,
                                                    snapshot, concurrency)
    identify(snapshot, placement_client, nova_client,
             judged_with_boot_images(
                 snapshot, nova_client,
                 set(snapshot.consumers) | set(snapshot.servers),
                 concurrency), concurrency)
    read_host_migrations(nova_client, snapshot, concurrency)
    identify_owners(snapshot, placement_client, concurrency,
                    incomplete.result())
    return snapshot


def identify_owners(snapshot, placement_client, concurrency, incomplete):
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
    for uuid, body in concurrently(lambda u: placement.consumer_allocations(
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
