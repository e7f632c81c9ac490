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

"""The order of a refresh's reads, with Nova and Placement mocked (the
sandbox tests check what they read; these, when)."""

import collections
import contextlib
import dataclasses
import datetime
import threading
from unittest import mock

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard import conf
from orphan_dashboard.reading import collect
from orphan_dashboard.reading import refresh
from tests.unit import cloud


def test_a_listed_consumer_is_read_while_nova_still_lists():
    """Nova's listing of changes is the refresh's longest read: the
    providers a changed consumer held are read as soon as its page is in
    (Nova's move bumped only the provider it went to, read as soon as
    Placement lists it)."""
    c = cloud.Cloud()
    vm = c.server('vm', 'host1')
    host1, host2 = cloud.uid('host1'), cloud.uid('host2')
    c.allocate(vm, host1)
    old = c.snapshot()
    read = threading.Event()

    def server_list(client, on_page=None, **filters):
        assert 'changes-since' in filters
        on_page([{'id': vm}])
        assert read.wait(10), 'the provider waited for the whole listing'
        return []

    def provider_allocations(client, provider):
        if provider == host1:
            read.set()
            return {}
        return {vm: {'resources': {'VCPU': 1}, 'consumer_generation': 2}}

    now = dict(old.providers, **{host2: dataclasses.replace(
        old.providers[host2], generation=2)})

    def read_topology(placement_client, nova_client, old=None, reads=None,
                      down_cell=None):
        reads.listed(now)
        return dict(providers=now, hypervisors=old.hypervisors,
                    services=old.services,
                    sharing_providers=old.sharing_providers)

    with mock.patch.object(nova, 'server_list', server_list), \
            mock.patch.object(nova, 'migration_list', return_value=[]), \
            mock.patch.object(placement, 'provider_allocations',
                              side_effect=provider_allocations) as reads, \
            mock.patch.object(placement, 'consumer_allocations',
                              return_value={
                                  'allocations': {host2: {'resources': {
                                      'VCPU': 1}}},
                                  'consumer_generation': 2}), \
            mock.patch.object(placement, 'project_usages',
                              return_value={}), \
            mock.patch.object(placement, 'provider_inventories',
                              return_value={}), \
            mock.patch.object(collect, 'read_topology', read_topology):
        fresh = refresh.refresh_snapshot(None, None, old)
    assert sorted(call.args[1] for call in reads.call_args_list) == sorted(
        [host1, host2])
    assert fresh.consumers[vm].allocations == {host2: {'VCPU': 1}}
    assert fresh.consumers[vm].generation == 2


class Cloud:
    """Nova and Placement answering from ``servers``, ``migrations`` and
    ``consumers`` (``{uuid: Consumer}``), counting each consumer read."""

    def __init__(self, snapshot):
        self.topology = dict(
            providers=dict(snapshot.providers),
            hypervisors=snapshot.hypervisors, services=snapshot.services,
            sharing_providers=snapshot.sharing_providers)
        self.servers = [{
            'id': s.uuid, 'name': s.name, 'status': s.status,
            'OS-EXT-SRV-ATTR:host': s.host,
            'OS-EXT-SRV-ATTR:hypervisor_hostname': s.node,
            'tenant_id': s.project_id, 'user_id': s.user_id,
            'created': s.created, 'image': {'id': s.image_ref},
            'flavor': {
                'vcpus': s.flavor.vcpus, 'ram': s.flavor.ram,
                'disk': s.flavor.disk, 'extra_specs': {},
                'original_name': s.flavor.name}}
            for s in snapshot.servers.values()]
        self.migrations = [{
            'uuid': g.uuid, 'instance_uuid': g.instance_uuid,
            'status': g.status, 'migration_type': g.migration_type,
            'source_node': g.source_node, 'dest_node': g.dest_node,
            'source_compute': g.source_compute,
            'dest_compute': g.dest_compute, 'updated_at': g.updated_at}
            for g in snapshot.migrations.values()]
        self.consumers = {u: dataclasses.replace(c) for u, c in
                          snapshot.consumers.items()}
        self.read = []
        self.inventories = {u: {'VCPU': {'total': 4}}
                            for u in snapshot.providers}
        self.inventory_reads = []

    def rewrite(self, uuid, provider, resources, modified):
        """A write by someone else: the consumer's and the provider's
        generations move."""
        consumer = self.consumers[uuid]
        consumer.allocations = {provider: resources}
        consumer.generation += 1
        consumer.modified = modified
        rp = self.topology['providers'][provider]
        self.topology['providers'][provider] = dataclasses.replace(
            rp, generation=rp.generation + 1)

    def read_topology(self, placement_client, nova_client, old=None,
                      reads=None, down_cell=None):
        providers = dict(self.topology['providers'])
        if reads is not None:
            reads.listed(providers)
        return dict(self.topology, providers=providers)

    def server_list(self, client, on_page=None, **filters):
        listed = [] if 'changes-since' in filters else self.servers
        if on_page:
            on_page(listed)
        return listed

    def migration_list(self, client, on_page=None, **filters):
        listed = [] if 'changes-since' in filters else self.migrations
        if on_page:
            on_page(listed)
        return listed

    def consumer_allocations(self, client, uuid):
        self.read.append(uuid)
        return cloud.consumer_body(self.consumers[uuid])

    def provider_allocations(self, client, provider):
        return cloud.provider_allocations_body(self.consumers, provider)

    def provider_inventories(self, client, provider):
        self.inventory_reads.append(provider)
        if provider not in self.inventories:
            raise ks_exc.NotFound()
        return self.inventories[provider]

    @contextlib.contextmanager
    def serving(self):
        with mock.patch.object(nova, 'server_list', self.server_list), \
                mock.patch.object(nova, 'migration_list',
                                  self.migration_list), \
                mock.patch.object(nova, 'instance_known',
                                  return_value=False), \
                mock.patch.object(placement, 'consumer_allocations',
                                  self.consumer_allocations), \
                mock.patch.object(placement, 'provider_allocations',
                                  self.provider_allocations), \
                mock.patch.object(placement, 'provider_inventories',
                                  self.provider_inventories), \
                mock.patch.object(placement, 'project_usages',
                                  return_value={}), \
                mock.patch.object(collect, 'read_topology',
                                  self.read_topology):
            yield self


