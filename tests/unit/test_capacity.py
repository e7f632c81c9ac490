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

"""The capacity arithmetic: reserved, ratios, unit limits, custom classes,
and what the recommended repairs free."""

import pytest

from orphan_dashboard.audit import capacity as c
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid
from tests.unit.staged import evacuated

H1, H2, H3 = uid('host1'), uid('host2'), uid('host3')
ALLOCATION = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


def inventory(total, **kwargs):
    body = {'total': total, 'reserved': 0, 'min_unit': 1,
            'max_unit': total, 'step_size': 1, 'allocation_ratio': 1.0}
    body.update(kwargs)
    return body


def compute(vcpu=4, ram=2048, disk=10, **vcpu_fields):
    return {'VCPU': inventory(vcpu, **vcpu_fields),
            'MEMORY_MB': inventory(ram), 'DISK_GB': inventory(disk)}


def assess(cloud, inventories):
    snapshot = cloud.snapshot()
    snapshot.inventories = inventories
    return c.assess(snapshot, classify.audit(snapshot, min_age=600))


@pytest.mark.parametrize('fields, expected', [
    ({'total': 8}, 8),
    ({'total': 8, 'reserved': 2}, 6),
    ({'total': 8, 'reserved': 2, 'allocation_ratio': 2.0}, 12),
    ({'total': 3, 'allocation_ratio': 1.5}, 4),
    ({'total': 4, 'reserved': 4, 'allocation_ratio': 16.0}, 0),
    ({'total': 4, 'reserved': 6}, 0),
])
def test_capacity_leaves_out_reserved_then_applies_the_ratio(
        fields, expected):
    assert c.Inventory.from_placement(fields).capacity == expected


@pytest.mark.parametrize('amount, admitted', [
    (1, False), (2, True), (3, False), (4, True), (6, False), (8, False)])
def test_unit_limits(amount, admitted):
    limits = c.Inventory(total=8, min_unit=2, max_unit=4, step_size=2)
    assert limits.admits(amount) is admitted


def test_per_class_numbers_of_a_tree_with_an_orphan():
    cloud, vm = evacuated()
    report = assess(cloud, {H1: compute(vcpu=4, reserved=1,
                                        allocation_ratio=2.0),
                            H2: compute(), H3: compute()})
    host1 = report.trees[H1]
    vcpu = host1.classes[0]
    assert [k.resource_class for k in host1.classes] == [
        'VCPU', 'MEMORY_MB', 'DISK_GB']
    assert (vcpu.capacity, vcpu.used, vcpu.needed, vcpu.held, vcpu.free,
            vcpu.free_after) == (6, 1, 0, 1, 5, 6)
    host2 = report.trees[H2].classes[0]
    assert (host2.capacity, host2.used, host2.needed, host2.held,
            host2.free, host2.free_after) == (4, 1, 1, 0, 3, 3)
    assert report.held() == ALLOCATION
    assert report.affected() == 1
    assert [r.consumer for r in host1.repairs] == [vm]
    assert host1.repairs[0].action == m.TRIM
    assert host1.repairs[0].freed == ALLOCATION


def test_a_flavor_that_fits_only_after_the_repair_names_it():
    cloud, vm = evacuated()
    # host1 has room for one small server: the orphan takes it.
    report = assess(cloud, {H1: compute(vcpu=1, ram=512, disk=1),
                            H2: compute(vcpu=1, ram=512, disk=1),
                            H3: compute(vcpu=2)})
    fits = {f.name: f for f in report.fit(ALLOCATION)}
    assert fits['host3'].state == c.FITS_NOW
    assert fits['host1'].state == c.FITS_AFTER_REPAIR
    assert [(r.consumer, r.action) for r in fits['host1'].repairs] == [
        (vm, m.TRIM)]
    assert fits['host2'].state == c.DOES_NOT_FIT
    assert c.count(report.fit(ALLOCATION)) == {
        c.FITS_NOW: 1, c.FITS_AFTER_REPAIR: 1, c.DOES_NOT_FIT: 1}


