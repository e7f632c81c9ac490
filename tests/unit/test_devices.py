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

"""A node's own children: PCI devices in Placement, vGPU physical GPUs,
memory encryption slots (``doc/source/verdicts.md``, *A node's devices*).

Nova alone writes what a server holds there (nova-compute heals PCI
allocations itself, ``heal_allocations`` cannot): the audit judges a
device allocation with the rest of its consumer's share of that node and
keeps the current node's devices as read on every repair.
"""

import pytest

from orphan_dashboard.audit import capacity
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from tests.unit.cloud import Cloud
from tests.unit.cloud import COMPUTE
from tests.unit.cloud import DEVICES
from tests.unit.cloud import uid

H1, H2 = uid('host1'), uid('host2')
HELD = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


def holds(kind):
    """What a server holds on a device child of ``kind``."""
    return {DEVICES[kind][1]: 1}


def verdicts(cloud, consumer):
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    return auditor, {f.provider: f for f in
                     auditor.consumer_findings(consumer)}


@pytest.mark.parametrize('kind', sorted(DEVICES))
def test_a_deleted_servers_device_goes_with_its_share_of_the_node(kind):
    cloud = Cloud()
    device = cloud.device('host1', kind)
    gone = cloud.deleted('gone', H1)
    cloud.allocate(gone, device, holds(kind))
    auditor, found = verdicts(cloud, gone)
    assert {f.verdict for f in found.values()} == {m.DELETED_INSTANCE}
    assert found[device].actions == (m.DELETE,)
    assert auditor.target(gone, m.DELETE).after == {}


def test_a_deleted_servers_pci_device_may_be_one_removed_from_device_spec():
    """Nova keeps a PCI device removed from ``device_spec`` in Placement
    only while an allocation holds it (Nova bug 2115905), and nothing
    Placement or Nova's API shows tells it from a device still listed: the
    reason on a deleted server's PCI device says that its repair may take
    the device with it; not on the node's share, another kind of child
    or another service's device named alike (Cyborg's)."""
    cloud = Cloud()
    gone = uid('gone')
    cloud.known.add(gone)
    pci, pgpu = cloud.device('host1'), cloud.device('host1', 'pgpu')
    fpga = cloud.device('host1', address='0000:82:00.0')
    cloud.allocate(gone, H1)
    cloud.allocate(gone, pci, holds('pci'))
    cloud.allocate(gone, pgpu, holds('pgpu'))
    cloud.allocate(gone, fpga, {'CUSTOM_ACCELERATOR_FPGA': 1})
    _, found = verdicts(cloud, gone)
    assert {f.verdict for f in found.values()} == {m.DELETED_INSTANCE}
    codes = {p: f.reason.code for p, f in found.items()}
    assert codes == {H1: 'deleted_instance', pgpu: 'deleted_instance',
                     fpga: 'deleted_instance',
                     pci: 'deleted_instance.pci_device'}
    assert 'removed from [pci] device_spec' in str(found[pci].reason)
    assert 'Nova bug 2115905' in str(found[pci].reason)


@pytest.mark.parametrize('kind', sorted(DEVICES))
def test_a_moved_servers_old_device_is_trimmed_its_new_one_kept(kind):
    """Moved to host2, where Nova gave it a device of the same class: the
    old node's device is left behind with the old node's share."""
    cloud = Cloud()
    old, new = cloud.device('host1', kind), cloud.device('host2', kind)
    web = cloud.server('web', 'host2')
    for provider, resources in ((H1, HELD), (old, holds(kind)),
                                (H2, HELD), (new, holds(kind))):
        cloud.allocate(web, provider, resources)
    auditor, found = verdicts(cloud, web)
    assert found[old].verdict == found[H1].verdict == m.MOVED
    assert found[new].verdict == m.OK
    assert m.TRIM in found[old].actions
    assert auditor.target(web, m.TRIM).after == {H2: HELD,
                                                 new: holds(kind)}


def test_an_ended_migrations_device_is_stale_with_its_node_share():
    cloud = Cloud()
    device = cloud.device('host1')
    web = cloud.server('web', 'host2')
    cloud.allocate(web, H2)
    resize = cloud.migration('resize', web, 'confirmed', kind='resize')
    cloud.allocate(resize, H1)
    cloud.allocate(resize, device, holds('pci'))
    auditor, found = verdicts(cloud, resize)
    assert found[device].verdict == found[H1].verdict == m.STALE_MIGRATION
    assert auditor.target(resize, m.DELETE).after == {}


def _on_host2(kind, moved, neutron):
    """web on host2 holding a device of ``kind`` there and more memory
    than its flavor; ``moved``: its old share left on host1; ``neutron``:
    its QoS port bound on host2's NIC (Neutron read)."""
    cloud = Cloud()
    device = cloud.device('host2', kind)
    web = cloud.server('web', 'host2')
    cloud.allocate(web, H2, dict(HELD, MEMORY_MB=1024))
    cloud.allocate(web, device, holds(kind))
    if moved:
        cloud.allocate(web, H1)
    if neutron:
        nic = cloud.nic('host2')
        cloud.allocate(web, nic, {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
        cloud.port('web-port', web, nic)
    return cloud, web, device


@pytest.mark.parametrize('neutron', [False, True])
@pytest.mark.parametrize('moved', [False, True])
@pytest.mark.parametrize('kind', sorted(DEVICES))
def test_every_repair_of_the_current_node_keeps_its_device(kind, moved,
                                                           neutron):
    """No trim, heal or delete-and-heal rebuilds a device from a flavor:
    whichever is offered, the current node's device stays as read."""
    cloud, web, device = _on_host2(kind, moved, neutron)
    auditor, found = verdicts(cloud, web)
    offered = {a for f in found.values() for a in f.actions}
    assert offered, found
    for action in offered:
        assert auditor.target(web, action).after[device] == holds(kind), \
            action


def test_a_used_one_time_device_is_no_orphan():
    """A one-time-use device stays ``reserved = total`` once its server
    is gone (Nova 2025.2), holding no allocation: nothing to repair, no
    stranger in the node's tree, and nothing counted as held."""
    cloud = Cloud()
    used = cloud.device('host1', reserved=1)
    cloud.inventories[H1] = {rc: {'total': 64} for rc in COMPUTE}
    snapshot = cloud.snapshot()
    report = classify.audit(snapshot, min_age=600)
    node = report.provider(H1)
    assert not node.needs_attention
    assert node.foreign_children == ()
    assert [f for f in report.findings if f.provider == used] == []
    tree = capacity.assess(snapshot, report).trees[H1]
    pci = {c.resource_class: c for c in tree.classes}['CUSTOM_PCI_8086_1563']
    assert (pci.capacity, pci.used, pci.held) == (0, 0, 0)


def test_a_gone_nodes_own_children_go_with_its_tree():
    """host1's compute node gone, its PCI device, physical GPU and memory
    encryption slots (untagged: Nova before 34) still held by a deleted
    server: the tree is Nova's to delete (a migration Nova lists names
    host1), no child a stranger."""
    cloud = Cloud()
    del cloud.hypervisors[H1]
    del cloud.services['host1']
    cloud.migration('old-move', uid('moved-vm'), 'completed',
                    source='host1', dest='host2')
    gone = uid('gone')
    cloud.known.add(gone)
    for kind in sorted(DEVICES):
        cloud.allocate(gone, cloud.device('host1', kind), holds(kind))
    node = classify.audit(cloud.snapshot(), min_age=600).provider(H1)
    assert node.foreign_children == ()
    assert node.orphaned_provider