def unconfirmed_resize():
    """``resized`` in VERIFY_RESIZE on host2, its migration consumer
    holding host1; ``web`` healthy on host1."""
    c = cloud.Cloud()
    web = c.server('web', 'host1')
    c.allocate(web, cloud.uid('host1'), modified=None, owner=(None, None))
    resized = c.server('resized', 'host2', status='VERIFY_RESIZE')
    c.allocate(resized, cloud.uid('host2'), modified=None,
               owner=(None, None))
    mig = c.migration('mig', resized, 'finished', kind='resize',
                      source='host1', dest='host2')
    c.allocate(mig, cloud.uid('host1'), owner=('p', 'u'))
    return Cloud(c.snapshot()), mig


def owners(snapshot, consumer):
    return {(f.project_id, f.user_id)
            for f in classify.audit(snapshot, min_age=0).findings
            if f.consumer == consumer}


def test_a_protected_migration_consumer_keeps_its_owner_across_sweeps():
    """Its owner is only Placement's (a server's comes from Nova): every
    sweep reads it, and only it, of the consumers nothing is wrong
    with."""
    fake, mig = unconfirmed_resize()
    with fake.serving():
        first = collect.full_snapshot(None, None)
        assert owners(first, mig) == {('p', 'u')}
        assert fake.read == [mig]
        fake.rewrite(cloud.uid('web'), cloud.uid('host1'),
                     {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1},
                     cloud.LONG_AGO)
        refreshed = refresh.refresh_snapshot(None, None, first)
        assert owners(refreshed, mig) == {('p', 'u')}
        again = collect.full_snapshot(None, None, previous=refreshed)
        assert owners(again, mig) == {('p', 'u')}
    assert sorted(fake.read) == sorted([mig] * 2)


def test_a_consumer_rewritten_behind_novas_back_gets_its_new_age():
    """A refresh that sees a consumer change only through its provider's
    generation (an operator's ``allocation set``, Neutron's QoS update)
    reads its age again: the age it had before lets a repair race the
    writer."""
    fake, _ = unconfirmed_resize()
    web, host1 = cloud.uid('web'), cloud.uid('host1')
    with fake.serving():
        old = collect.full_snapshot(None, None)
        # Read by an earlier refresh, when Nova last changed it.
        old.consumers[web].modified = cloud.LONG_AGO
        old.consumers[web].project_id = 'p'
        old.consumers[web].user_id = 'u'
        fake.rewrite(web, host1, {'VCPU': 1, 'MEMORY_MB': 4096,
                                  'DISK_GB': 1},
                     collect.now() - datetime.timedelta(seconds=30))
        fresh = refresh.refresh_snapshot(None, None, old)
    assert fresh.consumers[web].generation == 2
    (finding,) = classify.Auditor(fresh, min_age=600).consumer_findings(web)
    assert (finding.verdict, finding.actions) == (m.PROTECTED, ()), finding
    assert 'younger than the 600 s protection' in str(finding.reason)
    (finding,) = classify.Auditor(fresh, min_age=0).consumer_findings(web)
    assert finding.verdict == m.WRONG_AMOUNT


def details_of(held):
    """Placement's ``GET /allocations/{consumer}`` of ``held`` (``{provider:
    {consumer: allocation}}``): what each consumer holds, long ago."""
    return lambda client, uuid: {
        'allocations': {rp: on[uuid] for rp, on in held.items()
                        if uuid in on},
        'consumer_generation': 1, 'project_id': 'p', 'user_id': 'u',
        'last_modified': cloud.LONG_AGO}


def _cloud_with_a_down_cell(hypervisor_list):
    """Placement has host1, host5 and node cmp7.example; os-services lists
    host1 up and host5 (a down cell's) UNKNOWN; Nova lists one server, on
    host7's node cmp7.example; ``hypervisor_list`` answers for Nova."""
    providers = [{'uuid': cloud.uid(n), 'name': n, 'generation': 1,
                  'root_provider_uuid': cloud.uid(n)}
                 for n in ('host1', 'host5', 'cmp7.example')]
    services = [{'host': 'host1', 'state': 'up', 'status': 'enabled',
                 'id': 's1'},
                {'host': 'host7', 'state': 'up', 'status': 'enabled',
                 'id': 's7'},
                {'binary': 'nova-compute', 'host': 'host5',
                 'status': 'UNKNOWN'}]
    server = {'id': cloud.uid('vm'), 'status': 'ACTIVE', 'image': '',
              'OS-EXT-SRV-ATTR:host': 'host7',
              'OS-EXT-SRV-ATTR:hypervisor_hostname': 'cmp7.example'}
    return [
        mock.patch.object(placement, 'provider_list',
                          return_value=providers),
        mock.patch.object(placement, 'sharing_provider_uuids',
                          return_value=[]),
        mock.patch.object(placement, 'owner_traits',
                          return_value=['OWNER_NOVA']),
        mock.patch.object(placement, 'provider_allocations',
                          return_value={}),
        mock.patch.object(placement, 'provider_inventories',
                          return_value={}),
        mock.patch.object(placement, 'project_usages', return_value={}),
        mock.patch.object(nova, 'service_list', return_value=services),
        mock.patch.object(nova, 'hypervisor_list',
                          side_effect=hypervisor_list),
        mock.patch.object(nova, 'server_list', return_value=[server]),
        mock.patch.object(nova, 'down_cell_servers', return_value=[
            {'id': cloud.uid('lost'), 'status': 'UNKNOWN'}]),
        mock.patch.object(nova, 'migration_list', return_value=[])]


