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

"""The rule every write rests on, as a property: what a listing leaves
out, a policy hides or Nova does not show never adds a write.

Each generated cloud of :mod:`tests.unit.test_property` (with a node Nova
deleted and a server its image pinned) is read by the real sweep
(:func:`collect.full_snapshot`) through services that answer from it,
once truthfully and once with one lie in what they list or show; the
one-item reads that prove a destructive verdict always tell the truth, as
Nova's do.  Each write the audit offers under the lie must be one it
offers under the truth, or change only allocations one such write
changes, each alike (what the lie leaves unproven, it keeps).  A write's
own answer may lie too (a gateway's retry answers 409 for a write that
landed): every write the truth offers must then still be done and
journaled.
"""

import contextlib
import dataclasses
from unittest import mock

import hypothesis
from hypothesis import strategies as st
from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import neutron
from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import report as assembly
from orphan_dashboard.reading import collect
from orphan_dashboard.writing import write
from tests.unit import cloud
from tests.unit.cloud import LONG_AGO
from tests.unit.cloud import uid
from tests.unit.strategies import FLAVORS
from tests.unit.strategies import snapshots

LIES = ('server_unlisted', 'hypervisor_unlisted', 'page_cut', 'host_hidden',
        'image_unshown', 'resource_request_hidden', 'node_unmapped',
        'volume_backed', 'owner_untagged', 'migration_tail_dropped', 'none')
"""What a service may leave out: a server or a compute node of its
listing, the end of a listing (Nova filters a page after cutting it), the
host a policy hides, the boot image's properties (a Nova before 2.98),
the ports' ``resource_request`` Neutron's policy hides, a compute node of
a host not mapped to a cell (left out of the listing and answered 404
alone, while its service is listed; its provider named by the FQDN, as
libvirt names it, not the host), the image of a server booted from a
volume (``image: ""`` alone and listed), a root's ``OWNER_*`` trait
(an older Nova's node, or another service's root with a compute node's
classes, as OpenStack Zun registers its hosts), the end of the
migration listing (Nova's one timer for all cells drops a healthy cell's
later records after a slow one, with no marker; a listing by host
answers in time)."""
HOST_KEYS = ('OS-EXT-SRV-ATTR:host', 'OS-EXT-SRV-ATTR:hypervisor_hostname')
READ_PORTS = collect.read_ports
"""The real reading of Neutron's ports, before :class:`Services` stands in
for it."""


@st.composite
def clouds(draw):
    """A generated cloud, with a compute node Nova deleted (its provider
    holding a deleted server's allocation), a server whose boot image
    pinned its CPUs and a node named by its host's FQDN, each where
    drawn."""
    snapshot = draw(snapshots())
    # The nodes that have a provider (a replaced node's new one has none).
    hosts = sorted(u for u in snapshot.hypervisors if u in snapshot.providers)
    if draw(st.booleans()):
        gone = uid('h-gone')
        snapshot.providers[gone] = m.Provider(gone, 'h-gone', 1, gone)
        snapshot.owner_traits = dict(snapshot.owner_traits or {},
                                     **{gone: frozenset({'OWNER_NOVA'})})
        snapshot.inventory_classes = dict(snapshot.inventory_classes or {},
                                          **{gone: cloud.COMPUTE})
        snapshot.nodes_gone = snapshot.nodes_gone | {gone}
        ghost = uid('ghost-on-gone')
        snapshot.consumers[ghost] = m.Consumer(
            ghost, 1, {gone: {'VCPU': 1}}, 'p', 'u', LONG_AGO)
        snapshot.known_instances = snapshot.known_instances | {ghost}
    if draw(st.booleans()):
        host = snapshot.hypervisors[draw(st.sampled_from(hosts))]
        pinned = uid('pinned-by-image')
        # No root disk: the same need booted from an image or a volume.
        snapshot.servers[pinned] = m.Server(
            pinned, 'pinned-by-image', 'ACTIVE', host.host, host.hostname,
            project_id='p', user_id='u', flavor=DISKLESS,
            created=LONG_AGO.isoformat(), image_ref='pinned-image',
            image_properties={'hw_cpu_policy': 'dedicated'})
        snapshot.consumers[pinned] = m.Consumer(
            pinned, 1, {host.uuid: {'PCPU': 1, 'MEMORY_MB': 512}}, 'p', 'u',
            LONG_AGO)
    if draw(st.booleans()):
        _named_by_fqdn(snapshot, draw(st.sampled_from(hosts)))
    if draw(st.booleans()):
        zun = uid('zun-container-host-1')
        snapshot.providers[zun] = m.Provider(zun, 'zun-container-host-1', 1,
                                             zun)
        snapshot.owner_traits = dict(snapshot.owner_traits or {},
                                     **{zun: frozenset({'OWNER_ZUN'})})
        snapshot.inventory_classes = dict(snapshot.inventory_classes or {},
                                          **{zun: cloud.COMPUTE})
        container = uid('zun-container')
        snapshot.consumers[container] = m.Consumer(
            container, 1, {zun: {'VCPU': 1, 'MEMORY_MB': 512}}, 'zun',
            'zun', LONG_AGO)
    return snapshot


