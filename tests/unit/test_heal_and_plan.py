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

"""Heal rules (nova's resources_from_flavor) and repair plans."""

import pytest

from orphan_dashboard.api import microversions
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit.plan import CannotRepair
from orphan_dashboard.audit.plan import recommended
from orphan_dashboard.audit.plan import target
from orphan_dashboard.audit import server_needs
from orphan_dashboard.writing import equivalents
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid

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
    assert server_needs.resources_from_flavor(fl, bfv) == expected


@pytest.mark.parametrize('specs', [{'resources:VGPU': '1'},
                                   {'accel:device_profile': 'gpu'}])
def test_heal_refuses_what_it_cannot_rebuild(specs):
    with pytest.raises(server_needs.CannotHeal):
        server_needs.resources_from_flavor(flavor(**specs))


def test_parse_cpu_spec():
    assert server_needs.parse_cpu_spec('0-3,^2,5') == {0, 1, 3, 5}


def _evacuated():
    cloud = Cloud()
    vm = cloud.server('vm1', 'host2')
    cloud.allocate(vm, H1)
    cloud.allocate(vm, H2)
    cloud.migration('evac', vm, 'done', kind='evacuation')
    return cloud, vm


def _plan(cloud, consumer, provider, action):
    return classify.Auditor(cloud.snapshot(), min_age=600).plan(
        consumer, provider, action)