def test_inventories_are_read_again_only_where_a_generation_moved():
    """An inventory change bumps the provider's generation: a refresh
    reads only those providers' inventories, and a provider deleted
    between the listing and the read is left out."""
    fake, _ = unconfirmed_resize()
    host1, host2 = cloud.uid('host1'), cloud.uid('host2')
    with fake.serving():
        first = collect.full_snapshot(None, None)
        assert sorted(fake.inventory_reads) == sorted(first.providers)
        assert first.inventories[host1] == {'VCPU': {'total': 4}}
        fake.inventory_reads.clear()
        fake.inventories[host1] = {'VCPU': {'total': 8, 'reserved': 2}}
        fake.rewrite(cloud.uid('web'), host1,
                     {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1},
                     cloud.LONG_AGO)
        del fake.inventories[cloud.uid('host3')]
        refreshed = refresh.refresh_snapshot(None, None, first)
    assert fake.inventory_reads == [host1]
    assert refreshed.inventories[host1] == {
        'VCPU': {'total': 8, 'reserved': 2}}
    assert refreshed.inventories[host2] == first.inventories[host2]
    fake.inventory_reads.clear()
    with fake.serving():
        again = collect.full_snapshot(None, None, previous=refreshed)
    assert cloud.uid('host3') not in again.inventories
    assert set(again.inventories) == set(again.providers) - {
        cloud.uid('host3')}


def _compute_cloud():
    """Three compute nodes (host1 with a PCI device), a root another
    service made and a sharing provider; a healthy server on each host
    and a deleted server's consumer on host2."""
    c = cloud.Cloud()
    c.device('host1')
    c.foreign('Neutron segment x', ('IPV4_ADDRESS',))
    c.sharing_provider('nfs')
    for host in ('host1', 'host2', 'host3'):
        c.allocate(c.server('vm-' + host, host), cloud.uid(host))
    c.allocate(cloud.uid('ghost'), cloud.uid('host2'))
    return c


def _nova_of(c, hypervisor_list=None):
    """Nova answering for ``c``: its servers, no migration, no change
    since any sweep; ``hypervisor_list`` for its compute nodes' listing."""
    servers = Cloud(c.snapshot()).servers

    def listing(bodies):
        def answer(client, on_page=None, **filters):
            listed = [] if 'changes-since' in filters else bodies
            if on_page:
                on_page(listed)
            return listed
        return answer

    stack = contextlib.ExitStack()
    for name, patch in (
            ('server_list', dict(side_effect=listing(servers))),
            ('migration_list', dict(side_effect=listing([]))),
            ('hypervisor_list', dict(side_effect=hypervisor_list) if
             hypervisor_list else dict(
                 return_value=cloud.hypervisor_bodies(c))),
            ('service_list', dict(return_value=cloud.service_bodies(c))),
            ('instance_known', dict(return_value=False))):
        stack.enter_context(mock.patch.object(nova, name, **patch))
    return stack


def _request_kind(path, params):
    """What a Placement request of a sweep reads."""
    if path == '/resource_providers':
        required = params.get('required', '')
        return ('sharing' if required == placement.SHARING_TRAIT else
                'trait holders' if required else 'providers')
    if path.startswith('/resource_providers/'):
        return path.rsplit('/', 1)[1]
    return {'/traits': 'owner traits', '/usages': 'incomplete'}.get(
        path, 'consumer' if path.startswith('/allocations/') else path)


def _per_provider(asked):
    return sorted((path.split('/')[2], path.rsplit('/', 1)[1])
                  for path, _params in asked
                  if path.startswith('/resource_providers/'))


def test_a_cold_sweep_asks_the_floors_requests_and_no_more():
    """Each provider's allocations and inventories once (the roots with no
    compute node, whose classes say whose they are, included), beside the
    topology's listings and the consumers the audit may act on: the
    requests the bench's floor is made of."""
    c = _compute_cloud()
    fake = cloud.Placement(c)
    with _nova_of(c):
        collect.full_snapshot(fake, None)
    asked = collections.Counter(_request_kind(*a) for a in fake.asked)
    assert asked == {
        'providers': 1, 'sharing': 1, 'owner traits': 1,
        'trait holders': 2, 'incomplete': 1,
        'allocations': len(c.providers), 'inventories': len(c.providers),
        'consumer': 1}, asked
    assert _per_provider(fake.asked) == sorted(
        (u, kind) for u in c.providers
        for kind in ('allocations', 'inventories'))


def test_providers_are_read_while_nova_still_lists_its_hypervisors():
    """Nova's hypervisor listing is the topology's slowest read (about
    50 ms per compute node): each provider's reads go out as soon as
    Placement has listed the providers, not after it."""
    c = _compute_cloud()
    fake = cloud.Placement(c)
    read = threading.Event()
    answer = fake.get

    def get(path, microversion=None, params=None):
        if path.startswith('/resource_providers/'):
            read.set()
        return answer(path, microversion, params)

    def hypervisor_list(client, cell_missing):
        assert read.wait(5), "the providers' reads waited for Nova's " \
            'hypervisor listing'
        return cloud.hypervisor_bodies(c)

    fake.get = get
    with _nova_of(c, hypervisor_list):
        snapshot = collect.full_snapshot(fake, None)
    assert set(snapshot.inventories) == set(c.providers)


def test_a_sweep_has_at_most_concurrency_provider_reads_in_flight():
    """A provider's allocations and its inventories share the sweep's
    ``concurrency``, as on the floor's schedule: more at once only takes
    Placement's time from Nova's server listing beside them."""
    c = _compute_cloud()
    fake = cloud.Placement(c)
    lock, over = threading.Lock(), threading.Event()
    flight = {'now': 0, 'most': 0}
    answer = fake.get

    def get(path, microversion=None, params=None):
        if not path.startswith('/resource_providers/'):
            return answer(path, microversion, params)
        with lock:
            flight['now'] += 1
            flight['most'] = max(flight['most'], flight['now'])
            if flight['now'] > 2:
                over.set()
        over.wait(0.05)
        with lock:
            flight['now'] -= 1
        return answer(path, microversion, params)

    fake.get = get
    with _nova_of(c):
        collect.full_snapshot(fake, None, concurrency=2)
    assert flight['most'] == 2, flight