DISKLESS = m.Flavor(1, 512, 0, extra_specs={}, name='diskless')


def _named_by_fqdn(snapshot, node):
    """``node``'s compute node named by its host's FQDN, as libvirt names
    it while the service's host is the short name: its provider, its
    hypervisor hostname and the node of its servers."""
    hypervisor = snapshot.hypervisors[node]
    fqdn = '%s.example.com' % hypervisor.host
    snapshot.providers[node] = dataclasses.replace(
        snapshot.providers[node], name=fqdn)
    snapshot.hypervisors[node] = dataclasses.replace(hypervisor,
                                                     hostname=fqdn)
    for uuid, server in snapshot.servers.items():
        if server.node == hypervisor.hostname:
            snapshot.servers[uuid] = dataclasses.replace(server, node=fqdn)


def _server_body(server, shown):
    """``server`` as Nova's listing gives it, or as ``GET /servers/{id}``
    at 2.98 does (``shown``: with its boot image's properties)."""
    image = ''
    if server.image_ref:
        image = {'id': server.image_ref}
        if shown:
            image['properties'] = dict(server.image_properties or {})
    flavor = server.flavor
    body = {'id': server.uuid, 'name': server.name, 'status': server.status,
            HOST_KEYS[0]: server.host, HOST_KEYS[1]: server.node,
            'OS-EXT-STS:task_state': server.task_state,
            'OS-EXT-STS:vm_state': server.vm_state,
            'tenant_id': server.project_id, 'user_id': server.user_id,
            'created': server.created, 'image': image,
            'flavor': dict({'vcpus': flavor.vcpus, 'ram': flavor.ram,
                            'disk': flavor.disk, 'ephemeral': flavor.ephemeral,
                            'swap': flavor.swap, 'original_name': flavor.name},
                           **({} if flavor.extra_specs is None else
                              {'extra_specs': flavor.extra_specs}))}
    return body