def test_trim_keeps_only_the_current_tree_and_its_osc_command():
    cloud, vm = _evacuated()
    plan = _plan(cloud, vm, H1, m.TRIM)
    assert plan.after == {H2: {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}
    assert plan.generation == 1
    assert equivalents.for_plan(plan) == [
        'openstack --os-placement-api-version 1.28 resource provider '
        'allocation unset %s --provider %s' % (vm, H1)]


def test_the_commands_shown_write_at_the_microversion_we_write_at():
    """``allocation set`` and ``unset`` send the consumer generation there,
    as our own writes do."""
    cloud, vm = _evacuated()
    (command,) = equivalents.for_plan(_plan(cloud, vm, H1, m.TRIM))
    assert command.startswith(
        'openstack --os-placement-api-version %s ' % microversions.WRITE)


def test_delete_and_heal_replaces_everything_in_one_write():
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    numa = cloud.child(H1, 'host1_pgpu')
    cloud.allocate(vm, H3)
    cloud.allocate(vm, numa, {'VGPU': 1})
    plan = _plan(cloud, vm, H3, m.DELETE_AND_HEAL)
    assert plan.after == {H1: {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1},
                          numa: {'VGPU': 1}}
    (command,) = equivalents.for_plan(plan)
    assert ' set %s --project-id p --user-id u ' % vm in command
    assert '--allocation rp=%s,DISK_GB=1,MEMORY_MB=512,VCPU=1' % H1 in command


def test_trim_refused_when_nothing_would_remain():
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    cloud.allocate(vm, H3)
    with pytest.raises(CannotRepair, match='delete and heal'):
        _plan(cloud, vm, H3, m.TRIM)


def test_delete_empties_the_consumer():
    cloud = Cloud()
    ghost = cloud.deleted('ghost', H2, generation=4)
    plan = _plan(cloud, ghost, H2, m.DELETE)
    assert plan.after == {} and plan.generation == 4
    assert equivalents.for_plan(plan) == [
        'openstack --os-placement-api-version 1.28 resource provider '
        'allocation unset %s' % ghost]


def test_heal_missing_creates_the_consumer():
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    plan = _plan(cloud, vm, H1, m.HEAL)
    assert plan.before == {} and plan.generation is None
    assert plan.after == {H1: {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}
    assert (plan.project_id, plan.user_id) == ('p', 'u')


def test_a_deleted_server_cannot_be_healed():
    cloud = Cloud()
    ghost = cloud.deleted('ghost', H2)
    with pytest.raises(CannotRepair,
                       match='Cannot delete and heal here.*: delete'):
        _plan(cloud, ghost, H2, m.DELETE_AND_HEAL)


def test_heal_needs_visible_extra_specs():
    cloud = Cloud()
    vm = cloud.server('vm', 'host1', flavor=m.Flavor(1, 512, 1))
    with pytest.raises(CannotRepair, match='extra specs'):
        _plan(cloud, vm, H1, m.HEAL)


def test_recommended_skips_unknown_consumers():
    cloud, vm = _evacuated()
    cloud.allocate(uid('stranger'), H1)
    report = classify.audit(cloud.snapshot(), min_age=600)
    assert recommended(report.problems) == [
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
    report = classify.audit(cloud.snapshot(), min_age=600)
    chosen = {f.consumer: (f.provider, a)
              for f, a in recommended(report.problems)}
    assert chosen[vm] == (H3, m.DELETE_AND_HEAL)
    assert chosen[other][1] == m.TRIM
    assert len(chosen) == 2


def _with_bandwidth_left_on_host1(moved_along=False):
    """Evacuated from host1 with a port's bandwidth on host1's NIC."""
    cloud, vm = _evacuated()
    nic1 = cloud.child(H1, 'host1:br-phys')
    cloud.allocate(vm, nic1, {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
    if moved_along:
        nic2 = cloud.child(H2, 'host2:br-phys')
        cloud.allocate(vm, nic2, {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
    return cloud, vm, nic1


def test_trim_and_heal_refuse_to_drop_what_a_flavor_cannot_rebuild():
    cloud, vm, nic1 = _with_bandwidth_left_on_host1()
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    leftover = auditor.finding(vm, H1)
    assert leftover.verdict == m.EVACUATED_SOURCE
    assert leftover.actions == ()
    assert 'NET_BW_EGR_KILOBIT_PER_SEC=1000 on host1:br-phys' in \
        str(leftover.blocked)
    assert ('nova-manage placement heal_allocations --instance %s' % vm
            in str(leftover.blocked))
    for action in (m.TRIM, m.DELETE_AND_HEAL):
        with pytest.raises(CannotRepair,
                           match='NET_BW_EGR_KILOBIT_PER_SEC=1000 on '
                                 'host1:br-phys .a child of host1.'):
            auditor.plan(vm, H1, action)


def test_trim_drops_a_child_allocation_the_new_host_already_holds():
    cloud, vm, nic1 = _with_bandwidth_left_on_host1(moved_along=True)
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    plan = auditor.plan(vm, H1, m.TRIM)
    assert H1 not in plan.after and nic1 not in plan.after
    assert {r.get('NET_BW_EGR_KILOBIT_PER_SEC') for r in
            plan.after.values()} >= {1000}


def test_delete_and_heal_rewrites_a_wrong_amount_on_a_sharing_provider():
    cloud = Cloud()
    ceph = cloud.sharing_provider('ceph')
    vm = cloud.server('vm', 'host1')
    cloud.allocate(vm, H1, {'VCPU': 1, 'MEMORY_MB': 512})
    cloud.allocate(vm, ceph, {'DISK_GB': 9})
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    assert auditor.finding(vm, H1).verdict == m.WRONG_AMOUNT
    plan = auditor.plan(vm, H1, m.DELETE_AND_HEAL)
    assert plan.after == {H1: {'VCPU': 1, 'MEMORY_MB': 512},
                          ceph: {'DISK_GB': 1}}


def test_set_owner_command_names_the_new_owner():
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    cloud.allocate(vm, H1, owner=(m.INCOMPLETE, m.INCOMPLETE))
    plan = _plan(cloud, vm, H1, m.SET_OWNER)
    (command,) = equivalents.for_plan(plan)
    assert ' set %s --project-id p --user-id u ' % vm in command


@pytest.mark.parametrize('setup,action,message', [
    ('gone', m.TRIM, 'Nothing to trim to current host: consumer .* no '
                     'longer holds anything on host3'),
    ('ok', m.DELETE, 'Nothing to delete: server vm lives on host1'),
    ('busy', m.TRIM, 'Not now: task migrating in progress'),
])
def test_refusals_are_in_words(setup, action, message):
    cloud = Cloud()
    vm = cloud.server('vm', 'host1', task_state='migrating'
                      if setup == 'busy' else None)
    cloud.allocate(vm, H1)
    if setup == 'busy':
        cloud.allocate(vm, H3)
    provider = H1 if setup == 'ok' else H3
    with pytest.raises(CannotRepair, match=message):
        _plan(cloud, vm, provider, action)


# -- what the image adds (Nova's ResourceRequest.from_request_spec) ----------

DEDICATED = {'hw_cpu_policy': 'dedicated'}
SMALL_NEEDS = {'MEMORY_MB': 2048, 'DISK_GB': 20}


@pytest.mark.parametrize('fl,image,expected', [
    (flavor(), DEDICATED, {'PCPU': 2, **SMALL_NEEDS}),
    (flavor(**{'hw:emulator_threads_policy': 'isolate'}), DEDICATED,
     {'PCPU': 3, **SMALL_NEEDS}),
    (flavor(vcpus=4, **{'hw:cpu_dedicated_mask': '^0'}),
     {'hw_cpu_policy': 'mixed'}, {'VCPU': 1, 'PCPU': 3, **SMALL_NEEDS}),
    (flavor(vcpus=4, **{'hw:cpu_realtime': 'yes',
                        'hw:cpu_realtime_mask': '^0'}),
     {'hw_cpu_policy': 'mixed', 'hw_cpu_realtime_mask': '^0-1'},
     {'VCPU': 2, 'PCPU': 2, **SMALL_NEEDS}),
    (flavor(), {'hw_mem_encryption': 'True'},
     {'VCPU': 2, 'MEM_ENCRYPTION_CONTEXT': 1, **SMALL_NEEDS}),
    # The flavor's dedicated policy wins over an image's shared one.
    (flavor(**{'hw:cpu_policy': 'dedicated'}), {'hw_cpu_policy': 'shared'},
     {'PCPU': 2, **SMALL_NEEDS}),
    # Nova reads the emulator threads policy from the flavor only.
    (flavor(), {'hw_emulator_threads_policy': 'isolate', **DEDICATED},
     {'PCPU': 2, **SMALL_NEEDS}),
    # The thread policy only asks for a trait.
    (flavor(), {'hw_cpu_thread_policy': 'require'},
     {'VCPU': 2, **SMALL_NEEDS}),
])
def test_image_properties_change_what_nova_allocates(fl, image, expected):
    assert server_needs.resources_from_flavor(fl, False, image) == expected


@pytest.mark.parametrize('specs,image', [
    ({'hw:cpu_policy': 'shared'}, DEDICATED),
    ({'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '^0'}, DEDICATED),
    ({'hw:mem_encryption': 'false'}, {'hw_mem_encryption': 'true'}),
])
def test_a_flavor_and_image_nova_would_refuse_are_not_healed(specs, image):
    with pytest.raises(server_needs.CannotHeal,
                       match='conflicts with its image'):
        server_needs.resources_from_flavor(flavor(**specs), False, image)


ISOLATE = {'hw:emulator_threads_policy': 'isolate'}
HELD = {'MEMORY_MB': 2048, 'DISK_GB': 20}


def _pinned(image_properties=None, held=None, fl=None, **server):
    """A server on host1 holding ``held`` (a dedicated image's PCPU where
    not given) under ``fl`` (:func:`flavor` where not given)."""
    cloud = Cloud()
    vm = cloud.server('vm', 'host1', flavor=fl or flavor(),
                      image_properties=image_properties, **server)
    cloud.allocate(vm, H1, held or {'PCPU': 2, **HELD})
    return cloud, vm


def test_a_server_pinned_by_its_image_holds_what_nova_allocated():
    cloud, vm = _pinned(DEDICATED)
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    assert auditor.finding(vm, H1).verdict == m.OK


def test_a_read_image_that_pins_nothing_lets_the_pcpu_be_rewritten():
    cloud, vm = _pinned({})
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    assert auditor.finding(vm, H1).actions == (m.DELETE_AND_HEAL,)
    assert auditor.plan(vm, H1, m.DELETE_AND_HEAL).after == {
        H1: {'VCPU': 2, **HELD}}


@pytest.mark.parametrize('specs,held', [
    ({}, {'PCPU': 2}),                                  # dedicated
    (ISOLATE, {'PCPU': 3}),                             # + emulator thread
    ({'hw:cpu_dedicated_mask': '^0'}, {'VCPU': 1, 'PCPU': 1}),  # mixed
    ({'hw:cpu_realtime': 'yes', **ISOLATE},             # realtime mask
     {'VCPU': 1, 'PCPU': 2}),
    ({}, {'VCPU': 2, 'MEM_ENCRYPTION_CONTEXT': 1}),     # encrypted
    (ISOLATE, {'PCPU': 3, 'MEM_ENCRYPTION_CONTEXT': 1}),  # both
])
@pytest.mark.parametrize('fault', [m.IMAGE_GONE, m.IMAGE_UNSHOWN,
                                   m.IMAGE_FORBIDDEN, m.IMAGE_DOWN, None])
def test_what_an_unread_image_could_explain_is_never_rewritten(specs, held,
                                                               fault):
    cloud, vm = _pinned(held={**held, **HELD}, fl=flavor(**specs),
                        image_fault=fault)
    snapshot = cloud.snapshot()
    auditor = classify.Auditor(snapshot, min_age=600)
    finding = auditor.finding(vm, H1)
    assert (finding.verdict, finding.actions) == (m.PROTECTED, ())
    assert finding.reason.code == 'protected.image_unread'
    assert 'its image' in str(finding.reason)
    assert recommended([finding]) == []
    for action in (m.DELETE_AND_HEAL, m.HEAL):
        with pytest.raises(CannotRepair, match='image') as refused:
            target(snapshot, auditor.topology, vm, action)
        assert refused.value.reason.code == 'cannot.image_unread'


def test_an_unread_image_of_a_moved_server_keeps_its_pcpu_from_a_rewrite():
    """Left on host3 only, holding PCPU: a delete and heal would write
    VCPU on host1."""
    cloud = Cloud()
    vm = cloud.server('vm', 'host1', flavor=flavor())
    cloud.allocate(vm, H3, {'PCPU': 2, **HELD})
    snapshot = cloud.snapshot()
    auditor = classify.Auditor(snapshot, min_age=600)
    assert auditor.finding(vm, H3).actions == ()
    with pytest.raises(CannotRepair) as refused:
        target(snapshot, auditor.topology, vm, m.DELETE_AND_HEAL)
    assert refused.value.reason.code == 'cannot.image_unread'


@pytest.mark.parametrize('held', [
    {'VCPU': 4, **HELD},                                # more CPUs
    {'PCPU': 3, **HELD},                # an emulator thread not asked for
    {'VCPU': 1, 'PCPU': 1, **HELD},             # mixed with no mask
    {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20},      # more memory
    {'PCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20},      # pinned, more memory
    {'VCPU': 2, 'MEM_ENCRYPTION_CONTEXT': 2, **HELD},
])
def test_what_no_image_explains_is_repaired_though_the_image_is_unread(held):
    cloud, vm = _pinned(held=held, image_fault=m.IMAGE_UNSHOWN)
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    finding = auditor.finding(vm, H1)
    assert (finding.verdict, finding.actions) == (m.WRONG_AMOUNT,
                                                  (m.DELETE_AND_HEAL,))
    assert auditor.plan(vm, H1, m.DELETE_AND_HEAL).after == {
        H1: {'VCPU': 2, **HELD}}


def test_a_server_booted_from_a_volume_keeps_what_its_image_could_explain():
    """``image: ""``: Nova allocated from the volume's image metadata it
    copied at boot and shows none of it, so a pinned CPU is never
    rewritten as VCPU; what no image explains is still repaired."""
    cloud, vm = _pinned(held={'PCPU': 2, 'MEMORY_MB': 2048}, image='',
                        image_fault=m.IMAGE_VOLUME)
    snapshot = cloud.snapshot()
    auditor = classify.Auditor(snapshot, min_age=600)
    finding = auditor.finding(vm, H1)
    assert (finding.verdict, finding.actions) == (m.PROTECTED, ())
    assert finding.reason.code == 'protected.image_unread'
    assert 'boots from a volume' in str(finding.reason)
    with pytest.raises(CannotRepair) as refused:
        target(snapshot, auditor.topology, vm, m.DELETE_AND_HEAL)
    assert refused.value.reason.code == 'cannot.image_unread'
    cloud, vm = _pinned(held={'VCPU': 2, 'MEMORY_MB': 4096}, image='',
                        image_fault=m.IMAGE_VOLUME)
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    assert auditor.finding(vm, H1).actions == (m.DELETE_AND_HEAL,)
    assert auditor.plan(vm, H1, m.DELETE_AND_HEAL).after == {
        H1: {'VCPU': 2, 'MEMORY_MB': 2048}}