def test_a_refresh_reads_only_the_providers_whose_generation_moved():
    """Nothing moved: no provider is read.  A consumer Nova does not know
    written on host3 (its generation moves): host3's allocations and
    inventories, read whole; nothing of the other providers."""
    c = _compute_cloud()
    fake = cloud.Placement(c)
    host3 = cloud.uid('host3')
    with _nova_of(c):
        first = collect.full_snapshot(fake, None)
        fake.asked.clear()
        same = refresh.refresh_snapshot(fake, None, first)
        assert _per_provider(fake.asked) == []
        c.allocate(cloud.uid('stranger'), host3)
        c.providers[host3] = dataclasses.replace(c.providers[host3],
                                                 generation=2)
        fake.asked.clear()
        moved = refresh.refresh_snapshot(fake, None, same)
    assert _per_provider(fake.asked) == [
        (host3, 'allocations'), (host3, 'inventories')]
    assert host3 in moved.consumers[cloud.uid('stranger')].allocations


def test_a_missing_cells_servers_are_listed_beside_the_hypervisors():
    """A slow cell holds each of Nova's listings: the down cell's partial
    records are asked for as soon as the services show it, while the
    hypervisors are still listed, not after them, and the hypervisor
    listing is told that a cell is missing."""
    asked = threading.Event()
    told = []

    def hypervisor_list(client, cell_missing):
        assert asked.wait(5), "the down cell's servers waited for the " \
            'hypervisor listing'
        told.append(cell_missing())
        return []

    def down_cell_servers(client):
        asked.set()
        return [{'id': cloud.uid('lost'), 'status': 'UNKNOWN'}]
    patches = _cloud_with_a_down_cell(hypervisor_list) + [
        mock.patch.object(nova, 'down_cell_servers',
                          side_effect=down_cell_servers)]
    with contextlib.ExitStack() as stack:
        listing = [stack.enter_context(p) for p in patches][-1]
        snapshot = collect.full_snapshot(None, None)
    assert told == [True]
    assert listing.call_count == 1
    assert snapshot.servers[cloud.uid('lost')].down_cell


def test_a_down_cells_hypervisor_listing_leaves_what_is_proven():
    """Nova's hypervisor listing answers 500 while one cell is down: the
    sweep goes on with the compute nodes os-services and the servers
    prove, and says the listing failed."""
    patches = _cloud_with_a_down_cell(ks_exc.InternalServerError(
        'Unrecognized schema in response body.'))
    for patch in patches:
        patch.start()
    try:
        snapshot = collect.full_snapshot(None, None)
    finally:
        for patch in patches:
            patch.stop()
    assert snapshot.hypervisors_listed is False
    assert snapshot.down_hosts == {'host5'}
    # Nova's paged listing leaves a down cell's servers out: they come
    # from the unpaged one, as partial records.
    assert snapshot.servers[cloud.uid('lost')].down_cell
    assert not snapshot.servers[cloud.uid('vm')].down_cell
    assert snapshot.down_cells
    # A server proves its node; a root merely named like a host proves
    # nothing (it is asked about alone, when it holds anything).
    assert {u: (h.hostname, h.host)
            for u, h in snapshot.hypervisors.items()} == {
        cloud.uid('cmp7.example'): ('cmp7.example', 'host7')}


def test_a_down_cells_sweep_asks_nova_what_the_healthy_cells_hold():
    """While a cell is down, a consumer no listing shows on a healthy
    host, and the unconfirmed nodes holding an allocation (host1, whose
    name proves nothing, and an Ironic node), are asked about one by one
    (instance actions, ``GET /os-hypervisors/{uuid}``): Nova's answers
    prove them a healthy cell's, and they are judged.  Nothing else is
    asked."""
    node = cloud.uid('ironic-node')
    ghost, metal = cloud.uid('ghost'), cloud.uid('metal-ghost')
    held = {cloud.uid('host1'): {ghost: {'resources': {'VCPU': 1}}},
            node: {metal: {'resources': {'CUSTOM_BAREMETAL': 1}}},
            cloud.uid('host5'): {cloud.uid('cell2-ghost'): {
                'resources': {'VCPU': 1}}}}
    shown = {node: {'id': node, 'hypervisor_hostname': node,
                    'state': 'up', 'status': 'enabled',
                    'service': {'host': 'ironic-1'}},
             cloud.uid('host1'): {
                 'id': cloud.uid('host1'),
                 'hypervisor_hostname': 'host1.example.com', 'state': 'up',
                 'status': 'enabled', 'service': {'host': 'host1'}}}
    patches = _cloud_with_a_down_cell(ks_exc.InternalServerError('down'))
    patches += [
        mock.patch.object(placement, 'provider_list', return_value=[
            {'uuid': cloud.uid(n), 'name': n, 'generation': 1,
             'root_provider_uuid': cloud.uid(n)}
            for n in ('host1', 'host5', 'cmp7.example')] + [
            {'uuid': node, 'name': node, 'generation': 1,
             'root_provider_uuid': node}]),
        mock.patch.object(placement, 'provider_allocations',
                          side_effect=lambda c, rp: held.get(rp, {})),
        mock.patch.object(placement, 'consumer_allocations',
                          side_effect=details_of(held)),
        mock.patch.object(nova, 'server_get', return_value=None),
        mock.patch.object(nova, 'hypervisor_get',
                          side_effect=lambda c, u: shown.get(u)),
        mock.patch.object(nova, 'instance_known', return_value=True)]
    with contextlib.ExitStack() as stack:
        asked = [stack.enter_context(p) for p in patches][-2:]
        snapshot = collect.full_snapshot(None, None)
    assert sorted(c.args[1] for c in asked[0].call_args_list) == sorted(
        [cloud.uid('host1'), node])
    assert sorted(c.args[1] for c in asked[1].call_args_list) == sorted(
        [ghost, metal])
    assert snapshot.hypervisors[node].host == 'ironic-1'
    found = {(f.consumer, f.provider): f.verdict
             for f in classify.audit(snapshot, min_age=0).findings
             if f.consumer != cloud.uid('vm')}
    assert found == {(ghost, cloud.uid('host1')): m.DELETED_INSTANCE,
                     (metal, node): m.DELETED_INSTANCE,
                     (cloud.uid('cell2-ghost'), cloud.uid('host5')):
                     m.PROTECTED}


