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

"""Whose provider is it: only one provably Nova's is ever called orphaned,
offered for deletion or decommissioned."""

import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import decommission
from orphan_dashboard.audit import ownership
from orphan_dashboard.audit import report as assembly
from tests.unit.cloud import Cloud
from tests.unit.cloud import COMPUTE
from tests.unit.cloud import read_topology
from tests.unit.cloud import uid
from tests.unit.staged import cyborg_host3

SEGMENT = 'Neutron segment id 8a6c1d2e-3f4b-4c5d-9e6f-7a8b9c0d1e2f'


def foreign_cloud():
    """A dead compute node's provider (tagged ``OWNER_NOVA``) beside a
    Neutron routed network's segment provider, Blazar's reservation
    provider and a root with a compute node's classes and no trait, as
    OpenStack Zun's compute agent registers its hosts, none with a
    compute node."""
    cloud = Cloud()
    gone = cloud.gone('gone')
    cloud.tag(gone)
    segment = cloud.foreign(SEGMENT, ['IPV4_ADDRESS'])
    blazar = cloud.foreign('blazar_host9', ['CUSTOM_RESERVATION_ABC'])
    stranger = cloud.foreign('someones-thing', [])
    zun = cloud.foreign('zun-container-host-1', COMPUTE)
    return cloud, dict(gone=gone, segment=segment, blazar=blazar,
                       stranger=stranger, zun=zun)


def test_only_a_provably_nova_provider_is_orphaned():
    cloud, rp = foreign_cloud()
    report = classify.audit(cloud.snapshot(), min_age=600)
    for name in ('segment', 'blazar', 'stranger', 'zun'):
        assert not report.provider(rp[name]).orphaned_provider, name
    assert report.provider(rp['gone']).orphaned_provider
    assert report.provider(rp['gone']).owner == 'nova'
    assert report.provider(rp['gone']).service_state == 'no compute node'
    for name, owner in (('segment', 'neutron'), ('blazar', 'blazar'),
                        ('stranger', None)):
        found = report.provider(rp[name])
        assert found.owner == owner, name
        assert found.service_state == 'not a compute node', name
        assert not found.needs_attention, name


def test_a_root_with_a_compute_nodes_classes_is_only_a_suspect():
    """Zun's compute agent registers roots with VCPU, MEMORY_MB and
    DISK_GB and no trait: an inventory proves nobody.  Nova answers it
    has no such node: never an orphaned provider, no *Delete provider*;
    a decommission deletes it only when it is ticked by name, and its
    container's consumer only when that is ticked too."""
    cloud, rp = foreign_cloud()
    container = uid('container')
    cloud.allocate(container, rp['zun'])
    report = classify.audit(cloud.snapshot(), min_age=600)
    tree = report.provider(rp['zun'])
    assert (tree.owner, tree.owner_proof, tree.orphaned_provider,
            tree.dead) == (None, ownership.INVENTORY, False, True)
    assert tree.not_orphaned().code == 'blocker.suspect'
    assert 'zun-container-host-1' in str(tree.not_orphaned())
    plan = decommission.plan(cloud.snapshot(), 'zun-container-host-1',
                             min_age=0)
    assert (plan.roots, plan.foreign, plan.foreign_children) == (
        [rp['zun']], {}, {rp['zun']: None})
    assert plan.optional == [container]
    assert [b.code for b in plan.blockers()] == [
        'blocker.unproven_child', 'blocker.unknown_consumer']
    assert plan.blockers([container], [rp['zun']]) == []
    assert plan.actionable()


def test_a_suspect_nova_does_not_answer_for_stays_protected():
    """Nova's read of a suspect root failed: it may be one of its nodes,
    alive; what it holds is protected and it is not decommissioned."""
    cloud, rp = foreign_cloud()
    cloud.unanswered.add(rp['zun'])
    ghost = cloud.deleted('ghost', rp['zun'])
    found = classify.Auditor(cloud.snapshot(), min_age=0).finding(
        ghost, rp['zun'])
    assert (found.verdict, found.reason.code) == (
        'protected', 'protected.unproven_node')
    plan = decommission.plan(cloud.snapshot(), rp['zun'], min_age=0)
    assert plan.foreign_children == {}
    assert [b.code for b in plan.refusals()] == ['blocker.suspect']


