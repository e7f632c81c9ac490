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

from orphan_dashboard.audit import model as m

NOW = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=datetime.timezone.utc)
LONG_AGO = NOW - datetime.timedelta(hours=1)
COMPUTE = ('DISK_GB', 'MEMORY_MB', 'VCPU')
"""The inventory Nova's resource tracker gives a compute node."""
SMALL = m.Flavor(vcpus=1, ram=512, disk=1, extra_specs={}, name='small')


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
        self.owner_nova = set()
        self.ports = None
        self.neutron = None
        self.candidates = {}
        """``{server: ({group: provider}, ...)}``: Placement's allocation
        candidates for the groups its ports place nowhere in its tree."""
        for host in hosts:
            self.host(host)

    def host(self, name, state='up', forced_down=False):
        rp = uid(name)
        self.providers[rp] = m.Provider(rp, name, 1, rp)
        self.hypervisors[rp] = m.Hypervisor(rp, name, host=name, state=state)
        self.services[name] = m.Service(name, state, forced_down=forced_down)
        self.classes[rp] = COMPUTE
        return rp

    def foreign(self, name, classes):
        """A root provider another service made: no compute node."""
        rp = uid(name)
        self.providers[rp] = m.Provider(rp, name, 1, rp)
        self.classes[rp] = tuple(classes)
        return rp

    def child(self, parent, name):
        rp = uid(name)
        root = self.providers[parent].root_uuid
        self.providers[rp] = m.Provider(rp, name, 1, root, parent)
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

    def migration(self, name, instance, status, kind='migration',
                  source='host1', dest='host2'):
        migration = m.Migration(uid(name), instance, status, kind,
                                source_node=source, dest_node=dest,
                                source_compute=source, dest_compute=dest)
        self.migrations[migration.uuid] = migration
        return migration.uuid

    def snapshot(self):
        return m.Snapshot(
            providers=dict(self.providers), consumers=dict(self.consumers),
            servers=dict(self.servers), migrations=dict(self.migrations),
            hypervisors=dict(self.hypervisors), services=dict(self.services),
            sharing_providers=frozenset(self.sharing),
            known_instances=frozenset(self.known), taken_at=NOW,
            owner_nova=frozenset(self.owner_nova),
            inventory_classes=dict(self.classes),
            ports=None if self.ports is None else dict(self.ports),
            neutron=self.neutron, port_candidates=dict(self.candidates))