def test_a_slow_cells_partial_records_of_healthy_servers_are_read_alone():
    """A slow cell makes Nova give up on every cell of a server listing:
    healthy cells' servers come back partial too.  A partial record that
    holds on a healthy compute node is read alone: Nova's full answer
    replaces it, a 404 leaves a consumer Nova does not list (judged by
    its instance actions), no answer keeps it partial; one on the slow
    cell's host is not asked, and a server the paged listing gave in full
    keeps its full record."""
    live, deleted, unanswered, cell2 = (cloud.uid(n) for n in (
        'healthy-vm', 'deleted-by-hand', 'unanswered', 'cell2-vm'))
    vm = cloud.uid('vm')
    host1, host5 = cloud.uid('host1'), cloud.uid('host5')
    held = {host1: {u: {'resources': {'VCPU': 1}}
                    for u in (live, deleted, unanswered, vm)},
            host5: {cell2: {'resources': {'VCPU': 1}}}}
    listed = [{'id': cloud.uid(n), 'hypervisor_hostname': n,
               'service': {'host': n}}
              for n in ('host1', 'host5', 'cmp7.example')]
    full = {'id': live, 'status': 'ACTIVE', 'OS-EXT-SRV-ATTR:host': 'host1',
            'OS-EXT-SRV-ATTR:hypervisor_hostname': 'host1',
            'image': {'id': 'img', 'properties': {}}}
    answers = {live: full, deleted: None,
               unanswered: ks_exc.ConnectTimeout('slow')}

    def server_get(client, uuid):
        answer = answers[uuid]
        if isinstance(answer, Exception):
            raise answer
        return answer

    patches = _cloud_with_a_down_cell([listed]) + [
        mock.patch.object(placement, 'provider_allocations',
                          side_effect=lambda c, rp: held.get(rp, {})),
        mock.patch.object(nova, 'down_cell_servers', return_value=[
            {'id': u, 'status': 'UNKNOWN'}
            for u in (live, deleted, unanswered, cell2, vm)]),
        mock.patch.object(placement, 'consumer_allocations',
                          side_effect=details_of(held)),
        mock.patch.object(nova, 'server_get', side_effect=server_get),
        mock.patch.object(nova, 'instance_known', return_value=True)]
    with contextlib.ExitStack() as stack:
        asked = [stack.enter_context(p) for p in patches][-2]
        snapshot = collect.full_snapshot(None, None)
    # Read alone: the three partial records on host1; then the one Nova
    # answered 404 for, whose instance actions answer, once more as any
    # consumer a listing left out is (``_live_after_all``).
    assert sorted(c.args[1] for c in asked.call_args_list) == sorted(
        [live, deleted, unanswered, deleted])
    assert not snapshot.servers[live].down_cell
    assert snapshot.servers[live].host == 'host1'
    assert deleted not in snapshot.servers
    assert snapshot.servers[unanswered].down_cell
    assert snapshot.servers[cell2].down_cell
    assert not snapshot.servers[vm].down_cell
    found = {f.consumer: f.verdict
             for f in classify.audit(snapshot, min_age=0).findings}
    assert found[deleted] == m.DELETED_INSTANCE
    assert found[unanswered] == found[cell2] == m.PROTECTED


def test_a_refresh_lists_hypervisors_again_after_a_partial_sweep():
    """A refresh reuses the last hypervisor listing only if it was whole:
    the cell back up, the next refresh sees all of it."""
    c = cloud.Cloud()
    old = c.snapshot()
    old.hypervisors_listed = False
    old.providers = {}
    listed = [{'id': cloud.uid(n), 'hypervisor_hostname': n,
               'service': {'host': n}}
              for n in ('host1', 'host5', 'cmp7.example')]
    patches = _cloud_with_a_down_cell([listed])
    for patch in patches:
        patch.start()
    try:
        old.providers = {cloud.uid(n): m.Provider(
            cloud.uid(n), n, 1, cloud.uid(n))
            for n in ('host1', 'host5', 'cmp7.example')}
        topology = collect.read_topology(None, None, old)
    finally:
        for patch in patches:
            patch.stop()
    assert topology['hypervisors_listed'] is True
    assert set(topology['hypervisors']) == set(old.providers)


def test_a_partial_snapshot_is_never_refreshed_but_swept_again():
    """Down-cell servers do not show in a refresh's ``changes-since``
    listing, nor do they when their cell is back: only a full sweep
    replaces their partial records."""
    c = cloud.Cloud()
    c.servers[cloud.uid('lost')] = m.Server(cloud.uid('lost'),
                                            status='UNKNOWN')
    cached = c.snapshot()
    cached.full_sweep_at = collect.now()
    with mock.patch.object(collect, 'full_snapshot') as full, \
            mock.patch.object(refresh, 'refresh_snapshot') as refreshing:
        refresh.snapshot(None, None, cached)
    assert full.called and not refreshing.called


def test_a_refresh_that_finds_a_cell_down_reads_its_servers_as_partial():
    """A cell that went down since the last sweep: its servers, unchanged,
    are in no changes-since listing; their old full records give way to
    the partial ones Nova returns now."""
    c = cloud.Cloud()
    lost = c.server('lost', 'host1')
    old = c.snapshot()
    patches = _cloud_with_a_down_cell(ks_exc.InternalServerError('down'))
    for patch in patches:
        patch.start()
    try:
        fresh = refresh.refresh_snapshot(None, None, old)
    finally:
        for patch in patches:
            patch.stop()
    assert fresh.servers[lost].down_cell
    assert fresh.down_cells