class Services:
    """Nova, Placement and Neutron answering from ``truth``, with ``lie``
    told about ``victim`` (a server or a compute node, where one is
    needed): only in listings and in what a policy or a microversion
    leaves out, never in a one-item read that proves a verdict."""

    def __init__(self, truth, lie='none', victim=None, cut=0):
        self.truth, self.lie, self.victim, self.cut = truth, lie, victim, cut

    def _body(self, server, shown):
        body = _server_body(server, shown and self.lie != 'image_unshown')
        if self.lie == 'host_hidden' and server.uuid == self.victim:
            for key in HOST_KEYS:
                del body[key]
        if self.lie == 'volume_backed' and server.uuid == self.victim:
            body['image'] = ''
        return body

    def server_list(self, client, on_page=None, **filters):
        listed = [self._body(s, False) for s in self.truth.servers.values()
                  if not s.down_cell and not (
                      self.lie == 'server_unlisted' and s.uuid == self.victim)]
        if self.lie == 'page_cut':
            listed = listed[:self.cut]
        if on_page:
            on_page(listed)
        return listed

    def server_get(self, client, uuid):
        server = self.truth.servers.get(uuid)
        return None if server is None else self._body(server, True)

    def migration_list(self, client, on_page=None, **filters):
        host = filters.get('host')
        listed = [{'uuid': g.uuid, 'instance_uuid': g.instance_uuid,
                   'status': g.status, 'migration_type': g.migration_type,
                   'source_node': g.source_node, 'dest_node': g.dest_node,
                   'source_compute': g.source_compute,
                   'dest_compute': g.dest_compute, 'updated_at': g.updated_at}
                  for g in self.truth.migrations.values()
                  if host in (None, g.source_compute, g.dest_compute)]
        if self.lie == 'migration_tail_dropped' and host is None:
            listed = listed[:self.cut]
        if on_page:
            on_page(listed)
        return listed

    def instance_known(self, client, uuid):
        if uuid in self.truth.unresolved:
            return None
        return uuid in self.truth.known_instances or \
            uuid in self.truth.servers

    def hypervisor_get(self, client, uuid):
        hypervisor = self.truth.hypervisors.get(uuid)
        if hypervisor is None or (self.lie == 'node_unmapped' and
                                  uuid == self.victim):
            return None
        return cloud.hypervisor_body(hypervisor)

    def read_topology(self, placement_client, nova_client, old=None,
                      reads=None, down_cell=None):
        truth = self.truth
        providers = dict(truth.providers)
        if reads is not None:
            reads.listed(providers)
        hypervisors = {u: h for u, h in truth.hypervisors.items()
                       if not (self.lie in ('hypervisor_unlisted',
                                            'node_unmapped') and
                               u == self.victim)}
        owner_traits = {u: t for u, t in (truth.owner_traits or {}).items()
                        if not (self.lie == 'owner_untagged' and
                                u == self.victim)}
        return dict(providers=providers,
                    sharing_providers=truth.sharing_providers,
                    hypervisors=hypervisors, hypervisors_listed=True,
                    services=dict(truth.services),
                    owner_traits=owner_traits,
                    inventory_classes=dict(truth.inventory_classes or {}))

    def consumer_allocations(self, client, uuid):
        consumer = self.truth.consumers.get(uuid)
        if consumer is None:
            return {'allocations': {}}
        return cloud.consumer_body(consumer)

    def provider_allocations(self, client, provider):
        return cloud.provider_allocations_body(self.truth.consumers,
                                               provider)

    def read_ports(self, network_client, servers=None):
        if self.lie == 'resource_request_hidden' and \
                self.truth.ports is not None:
            # Every port as Neutron lists it to a user its policy denies
            # ``get_port:resource_request``: the key left out.
            bodies = [{'id': port.id, 'name': port.name,
                       'device_id': port.device_id,
                       'binding:host_id': port.host,
                       'binding:profile': dict(port.profile),
                       'revision_number': port.revision}
                      for port in (self.truth.ports or {}).values()]
            with mock.patch.object(neutron, 'minimum_policies',
                                   return_value={'qos'}), \
                    mock.patch.object(neutron, '_pages',
                                      return_value=[bodies]):
                return READ_PORTS('network')
        return dict(ports=self.truth.ports, neutron=self.truth.neutron)

    @contextlib.contextmanager
    def serving(self):
        truth = self.truth
        incomplete = any(m.INCOMPLETE in (c.project_id, c.user_id)
                         for c in truth.consumers.values())
        with mock.patch.object(nova, 'server_list', self.server_list), \
                mock.patch.object(nova, 'server_get', self.server_get), \
                mock.patch.object(nova, 'migration_list',
                                  self.migration_list), \
                mock.patch.object(nova, 'instance_known',
                                  self.instance_known), \
                mock.patch.object(nova, 'hypervisor_get',
                                  self.hypervisor_get), \
                mock.patch.object(nova, 'down_cell_servers',
                                  return_value=[]), \
                mock.patch.object(placement, 'consumer_allocations',
                                  self.consumer_allocations), \
                mock.patch.object(placement, 'provider_allocations',
                                  self.provider_allocations), \
                mock.patch.object(placement, 'provider_inventories',
                                  return_value={}), \
                mock.patch.object(placement, 'project_usages',
                                  return_value=incomplete), \
                mock.patch.object(collect, 'read_topology',
                                  self.read_topology), \
                mock.patch.object(collect, 'read_ports', self.read_ports), \
                mock.patch.object(collect, 'read_port_candidates',
                                  return_value=dict(truth.port_candidates)):
            yield

    def sweep(self):
        with self.serving():
            return collect.full_snapshot('placement', 'nova', concurrency=2,
                                         network_client='network')


