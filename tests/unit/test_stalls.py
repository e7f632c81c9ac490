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

"""A move a compute crash left stuck (Nova bug 1836369): found by its age
and its idle server, put right by one write of both its consumers."""

import datetime

import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit.plan import CannotRepair
from orphan_dashboard import conf
from orphan_dashboard.writing import equivalents
from tests.unit.cloud import Cloud
from tests.unit.cloud import NOW
from tests.unit.cloud import uid

H1, H2 = uid('host1'), uid('host2')
HOURS_AGO = NOW - datetime.timedelta(hours=2)
OLD = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
NEW = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 1}


def crashed(kind='migration', migration_status='migrating',
            updated=HOURS_AGO, **server):
    """Nova's ``test_migrate_disk_and_power_off_crash_finish_revert_
    migration``: the server runs ACTIVE on host1, its source, with no task;
    its migration's consumer holds host1, its own consumer host2."""
    cloud = Cloud()
    vm = cloud.server('vm', 'host1', **server)
    mig = cloud.migration('mig', vm, migration_status, kind=kind,
                          updated=updated)
    cloud.allocate(mig, H1, OLD, generation=3)
    cloud.allocate(vm, H2, NEW if kind == 'resize' else OLD, generation=7)
    return cloud, vm, mig


def audit(cloud, **kwargs):
    auditor = classify.Auditor(cloud.snapshot(), min_age=600, **kwargs)
    report = classify.audit(cloud.snapshot(), min_age=600, **kwargs)
    return auditor, {(f.consumer, f.provider): f for f in report.findings}


@pytest.mark.parametrize('kind', ['migration', 'resize', 'live-migration'])
def test_a_move_a_crash_left_is_stuck_and_moved_back_in_one_write(kind):
    cloud, vm, mig = crashed(kind)
    auditor, found = audit(cloud)
    for consumer, provider in ((vm, H2), (mig, H1)):
        finding = found[(consumer, provider)]
        assert finding.verdict == m.STUCK_MIGRATION
        assert finding.actions == (m.MOVE_BACK,)
        assert finding.reason.code == 'stuck_migration.back'
        assert 'will never move this migration on' in str(finding.reason)
    plan = auditor.plan(vm, H2, m.MOVE_BACK)
    assert (plan.before, plan.after, plan.generation) == ({H2: dict(
        NEW if kind == 'resize' else OLD)}, {H1: OLD}, 7)
    assert plan.partner == {'consumer': mig, 'generation': 3,
                            'project_id': 'p', 'user_id': 'u',
                            'before': {H1: OLD}, 'after': {}}
    assert plan.consumers == (vm, mig)
    other = auditor.plan(mig, H1, m.MOVE_BACK)
    assert (other.consumer, other.after, other.partner['consumer'],
            other.partner['after']) == (mig, {}, vm, {H1: OLD})
    commands = equivalents.for_plan(plan)
    assert len(commands) == 2 and vm in commands[0] and mig in commands[1]


def test_what_the_move_back_leaves_is_ok_while_nova_still_shows_it():
    cloud, vm, mig = crashed()
    del cloud.consumers[mig]
    cloud.consumers[vm].allocations = {H1: dict(OLD)}
    _, found = audit(cloud)
    assert [f.verdict for f in found.values()] == [m.OK]


@pytest.mark.parametrize('change', [
    dict(updated=NOW - datetime.timedelta(minutes=30)), dict(updated=None),
    dict(task_state='resize_migrating'), dict(status='VERIFY_RESIZE'),
    dict(status='MIGRATING'), dict(migration_status='finished'),
    dict(migration_status='confirming'), dict(hidden=('host',)),
])
def test_a_move_that_may_be_under_way_stays_protected(change):
    cloud, vm, mig = crashed(**change)
    _, found = audit(cloud)
    assert {f.verdict for f in found.values()} == {m.PROTECTED}


def test_the_age_that_makes_a_move_stuck_is_a_setting():
    cloud, vm, mig = crashed(updated=NOW - datetime.timedelta(minutes=30))
    _, found = audit(cloud, stuck_after=600)
    assert found[(vm, H2)].verdict == m.STUCK_MIGRATION
    assert conf.STUCK_MIGRATION_AGE.default == m.STUCK_AFTER == \
        conf.RunSettings().stuck_after


def test_a_cold_migration_whose_server_is_on_its_destination_is_left():
    """Only a revert's side is told for a resize or a cold migration."""
    cloud = Cloud()
    vm = cloud.server('vm', 'host2')
    mig = cloud.migration('mig', vm, 'migrating', updated=HOURS_AGO)
    cloud.allocate(mig, H1, OLD)
    cloud.allocate(vm, H2, OLD)
    _, found = audit(cloud)
    assert {f.verdict for f in found.values()} == {m.PROTECTED}


def test_a_live_migration_whose_server_arrived_deletes_its_source():
    cloud = Cloud()
    vm = cloud.server('vm', 'host2')
    mig = cloud.migration('mig', vm, 'running', kind='live-migration',
                          updated=HOURS_AGO)
    cloud.allocate(mig, H1, OLD)
    cloud.allocate(vm, H2, OLD)
    auditor, found = audit(cloud)
    assert found[(vm, H2)].verdict == m.OK
    assert found[(mig, H1)].verdict == m.STUCK_MIGRATION
    assert found[(mig, H1)].actions == (m.DELETE,)
    assert found[(mig, H1)].reason.code == 'stuck_migration.arrived'


@pytest.mark.parametrize('status', ['accepted', 'pre-migrating'])
def test_a_stuck_evacuation_trims_the_side_its_server_is_not_on(status):
    cloud = Cloud()
    vm = cloud.server('vm', 'host2', status='ERROR')
    cloud.migration('evac', vm, status, kind='evacuation',
                    updated=HOURS_AGO)
    cloud.allocate(vm, H1, OLD)
    cloud.allocate(vm, H2, OLD)
    auditor, found = audit(cloud)
    assert found[(vm, H2)].verdict == m.OK
    assert found[(vm, H1)].verdict == m.STUCK_MIGRATION
    assert found[(vm, H1)].actions == (m.TRIM, m.DELETE_AND_HEAL)
    assert auditor.plan(vm, H1, m.TRIM).after == {H2: OLD}


def test_a_stuck_move_takes_no_other_repair():
    cloud, vm, mig = crashed()
    auditor, _ = audit(cloud)
    with pytest.raises(CannotRepair) as caught:
        auditor.target(mig, m.DELETE)
    assert caught.value.reason.code == 'cannot.stall_takes'


def test_a_move_back_is_refused_while_the_other_consumer_is_protected():
    """A protection covers every allocation a write changes: the
    migration's consumer written a moment ago."""
    cloud, vm, mig = crashed()
    cloud.consumers[mig].modified = NOW - datetime.timedelta(seconds=30)
    _, found = audit(cloud)
    assert found[(vm, H2)].actions == ()
    assert found[(vm, H2)].blocked.code == 'cannot.partner_protected'


def test_a_move_back_is_refused_where_the_server_would_be_wrong():
    """The migration's consumer holds what the server's flavor does not
    need: moving it back would leave a wrong amount."""
    cloud, vm, mig = crashed()
    cloud.consumers[mig].allocations[H1] = {'VCPU': 9, 'MEMORY_MB': 512,
                                            'DISK_GB': 1}
    _, found = audit(cloud)
    assert found[(vm, H2)].actions == ()
    assert found[(vm, H2)].blocked.code == 'cannot.still_wrong'
