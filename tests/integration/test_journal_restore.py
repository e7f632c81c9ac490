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

"""Journal and Restore against a real Placement server."""

import io
import json
import uuid

from django.core.exceptions import ObjectDoesNotExist
import pytest

from orphan_dashboard.api import client
from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.operations import history
from orphan_dashboard.operations import restore as restore_ops
from orphan_dashboard.writing import journal as journal_module
from orphan_dashboard.writing import write
from tests.integration.batches import write_plan
from tests.integration.conftest import CLOUD
from tests.integration.conftest import logged
from tests.integration.conftest import restore_entries

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


def _now(placement, consumer):
    return parse.consumer(consumer,
                          api.consumer_allocations(placement, consumer))


def _trim(placement, journal, consumer, keep, drop):
    now = _now(placement, consumer)
    plan = m.Plan(m.TRIM, consumer, drop, m.MOVED, 'moved', now.generation,
                  'p', 'u', now.allocations,
                  {keep: now.allocations[keep]})
    return write_plan(placement, journal, plan)


def _trimmed(placement, build, journal):
    """A consumer on two providers, ``old`` and ``new``, trimmed to
    ``new`` through the journal: ``(old, new, consumer, its entry)``."""
    old, new = build.provider('old'), build.provider('new')
    consumer = build.allocate({old: SMALL, new: SMALL})
    _trim(placement, journal, consumer, new, old)
    (entry,) = logged(consumer=consumer)
    return old, new, consumer, entry


def _restore(placement, journal, entry):
    (row,), outcomes = restore_entries(placement, journal, [entry])
    return row, outcomes


def test_write_is_journaled_with_before_after_and_new_generation(
        placement, build, journal):
    old, new = build.provider('old'), build.provider('new')
    consumer = build.allocate({old: SMALL, new: SMALL})
    outcome = _trim(placement, journal, consumer, new, old)
    assert outcome.status == write.DONE
    (entry,) = logged(consumer=consumer)
    assert entry.status == entry.APPLIED
    assert entry.before == {old: SMALL, new: SMALL}
    assert entry.after == {new: SMALL}
    assert (entry.generation, entry.new_generation) == (1, 2)
    assert (entry.user_name, entry.source) == ('tester', 'test')
    assert logged(provider=old) == [entry]
    exported = json.loads(''.join(history.exported([entry], 'json')))
    assert exported[0]['before'] == entry.before
    assert consumer in ''.join(history.exported([entry], 'csv'))
    assert (entry.auth_url, entry.region, entry.placement_url) == (
        CLOUD.auth_url, CLOUD.region, CLOUD.placement_url)


def test_refused_write_is_journaled_as_refused(placement, build, journal):
    rp = build.provider('node')
    consumer = build.allocate({rp: SMALL})
    plan = m.Plan(m.DELETE, consumer, rp, m.DELETED_INSTANCE, '', 9, 'p',
                  'u', {rp: SMALL}, {})
    assert write_plan(placement, journal, plan).status == write.SKIPPED
    (entry,) = logged(consumer=consumer)
    assert entry.status == entry.REFUSED
    assert 'the consumer changed since it was read' in entry.message
    assert 'consumer generation conflict' not in entry.message


def test_restore_puts_the_consumer_back_and_is_undoable(placement, build,
                                                        journal):
    old, new, consumer, entry = _trimmed(placement, build, journal)
    row, (outcome,) = _restore(placement, journal, entry)
    assert row.plan.after == {old: SMALL, new: SMALL}
    assert outcome.status == write.DONE, outcome.message
    assert _now(placement, consumer).allocations == {old: SMALL, new: SMALL}
    restore_entry = logged(consumer=consumer)[0]
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
    write_plan(placement, journal, plan)
    assert _now(placement, consumer).allocations == {}
    (entry,) = logged(consumer=consumer)
    _, (outcome,) = _restore(placement, journal, entry)
    assert outcome.status == write.DONE, outcome.message
    body = api.consumer_allocations(placement, consumer)
    assert (body['project_id'], body['user_id']) == ('proj', 'usr')
    assert _now(placement, consumer).allocations == {rp: SMALL}


def test_restore_refused_when_the_consumer_changed_since(placement, build,
                                                         journal):
    old, new, consumer, entry = _trimmed(placement, build, journal)
    api.put_allocations(placement, consumer, {new: {'VCPU': 4}}, 2, 'p', 'u')
    row, (outcome,) = _restore(placement, journal, entry)
    assert row.plan is None and 'changed since this repair' in str(row.error)
    assert outcome.status == write.SKIPPED
    assert _now(placement, consumer).allocations == {new: {'VCPU': 4}}