def test_ownership_is_read_cheaply_and_survives_an_older_os_traits():
    """An os-traits with no ``OWNER_*`` trait: no provider listing by
    trait, no provider tagged; the inventories of the roots with no
    compute node decide, read only for those."""
    gone, segment, host1 = (cloud.uid('gone'), cloud.uid('segment'),
                            cloud.uid('host1'))
    child = cloud.uid('host1_pci')
    listed = [{'uuid': u, 'name': n, 'generation': 1,
               'root_provider_uuid': r, 'parent_provider_uuid': p}
              for u, n, r, p in ((host1, 'host1', host1, None),
                                 (child, 'host1_pci', host1, host1),
                                 (gone, 'gone', gone, None),
                                 (segment, 'Neutron segment id x', segment,
                                  None))]
    inventories = {gone: {'VCPU': {}, 'MEMORY_MB': {}},
                   segment: {'IPV4_ADDRESS': {}}}

    def provider_list(client, **filters):
        if filters.get('required') == 'MISC_SHARES_VIA_AGGREGATE':
            return []
        assert not filters
        return listed

    with mock.patch.object(placement, 'provider_list',
                           side_effect=provider_list), \
            mock.patch.object(placement, 'owner_traits',
                              return_value=[]), \
            mock.patch.object(placement, 'provider_inventories',
                              side_effect=lambda c, u: inventories[u]) \
            as read, \
            mock.patch.object(nova, 'hypervisor_list', return_value=[{
                'id': host1, 'hypervisor_hostname': 'host1',
                'service': {'host': 'host1'}}]), \
            mock.patch.object(nova, 'service_list', return_value=[{
                'host': 'host1', 'state': 'up', 'id': 's1'}]):
        topology = collect.read_topology(None, None)
    assert topology['owner_traits'] == {}
    assert sorted(c.args[1] for c in read.call_args_list) == sorted(
        [gone, segment])
    assert topology['inventory_classes'] == {
        gone: ('MEMORY_MB', 'VCPU'), segment: ('IPV4_ADDRESS',)}
    # A snapshot keeps all of it: the command line's repairs reuse it.
    assert set(topology) == set(collect.TOPOLOGY)
    kept = m.Snapshot(consumers={}, servers={}, migrations={}, **topology)
    assert collect.topology_of(kept) == topology


def test_a_400_for_a_trait_placement_knows_is_asked_again():
    """Placement's trait cache, cleared by a concurrent trait write, can
    answer a known trait with 400: the listing is asked again, not taken
    as "nothing tagged" (which would refuse every tagged provider)."""
    from keystoneauth1 import exceptions as ks_exc

    answers = [ks_exc.BadRequest('No such trait(s): OWNER_NOVA'),
               [{'uuid': 'n1'}]]

    def provider_list(client, **filters):
        assert filters == {'required': 'OWNER_NOVA'}
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    with mock.patch.object(placement, 'provider_list',
                           side_effect=provider_list), \
            mock.patch.object(placement, 'trait_exists', return_value=True):
        assert placement.trait_holders(None, 'OWNER_NOVA') == {'n1'}
    assert answers == []


def _boot_image_reads(answers):
    """``nova.server_get`` answering ``answers`` (``{server: the image's
    properties, an exception, or None for a 404}``) as Nova at 2.98 does,
    and the servers it was asked for."""
    asked = []

    def server_get(client, uuid):
        asked.append(uuid)
        answer = answers[uuid]
        if isinstance(answer, Exception):
            raise answer
        if answer is None:
            return None
        return {'id': uuid, 'image': {'id': 'img', 'properties': answer}}

    return asked, mock.patch.object(nova, 'server_get', server_get)


def test_a_boot_image_is_read_from_nova_and_an_unread_one_says_why():
    """What Nova copied at boot, one server at a time: an image's other
    properties are left out, an unreadable one is unknown with its
    cause, a server booted from a volume is not asked."""
    c = cloud.Cloud()
    for name in ('pinned', 'plain', 'deleted', 'private', 'slow', 'old'):
        c.server(name, 'host1', image='img', image_fault=m.IMAGE_UNSHOWN)
    snapshot = c.snapshot()
    uid = cloud.uid
    too_old = {'id': uid('old'), 'image': {'id': 'img'}}
    answers = {uid('pinned'): {'hw_cpu_policy': 'dedicated',
                               'os_distro': 'ubuntu'},
               uid('plain'): {}, uid('deleted'): None,
               uid('private'): ks_exc.Forbidden(),
               uid('slow'): ks_exc.ConnectTimeout()}
    asked, patch = _boot_image_reads(answers)
    with patch, mock.patch.object(nova, 'server_get', side_effect=lambda c,
                                  u: too_old if u == uid('old') else
                                  patch.new(c, u)):
        collect.read_boot_images('nova', snapshot, set(answers) | {
            uid('old')}, 2)
    assert sorted(asked) == sorted(answers)
    shown = {s.name: (s.image_properties, s.image_fault)
             for s in snapshot.servers.values()}
    assert shown == {
        'pinned': ({'hw_cpu_policy': 'dedicated'}, None),
        'plain': ({}, None), 'deleted': (None, m.IMAGE_GONE),
        'private': (None, m.IMAGE_FORBIDDEN), 'slow': (None, m.IMAGE_DOWN),
        'old': (None, m.IMAGE_UNSHOWN)}