def test_the_owner_nova_trait_proves_it_whatever_the_inventory():
    cloud, rp = foreign_cloud()
    cloud.classes[rp['gone']] = ('CUSTOM_WHATEVER',)
    cloud.tag(rp['gone'])
    report = classify.audit(cloud.snapshot(), min_age=600)
    assert report.provider(rp['gone']).orphaned_provider


def test_a_decommission_of_another_services_provider_is_blocked():
    cloud, rp = foreign_cloud()
    plan = decommission.plan(cloud.snapshot(), SEGMENT, min_age=0)
    assert plan.roots == [rp['segment']]
    assert {r: f.owner for r, f in plan.foreign.items()} == {
        rp['segment']: 'neutron'}
    (blocker,) = plan.blockers()
    assert "is not Nova's" in str(blocker) and 'neutron' in str(blocker)
    plan = decommission.plan(cloud.snapshot(), rp['gone'], min_age=0)
    assert plan.foreign == {} and plan.blockers() == []


def test_the_rule_for_novas_that_tag_nothing():
    from orphan_dashboard.audit import ownership as o
    names = frozenset({'host1', 'host2'})
    cases = [
        # (name, traits, classes, listed as a compute node, owner)
        ('anything', (), (), True, 'nova'),
        ('anything', ('OWNER_NOVA',), ('IPV4_ADDRESS',), False, 'nova'),
        ('dev', ('OWNER_CYBORG',), ('FPGA',), False, 'cyborg'),
        # A compute node's inventory proves nobody (Zun's hosts have it).
        ('host9', (), ('VCPU', 'MEMORY_MB', 'DISK_GB'), False, None),
        ('host9', (), ('PCPU', 'MEMORY_MB'), False, None),
        (uid('ironic-node'), (), ('CUSTOM_BAREMETAL_GOLD',), False, None),
        # Nova's records name it: its.
        ('host2', (), ('VCPU', 'MEMORY_MB', 'DISK_GB'), False, 'nova'),
        ('not-a-uuid', (), ('CUSTOM_BAREMETAL_GOLD',), False, None),
        (uid('x'), (), ('CUSTOM_A', 'CUSTOM_B'), False, None),
        ('host1', (), (), False, 'nova'),
        ('host1', (), None, False, 'nova'),
        ('host9', (), (), False, None),
        ('host9', (), None, False, None),
        (SEGMENT, (), ('IPV4_ADDRESS',), False, 'neutron'),
        (SEGMENT, (), (), False, 'neutron'),
        ('router-net', (), ('IPV4_ADDRESS',), False, 'neutron'),
        ('host1:Open vSwitch agent', (), (), False, 'neutron'),
        ('host9', (), ('NET_BW_EGR_KILOBIT_PER_SEC',), False, 'neutron'),
        ('host9', (), ('VCPU', 'NET_PACKET_RATE_KILOPACKET_PER_SEC'), False,
         'neutron'),
        ('blazar_host1', (), (), False, 'blazar'),
        ('host1', (), ('CUSTOM_RESERVATION_X',), False, 'blazar'),
        ('host1_fpga', (), ('FPGA',), False, 'cyborg'),
        ('host1', (), ('VCPU', 'CUSTOM_SOMETHING'), False, None),
    ]
    for name, traits, classes, node, owner in cases:
        assert o.likely_owner(name, traits, classes, names, node) == owner, (
            name, traits, classes)


def test_a_report_without_ownership_facts_keeps_its_shape():
    """A snapshot pickled before ownership was read (no inventories):
    a compute service's name still proves a root Nova's, and keeps it
    from being deleted: that host is not mapped to a cell, not gone."""
    cloud = Cloud()
    dead = cloud.unmapped('dead')
    snapshot = cloud.snapshot()
    snapshot.inventory_classes = None
    report = classify.audit(snapshot, min_age=600)
    assert report.provider(dead).owner == 'nova'
    assert report.provider(dead).unmapped
    assert not report.provider(dead).orphaned_provider
    owner = assembly.ProviderReport.__dataclass_fields__['owner']
    assert owner.default is None


def children_cloud():
    """host1 with children of every kind: Neutron's agent and NIC, Nova's
    PCI device and vGPU, Blazar's host, a Cyborg device ``web`` holds, an
    unnamed child and one Nova's trait tags."""
    cloud = Cloud()
    host = uid('host1')
    agent = cloud.child(host, 'host1:Open vSwitch agent')
    kids = dict(
        host=host, agent=agent,
        nic=cloud.child(agent, 'host1:Open vSwitch agent:br-phys'),
        pci=cloud.child(host, 'host1_0000:81:00.0'),
        vgpu=cloud.child(host, 'host1_pci_0000_84_00_0'),
        blazar=cloud.child(host, 'blazar_host1'),
        device=cloud.child(host, 'fpga-7'),
        unnamed=cloud.child(host, 'something'),
        tagged=cloud.child(host, 'tagged'))
    cloud.tag(kids['tagged'])
    kids['web'] = cloud.server('web', 'host1')
    cloud.allocate(kids['web'], kids['device'], {'FPGA': 1})
    return cloud, kids


