"""Journal and Restore against a real Placement server."""

import json

from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard import journal as journal_module
from orphan_dashboard import repair

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


def _now(placement, consumer):
    return parse.consumer(consumer,
                          api.consumer_allocations(placement, consumer))


def _trim(placement, journal, consumer, keep, drop):
    now = _now(placement, consumer)
    plan = m.Plan(m.TRIM, consumer, drop, m.MOVED, 'moved', now.generation,
                  'p', 'u', now.allocations,
                  {keep: now.allocations[keep]})
    return repair.write(placement, journal, plan)


def _restore(placement, journal, entry):
    (row,) = repair.preview_restore(placement, [entry])
    return row, repair.restore(placement, journal, [entry],
                               {entry.consumer: row.fingerprint})


def test_write_is_journaled_with_before_after_and_new_generation(
        placement, build, journal):
    old, new = build.provider('old'), build.provider('new')
    consumer = build.allocate({old: SMALL, new: SMALL})
    outcome = _trim(placement, journal, consumer, new, old)
    assert outcome.status == repair.DONE
    (entry,) = journal_module.entries(consumer=consumer)
    assert entry.status == entry.APPLIED
    assert entry.before == {old: SMALL, new: SMALL}
    assert entry.after == {new: SMALL}
    assert (entry.generation, entry.new_generation) == (1, 2)
    assert (entry.user_name, entry.source) == ('tester', 'test')
    assert journal_module.entries(provider=old) == [entry]
    exported = json.loads(journal_module.export_json([entry]))
    assert exported[0]['before'] == entry.before
    assert consumer in journal_module.export_csv([entry])


def test_refused_write_is_journaled_as_refused(placement, build, journal):
    rp = build.provider('node')
    consumer = build.allocate({rp: SMALL})
    plan = m.Plan(m.DELETE, consumer, rp, m.DELETED_INSTANCE, '', 9, 'p',
                  'u', {rp: SMALL}, {})
    assert repair.write(placement, journal, plan).status == repair.SKIPPED
    (entry,) = journal_module.entries(consumer=consumer)
    assert entry.status == entry.REFUSED
    assert 'consumer generation conflict' in entry.message


def test_restore_puts_the_consumer_back_and_is_undoable(placement, build,
                                                        journal):
    old, new = build.provider('old'), build.provider('new')
    consumer = build.allocate({old: SMALL, new: SMALL})
    _trim(placement, journal, consumer, new, old)
    (entry,) = journal_module.entries(consumer=consumer)
    row, (outcome,) = _restore(placement, journal, entry)
    assert row.plan.after == {old: SMALL, new: SMALL}
    assert outcome.status == repair.DONE, outcome.message
    assert _now(placement, consumer).allocations == {old: SMALL, new: SMALL}
    restore_entry = journal_module.entries(consumer=consumer)[0]
    assert restore_entry.restores_id == entry.id
    assert restore_entry.action == m.RESTORE
    _restore(placement, journal, restore_entry)
    assert _now(placement, consumer).allocations == {new: SMALL}


def test_restore_of_a_delete_recreates_the_consumer(placement, build,
                                                    journal):
    rp = build.provider('node')
    consumer = build.allocate({rp: SMALL}, project='proj', user='usr')
    now = _now(placement, consumer)
    plan = m.Plan(m.DELETE, consumer, rp, m.DELETED_INSTANCE, '', 1, 'proj',
                  'usr', now.allocations, {})
    repair.write(placement, journal, plan)
    assert _now(placement, consumer).allocations == {}
    (entry,) = journal_module.entries(consumer=consumer)
    _, (outcome,) = _restore(placement, journal, entry)
    assert outcome.status == repair.DONE, outcome.message
    body = api.consumer_allocations(placement, consumer)
    assert (body['project_id'], body['user_id']) == ('proj', 'usr')
    assert _now(placement, consumer).allocations == {rp: SMALL}


def test_restore_refused_when_the_consumer_changed_since(placement, build,
                                                         journal):
    old, new = build.provider('old'), build.provider('new')
    consumer = build.allocate({old: SMALL, new: SMALL})
    _trim(placement, journal, consumer, new, old)
    (entry,) = journal_module.entries(consumer=consumer)
    api.put_allocations(placement, consumer, {new: {'VCPU': 4}}, 2, 'p', 'u')
    row, (outcome,) = _restore(placement, journal, entry)
    assert row.plan is None and 'changed since this repair' in row.error
    assert outcome.status == repair.SKIPPED
    assert _now(placement, consumer).allocations == {new: {'VCPU': 4}}


def test_restore_skipped_when_changed_between_preview_and_submit(
        placement, build, journal):
    old, new = build.provider('old'), build.provider('new')
    consumer = build.allocate({old: SMALL, new: SMALL})
    _trim(placement, journal, consumer, new, old)
    (entry,) = journal_module.entries(consumer=consumer)
    (row,) = repair.preview_restore(placement, [entry])
    # Emptied and recreated: same generation (1), different body.
    api.put_allocations(placement, consumer, {}, 2, 'p', 'u')
    build.allocate({new: {'VCPU': 1}}, consumer=consumer)
    (outcome,) = repair.restore(placement, journal, [entry],
                                {consumer: row.fingerprint})
    assert outcome.status == repair.SKIPPED
    assert _now(placement, consumer).allocations == {new: {'VCPU': 1}}