def test_a_listing_never_shows_a_boot_image():
    """Nova's listing (2.69) has no ``image.properties``: unknown, not
    none; nor has a server booted from a volume (``image: ""``), read
    alone or listed: Nova never shows the volume's image metadata it
    copied at boot."""
    from orphan_dashboard.audit import parse
    listed = parse.server({'id': 's', 'image': {'id': 'img'}})
    shown = parse.server({'id': 's', 'image': {'id': 'img', 'properties': {
        'hw_mem_encryption': 'true', 'hw_disk_bus': 'scsi'}}})
    volume = parse.server({'id': 's', 'image': ''})
    assert (listed.image_properties, listed.image_fault,
            listed.image_unknown) == (None, m.IMAGE_UNSHOWN, True)
    assert (shown.image_properties, shown.image_fault) == (
        {'hw_mem_encryption': 'true', 'hw_disk_bus': 'scsi'}, None)
    assert (volume.image_ref, volume.image_fault, volume.image_unknown) == (
        None, m.IMAGE_VOLUME, True)


def _pinned_cloud():
    """``pinned`` holds PCPU where its flavor says VCPU (its image pinned
    it at boot), ``fat`` holds more memory than its flavor, ``fine`` what
    it needs; ``waiting`` holds nothing on its node."""
    c = cloud.Cloud()
    host1 = cloud.uid('host1')
    for name, held in (('pinned', {'PCPU': 1, 'MEMORY_MB': 512,
                                   'DISK_GB': 1}),
                       ('fat', {'VCPU': 1, 'MEMORY_MB': 4096, 'DISK_GB': 1}),
                       ('fine', {'VCPU': 1, 'MEMORY_MB': 512,
                                 'DISK_GB': 1})):
        c.allocate(c.server(name, 'host1', image_fault=m.IMAGE_UNSHOWN),
                   host1, held)
    c.server('waiting', 'host1', image_fault=m.IMAGE_UNSHOWN)
    return c


def test_a_sweep_reads_the_boot_image_only_of_the_servers_it_suspects():
    """Only where a verdict may rest on what the image made Nova allocate
    (never a server whose allocation its flavor explains): the pinned
    server is then right, the others' verdicts stand on Nova's word."""
    fake = Cloud(_pinned_cloud().snapshot())
    uid = cloud.uid
    asked, patch = _boot_image_reads({
        uid('pinned'): {'hw_cpu_policy': 'dedicated'},
        uid('fat'): {}, uid('waiting'): {}})
    with fake.serving(), patch:
        snapshot = collect.full_snapshot(None, 'nova')
    assert sorted(asked) == sorted([uid('pinned'), uid('fat'),
                                    uid('waiting')])
    verdicts = {f.consumer: f.verdict
                for f in classify.audit(snapshot, min_age=0).findings}
    assert verdicts == {uid('pinned'): m.OK, uid('fat'): m.WRONG_AMOUNT,
                        uid('fine'): m.OK, uid('waiting'): m.MISSING}


def test_an_image_edited_after_boot_never_rewrites_a_pinned_server():
    """Glance may now show the image without ``hw_cpu_policy``: Nova's
    copy says it pinned the CPUs, so nothing is wrong; where Nova cannot
    show it, the PCPU is protected, never rewritten as VCPU."""
    uid = cloud.uid
    for answer, verdict in (({'hw_cpu_policy': 'dedicated'}, m.OK),
                            (ks_exc.ServiceUnavailable(), m.PROTECTED)):
        fake = Cloud(_pinned_cloud().snapshot())
        _asked, patch = _boot_image_reads({
            uid('pinned'): answer, uid('fat'): {}, uid('waiting'): {}})
        with fake.serving(), patch:
            snapshot = collect.full_snapshot(None, 'nova')
        (finding,) = classify.Auditor(snapshot, min_age=0).consumer_findings(
            uid('pinned'))
        assert (finding.verdict, finding.actions) == (verdict, ()), finding


def _pinned_read(c):
    """``c``'s ``pinned`` as a sweep leaves it once Nova showed its boot
    image (``hw_cpu_policy=dedicated``)."""
    pinned = dataclasses.replace(
        c.servers[cloud.uid('pinned')],
        image_properties={'hw_cpu_policy': 'dedicated'}, image_fault=None)
    c.servers[pinned.uuid] = pinned
    return pinned


def _lists_only(fake, body):
    """``fake``'s Nova lists ``body`` alone, as its changes since."""
    fake.server_list = lambda client, on_page=None, **filters: (
        on_page([body]) if on_page else None) or [body]


def test_a_refresh_reads_the_boot_image_of_changed_suspects_only():
    """A server listed again (changed since) is read again where it is
    suspect; one unchanged keeps what Nova showed of it, and one whose
    read Nova did not answer is asked again."""
    c = _pinned_cloud()
    uid = cloud.uid
    known = _pinned_read(c)
    c.servers[uid('fat')] = dataclasses.replace(
        c.servers[uid('fat')], image_fault=m.IMAGE_DOWN)
    old = c.snapshot()
    fake = Cloud(old)
    _lists_only(fake, dict(next(b for b in fake.servers
                                if b['id'] == uid('fine')), name='renamed'))
    asked, patch = _boot_image_reads({uid('fat'): {}})
    with fake.serving(), patch:
        fresh = refresh.refresh_snapshot(None, 'nova', old)
    assert asked == [uid('fat')]
    assert fresh.servers[uid('pinned')] is known
    assert fresh.servers[uid('fat')].image_fault is None


def test_a_sweep_keeps_a_connection_for_each_request_in_flight():
    """``concurrency`` reads at a time (providers' or consumers') beside
    the sweep's four listings and its topology's five."""
    fake, _mig = unconfirmed_resize()
    with fake.serving(), mock.patch.object(collect.client,
                                           'hold_connections') as hold:
        collect.full_snapshot(mock.sentinel.placement, mock.sentinel.nova,
                              concurrency=8)
    assert mock.call(mock.sentinel.placement, 17) in hold.call_args_list
    assert mock.call(mock.sentinel.nova, 17) in hold.call_args_list


