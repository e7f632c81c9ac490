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

"""A tiny in-memory cloud for engine tests: builds Snapshots by hand."""

import datetime
import uuid as uuidlib

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.audit import model as m

NOW = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=datetime.timezone.utc)
LONG_AGO = NOW - datetime.timedelta(hours=1)
COMPUTE = ('DISK_GB', 'MEMORY_MB', 'VCPU')
"""The inventory Nova's resource tracker gives a compute node."""
SMALL = m.Flavor(vcpus=1, ram=512, disk=1, extra_specs={}, name='small')
DEVICES = {
    'pci': ('{host}_{address}', 'CUSTOM_PCI_8086_1563'),
    'pgpu': ('{host}_pci_{libvirt}', 'VGPU'),
    'mem_encryption': ('{host}_amd_sev', 'MEM_ENCRYPTION_CONTEXT'),
}
"""The children Nova gives a compute node, named and classed as Nova does:
a PCI device in Placement (``nova/compute/pci_placement_translator.py``,
the address upper-cased), a vGPU's physical GPU and the memory
encryption slots (``nova/virt/libvirt/driver.py``)."""


def uid(name):
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, name))


class Cloud:
    def __init__(self, hosts=('host1', 'host2', 'host3')):
        self.providers = {}
        self.hypervisors = {}
        self.services = {}
        self.servers = {}
        self.migrations = {}
        self.consumers = {}
        self.sharing = set()
        self.known = set()
        self.classes = {}
        self.owner_traits = {}
        """``{provider uuid: {OWNER_* trait}}``: what Placement's fake
        (:class:`Placement`) says each provider carries."""
        self.ports = None
        self.neutron = None
        self.inventories = None
        """``{provider uuid: {class: inventory}}`` a capacity sweep read,
        or None (no capacity read)."""
        self.candidates = {}
        """``{server: ({group: provider}, ...)}``: Placement's allocation
        candidates for the groups its ports place nowhere in its tree."""
        self.unread_hosts = set()
        """Hosts whose migrations Nova did not list whole by host (a slow
        cell's timer ran out): every other host's it did."""
        self.unanswered = set()
        """Root providers Nova did not answer for alone (``GET
        /os-hypervisors/{uuid}`` failed): every other root it has no
        compute node for, it answers 404 for."""
        for host in hosts:
            self.host(host)

    def host(self, name, state='up', forced_down=False):
        rp = uid(name)
        self.providers[rp] = m.Provider(rp, name, 1, rp)
        self.hypervisors[rp] = m.Hypervisor(rp, name, host=name, state=state)
        self.services[name] = m.Service(name, state, forced_down=forced_down)
        self.classes[rp] = COMPUTE
        return rp

    def gone(self, name):
        """A compute host Nova deleted, its service and compute node with
        it, whose provider stayed (Nova swallows ``ResourceProviderInUse``
        on a service delete): Nova answers 404 for its node."""
        rp = self.host(name)
        del self.hypervisors[rp]
        del self.services[name]
        return rp

    def replaced(self, name, node=None):
        """A host reinstalled under its old name (Nova bug 1817833): Nova
        deleted its compute node (its service deleted and started again,
        or its ``compute_id`` file lost), whose provider stayed, and lists
        a new node of the same name (``node``, else ``name``) under
        another uuid with no provider: nova-compute cannot create one
        while the old keeps the name.  ``(old provider, new node)``."""
        old = self.gone(name)
        if node is not None:
            self.providers[old] = m.Provider(old, node, 1, old)
        new = uid(name + '-reinstalled')
        self.hypervisors[new] = m.Hypervisor(new, node or name, host=name,
                                             state='up')
        self.services[name] = m.Service(name, 'up')
        return old, new

    def unmapped(self, name, node=None):
        """A compute host not mapped to a cell yet: its service and its
        node's provider (named ``node``, else ``name``: libvirt names it
        by the hypervisor's FQDN, Ironic by the node's uuid) are there,
        Nova lists no compute node for it and answers 404 for it alone."""
        rp = self.host(name)
        del self.hypervisors[rp]
        if node is not None:
            self.providers[rp] = m.Provider(rp, node, 1, rp)
        return rp

    def foreign(self, name, classes):
        """A root provider another service made: no compute node."""
        rp = uid(name)
        self.providers[rp] = m.Provider(rp, name, 1, rp)
        self.classes[rp] = tuple(classes)
        return rp

    def tag(self, provider, trait='OWNER_NOVA'):
        """``provider`` carries the ``OWNER_*`` trait ``trait``."""
        self.owner_traits.setdefault(provider, set()).add(trait)

    def child(self, parent, name):
        rp = uid(name)
        root = self.providers[parent].root_uuid
        self.providers[rp] = m.Provider(rp, name, 1, root, parent)
        return rp

    def device(self, host, kind='pci', address='0000:81:00.0',
               resource_class=None, tagged=False, reserved=None):
        """A child of ``host``'s node as Nova makes it (:data:`DEVICES`):
        its uuid.  ``resource_class``: the ``device_spec``'s, else Nova's
        default; ``tagged``: it carries ``OWNER_NOVA`` (Nova 34 onwards);
        ``reserved``: its one inventory's reserved amount (a one-time-use
        device after use holds ``reserved = total``), which also records
        the inventory (total 1) as a capacity sweep reads it."""
        shape, default = DEVICES[kind]
        name = shape.format(host=host, address=address.upper(),
                            libvirt=address.replace(':', '_').replace(
                                '.', '_'))
        rp = self.child(uid(host), name)
        if tagged:
            self.tag(rp)
        if reserved is not None:
            self.inventories = dict(self.inventories or {}, **{rp: {
                resource_class or default: {'total': 1,
                                            'reserved': reserved}}})
        return rp

    def nic(self, host):
        """Neutron's Open vSwitch agent and its ``br-phys`` NIC under
        ``host``'s compute node: the NIC's uuid."""
        agent = self.child(uid(host), '%s:Open vSwitch agent' % host)
        return self.child(agent, '%s:Open vSwitch agent:br-phys' % host)

    def port(self, name, server, nic=None, resources=None):
        """A port of ``server`` whose QoS policy requests ``resources``
        (1000 kbps egress), bound with its request on ``nic`` (None: its
        binding places it nowhere); Neutron counts as read."""
        if resources is None:
            resources = {'NET_BW_EGR_KILOBIT_PER_SEC': 1000}
        group = uid(name + '-group')
        allocation = {group: nic} if nic else {}
        port = m.Port(uid(name), name, server, '',
                      {group: dict(resources)}, allocation,
                      {group: ('CUSTOM_PHYSNET_PHYSNET0',)},
                      {'allocation': allocation} if nic else {}, 3)
        self.ports = dict(self.ports or {}, **{port.id: port})
        self.neutron = m.NEUTRON_READ
        return port.id

    def port_findings(self, host, requested, held):
        """On ``host``'s NIC: server ``leaky`` holds 1000 kbps egress no
        port requests (a leak); server ``short`` holds ``held`` where its
        port requests ``requested``.  The NIC's uuid."""
        nic = self.nic(host)
        leaky = self.server('leaky', host)
        self.allocate(leaky, uid(host))
        self.allocate(leaky, nic, {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
        short = self.server('short', host)
        self.allocate(short, uid(host))
        self.port('short-port', short, nic, requested)
        self.allocate(short, nic, held)
        return nic

    def offer(self, server, port_id, *providers):
        """Placement's allocation candidates for ``port_id``'s group: one
        per provider of ``providers`` (none: no candidate)."""
        group, = self.ports[port_id].requests
        self.candidates[server] = tuple({group: p} for p in providers)

    def sharing_provider(self, name):
        rp = uid(name)
        self.providers[rp] = m.Provider(rp, name, 1, rp)
        self.sharing.add(rp)
        return rp

    def server(self, name, host, flavor=SMALL, image='img', **kwargs):
        server = m.Server(**{
            'uuid': uid(name), 'name': name, 'status': 'ACTIVE',
            'host': host, 'node': host, 'project_id': 'p', 'user_id': 'u',
            'flavor': flavor, 'created': LONG_AGO.isoformat(),
            'image_ref': image, **kwargs})
        self.servers[server.uuid] = server
        return server.uuid

    def allocate(self, consumer, provider, resources=None, generation=1,
                 modified=LONG_AGO, owner=('p', 'u')):
        if resources is None:
            resources = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
        entry = self.consumers.setdefault(consumer, m.Consumer(
            consumer, generation, {}, owner[0], owner[1], modified))
        entry.allocations[provider] = dict(resources)

    def deleted(self, name, provider, resources=None, **kwargs):
        """A server Nova deleted (it says so when asked for it) whose
        allocation is left on ``provider``: its uuid."""
        consumer = uid(name)
        self.known.add(consumer)
        self.allocate(consumer, provider, resources, **kwargs)
        return consumer

    def migration(self, name, instance, status, kind='migration',
                  source='host1', dest='host2', updated=None):
        migration = m.Migration(uid(name), instance, status, kind,
                                source_node=source, dest_node=dest,
                                source_compute=source, dest_compute=dest,
                                updated_at=updated and updated.isoformat())
        self.migrations[migration.uuid] = migration
        return migration.uuid

    def snapshot(self):
        return m.Snapshot(
            providers=dict(self.providers), consumers=dict(self.consumers),
            servers=dict(self.servers), migrations=dict(self.migrations),
            hypervisors=dict(self.hypervisors), services=dict(self.services),
            sharing_providers=frozenset(self.sharing),
            known_instances=frozenset(self.known), taken_at=NOW,
            owner_traits={u: frozenset(t)
                          for u, t in self.owner_traits.items()},
            inventory_classes=dict(self.classes),
            ports=None if self.ports is None else dict(self.ports),
            neutron=self.neutron, port_candidates=dict(self.candidates),
            inventories=None if self.inventories is None else
            dict(self.inventories),
            migration_hosts=frozenset(
                {h.host for h in self.hypervisors.values()} |
                {p.name for u, p in self.providers.items()
                 if u == p.root_uuid}) - self.unread_hosts,
            nodes_gone=frozenset() if any(
                s.status == m.DOWN_CELL_STATUS
                for s in self.services.values()) else frozenset(
                u for u, p in self.providers.items()
                if u == p.root_uuid and u not in self.hypervisors and
                u not in self.unanswered))


class Placement:
    """A keystoneauth adapter answering a sweep's reads from ``cloud``, as
    Placement would: providers (filtered by one ``required`` trait), the
    traits it knows (``name=startswith:``), its versions (``GET /``),
    each provider's inventory,
    allocations and usages, each consumer's allocations and a project's
    usages.  ``asked`` keeps every (path, params)."""

    def __init__(self, cloud):
        self.cloud = cloud
        self.asked = []

    def _carrying(self, trait):
        if trait == 'MISC_SHARES_VIA_AGGREGATE':
            return self.cloud.sharing
        known = set().union(*self.cloud.owner_traits.values()) | {
            'OWNER_NOVA', 'OWNER_CYBORG'}
        if trait not in known:
            raise ks_exc.BadRequest('No such trait(s): %s' % trait)
        return {u for u, t in self.cloud.owner_traits.items() if trait in t}

    def get(self, path, microversion=None, params=None):
        params = dict(params or {})
        self.asked.append((path, dict(params)))
        providers = self.cloud.providers
        if path == '/resource_providers':
            wanted = set(providers)
            if 'required' in params:
                wanted &= self._carrying(params.pop('required'))
            assert not params, params
            return _Answer(resource_providers=[{
                'uuid': u, 'name': providers[u].name, 'generation':
                providers[u].generation, 'root_provider_uuid':
                providers[u].root_uuid, 'parent_provider_uuid':
                providers[u].parent_uuid} for u in sorted(wanted)])
        if path == '/traits':
            prefix = params.pop('name')[len('startswith:'):]
            assert not params, params
            return _Answer(traits=sorted(
                t for t in set().union(
                    *self.cloud.owner_traits.values()) | {
                    'OWNER_NOVA', 'OWNER_CYBORG'} if t.startswith(prefix)))
        if path.startswith('/traits/'):
            self._carrying(path[len('/traits/'):])
            return _Answer()
        if path == '/usages':
            return _Answer(usages={})
        if path == '/':
            return _Answer(versions=[{'id': 'v1.0', 'max_version': '1.39',
                                      'min_version': '1.0'}])
        kind, uuid = path.split('/')[1:3]
        consumers = self.cloud.consumers
        if kind == 'allocations':
            consumer = consumers.get(uuid)
            if consumer is None:
                return _Answer(allocations={})
            return _Answer(allocations={
                rp: {'resources': dict(r)}
                for rp, r in consumer.allocations.items()},
                consumer_generation=consumer.generation,
                project_id=consumer.project_id, user_id=consumer.user_id)
        held = {c: a[uuid] for c, a in (
            (c.uuid, c.allocations) for c in consumers.values()) if uuid in a}
        if path.endswith('/allocations'):
            return _Answer(allocations={
                c: {'resources': dict(r), 'consumer_generation':
                    consumers[c].generation} for c, r in held.items()})
        if path.endswith('/usages'):
            usages = {}
            for resources in held.values():
                for rc, n in resources.items():
                    usages[rc] = usages.get(rc, 0) + n
            return _Answer(usages=usages)
        return _Answer(inventories={rc: {'total': 1} for rc in
                                    self.cloud.classes.get(uuid, ())})


class _Answer:
    def __init__(self, **body):
        self.body = body
        self.headers = {}

    def json(self):
        return self.body


def read_topology(cloud):
    """``(snapshot, placement)``: ``cloud``'s topology as a sweep reads it
    through :class:`Placement` and Nova's listings, with no consumer."""
    from unittest import mock

    from orphan_dashboard.api import nova
    from orphan_dashboard.reading import collect

    placement = Placement(cloud)
    with mock.patch.object(nova, 'hypervisor_list',
                           return_value=hypervisor_bodies(cloud)), \
            mock.patch.object(nova, 'service_list',
                              return_value=service_bodies(cloud)):
        topology = collect.read_topology(placement, None)
    return m.Snapshot(consumers={}, servers={}, migrations={},
                      **topology), placement


def hypervisor_body(hypervisor):
    """A compute node as Nova shows it, in its listing or alone."""
    return {'id': hypervisor.uuid, 'hypervisor_hostname': hypervisor.hostname,
            'state': hypervisor.state, 'status': hypervisor.status,
            'service': {'host': hypervisor.host}}


def hypervisor_bodies(cloud):
    """``cloud``'s compute nodes as Nova's hypervisor listing gives them."""
    return [hypervisor_body(h) for h in cloud.hypervisors.values()]


def consumer_body(consumer):
    """``consumer`` (a :class:`~model.Consumer`) as ``GET
    /allocations/{uuid}`` answers it, its ``last_modified`` added."""
    return {'allocations': {rp: {'resources': dict(r)}
                            for rp, r in consumer.allocations.items()},
            'consumer_generation': consumer.generation,
            'project_id': consumer.project_id, 'user_id': consumer.user_id,
            'last_modified': consumer.modified}


def provider_allocations_body(consumers, provider):
    """What ``consumers`` (``{uuid: Consumer}``) hold on ``provider``, as
    ``GET /resource_providers/{uuid}/allocations`` answers it."""
    return {u: {'resources': dict(c.allocations[provider]),
                'consumer_generation': c.generation}
            for u, c in consumers.items() if provider in c.allocations}


def service_bodies(cloud):
    """``cloud``'s compute services as ``os-services`` gives them."""
    return [{'host': s.host, 'state': s.state, 'status': s.status,
             'forced_down': s.forced_down, 'id': s.uuid}
            for s in cloud.services.values()]