def test_a_childs_owner_from_its_name_its_classes_or_novas_trait():
    """Nova's class alone does not prove a child Nova's: Nova never names
    a PCI device ``something``."""
    cloud, k = children_cloud()
    cloud.allocate(k['web'], k['unnamed'], {'CUSTOM_PCI_8086_1563': 1})
    cloud.allocate(k['web'], k['pci'], {'CUSTOM_PCI_8086_1563': 1})
    snapshot = cloud.snapshot()
    owners = {rp: ownership.provider_ownership(snapshot, k[rp]).owner
              for rp in ('nic', 'pci', 'vgpu', 'blazar', 'device',
                         'unnamed', 'tagged', 'host')}
    assert owners == {'nic': 'neutron', 'pci': 'nova', 'vgpu': 'nova',
                      'blazar': 'blazar', 'device': 'cyborg',
                      'unnamed': None, 'tagged': 'nova', 'host': 'nova'}


def test_every_childs_owner_at_once_as_one_at_a_time():
    """The report's ``child_owners`` (one pass over the consumers) says
    what :func:`provider_owner` says of each child, Nova's left out."""
    cloud, k = children_cloud()
    agent, nic, pci, device, unnamed, tagged = (k[n] for n in (
        'agent', 'nic', 'pci', 'device', 'unnamed', 'tagged'))
    snapshot = cloud.snapshot()
    expected = {agent: 'neutron', nic: 'neutron', device: 'cyborg',
                unnamed: None, k['blazar']: 'blazar'}
    assert ownership.child_owners(snapshot) == expected
    assert {rp: ownership.provider_ownership(snapshot, rp).owner
            for rp in (agent, nic, pci, device, unnamed, tagged,
                       k['blazar'])} == dict(
        expected, **{pci: 'nova', tagged: 'nova'})
    assert classify.audit(snapshot, min_age=600).child_owners == expected


def test_a_childs_owner_from_its_own_record():
    """What the provider delete reads of a child: its name, inventory
    classes and traits."""
    cases = [
        ('host1:Open vSwitch agent:br-phys',
         ('NET_BW_EGR_KILOBIT_PER_SEC',), (), 'neutron'),
        ('blazar_host1', ('CUSTOM_RESERVATION_X',), (), 'blazar'),
        ('host1_0000:81:00.0', ('CUSTOM_PCI_8086_1563',), (), 'nova'),
        ('gpu0', ('VGPU',), (), None),
        ('anything', ('CUSTOM_X',), ('OWNER_NOVA',), 'nova'),
        ('fpga-7', ('FPGA',), (), 'cyborg'),
        ('dev', ('CUSTOM_X',), ('OWNER_CYBORG',), 'cyborg'),
        ('something', ('CUSTOM_X',), (), None),
    ]
    for name, classes, traits, owner in cases:
        assert ownership.child_owner(name, classes, traits) == owner, name


def test_a_tree_holding_another_services_child_is_not_offered_a_delete():
    cloud, rp = foreign_cloud()
    agent = cloud.child(rp['gone'], 'gone:Open vSwitch agent')
    report = classify.audit(cloud.snapshot(), min_age=600)
    assert report.provider(rp['gone']).foreign_children == (agent,)
    assert not report.provider(rp['gone']).orphaned_provider
    assert report.provider(rp['gone']).needs_attention