def test_a_server_listed_again_unchanged_keeps_its_boot_image():
    """``changes-since`` lists again a server that changed nothing the
    audit reads (its listing shows no boot image): it keeps what Nova
    showed of its image, is not judged again, and nothing of it is read
    again; one rebuilt from another image is unknown again."""
    c = _pinned_cloud()
    pinned = _pinned_read(c)
    old = c.snapshot()
    fake = Cloud(old)
    body = next(b for b in fake.servers if b['id'] == pinned.uuid)
    for listed, image in ((body, pinned.image_properties),
                          (dict(body, image={'id': 'other'}), None)):
        _lists_only(fake, listed)
        _asked, patch = _boot_image_reads({})
        with fake.serving(), patch, mock.patch.object(
                refresh.collect, 'read_boot_images') as booted:
            fresh = refresh.refresh_snapshot(None, 'nova', old)
        assert fresh.servers[pinned.uuid].image_properties == image
        if image is not None:
            assert fresh.servers[pinned.uuid] == pinned
            assert pinned.uuid not in booted.call_args.args[2]
    assert fake.read == []


def _migration_body(uuid, instance, status, source, dest):
    return {'uuid': uuid, 'instance_uuid': instance, 'status': status,
            'migration_type': 'resize', 'source_compute': source,
            'dest_compute': dest, 'source_node': source, 'dest_node': dest}


def _dropped_tail(c, bodies, slow_hosts=()):
    """Nova answering for ``c`` whose listing of every migration comes
    back empty (a slow cell's timer dropped the healthy cells' records,
    with no marker), while a listing by host gives that host's
    ``bodies``, after Nova's cell timeout for ``slow_hosts``."""
    def migration_list(client, on_page=None, **filters):
        host = filters.get('host')
        return [b for b in bodies if host in (
            b['source_compute'], b['dest_compute'])] if host else []

    def timed(read, *args, **kwargs):
        late = kwargs.get('host') in slow_hosts
        return read(*args, **kwargs), (
            conf.NOVA_CELL_TIMEOUT.default + 1 if late else 0.1)

    stack = _nova_of(c)
    stack.enter_context(mock.patch.object(nova, 'migration_list',
                                          side_effect=migration_list))
    stack.enter_context(mock.patch.object(collect, 'timed', timed))
    return stack


def test_a_migration_a_cut_listing_dropped_is_found_by_its_host():
    """The source side of a resize awaiting confirmation, its migration
    dropped from Nova's listing: read by host, the migration protects it
    (never "unknown consumer", offered *Delete*); a stale one found so is
    repaired."""
    c = cloud.Cloud()
    vm = c.server('resized', 'host2', status='VERIFY_RESIZE')
    c.allocate(vm, cloud.uid('host2'))
    waiting, stale = cloud.uid('waiting'), cloud.uid('stale')
    c.allocate(waiting, cloud.uid('host1'))
    c.allocate(stale, cloud.uid('host3'))
    bodies = [_migration_body(waiting, vm, 'finished', 'host1', 'host2'),
              _migration_body(stale, cloud.uid('gone-vm'), 'error', 'host3',
                              'host2')]
    fake = cloud.Placement(c)
    with _dropped_tail(c, bodies):
        snapshot = collect.full_snapshot(fake, None)
    assert {waiting, stale} <= set(snapshot.migrations)
    assert {'host1', 'host3'} <= snapshot.migration_hosts
    found = {f.consumer: f for f in
             classify.audit(snapshot, min_age=0).findings}
    assert (found[waiting].verdict, found[waiting].actions) == (
        m.PROTECTED, ())
    assert found[waiting].reason.code == 'protected.source_awaiting_confirm'
    assert found[stale].verdict == m.STALE_MIGRATION


def test_a_consumer_is_unknown_only_after_its_hosts_migrations_answer_whole():
    """A consumer nothing identifies is ``unknown_consumer`` (delete
    offered) only once its host's migrations were listed within Nova's
    cell timeout; a listing that took longer may have dropped the very
    migration that owns it: protected, the host named."""
    c = cloud.Cloud()
    ghost, other = cloud.uid('nobody'), cloud.uid('nobody-either')
    c.allocate(ghost, cloud.uid('host1'))
    c.allocate(other, cloud.uid('host3'))
    fake = cloud.Placement(c)
    with _dropped_tail(c, [], slow_hosts={'host3'}):
        snapshot = collect.full_snapshot(fake, None)
    assert 'host1' in snapshot.migration_hosts
    assert 'host3' not in snapshot.migration_hosts
    found = {f.consumer: f for f in
             classify.audit(snapshot, min_age=0).findings}
    assert (found[ghost].verdict, found[ghost].actions) == (
        m.UNKNOWN_CONSUMER, (m.DELETE,))
    assert (found[other].verdict, found[other].actions) == (m.PROTECTED, ())
    assert found[other].reason.code == 'protected.migrations_unread'
    assert 'host3' in str(found[other].reason)


def test_a_providers_capacity_not_read_leaves_it_unjudged_not_the_rest():
    """A preview's capacity reads: a provider gone (404) or not answered
    (5xx) is left out, the others are read; nothing raises."""
    def inventories(_client, uuid):
        if uuid == 'gone':
            raise ks_exc.NotFound()
        if uuid == 'slow':
            raise ks_exc.InternalServerError()
        return {'VCPU': {'total': 4}}

    with mock.patch.object(placement, 'provider_inventories', inventories), \
            mock.patch.object(placement, 'provider_usages',
                              return_value={'VCPU': 2}):
        assert collect.read_capacity(None, ['gone', 'ok', 'slow'], 2) == (
            {'ok': {'VCPU': {'total': 4}}}, {'ok': {'VCPU': 2}})


def test_a_service_listing_that_ran_the_cell_timer_out_says_so():
    """What makes a cell slow, not down: the compute service listing
    took Nova's cell timeout (the client's, else Nova's default)."""
    nova_client = mock.Mock(cell_timeout=4.0)
    assert not collect.within_cell_timeout(nova_client, 4.2)
    assert collect.within_cell_timeout(nova_client, 0.3)
    assert not collect.within_cell_timeout(object(), 61)