def offered_writes(snapshot):
    """Every write the audit of ``snapshot`` offers that changes what is
    held: each repair of each finding, as the consumer and what it would
    hold after, and each provider tree it offers to delete.  A write of
    the owner alone (*set project and user*, every allocation as read) is
    left out: the owner is the server's, which no lie here touches, and
    an incomplete consumer is offered it only when nothing else is wrong
    with it, which an unread Neutron cannot tell."""
    auditor = classify.Auditor(snapshot, min_age=0)
    report = assembly.report(auditor)
    writes = set()
    for finding in report.findings:
        for action in finding.actions:
            plan = auditor.plan(finding.consumer, finding.provider, action)
            if plan.after == plan.before:
                assert action == m.SET_OWNER, plan
                continue
            writes.add((plan.consumer, action, _items(plan.after),
                        frozenset(
                            (p, _items(plan.before.get(p, {})),
                             _items(plan.after.get(p, {})))
                            for p in set(plan.before) | set(plan.after)
                            if plan.before.get(p) != plan.after.get(p))))
    writes |= {('delete provider', tree.provider.uuid)
               for tree in report.providers if tree.orphaned_provider}
    return writes


def _items(resources):
    return tuple(sorted((k, _items(v) if isinstance(v, dict) else v)
                        for k, v in resources.items()))


def part_of_a_truth_write(write, truths):
    """``write`` (of :func:`offered_writes`) is one the truth offers, or
    changes only allocations one write the truth offers for the same
    consumer changes, each to the same amounts: where a lie leaves an
    allocation unproven, its repair keeps that one as it is."""
    if write in truths:
        return True
    return write[0] != 'delete provider' and any(
        truth[0] == write[0] and truth[0] != 'delete provider' and
        write[3] <= truth[3] for truth in truths)


@hypothesis.settings(max_examples=400, deadline=None, derandomize=True,
                     suppress_health_check=[hypothesis.HealthCheck.too_slow])
@hypothesis.given(clouds(), st.sampled_from(LIES), st.data())
def test_what_a_listing_leaves_out_never_adds_a_write(truth, lie, data):
    servers = sorted(u for u, s in truth.servers.items() if not s.down_cell)
    victim = None
    if lie in ('server_unlisted', 'host_hidden') and servers:
        victim = data.draw(st.sampled_from(servers))
    elif lie in ('hypervisor_unlisted', 'node_unmapped'):
        victim = data.draw(st.sampled_from(sorted(truth.hypervisors)))
    elif lie == 'volume_backed':
        victim = uid('pinned-by-image')
    elif lie == 'owner_untagged':
        tagged = sorted(u for u in truth.owner_traits or {}
                        if truth.providers.get(u) and
                        truth.providers[u].root_uuid == u)
        victim = data.draw(st.sampled_from(tagged)) if tagged else None
    cut = data.draw(st.integers(0, len(servers))) if lie == 'page_cut' else 0
    if lie == 'migration_tail_dropped':
        cut = data.draw(st.integers(0, len(truth.migrations)))
    honest = Services(truth).sweep()
    told = Services(truth, lie, victim, cut).sweep()
    under_truth = offered_writes(honest)
    under_lie = offered_writes(told)
    added = {w for w in under_lie
             if not part_of_a_truth_write(w, under_truth)}
    assert not added, (lie, victim, added)


