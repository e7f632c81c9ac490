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

"""The pure engine: every verdict, the seeds' numbers, worst-first order."""

import datetime

import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit.plan import CannotRepair
from orphan_dashboard.audit import refresh
from orphan_dashboard.audit import report as assembly
from orphan_dashboard.audit import topology
from tests.unit.cloud import Cloud
from tests.unit.cloud import NOW
from tests.unit.cloud import uid

H1, H2, H3 = uid('host1'), uid('host2'), uid('host3')


def verdicts(cloud, min_age=600, **kwargs):
    report = classify.audit(cloud.snapshot(), min_age=min_age, **kwargs)
    return {(f.consumer, f.provider): f for f in report.findings}, report


def one_server(node='host1', held=(H1,), resources=None, name='vm',
               owner=('p', 'u'), **server):
    """``(cloud, server uuid)``: a cloud whose one server ``name`` lives
    on ``node`` and holds ``resources`` (its flavor's by default) on each
    provider of ``held``, in the name of ``owner``."""
    cloud = Cloud()
    vm = cloud.server(name, node, **server)
    for provider in held:
        cloud.allocate(vm, provider, resources, owner=owner)
    return cloud, vm


def test_healthy_cloud_has_no_findings():
    cloud, vm = one_server()
    found, report = verdicts(cloud)
    assert found[(vm, H1)].verdict == m.OK
    assert report.problems == []
    assert not any(p.mismatched for p in report.providers)
    assert report.provider(H1).usage == report.provider(H1).needed