def test_restore_skipped_when_changed_between_preview_and_submit(
        placement, build, journal):
    old, new, consumer, entry = _trimmed(placement, build, journal)
    restorable = journal_module.restorable(CLOUD, [consumer])
    ((_, row),) = restore_ops.fresh_plans(
        client.Clients(placement, None), [entry], restorable)
    # Emptied and recreated: same generation (1), different body.
    api.put_allocations(placement, consumer, {}, 2, 'p', 'u')
    build.allocate({new: {'VCPU': 1}}, consumer=consumer)
    (outcome,) = restore_ops.restore(client.Clients(placement, None),
                                     journal, [entry], {entry.id: row.plan},
                                     restorable)
    assert outcome.status == write.SKIPPED
    assert _now(placement, consumer).allocations == {new: {'VCPU': 1}}


def test_entries_belong_to_their_cloud(placement, build, journal):
    """History, export and restore see only the current cloud's entries."""
    other_cloud = client.Cloud('http://keystone.test:5000/', 'RegionOne',
                               'http://placement.test', 'another-service-id')
    other = journal_module.Journal('test', other_cloud, user_name='other')
    old, new = build.provider('old'), build.provider('new')
    mine = build.allocate({old: SMALL, new: SMALL})
    theirs = build.allocate({old: SMALL, new: SMALL})
    _trim(placement, journal, mine, new, old)
    _trim(placement, other, theirs, new, old)
    assert [e.consumer for e in logged()] == [mine]
    assert [e.consumer for e in journal_module.entries(other_cloud)[0]] == [
        theirs]
    assert [e.consumer for e in journal_module.all_entries(CLOUD)] == [mine]
    assert {e.consumer for e in journal_module.all_entries(None)} == {
        mine, theirs}
    (foreign,) = journal_module.entries(other_cloud)[0]
    with pytest.raises(ObjectDoesNotExist):
        journal_module.get(CLOUD, foreign.id)
    # The same Keystone written another way is the same cloud.
    assert client.Cloud('HTTP://keystone.test:5000/v3/', 'RegionOne',
                        'http://elsewhere', 'placement-service-id').key == \
        CLOUD.key


def test_only_the_latest_change_in_effect_is_restorable(placement, build,
                                                        journal):
    """Undo is a stack: the older change waits until the newer one is
    undone; a restore can itself be restored (redo)."""
    a, b, c = (build.provider(n) for n in 'abc')
    consumer = build.allocate({a: SMALL, b: SMALL, c: SMALL})

    def change(after):
        now = _now(placement, consumer)
        outcome = write_plan(placement, journal, m.Plan(
            m.TRIM, consumer, c, m.MOVED, 'moved', now.generation, 'p', 'u',
            now.allocations, after))
        assert outcome.status == write.DONE, outcome.message
        return logged(consumer=consumer)[0]

    first = change({b: SMALL, c: SMALL})
    second = change({b: SMALL})

    def allowed():
        return journal_module.restorable(CLOUD, [consumer])[consumer]

    assert allowed() == {second.id}
    rows, (outcome,) = restore_entries(placement, journal, [first])
    assert outcome.status == write.SKIPPED
    assert 'restore entry %d first' % second.id in str(rows[0].error)
    assert _now(placement, consumer).allocations == {b: SMALL}
    _, (outcome,) = restore_entries(placement, journal, [second])
    assert outcome.status == write.DONE, outcome.message
    undo = logged(consumer=consumer)[0]
    assert allowed() == {undo.id, first.id}      # redo, or undo further
    _, (outcome,) = restore_entries(placement, journal, [first])
    assert outcome.status == write.DONE
    assert _now(placement, consumer).allocations == {a: SMALL, b: SMALL,
                                                     c: SMALL}
    assert allowed() == {logged(consumer=consumer)[0].id}


