"""Heal rules (nova's resources_from_flavor) and repair plans."""

import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import heal
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan as planner
from tests.unit.cloud import Cloud, uid

H1, H2, H3 = uid('host1'), uid('host2'), uid('host3')


def flavor(vcpus=2, ram=2048, disk=20, ephemeral=0, swap=0, **specs):
    return m.Flavor(vcpus, ram, disk, ephemeral, swap, specs)


@pytest.mark.parametrize('fl,bfv,expected', [
    (flavor(), False, {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}),
    (flavor(), True, {'VCPU': 2, 'MEMORY_MB': 2048}),
    (flavor(ephemeral=5, swap=1025), False,
     {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 27}),
    (flavor(ephemeral=5, swap=512), True,
     {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 6}),
    (flavor(**{'hw:cpu_policy': 'dedicated'}), False,
     {'PCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}),
    (flavor(**{'hw:cpu_policy': 'dedicated',
               'hw:emulator_threads_policy': 'isolate'}), False,
     {'PCPU': 3, 'MEMORY_MB': 2048, 'DISK_GB': 20}),
    (flavor(vcpus=4, **{'hw:cpu_policy': 'mixed',
                        'hw:cpu_dedicated_mask': '^0'}), False,
     {'VCPU': 1, 'PCPU': 3, 'MEMORY_MB': 2048, 'DISK_GB': 20}),
    (flavor(**{'resources:VCPU': '0', 'resources:CUSTOM_GOLD': '1',
               'resources1:DISK_GB': '7'}), False,
     {'MEMORY_MB': 2048, 'DISK_GB': 7, 'CUSTOM_GOLD': 1}),
    (m.Flavor(12, 32768, 80, extra_specs={}), False,
     {'VCPU': 12, 'MEMORY_MB': 32768, 'DISK_GB': 80}),
    (m.Flavor(30, 741376, 1668, extra_specs={}), False,
     {'VCPU': 30, 'MEMORY_MB': 741376, 'DISK_GB': 1668}),
])
def test_resources_from_flavor(fl, bfv, expected):
    assert heal.resources_from_flavor(fl, bfv) == expected


@pytest.mark.parametrize('specs', [{'resources:VGPU': '1'},
                                   {'accel:device_profile': 'gpu'}])
def test_heal_refuses_what_it_cannot_rebuild(specs):
    with pytest.raises(heal.CannotHeal):
        heal.resources_from_flavor(flavor(**specs))


def test_parse_cpu_spec():
    assert heal.parse_cpu_spec('0-3,^2,5') == {0, 1, 3, 5}


def _evacuated():
    cloud = Cloud()
    vm = cloud.server('vm1', 'host2')
    cloud.allocate(vm, H1)
    cloud.allocate(vm, H2)
    cloud.migration('evac', vm, 'done', kind='evacuation')
    return cloud, vm


def _plan(cloud, consumer, provider, action):
    snapshot = cloud.snapshot()
    finding = classify.Auditor(snapshot).finding(
        consumer, provider,
        snapshot.consumers[consumer].allocations.get(provider, {})
        if consumer in snapshot.consumers else {})
    return planner.make_plan(snapshot, finding, action)


def test_trim_keeps_only_the_current_tree_and_its_osc_command():
    cloud, vm = _evacuated()
    plan = _plan(cloud, vm, H1, m.TRIM)
    assert plan.after == {H2: {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}
    assert plan.generation == 1
    assert planner.osc_commands(plan) == [
        'openstack --os-placement-api-version 1.28 resource provider '
        'allocation unset %s --provider %s' % (vm, H1)]


def test_delete_and_heal_replaces_everything_in_one_write():
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    numa = cloud.child(H1, 'host1_pgpu')
    cloud.allocate(vm, H3)
    cloud.allocate(vm, numa, {'VGPU': 1})
    plan = _plan(cloud, vm, H3, m.DELETE_AND_HEAL)
    assert plan.after == {H1: {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1},
                          numa: {'VGPU': 1}}
    (command,) = planner.osc_commands(plan)
    assert ' set %s --project-id p --user-id u ' % vm in command
    assert '--allocation rp=%s,DISK_GB=1,MEMORY_MB=512,VCPU=1' % H1 in command


def test_trim_refused_when_nothing_would_remain():
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    cloud.allocate(vm, H3)
    with pytest.raises(planner.PlanError, match='delete and heal'):
        _plan(cloud, vm, H3, m.TRIM)


def test_delete_empties_the_consumer():
    cloud = Cloud()
    ghost = uid('ghost')
    cloud.known.add(ghost)
    cloud.allocate(ghost, H2, generation=4)
    plan = _plan(cloud, ghost, H2, m.DELETE)
    assert plan.after == {} and plan.generation == 4
    assert planner.osc_commands(plan) == [
        'openstack --os-placement-api-version 1.28 resource provider '
        'allocation delete %s' % ghost]


def test_heal_missing_creates_the_consumer():
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    plan = _plan(cloud, vm, H1, m.HEAL)
    assert plan.before == {} and plan.generation is None
    assert plan.after == {H1: {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}
    assert (plan.project_id, plan.user_id) == ('p', 'u')


def test_delete_and_heal_of_a_deleted_server_is_a_delete():
    cloud = Cloud()
    ghost = uid('ghost')
    cloud.known.add(ghost)
    cloud.allocate(ghost, H2)
    assert _plan(cloud, ghost, H2, m.DELETE_AND_HEAL).after == {}


def test_heal_needs_visible_extra_specs():
    cloud = Cloud()
    vm = cloud.server('vm', 'host1', flavor=m.Flavor(1, 512, 1))
    with pytest.raises(planner.PlanError, match='extra specs'):
        _plan(cloud, vm, H1, m.HEAL)


def test_recommended_skips_unknown_consumers():
    cloud, vm = _evacuated()
    cloud.allocate(uid('stranger'), H1)
    report = classify.audit(cloud.snapshot())
    assert planner.recommended(report.problems) == [
        (f, m.TRIM) for f in report.problems if f.consumer == vm]


def test_recommended_is_one_write_per_consumer():
    """The failed cold migration: left on the target, missing on the
    source: one delete and heal, not a heal then a refused trim."""
    cloud = Cloud()
    vm = cloud.server('vm', 'host2')
    cloud.allocate(vm, H3)
    other = cloud.server('other', 'host1')
    cloud.allocate(other, H1)
    cloud.allocate(other, H2)
    cloud.allocate(other, H3)
    report = classify.audit(cloud.snapshot())
    chosen = {f.consumer: (f.provider, a)
              for f, a in planner.recommended(report.problems)}
    assert chosen[vm] == (H3, m.DELETE_AND_HEAL)
    assert chosen[other][1] == m.TRIM
    assert len(chosen) == 2
