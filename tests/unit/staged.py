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

"""Small clouds several unit modules judge (:class:`~tests.unit.cloud.Cloud`
built): a dead host with one leftover of each kind, an Ironic conductor's
nodes, a done evacuation's leftover, a batch of leftovers, Cyborg's
devices beside Nova's on a dead host, and a host reinstalled under its old
name."""

from orphan_dashboard.audit import model as m
from tests.unit.cloud import Cloud
from tests.unit.cloud import COMPUTE
from tests.unit.cloud import uid

H1, H2, H3 = uid('host1'), uid('host2'), uid('host3')


def dead_host1():
    """host1 forced down, holding one leftover of each kind."""
    cloud = Cloud()
    cloud.host('host1', state='down', forced_down=True)
    nic = cloud.child(H1, 'host1:br-phys')
    evacuated = cloud.server('evacuated', 'host2')
    cloud.allocate(evacuated, H1)
    cloud.allocate(evacuated, H2)
    cloud.migration('evac', evacuated, 'done', kind='evacuation')
    ghost = cloud.deleted('ghost', H1)
    owner = cloud.server('owner', 'host3')
    cloud.allocate(owner, H3)
    stale = cloud.migration('stale', owner, 'error', source='host1',
                            dest='host3')
    cloud.allocate(stale, H1)
    stranger = uid('stranger')
    cloud.allocate(stranger, H1)
    return cloud, dict(evacuated=evacuated, ghost=ghost, stale=stale,
                       stranger=stranger, nic=nic)


def ironic():
    """One compute service, an Ironic conductor, forced down with three
    nodes (named, as Ironic's are, by their node uuid)."""
    cloud = Cloud(hosts=())
    cloud.services['conductor'] = m.Service(
        'conductor', 'down', forced_down=True, uuid=uid('conductor-svc'))
    nodes = []
    for name in ('node-a', 'node-b', 'node-c'):
        rp = uid(name)
        cloud.providers[rp] = m.Provider(rp, rp, 1, rp)
        cloud.hypervisors[rp] = m.Hypervisor(rp, rp, host='conductor',
                                             state='down')
        cloud.classes[rp] = ('CUSTOM_BAREMETAL_GOLD',)
        nodes.append(rp)
    return cloud, nodes


def evacuated():
    """vm1 lives on host2 and still holds host1 (a done evacuation)."""
    cloud = Cloud()
    vm = cloud.server('vm1', 'host2')
    cloud.allocate(vm, H1)
    cloud.allocate(vm, H2)
    cloud.migration('evac', vm, 'done', kind='evacuation', source='host1',
                    dest='host2')
    return cloud, vm


def leftovers():
    """Three servers deleted behind Nova's back, one moved server's
    leftover and one healthy server: five consumers, four to write."""
    cloud = Cloud()
    for name in ('gone1', 'gone2', 'gone3'):
        cloud.known.add(uid(name))
        cloud.allocate(uid(name), H1)
    moved = cloud.server('moved', 'host2')
    cloud.allocate(moved, H1)
    cloud.allocate(moved, H2)
    cloud.allocate(cloud.server('fine', 'host3'), H3)
    return cloud.snapshot()


def cyborg_host3():
    """host3 dead, holding Cyborg's GPU named as Nova names a PCI device
    (``OWNER_CYBORG``) beside Nova's own tagged PCI device, and Cyborg's
    root tagged ``OWNER_CYBORG`` with a compute node's classes."""
    cloud = Cloud()
    host3 = cloud.host('host3', state='down', forced_down=True)
    gpu = cloud.child(host3, 'host3_0000:81:00.0')
    cloud.tag(gpu, 'OWNER_CYBORG')
    pci = cloud.child(host3, 'host3_0000:82:00.0')
    cloud.tag(pci, 'OWNER_NOVA')
    accel = cloud.foreign('accel-node', COMPUTE)
    cloud.tag(accel, 'OWNER_CYBORG')
    return cloud, dict(host3=host3, gpu=gpu, pci=pci, accel=accel)


FQDN = 'host6.example.com'


def reinstalled(tagged=True):
    """host6 reinstalled: its old provider, tagged ``OWNER_NOVA`` unless
    not ``tagged``, holds a deleted server's leftover."""
    cloud = Cloud()
    old, new = cloud.replaced('host6', node=FQDN)
    if tagged:
        cloud.tag(old)
    ghost = cloud.deleted('ghost', old)
    return cloud, old, new, ghost