def test_the_repairs_that_make_room_name_their_servers():
    """A server's repair by its name, a migration's by its server's, the
    consumer's uuid beside; a consumer Nova has no name for by its uuid."""
    cloud, vm = evacuated()
    old = cloud.server('old', 'host3')
    cloud.allocate(old, H3)
    stale = cloud.migration('stale', old, 'confirmed', source='host2',
                            dest='host3')
    cloud.allocate(stale, H2)
    ghost = cloud.deleted('ghost', H3)
    report = assess(cloud, {H1: compute(), H2: compute(), H3: compute()})
    repairs = {r.consumer: r for tree in report.trees.values()
               for r in tree.repairs}
    assert (repairs[vm].instance, repairs[vm].server_name,
            repairs[vm].provider_name) == (vm, 'vm1', 'host1')
    assert (repairs[stale].instance, repairs[stale].server_name) == (
        old, 'old')
    assert repairs[ghost].server_name is None
    subjects = {consumer: str(c.subject(r.consumer, r.instance,
                                        r.server_name))
                for consumer, r in repairs.items()}
    assert subjects == {
        vm: 'server vm1 (%s)' % vm,
        stale: 'migration %s of server old' % stale,
        ghost: ghost}


def answers(report, request):
    """``{hypervisor: (state, why as text or None)}`` for ``request``."""
    return {f.name: (f.state, f.why and str(f.why))
            for f in report.fit(request)}


def test_the_step_size_and_max_unit_refuse_what_capacity_would_take():
    cloud = Cloud()
    report = assess(cloud, {H1: compute(vcpu=8, step_size=2),
                            H2: compute(vcpu=8, max_unit=2),
                            H3: compute(vcpu=8)})
    assert answers(report, {'VCPU': 3}) == {
        'host1': (c.DOES_NOT_FIT, 'one allocation of 3 VCPU is outside its '
                  'unit limits (from 1 to 8 in steps of 2)'),
        'host2': (c.DOES_NOT_FIT, 'one allocation of 3 VCPU is outside its '
                  'unit limits (from 1 to 2 in steps of 1)'),
        'host3': (c.FITS_NOW, None)}


def test_reserved_and_ratio_decide_the_fit():
    cloud = Cloud()
    report = assess(cloud, {H1: compute(vcpu=4, reserved=2),
                            H2: compute(vcpu=4, allocation_ratio=0.5),
                            H3: compute(vcpu=2, allocation_ratio=1.5,
                                        max_unit=4)})
    # Does not fit names what is short, by how much, of what is free.
    short = ('VCPU 1 short (it needs 3; at most 2 free on one provider, the '
             'recommended repairs done)')
    assert answers(report, {'VCPU': 3}) == {
        'host1': (c.DOES_NOT_FIT, short), 'host2': (c.DOES_NOT_FIT, short),
        'host3': (c.FITS_NOW, None)}


def test_a_custom_class_on_a_child_provider_counts_for_its_tree():
    cloud = Cloud()
    fpga = cloud.child(H2, 'host2_fpga')
    gone = uid('deleted-vm')
    cloud.allocate(gone, fpga, {'CUSTOM_FPGA_X': 1})
    report = assess(cloud, {H1: compute(), H2: compute(), H3: compute(),
                            fpga: {'CUSTOM_FPGA_X': inventory(1)}})
    host2 = report.trees[H2]
    assert [k.resource_class for k in host2.classes] == [
        'VCPU', 'MEMORY_MB', 'DISK_GB', 'CUSTOM_FPGA_X']
    fpga_class = host2.classes[-1]
    assert (fpga_class.capacity, fpga_class.used, fpga_class.free) == (
        1, 1, 0)
    request = {'VCPU': 1, 'CUSTOM_FPGA_X': 1}
    fits = {f.name: f.state for f in report.fit(request)}
    assert fits['host1'] == c.DOES_NOT_FIT
    assert str(report.trees[H1].fit(request).why) == (
        'it has no CUSTOM_FPGA_X')
    assert str(report.trees[H2].fit(request).why) == (
        'CUSTOM_FPGA_X 1 short (it needs 1; at most 0 free on one '
        'provider, the recommended repairs done)')
    # The deleted instance's allocation is unknown to Nova: an unknown
    # consumer is never a recommended repair.
    assert fits['host2'] == c.DOES_NOT_FIT
    assert report.held() == {'CUSTOM_FPGA_X': 1}


def test_a_class_must_fit_one_provider_not_the_sum_of_the_tree():
    cloud = Cloud()
    numa0 = cloud.child(H1, 'host1_numa0')
    numa1 = cloud.child(H1, 'host1_numa1')
    report = assess(cloud, {H1: {}, numa0: compute(vcpu=2),
                            numa1: compute(vcpu=2)})
    assert report.trees[H1].classes[0].capacity == 4
    assert report.trees[H1].fit({'VCPU': 2}).state == c.FITS_NOW
    assert report.trees[H1].fit({'VCPU': 3}).state == c.DOES_NOT_FIT
    # Each NUMA node's max_unit is its total: no one allocation of 3.
    assert str(report.trees[H1].fit({'VCPU': 3, 'CUSTOM_X': 1}).why) == (
        'one allocation of 3 VCPU is outside its unit limits (from 1 to 2 '
        'in steps of 1); it has no CUSTOM_X')