def test_the_lies_are_not_vacuous():
    """Each lie, told to a cloud where it matters, would have made a
    write the truth does not, had the sweep taken a listing's word: the
    property above holds because the one-item reads are asked."""
    vm = uid('vm-one')
    host = m.Hypervisor(uid('host1'), 'host1', host='host1', state='up')
    truth = m.Snapshot(
        providers={host.uuid: m.Provider(host.uuid, 'host1', 1, host.uuid)},
        consumers={vm: m.Consumer(vm, 1, {host.uuid: {
            'PCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}, 'p', 'u',
            LONG_AGO)},
        servers={vm: m.Server(vm, 'vm-one', 'ACTIVE', 'host1', 'host1',
                              project_id='p', user_id='u',
                              flavor=FLAVORS['small'],
                              created=LONG_AGO.isoformat(), image_ref='img',
                              image_properties={'hw_cpu_policy':
                                                'dedicated'})},
        migrations={}, hypervisors={host.uuid: host},
        services={'host1': m.Service('host1', 'up')},
        owner_traits={host.uuid: frozenset({'OWNER_NOVA'})},
        inventory_classes={}, ports=None, neutron=None)
    assert offered_writes(Services(truth).sweep()) == set()
    listed_only = dataclasses.replace(
        truth, servers={vm: dataclasses.replace(
            truth.servers[vm], image_properties={})})
    assert offered_writes(listed_only), 'a pinned server read as unpinned'
    for lie, victim in (('server_unlisted', vm), ('page_cut', None),
                        ('host_hidden', vm), ('image_unshown', None),
                        ('hypervisor_unlisted', host.uuid)):
        told = Services(truth, lie, victim).sweep()
        assert offered_writes(told) == set(), lie


class Retried:
    """Placement behind a gateway that sends every PUT (and POST) again
    after its first copy landed: the answer is the copy's 409 (the
    generation the first moved).  Consumers as ``truth`` holds them."""

    def __init__(self, truth):
        self.held = {u: (c.generation, dict(c.allocations), c.project_id,
                         c.user_id) for u, c in truth.consumers.items()}

    def put_allocations(self, client, consumer, allocations, generation,
                        project_id, user_id):
        self.post_allocations(client, {consumer: (
            allocations, generation, project_id, user_id)})

    def post_allocations(self, client, consumers):
        for consumer, (_, generation, _, _) in consumers.items():
            now = self.held.get(consumer, (None, {}, None, None))
            assert now[0] == generation, (consumer, now, generation)
        for consumer, (allocations, generation, project_id,
                       user_id) in consumers.items():
            self.held[consumer] = ((generation or 0) + 1, dict(allocations),
                                   project_id, user_id) if allocations else (
                None, {}, None, None)
        body = mock.Mock(json=lambda: {'errors': [{
            'detail': 'consumer generation conflict',
            'code': placement.CONCURRENT_UPDATE}]})
        raise ks_exc.Conflict(response=body)

    def consumer_allocations(self, client, consumer):
        generation, allocations, project_id, user_id = self.held.get(
            consumer, (None, {}, None, None))
        if not allocations:
            return {'allocations': {}}
        return {'allocations': {rp: {'resources': dict(r)}
                                for rp, r in allocations.items()},
                'consumer_generation': generation, 'project_id': project_id,
                'user_id': user_id}


@hypothesis.settings(max_examples=100, deadline=None, derandomize=True,
                     suppress_health_check=[hypothesis.HealthCheck.too_slow])
@hypothesis.given(clouds())
def test_a_retried_write_is_a_write_done(truth):
    """The lie is in the answer, not a listing: every write the truth
    offers, sent through a gateway that retried it after it landed, is
    done and journaled applied with the consumer's new generation (never
    dropped as "wrote nothing", never rolled back), as it would be had
    its first answer arrived."""
    honest = Services(truth).sweep()
    auditor = classify.Auditor(honest, min_age=0)
    for finding in assembly.report(auditor).findings:
        for action in finding.actions:
            plan = auditor.plan(finding.consumer, finding.provider, action)
            if plan.ports:
                continue
            gateway = Retried(truth)
            journal = mock.Mock(**{'applied_twin.return_value': False})
            with mock.patch.object(placement, 'put_allocations',
                                   gateway.put_allocations), \
                    mock.patch.object(placement, 'post_allocations',
                                      gateway.post_allocations), \
                    mock.patch.object(placement, 'consumer_allocations',
                                      gateway.consumer_allocations):
                outcome = write.allocations('placement', journal, plan,
                                            plan.selection)
            assert outcome.status == write.DONE, (plan, outcome.message)
            entry = journal.begin.return_value
            assert journal.finish.call_args.args[1] == entry.APPLIED
            assert journal.finish.call_args.kwargs['new_generation'] == \
                gateway.held[plan.consumer][0]
            journal.discard.assert_not_called()