def test_evacuated_source_seed():
    """Nova's orphaned-allocations page: vm1 evacuated devstack1→devstack2."""
    cloud = Cloud()
    cloud.host('host1', state='down', forced_down=True)
    vm = cloud.server('vm1', 'host2')
    cloud.allocate(vm, H1)
    cloud.allocate(vm, H2)
    cloud.migration('evac', vm, 'done', kind='evacuation')
    found, report = verdicts(cloud)
    leftover = found[(vm, H1)]
    assert leftover.verdict == m.EVACUATED_SOURCE
    assert leftover.action == m.TRIM
    assert 'evacuated from host1 to host2' in str(leftover.reason)
    assert found[(vm, H2)].verdict == m.OK
    source = report.provider(H1)
    assert source.service_state == 'forced down'
    assert source.usage == {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
    assert source.needed == {}
    assert report.providers[0].provider.uuid == H1  # worst first


def test_failed_cold_migration_seed_numbers():
    """A failed cold migration's leftover, with the numbers of the operator
    post "OpenStack orphaned allocation": VCPU 30 / MEMORY_MB 741376 /
    DISK_GB 1668."""
    big = m.Flavor(vcpus=30, ram=741376, disk=1668, extra_specs={},
                   name='big')
    needs = {'VCPU': 30, 'MEMORY_MB': 741376, 'DISK_GB': 1668}
    cloud, vm = one_server(held=(H1, H3), resources=needs,
                           name='dark-angel', flavor=big)
    found, report = verdicts(cloud)
    assert found[(vm, H3)].verdict == m.MOVED
    assert found[(vm, H3)].actions == (m.TRIM, m.DELETE_AND_HEAL)
    assert report.provider(H3).usage == needs
    assert report.provider(H3).needed == {}


def test_moved_without_current_allocation_recommends_delete_and_heal():
    cloud, vm = one_server(held=(H3,))
    found, _ = verdicts(cloud)
    assert found[(vm, H3)].verdict == m.MOVED
    assert found[(vm, H3)].action == m.DELETE_AND_HEAL


def test_deleted_behind_novas_back_seed():
    """An instance marked ``deleted=1`` by hand, as in the operator post
    "Placement: управление ресурсами": 12 VCPU / 32768 MB / 80 GB left."""
    cloud = Cloud()
    ghost = uid('b32e5792')
    cloud.allocate(ghost, H2, {'VCPU': 12, 'MEMORY_MB': 32768,
                               'DISK_GB': 80})
    cloud.known.add(ghost)
    found, report = verdicts(cloud)
    assert found[(ghost, H2)].verdict == m.DELETED_INSTANCE
    assert found[(ghost, H2)].action == m.DELETE
    assert report.provider(H2).usage == {'VCPU': 12, 'MEMORY_MB': 32768,
                                         'DISK_GB': 80}


@pytest.mark.parametrize('status', sorted(m.MIGRATION_FINAL))
def test_stale_migration(status):
    cloud, vm = one_server('host2', (H2,))
    mig = cloud.migration('mig', vm, status)
    cloud.allocate(mig, H1)
    found, _ = verdicts(cloud)
    assert found[(mig, H1)].verdict == m.STALE_MIGRATION
    assert found[(mig, H1)].instance == vm
    assert found[(vm, H2)].verdict == m.OK


@pytest.mark.parametrize('status', sorted(m.MIGRATION_IN_PROGRESS))
def test_migration_in_progress_is_protected(status):
    """The mailing-list thread: an unconfirmed resize is on two hosts."""
    cloud, vm = one_server('host2', (H2,))
    mig = cloud.migration('mig', vm, status, kind='resize')
    cloud.allocate(mig, H1)
    found, report = verdicts(cloud)
    assert found[(mig, H1)].verdict == m.PROTECTED
    assert found[(vm, H2)].verdict == m.PROTECTED
    assert report.problems == []
    assert not report.provider(H1).mismatched


def test_missing_allocation():
    cloud, vm = one_server(held=())
    found, report = verdicts(cloud)
    assert found[(vm, H1)].verdict == m.MISSING
    assert found[(vm, H1)].action == m.HEAL
    assert report.provider(H1).needed == {'VCPU': 1, 'MEMORY_MB': 512,
                                          'DISK_GB': 1}
    assert report.provider(H1).usage == {}


def test_wrong_amount():
    cloud, vm = one_server(resources={'VCPU': 1, 'MEMORY_MB': 1, 'DISK_GB': 1})
    found, _ = verdicts(cloud)
    assert found[(vm, H1)].verdict == m.WRONG_AMOUNT
    assert found[(vm, H1)].action == m.DELETE_AND_HEAL


def test_volume_backed_ambiguity_accepts_either_disk():
    cloud, vm = one_server(resources={'VCPU': 1, 'MEMORY_MB': 512},
                           volumes_attached=1)
    found, _ = verdicts(cloud)
    assert found[(vm, H1)].verdict == m.OK


def test_unknown_consumer_is_never_recommended():
    cloud = Cloud()
    stranger = uid('stranger')
    cloud.allocate(stranger, H1)
    found, _ = verdicts(cloud)
    finding = found[(stranger, H1)]
    assert finding.verdict == m.UNKNOWN_CONSUMER
    assert finding.actions == (m.DELETE,)
    assert finding.action is None


def test_down_cell_withholds_destructive_verdicts():
    cloud = Cloud()
    cloud.servers[uid('lost')] = m.Server(uid('lost'), status='UNKNOWN')
    cloud.allocate(uid('lost'), H1)
    cloud.allocate(uid('stranger'), H1)
    found, report = verdicts(cloud)
    assert report.down_cells
    assert found[(uid('lost'), H1)].verdict == m.PROTECTED
    assert found[(uid('stranger'), H1)].verdict == m.PROTECTED


@pytest.mark.parametrize('kwargs', [
    {'task_state': 'migrating'}, {'status': 'BUILD'},
    {'vm_state': 'building'}])
def test_busy_server_is_protected(kwargs):
    cloud, vm = one_server(held=(H2,), **kwargs)
    found, _ = verdicts(cloud)
    assert found[(vm, H2)].verdict == m.PROTECTED


def test_young_allocation_is_protected_until_min_age():
    cloud = Cloud()
    ghost = cloud.deleted('ghost', H1,
                          modified=NOW - datetime.timedelta(seconds=30))
    found, _ = verdicts(cloud)
    assert found[(ghost, H1)].verdict == m.PROTECTED
    reason = str(found[(ghost, H1)].reason)
    assert 'younger than the 600 s protection' in reason
    found, _ = verdicts(cloud, min_age=10)
    assert found[(ghost, H1)].verdict == m.DELETED_INSTANCE


@pytest.mark.parametrize('written, verdict', [
    ('wrong_amount', m.WRONG_AMOUNT),
    ('incomplete_consumer', m.INCOMPLETE_CONSUMER),
    ('missing_elsewhere', m.MISSING)])
def test_a_server_finding_written_seconds_ago_is_protected(written, verdict):
    """An old server's consumer rewritten seconds ago (a resize, a QoS
    update, a heal Nova is still writing) offers no write until the
    minimum age has passed, whatever its verdict."""
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    young = NOW - datetime.timedelta(seconds=30)
    if written == 'wrong_amount':
        cloud.allocate(vm, H1, {'VCPU': 1, 'MEMORY_MB': 1, 'DISK_GB': 1},
                       modified=young)
    elif written == 'incomplete_consumer':
        cloud.allocate(vm, H1, owner=(m.INCOMPLETE, m.INCOMPLETE),
                       modified=young)
    else:
        cloud.allocate(vm, H3, modified=young)
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    found = auditor.consumer_findings(vm)
    assert [(f.verdict, f.actions) for f in found] == [
        (m.PROTECTED, ())] * len(found)
    assert all('written 30 s ago, younger than the 600 s protection' in
               str(f.reason) for f in found), found
    assert assembly.report(auditor).problems == []
    for action in m.CANDIDATE_ACTIONS[verdict]:
        with pytest.raises(CannotRepair):
            auditor.plan(vm, H1, action)
    found, _ = verdicts(cloud, min_age=10)
    assert found[(vm, H1)].verdict == verdict
    assert found[(vm, H1)].actions


def test_a_server_built_seconds_ago_is_not_healed_yet():
    cloud = Cloud()
    vm = cloud.server('vm', 'host1', created=(
        NOW - datetime.timedelta(seconds=30)).isoformat())
    found, report = verdicts(cloud)
    assert (found[(vm, H1)].verdict, found[(vm, H1)].actions) == (
        m.PROTECTED, ())
    assert str(found[(vm, H1)].reason).startswith(
        'server created 30 s ago, younger than the 600 s protection')
    assert report.problems == []


def test_sharing_and_nested_providers_are_legitimate():
    cloud = Cloud()
    disk = cloud.sharing_provider('ceph')
    numa = cloud.child(H1, 'host1_numa0')
    vm = cloud.server('vm', 'host1')
    cloud.allocate(vm, H1, {'VCPU': 1, 'MEMORY_MB': 512})
    cloud.allocate(vm, disk, {'DISK_GB': 1})
    cloud.allocate(vm, numa, {'CUSTOM_X': 1})
    found, report = verdicts(cloud)
    assert found[(vm, disk)].verdict == m.OK
    assert found[(vm, numa)].verdict == m.OK
    assert found[(vm, H1)].verdict == m.OK
    assert not report.provider(disk).orphaned_provider
    assert report.provider(H1).usage['CUSTOM_X'] == 1


def test_orphaned_provider_without_compute_node():
    cloud = Cloud()
    dead = cloud.gone('dead')
    cloud.tag(dead)
    _, report = verdicts(cloud)
    assert report.provider(dead).orphaned_provider
    assert report.provider(dead).service_state == 'no compute node'
    assert not report.provider(dead).mismatched


def test_worst_first():
    cloud = Cloud()
    a = cloud.server('a', 'host1')
    b = cloud.server('b', 'host1')
    cloud.allocate(a, H2)
    cloud.allocate(b, H2)
    cloud.allocate(a, H1)
    cloud.allocate(b, H1)
    cloud.allocate(uid('x'), H3)
    cloud.known.add(uid('x'))
    _, report = verdicts(cloud)
    assert [p.provider.name for p in report.providers][:2] == ['host2',
                                                               'host3']


def test_server_without_node_holding_resources_is_moved_to_nowhere():
    cloud, vm = one_server(None, name='shelved')
    found, _ = verdicts(cloud)
    assert found[(vm, H1)].verdict == m.MOVED
    assert found[(vm, H1)].actions == (m.DELETE_AND_HEAL,)


def test_a_shelved_offloaded_server_holding_resources_is_deleted():
    """Nova removes a shelved-offloaded server's allocations when it
    offloads it and allocates again when it unshelves it: anything it
    holds is a leftover, and deleting the consumer is the repair."""
    cloud, vm = one_server(None, name='offloaded', status='SHELVED_OFFLOADED',
                           vm_state='shelved_offloaded')
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    row = auditor.finding(vm, H1)
    assert (row.verdict, row.actions) == (m.SHELVED_OFFLOADED, (m.DELETE,))
    assert row.reason.code == 'shelved_offloaded'
    assert 'shelved and offloaded' in str(row.reason)
    assert auditor.plan(vm, H1, m.DELETE).after == {}


def test_a_shelved_offloaded_server_being_unshelved_is_protected():
    cloud, vm = one_server(None, name='unshelving',
                           status='SHELVED_OFFLOADED', task_state='spawning')
    found, _ = verdicts(cloud)
    assert found[(vm, H1)].verdict == m.PROTECTED


def test_a_shelved_server_not_offloaded_keeps_its_host():
    cloud, vm = one_server(name='shelved', status='SHELVED')
    found, _ = verdicts(cloud)
    assert found[(vm, H1)].verdict == m.OK


def test_server_on_a_node_placement_does_not_know_is_protected():
    cloud, vm = one_server('host9')
    found, _ = verdicts(cloud)
    assert found[(vm, H1)].verdict == m.PROTECTED
    assert 'host9 has no resource provider' in str(found[(vm, H1)].reason)


def test_one_function_gives_the_report_and_the_preview_the_same_finding():
    """A wrong amount is a per-server finding: the row a preview checks is
    the report's own, with the same repair (it used to be re-derived from
    the allocation alone, and its repair refused as "now ok")."""
    cloud, vm = one_server(
        resources={'VCPU': 1, 'MEMORY_MB': 2048, 'DISK_GB': 1})
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    (row,) = [f for f in assembly.report(auditor).findings if f.consumer == vm]
    assert row.verdict == m.WRONG_AMOUNT
    assert auditor.finding(vm, H1) == row
    plan = auditor.plan(vm, H1, m.DELETE_AND_HEAL)
    assert plan.after == {H1: {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}


def test_missing_says_where_the_allocation_is_and_offers_one_write():
    cloud, vm = one_server('host2', (H3,))
    found, _ = verdicts(cloud)
    missing = found[(vm, H2)]
    assert missing.verdict == m.MISSING
    assert 'its allocation is on host3: see there' in str(missing.reason)
    # A heal would leave host3 held: only delete and heal fixes it.
    assert missing.actions == (m.DELETE_AND_HEAL,)
    assert found[(vm, H3)].actions == (m.DELETE_AND_HEAL,)


def test_verify_resize_reads_as_awaiting_confirm():
    cloud = Cloud()
    vm = cloud.server('vm', 'host2', status='VERIFY_RESIZE')
    cloud.allocate(vm, H2)
    mig = cloud.migration('mig', vm, 'finished', kind='resize',
                          source='host1', dest='host2')
    cloud.allocate(mig, H1)
    found, _ = verdicts(cloud)
    assert found[(vm, H2)].verdict == m.PROTECTED
    assert str(found[(vm, H2)].reason) == (
        'resize %s (host1 → host2) awaiting confirm or revert' % mig)
    assert str(found[(mig, H1)].reason) == (
        'source side of resize %s (host1 → host2) of server vm (%s), '
        'awaiting confirm or revert' % (mig, vm))
    assert 'status finished' not in str(found[(mig, H1)].reason)


def test_incomplete_consumer_gets_its_servers_owner():
    """Written before Placement 1.8: project and user are the placeholder;
    heal_allocations would give it its server's, resources unchanged."""
    cloud, vm = one_server(owner=(m.INCOMPLETE, m.INCOMPLETE))
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    finding = auditor.finding(vm, H1)
    assert finding.verdict == m.INCOMPLETE_CONSUMER
    assert 'incomplete-consumer placeholder' in str(finding.reason)
    assert finding.actions == (m.SET_OWNER,)
    plan = auditor.plan(vm, H1, m.SET_OWNER)
    assert plan.after == plan.before
    assert (plan.project_id, plan.user_id) == ('p', 'u')
    assert (plan.before_project, plan.before_user) == (m.INCOMPLETE,
                                                       m.INCOMPLETE)
    _, report = verdicts(cloud)
    assert report.provider(H1).needed == report.provider(H1).usage


def test_any_repair_of_an_incomplete_consumer_sets_its_owner():
    cloud = Cloud()
    vm = cloud.server('vm', 'host2')
    cloud.allocate(vm, H1, owner=(m.INCOMPLETE, m.INCOMPLETE))
    cloud.allocate(vm, H2)
    plan = classify.Auditor(cloud.snapshot(), min_age=600).plan(vm, H1, m.TRIM)
    assert plan.after == {H2: {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}
    assert (plan.project_id, plan.user_id) == ('p', 'u')
    assert plan.changes_owner


def test_a_consumer_nova_cannot_be_asked_about_is_protected():
    cloud = Cloud()
    stranger = uid('stranger')
    cloud.allocate(stranger, H1)
    snapshot = cloud.snapshot()
    snapshot.unresolved = frozenset({stranger})
    finding = classify.Auditor(snapshot, min_age=600).finding(stranger, H1)
    assert finding.verdict == m.PROTECTED
    assert finding.actions == ()


def _one_cell_down(cloud):
    """host5 is in a cell Nova cannot reach: os-services lists it as
    ``UNKNOWN`` and the hypervisor listing failed, so its provider has no
    compute node to show."""
    down = uid('host5')
    cloud.providers[down] = m.Provider(down, 'host5', 1, down)
    cloud.services['host5'] = m.Service('host5', '', status='UNKNOWN')
    return down


def test_one_cell_down_protects_its_hosts_and_spares_the_rest():
    cloud = Cloud()
    down = _one_cell_down(cloud)
    evacuated = cloud.server('evacuated', 'host2')
    cloud.allocate(evacuated, H1)
    cloud.allocate(evacuated, H2)
    cloud.migration('evac', evacuated, 'done', kind='evacuation')
    straddling = cloud.server('straddling', 'host3')
    cloud.allocate(straddling, H3)
    cloud.allocate(straddling, down)
    cloud.allocate(uid('down-cell-vm'), down)
    cloud.allocate(uid('stranger'), H1)
    snapshot = cloud.snapshot()
    snapshot.hypervisors_listed = False
    report = classify.audit(snapshot, min_age=600)
    found = {(f.consumer, f.provider): f for f in report.findings}

    assert found[(evacuated, H1)].verdict == m.EVACUATED_SOURCE
    assert found[(evacuated, H1)].action == m.TRIM
    for row in ((straddling, down), (uid('down-cell-vm'), down)):
        assert found[row].verdict == m.PROTECTED, found[row]
        assert 'host5' in str(found[row].reason)
        assert found[row].actions == ()
    assert found[(uid('stranger'), H1)].verdict == m.PROTECTED
    assert report.down_cells
    assert report.skipped_hosts == ('host5',)
    assert not report.provider(down).orphaned_provider
    assert report.provider(down).service_state == 'cell down'


def test_unconfirmed_node_is_protected_while_nova_cannot_list_them():
    """A provider Nova's failed listing could not confirm could be a compute
    node of the down cell: nothing on it is judged, and it is no orphaned
    provider to delete."""
    cloud = Cloud()
    unsure = uid('node9')
    cloud.providers[unsure] = m.Provider(unsure, 'node9', 1, unsure)
    cloud.allocate(uid('somebody'), unsure)
    snapshot = cloud.snapshot()
    snapshot.hypervisors_listed = False
    report = classify.audit(snapshot, min_age=600)
    finding = report.findings[0]
    assert finding.verdict == m.PROTECTED
    assert 'node9' in str(finding.reason)
    assert report.down_cells
    assert report.unconfirmed == ('node9',)
    assert not report.provider(unsure).orphaned_provider


def test_a_healthy_cells_deleted_server_is_asked_about_while_a_cell_is_down():
    """A consumer on a healthy cell's host that no listing shows is asked
    about (its instance actions) even while a cell is down: Nova answers
    them through the instance's mapping, which proves its cell healthy and
    the server deleted, so it is judged; one Nova does not answer for stays
    protected, and one only on the down cell's host is not asked."""
    cloud = Cloud()
    down = _one_cell_down(cloud)
    ghost, stranger = uid('ghost'), uid('stranger')
    cloud.allocate(ghost, H2)
    cloud.allocate(stranger, H1)
    cloud.allocate(uid('down-cell-ghost'), down)
    snapshot = cloud.snapshot()
    snapshot.hypervisors_listed = False
    assert refresh.suspects(snapshot, snapshot.consumers) == {
        ghost, stranger}

    snapshot.known_instances = frozenset({ghost})
    found = {(f.consumer, f.provider): f
             for f in classify.audit(snapshot, min_age=600).findings}
    assert found[(ghost, H2)].verdict == m.DELETED_INSTANCE
    assert found[(ghost, H2)].action == m.DELETE
    assert found[(stranger, H1)].verdict == m.PROTECTED
    assert found[(uid('down-cell-ghost'), down)].verdict == m.PROTECTED


def test_a_node_nova_confirms_one_by_one_is_judged_while_a_cell_is_down():
    """An Ironic node is named after itself, not its compute service's
    host, and has no server on it to prove it: of the nodes Nova's failed
    listing leaves unconfirmed, those holding an allocation are worth one
    lookup each; a node Nova then shows is judged like any other."""
    cloud = Cloud()
    down = _one_cell_down(cloud)
    node, idle = uid('ironic-node'), uid('idle-node')
    cloud.providers[node] = m.Provider(node, node, 1, node)
    cloud.providers[idle] = m.Provider(idle, idle, 1, idle)
    ghost = uid('baremetal-ghost')
    cloud.allocate(ghost, node, {'CUSTOM_BAREMETAL_GOLD': 1})
    cloud.allocate(uid('down-cell-ghost'), down)
    cloud.known.add(ghost)
    snapshot = cloud.snapshot()
    snapshot.hypervisors_listed = False
    assert classify.Auditor(snapshot, min_age=600).finding(
        ghost, node).verdict == m.PROTECTED
    assert topology.unlisted_roots(snapshot) == [node]

    snapshot.hypervisors[node] = m.Hypervisor(node, node, host='ironic-1')
    report = classify.audit(snapshot, min_age=600)
    # The idle node holds nothing to protect: it is not named among the
    # providers Nova could not confirm (a routed network's segment
    # would be named there otherwise).
    assert report.unconfirmed == ()
    finding = classify.Auditor(snapshot, min_age=600).finding(ghost, node)
    assert (finding.verdict, finding.action) == (m.DELETED_INSTANCE,
                                                 m.DELETE)
    assert topology.unlisted_roots(snapshot) == []


def test_full_listing_still_finds_orphaned_providers():
    cloud = Cloud()
    gone = uid('gone')
    cloud.providers[gone] = m.Provider(gone, 'gone', 1, gone)
    cloud.tag(gone)
    report = classify.audit(cloud.snapshot(), min_age=600)
    assert not report.down_cells
    assert report.provider(gone).orphaned_provider
    assert report.skipped_hosts == () and report.unconfirmed == ()


def test_no_repair_changes_a_protected_row_of_its_consumer():
    """Every repair writes the whole consumer: a share on a host of a down
    cell is held exactly as read by the repair of any other row of its
    consumer (delete and heal of a wrong amount, trim of a leftover, delete
    of a deleted server's), and the plan says it kept it."""
    cloud = Cloud()
    down = _one_cell_down(cloud)
    share = {'VCPU': 1, 'MEMORY_MB': 256}
    wrong = cloud.server('straddling-wrong', 'host2')
    cloud.allocate(wrong, H2, {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 1})
    cloud.allocate(wrong, down, share)
    moved = cloud.server('straddling-moved', 'host2')
    cloud.allocate(moved, H2)
    cloud.allocate(moved, H1)
    cloud.allocate(moved, down, share)
    deleted = cloud.deleted('straddling-deleted', H1)
    cloud.allocate(deleted, down, share)
    auditor = classify.Auditor(cloud.snapshot(), min_age=600)
    for consumer, row, verdict in ((wrong, H2, m.WRONG_AMOUNT),
                                   (moved, H1, m.MOVED),
                                   (deleted, H1, m.DELETED_INSTANCE)):
        finding = auditor.finding(consumer, row)
        assert finding.verdict == verdict and finding.actions, finding
        assert auditor.finding(consumer, down).verdict == m.PROTECTED
        for action in finding.actions:
            plan = auditor.plan(consumer, row, action)
            assert plan.after.get(down) == share, (action, plan)
            assert plan.kept == [down], (action, plan)
            assert row not in plan.after or plan.after[row] != \
                plan.before[row], (action, plan)