def test_a_repair_that_adds_leaves_less_free():
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')       # holds nothing: missing
    report = assess(cloud, {H1: compute(vcpu=2), H2: compute(),
                            H3: compute()})
    vcpu = report.trees[H1].classes[0]
    assert (vcpu.free, vcpu.free_after, vcpu.held) == (2, 1, 0)
    assert report.trees[H1].repairs[0].consumer == vm
    assert report.trees[H1].repairs[0].freed['VCPU'] == -1


def test_only_compute_nodes_are_asked_whether_a_flavor_fits():
    """A routed network's segment provider has inventory and a tree of
    its own, but no server can land on it: no would-it-fit row."""
    cloud = Cloud()
    segment = cloud.foreign('Neutron segment id 2c1f7d3a', ['IPV4_ADDRESS'])
    report = assess(cloud, {H1: compute(), H2: compute(), H3: compute(),
                            segment: {'IPV4_ADDRESS': inventory(254)}})
    assert segment in report.trees
    assert [f.name for f in report.fit(ALLOCATION)] == [
        'host1', 'host2', 'host3']


def test_sharing_providers_and_snapshots_without_inventories():
    cloud = Cloud()
    nfs = cloud.sharing_provider('nfs')
    report = assess(cloud, {H1: compute(), nfs: {'DISK_GB': inventory(9)}})
    assert set(report.trees) == {H1}
    snapshot = cloud.snapshot()
    assert c.assess(snapshot, classify.audit(snapshot, min_age=600)) is None


def _charged_cloud():
    """p1's server was evacuated (its source is orphaned), p2's instance
    was deleted behind Nova's back on host3, p3 is healthy."""
    cloud, vm = evacuated()
    gone = uid('gone')
    cloud.allocate(gone, H3, {'VCPU': 4, 'MEMORY_MB': 4096},
                   owner=('p2', 'u'))
    cloud.known.add(gone)
    cloud.server('fine', 'host3', project_id='p3')
    return cloud


def test_projects_are_charged_what_their_findings_hold():
    report = assess(_charged_cloud(), {H1: compute(), H2: compute(),
                                       H3: compute(vcpu=8, ram=8192)})
    # p3's unallocated server is healed: its quota changes too.
    assert report.charged() == ['p', 'p2', 'p3']
    assert report.projects['p'].held == ALLOCATION
    assert report.projects['p'].needed == ALLOCATION
    assert report.projects['p2'] == c.ProjectCost(
        {'VCPU': 4, 'MEMORY_MB': 4096}, {}, {'VCPU': 4, 'MEMORY_MB': 4096})
    assert report.projects['p3'] == c.ProjectCost(
        {}, ALLOCATION, {rc: -n for rc, n in ALLOCATION.items()})


def test_projects_worst_first_by_the_share_of_their_limit():
    report = assess(_charged_cloud(), {H1: compute(), H2: compute(),
                                       H3: compute(vcpu=8, ram=8192)})
    usages = {'p': {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 2},
              'p2': {'VCPU': 4, 'MEMORY_MB': 4096}}
    # Without limits: p2's usage is all orphaned, p's half.
    rows = c.project_rows(report, usages, {})
    assert [r.project for r in rows] == ['p2', 'p', 'p3']
    assert (rows[0].worst, rows[1].worst) == (1.0, 0.5)
    # A generous limit for p2 puts p first.
    rows = c.project_rows(report, usages, {'p2': {'VCPU': 400,
                                                  'MEMORY_MB': 409600},
                                           'p': {'VCPU': 1}})
    assert [r.project for r in rows] == ['p', 'p2', 'p3']
    assert rows[0].limits == {'VCPU': 1}
    assert rows[0].usage == usages['p']


def test_a_projects_headroom_after_the_recommended_repairs():
    """Under unified limits Nova counts a project's usage from Placement:
    what the recommended repairs of its consumers free is quota it gets
    back, per class, whatever the class (bandwidth included)."""
    report = assess(_charged_cloud(), {H1: compute(), H2: compute(),
                                       H3: compute(vcpu=8, ram=8192)})
    assert report.projects['p'].freed == ALLOCATION
    assert report.projects['p2'].freed == {'VCPU': 4, 'MEMORY_MB': 4096}
    assert report.projects['p3'].freed == {
        rc: -n for rc, n in ALLOCATION.items()}
    usages = {'p2': {'VCPU': 4, 'MEMORY_MB': 4096,
                     'NET_BW_EGR_KILOBIT_PER_SEC': 1000}}
    limits = {'p2': {'VCPU': 6, 'NET_BW_EGR_KILOBIT_PER_SEC': 1000}}
    p2 = next(r for r in c.project_rows(report, usages, limits)
              if r.project == 'p2')
    assert p2.freed == {'VCPU': 4, 'MEMORY_MB': 4096}
    assert (p2.headroom('VCPU'), p2.headroom_after('VCPU')) == (2, 6)
    assert (p2.headroom('NET_BW_EGR_KILOBIT_PER_SEC'),
            p2.headroom_after('NET_BW_EGR_KILOBIT_PER_SEC')) == (0, 0)
    assert p2.headroom('MEMORY_MB') is None
    assert p2.headroom_after('MEMORY_MB') is None