def test_history_pages_and_filters_in_the_database(placement, build,
                                                   journal):
    old, new = build.provider('old'), build.provider('new')
    consumers = [build.allocate({old: SMALL, new: SMALL}) for _ in range(5)]
    for consumer in consumers:
        _trim(placement, journal, consumer, new, old)
    ids = [e.id for e in logged()]
    page, has_prev, has_more = journal_module.entries(CLOUD, limit=2)
    assert ([e.id for e in page], has_prev, has_more) == (ids[:2], False,
                                                          True)
    page, has_prev, has_more = journal_module.entries(CLOUD, limit=2,
                                                      marker=ids[1])
    assert ([e.id for e in page], has_prev, has_more) == (ids[2:4], True,
                                                          True)
    page, has_prev, has_more = journal_module.entries(CLOUD, limit=2,
                                                      marker=ids[3])
    assert ([e.id for e in page], has_more) == (ids[4:], False)
    page, has_prev, _ = journal_module.entries(CLOUD, limit=2,
                                               prev_marker=ids[2])
    assert ([e.id for e in page], has_prev) == (ids[:2], False)
    assert [e.consumer for e in logged(consumer=consumers[2].upper())] == [
        consumers[2]]
    assert len(logged(provider=new)) == 5
    assert len(list(journal_module.all_entries(CLOUD, provider=old))) == 5


def test_a_failed_write_that_changed_nothing_is_not_in_the_way(
        placement, build, journal):
    """Placement answered a write with an error and the consumer is as it
    was: that entry changed nothing, so the change before it stays the one
    to restore (it used to block it for good)."""
    old, new = build.provider('old'), build.provider('new')
    consumer = build.allocate({old: SMALL, new: SMALL})
    _trim(placement, journal, consumer, new, old)
    now = _now(placement, consumer)
    ghost = str(uuid.uuid4())
    bad = m.Plan(m.TRIM, consumer, new, m.MOVED, 'moved', now.generation,
                 'p', 'u', now.allocations, {ghost: SMALL})
    assert write_plan(placement, journal, bad).status == write.FAILED
    failed, trimmed = logged(consumer=consumer)
    assert failed.status == failed.FAILED
    assert journal_module.restorable(CLOUD, [consumer])[consumer] == {
        trimmed.id}
    (row,), (outcome,) = restore_entries(placement, journal, [failed])
    assert 'changed nothing' in str(row.error)
    assert outcome.status == write.SKIPPED
    (row,), (outcome,) = restore_entries(placement, journal, [trimmed])
    assert row.error is None, row.error
    assert outcome.status == write.DONE, outcome.message
    assert _now(placement, consumer).allocations == {old: SMALL, new: SMALL}


def test_restore_batch_takes_exact_batch_ids_only(placement, build,
                                                  journal):
    """``restore --batch`` with a prefix used to restore every batch that
    starts with it (with ``--apply``: no cap, no confirmation)."""
    from orphan_dashboard.cli import handlers
    from orphan_dashboard.cli import options

    clients = client.Clients(placement, placement)
    cloud = client.cloud_for_clients(clients)
    old, new = build.provider('old'), build.provider('new')
    consumers = [build.allocate({old: SMALL, new: SMALL}) for _ in 'cd']
    batches = ['ab' + c * 30 for c in 'cd']
    for consumer, batch in zip(consumers, batches):
        journal.actor.update(cloud=cloud.key, batch=batch)
        assert _trim(placement, journal, consumer, new, old).status == \
            write.DONE

    def restore(batch):
        args = options.build_parser().parse_args(
            ['restore', '--batch', batch, '--apply', '--min-age', '0'])
        return handlers.cmd_restore(args, clients, io.StringIO())

    with pytest.raises(options.BadArguments):
        restore('ab')
    assert [_now(placement, c).allocations for c in consumers] == [
        {new: SMALL}, {new: SMALL}]
    restore(batches[1])
    assert [_now(placement, c).allocations for c in consumers] == [
        {new: SMALL}, {old: SMALL, new: SMALL}]


def test_a_replayed_restore_says_nothing_was_left_and_exits_0(
        placement, build, journal):
    """``restore --apply`` run again (a script's retry) skips the entry it
    already restored: nothing is left to do, which is no finding (3) nor
    an error."""
    from orphan_dashboard.cli import handlers
    from orphan_dashboard.cli import options

    clients = client.Clients(placement, placement)
    journal.actor.update(cloud=client.cloud_for_clients(clients).key)
    old, new = build.provider('old'), build.provider('new')
    consumer = build.allocate({old: SMALL, new: SMALL})
    entry = _trim(placement, journal, consumer, new, old).entry_id
    args = options.build_parser().parse_args(
        ['restore', str(entry), '--apply'])
    assert handlers.cmd_restore(args, clients, io.StringIO()) == \
        options.APPLIED
    printed = io.StringIO()
    assert handlers.cmd_restore(args, clients, printed) == options.NOTHING
    assert printed.getvalue().splitlines()[-1] == \
        'nothing was left to restore'