def test_the_sweep_reads_every_owner_trait_and_a_foreign_one_wins():
    """One ``GET /traits?name=startswith:OWNER_``, one ``required=``
    listing per trait it names, no inventory of a tagged root: Cyborg's
    PCI-named child and its compute-shaped root are Cyborg's."""
    cloud, rp = cyborg_host3()
    snapshot, placement = read_topology(cloud)
    assert ownership.provider_ownership(snapshot, rp['gpu']).owner == 'cyborg'
    assert ownership.provider_ownership(snapshot, rp['pci']).owner == 'nova'
    assert ownership.root_owner(snapshot, rp['accel']) == 'cyborg'
    assert ownership.child_owners(snapshot) == {rp['gpu']: 'cyborg'}
    report = classify.audit(snapshot, min_age=600)
    assert report.provider(rp['accel']).owner == 'cyborg'
    assert not report.provider(rp['accel']).orphaned_provider
    assert [a for a in placement.asked if a[0] == '/traits'] == [
        ('/traits', {'name': 'startswith:OWNER_'})]
    assert sorted(a[1]['required'] for a in placement.asked
                  if a[1].get('required', '').startswith('OWNER_')) == [
        'OWNER_CYBORG', 'OWNER_NOVA']
    assert not [a for a in placement.asked if a[0].endswith('inventories')]


def test_a_foreign_class_wins_over_a_nova_shaped_childs_name():
    """Cyborg names its devices ``<host>_<PCI address>`` as Nova names a
    PCI device in Placement: its classes tell them apart."""
    cases = [
        ('host3_0000:81:00.0', ('PGPU',), 'cyborg'),
        ('host3_0000:81:00.0', ('FPGA',), 'cyborg'),
        ('host3_0000:81:00.0', ('CUSTOM_ACCELERATOR_GPU',), 'cyborg'),
        ('host3_0000:81:00.0', ('CUSTOM_PCI_10DE_1EB8',), 'nova'),
        ('host3_0000:81:00.0', (), 'nova'),
        ('host3_pci_0000_84_00_0', ('VGPU',), 'nova'),
    ]
    for name, classes, owner in cases:
        assert ownership.child_owner(name, classes) == owner, (name, classes)


@pytest.mark.parametrize('name,classes,owner', [
    # A PCI device in Placement: Nova's class or the device_spec's.
    ('host1_0000:81:00.0', ('CUSTOM_PCI_8086_1563',), 'nova'),
    ('host1_0000:AF:00.1', ('CUSTOM_GPU_A100',), 'nova'),
    ('host1_0000:81:00.0', (), 'nova'),
    # A class Nova never puts there: nobody's, not Neutron's for a colon.
    ('host1_0000:81:00.0', ('MEMORY_MB',), None),
    # A vGPU's physical GPU: VGPU or an mdev class.
    ('host1_pci_0000_84_00_0', ('VGPU',), 'nova'),
    ('host1_pci_0000_84_00_0', ('CUSTOM_NVIDIA_11',), 'nova'),
    ('host1_pci_0000_84_00_0', ('MEM_ENCRYPTION_CONTEXT',), None),
    # Memory encryption slots (Nova 32 onwards, libvirt's model names).
    ('host1_amd_sev', ('MEM_ENCRYPTION_CONTEXT',), 'nova'),
    ('host1_amd_sev_es', ('MEM_ENCRYPTION_CONTEXT',), 'nova'),
    ('host1_amd_sev_snp', (), 'nova'),
    ('host1_amd_sev', ('CUSTOM_PCI_8086_1563',), None),
    # Nova's class on a name Nova never gives.
    ('sev-slots', ('MEM_ENCRYPTION_CONTEXT',), None),
    ('something', ('CUSTOM_PCI_8086_1563',), None),
])
def test_novas_child_by_the_shape_of_its_name_and_its_class(name, classes,
                                                            owner):
    assert ownership.child_owner(name, classes) == owner


def test_novas_trait_proves_a_child_whatever_its_name_and_class():
    assert ownership.child_owner('anything', ('MEMORY_MB',),
                                 ('OWNER_NOVA',)) == 'nova'
    assert ownership.child_owner('host1_amd_sev', ('MEM_ENCRYPTION_CONTEXT',),
                                 ('OWNER_CYBORG',)) == 'cyborg'


NOVA_NAMES = frozenset({'host1', 'host2'})