def test_a_projects_needs_count_what_its_servers_ports_request():
    """Placement charges the project the bandwidth its ports' QoS rules
    request: its servers need it as much as their flavor's VCPU, and the
    hypervisor's row counts it so (the same request, one function)."""
    cloud = Cloud()
    vm = cloud.server('vm', 'host2')
    cloud.allocate(vm, H2)
    nic = cloud.nic('host2')
    cloud.port('vm-port', vm, nic, {'NET_BW_EGR_KILOBIT_PER_SEC': 4000})
    cloud.allocate(vm, nic, {'NET_BW_EGR_KILOBIT_PER_SEC': 4000})
    snapshot = cloud.snapshot()
    snapshot.inventories = {H1: compute(), H2: compute(), H3: compute()}
    report = classify.audit(snapshot, min_age=600)
    found = c.assess(snapshot, report)
    host2 = next(p for p in report.providers if p.provider.uuid == H2)
    assert host2.needed['NET_BW_EGR_KILOBIT_PER_SEC'] == 4000
    assert found.projects['p'].needed == dict(
        ALLOCATION, NET_BW_EGR_KILOBIT_PER_SEC=4000)


@pytest.mark.parametrize('service, why', [
    (dict(state='up', forced_down=True),
     'its compute service is forced down: Nova schedules no server there'),
    (dict(state='down'),
     'its compute service is down: Nova schedules no server there'),
    (dict(state='up', status='disabled'),
     'its compute service is disabled: Nova schedules no server there'),
])
def test_a_down_or_disabled_host_fits_nothing_and_says_why(service, why):
    """Placement would offer its empty capacity, but Nova's scheduler
    places no server on a compute service forced down, down or disabled:
    not now, not after any repair."""
    cloud, vm = evacuated()
    cloud.services['host1'] = m.Service('host1', **service)
    report = assess(cloud, {H1: compute(vcpu=1, ram=512, disk=1),
                            H2: compute(), H3: compute()})
    fits = {f.name: f for f in report.fit(ALLOCATION)}
    assert fits['host1'].state == c.DOES_NOT_FIT
    assert str(fits['host1'].why) == why
    assert fits['host1'].repairs == ()
    assert (fits['host2'].state, fits['host2'].why) == (c.FITS_NOW, None)


BW = 'NET_BW_EGR_KILOBIT_PER_SEC'
IGR = 'NET_BW_IGR_KILOBIT_PER_SEC'


def test_what_a_wrong_amount_holds_beyond_its_need_is_held_by_it():
    """``fat`` holds 2048 MB where its flavor needs 512, and no disk: the
    1536 MB too many are held by its finding, in its hypervisor's numbers,
    cloud-wide and in its project's, and are exactly what its delete and
    heal frees (the disk it lacks is needed, not held)."""
    cloud = Cloud()
    fat = cloud.server('fat', 'host3')
    cloud.allocate(fat, H3, {'VCPU': 1, 'MEMORY_MB': 2048})
    found = assess(cloud, {H1: compute(), H2: compute(), H3: compute()})
    memory = {k.resource_class: k for k in found.trees[H3].classes}[
        'MEMORY_MB']
    assert (memory.used, memory.needed, memory.held) == (2048, 512, 1536)
    assert memory.free_after - memory.free == memory.held
    assert found.held() == {'MEMORY_MB': 1536}
    assert found.affected() == 1
    (repair,) = found.trees[H3].repairs
    assert (repair.consumer, repair.action) == (fat, m.DELETE_AND_HEAL)
    assert repair.freed == {'MEMORY_MB': 1536, 'DISK_GB': -1}
    assert found.projects['p'].held == {'MEMORY_MB': 1536}
    assert found.projects['p'].freed == {'MEMORY_MB': 1536, 'DISK_GB': -1}


def test_what_port_findings_hold_beyond_their_ports_request_is_held():
    """On host2's NIC ``leaky`` holds 1000 kbps no port requests (a leak)
    and ``short`` 3000 egress where its port asks 1000 egress and 1000
    ingress (a wrong amount short of ingress): 1000 and 2000 held."""
    cloud = Cloud()
    nic = cloud.port_findings('host2', {BW: 1000, IGR: 1000}, {BW: 3000})
    found = assess(cloud, {H1: compute(), H2: compute(), H3: compute(),
                           nic: {BW: inventory(10 ** 7),
                                 IGR: inventory(10 ** 7)}})
    verdicts = {f.consumer: f.verdict for f in classify.audit(
        cloud.snapshot(), min_age=600).findings if f.provider == nic}
    assert verdicts == {uid('leaky'): m.LEAKED_PORT,
                        uid('short'): m.WRONG_AMOUNT}
    assert found.trees[H2].held == {BW: 3000}
    assert found.held() == {BW: 3000}
    assert found.projects['p'].held == {BW: 3000}


def write(before, after, partner=None):
    return m.Plan(m.DELETE_AND_HEAL, 'c', 'rp1', m.WRONG_AMOUNT, '', 1,
                  'p', 'u', before, after, partner=partner)


def test_a_write_that_leaves_a_provider_over_capacity_names_its_excess():
    """Placement checks every class the write allocates, a trim's
    remainder included, against what all consumers hold afterwards."""
    inventories = {'rp1': {'MEMORY_MB': inventory(4096, reserved=4096),
                           'VCPU': inventory(8)}}
    usages = {'rp1': {'MEMORY_MB': 4096, 'VCPU': 2}}
    trim = write({'rp1': {'MEMORY_MB': 4096, 'VCPU': 2}},
                 {'rp1': {'MEMORY_MB': 1024, 'VCPU': 2}})
    assert c.excesses(trim, inventories, usages) == (
        c.Excess('rp1', 'MEMORY_MB', 1024, 4096, 0),)
    assert not c.excesses(trim, inventories, usages)[0].worse
    # A delete allocates nothing: never checked; an unknown provider is
    # not judged.
    assert c.excesses(write(trim.before, {}), inventories, usages) == ()
    assert c.excesses(trim, {}, usages) == ()
    # A move that adds onto the provider makes it worse.
    move = write({'rp2': {'MEMORY_MB': 512}}, {'rp1': {'MEMORY_MB': 512}})
    assert [e.worse for e in c.excesses(move, inventories, usages)] == [True]


def test_both_consumers_of_one_write_count_together():
    """A move put back is one write of the server and its migration: what
    one frees on a provider the other may take, and only the sum
    counts."""
    inventories = {'rp1': {'VCPU': inventory(2)}}
    usages = {'rp1': {'VCPU': 2}}
    back = write({}, {'rp1': {'VCPU': 2}}, partner={
        'consumer': 'g', 'before': {'rp1': {'VCPU': 2}}, 'after': {}})
    assert c.excesses(back, inventories, usages) == ()
    usages = {'rp1': {'VCPU': 3}}
    assert c.excesses(back, inventories, usages) == (
        c.Excess('rp1', 'VCPU', 3, 3, 2),)


@pytest.mark.parametrize('release, microversion, refuses', [
    ('14.0.0', None, False), ('15.1', (1, 39), False),
    ('13.0.2', None, True), ('2025.2', None, False),
    ('2025.1', (1, 39), True), ('2026.1', None, False),
    (None, (1, 39), None), (None, None, None), (None, (1, 36), True),
    ('', (1, 39), None), ('epoxy', (1, 39), None),
])
def test_which_placement_refuses_a_write_no_worse(release, microversion,
                                                  refuses):
    assert c.release_refuses_excess(release, microversion) is refuses


def test_the_preview_says_what_this_placement_does_with_an_excess():
    names = {'rp1': 'host3'}
    no_worse = c.Excess('rp1', 'MEMORY_MB', 1024, 4096, 0)
    worse = c.Excess('rp1', 'VCPU', 3, 2, 2)
    codes = {refuses: [n.code for n in c.excess_notes(
        (no_worse, worse), refuses, names)] for refuses in (True, None,
                                                            False)}
    assert codes == {
        True: ['capacity.excess_refused', 'capacity.excess_worse'],
        None: ['capacity.excess_unknown', 'capacity.excess_worse'],
        False: ['capacity.excess_worse']}
    text = str(c.excess_notes((no_worse,), None, names)[0])
    assert 'host3 (rp1) is over capacity in MEMORY_MB (it holds 4096 of a ' \
        'capacity of 0, and 1024 after this write)' in text, text
    assert 'ORPHAN_AUDIT_PLACEMENT_RELEASE' in text