@pytest.mark.parametrize('name,traits,classes,node,owner,proof', [
    ('anything', (), (), True, 'nova', ownership.COMPUTE_NODE),
    ('anything', ('OWNER_NOVA',), (), True, 'nova', ownership.COMPUTE_NODE),
    ('anything', ('OWNER_NOVA',), ('IPV4_ADDRESS',), False, 'nova',
     ownership.TRAIT),
    ('dev', ('OWNER_CYBORG',), ('VCPU',), False, 'cyborg', ownership.TRAIT),
    ('host9', (), ('VCPU', 'MEMORY_MB', 'DISK_GB'), False, None,
     ownership.INVENTORY),
    (uid('ironic-node'), (), ('CUSTOM_BAREMETAL_GOLD',), False, None,
     ownership.INVENTORY),
    ('host2', (), ('VCPU', 'MEMORY_MB', 'DISK_GB'), False, 'nova',
     ownership.NOVA_HOST),
    ('host1', (), (), False, 'nova', ownership.NOVA_HOST),
    ('host1', (), None, False, 'nova', ownership.NOVA_HOST),
    (SEGMENT, (), ('IPV4_ADDRESS',), False, 'neutron', ownership.NAME),
    ('router-net', (), ('IPV4_ADDRESS',), False, 'neutron', ownership.CLASS),
    ('blazar_host1', (), (), False, 'blazar', ownership.NAME),
    ('host1', (), ('VCPU', 'CUSTOM_SOMETHING'), False, None,
     ownership.UNPROVEN),
    ('host9', (), None, False, None, ownership.UNPROVEN),
])
def test_how_a_roots_owner_is_proven(name, traits, classes, node, owner,
                                     proof):
    """Who and how, from the one rule :func:`likely_owner` answers by."""
    found = ownership.likely_ownership(name, traits, classes, NOVA_NAMES,
                                       node)
    assert found == (owner, proof)
    assert found.owner == ownership.likely_owner(name, traits, classes,
                                                 NOVA_NAMES, node)


@pytest.mark.parametrize('name,classes,traits,owner,proof', [
    ('host1_0000:81:00.0', ('CUSTOM_PCI_8086_1563',), (), 'nova',
     ownership.SHAPE),
    ('host1_0000:81:00.0', ('CUSTOM_PCI_8086_1563',), ('OWNER_NOVA',),
     'nova', ownership.TRAIT),
    ('host1_pci_0000_84_00_0', ('VGPU',), (), 'nova', ownership.SHAPE),
    ('host1_amd_sev', (), (), 'nova', ownership.SHAPE),
    ('host3_0000:81:00.0', ('PGPU',), (), 'cyborg', ownership.CLASS),
    ('host1_amd_sev', ('MEM_ENCRYPTION_CONTEXT',), ('OWNER_CYBORG',),
     'cyborg', ownership.TRAIT),
    ('host1:Open vSwitch agent:br-phys', (), (), 'neutron', ownership.NAME),
    ('host1_0000:81:00.0', ('MEMORY_MB',), (), None, ownership.UNPROVEN),
    ('something', ('CUSTOM_PCI_8086_1563',), (), None, ownership.UNPROVEN),
])
def test_how_a_childs_owner_is_proven(name, classes, traits, owner, proof):
    found = ownership.child_ownership(name, classes, traits)
    assert found == (owner, proof)
    assert found.owner == ownership.child_owner(name, classes, traits)


def test_a_compute_node_without_novas_trait_is_novas_in_a_mixed_cloud():
    """Nova 34 tags what it makes ``OWNER_NOVA``; a compute still on an
    older Nova tags nothing: the trait's absence proves nothing, so
    host2's untagged node and device are Nova's as its listing and its
    device's name say, not foreign nor unproven.  An untagged provider
    whose node and service Nova deleted is named by no record of Nova's:
    only its inventory says compute node, which proves nobody; it is
    decommissioned only by a tick."""
    cloud = Cloud()
    host1, host2 = uid('host1'), uid('host2')
    cloud.tag(host1)
    tagged = cloud.device('host1', tagged=True)
    untagged = cloud.device('host2')
    gone = cloud.gone('gone')
    snapshot = cloud.snapshot()
    report = classify.audit(snapshot, min_age=600)
    assert (report.provider(host2).owner,
            report.provider(host2).owner_proof) == (
        'nova', ownership.COMPUTE_NODE)
    assert (report.provider(host1).owner,
            report.provider(host1).owner_proof) == (
        'nova', ownership.COMPUTE_NODE)
    assert (report.provider(gone).owner, report.provider(gone).owner_proof) \
        == (None, ownership.INVENTORY)
    assert not report.provider(gone).orphaned_provider
    assert report.provider(gone).dead
    assert report.provider(host2).foreign_children == ()
    assert report.provider(host2).children == (
        (untagged, ('nova', ownership.SHAPE)),)
    assert report.provider(host1).children == (
        (tagged, ('nova', ownership.TRAIT)),)
    assert ownership.provider_ownership(snapshot, untagged) == (
        'nova', ownership.SHAPE)
    assert report.child_owners == {}
