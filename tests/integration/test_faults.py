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

"""Faults mid-batch: Placement 409 / 500 / no answer, an answer lost
while Placement still applies the write, and the process applying the
batch killed.  The journal must say exactly what was and was not applied
(or that it cannot be known yet), and Restore must bring every touched
consumer back."""

import dataclasses
import json
import os
import sqlite3
import subprocess
import sys
import time

from keystoneauth1 import adapter
from keystoneauth1 import session
from keystoneauth1 import token_endpoint
import pytest

from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard.writing import journal as journal_module
from orphan_dashboard.writing import providers as provider_writes
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write
from tests.integration.batches import held
from tests.integration.batches import SMALL
from tests.integration.batches import trim_batch
from tests.integration.batches import write_plan
from tests.integration.conftest import CLOUD
from tests.integration.conftest import logged
from tests.integration.conftest import restore_entries
from tests.integration.fault_proxy import EARLY
from tests.integration.fault_proxy import FaultProxy
from tests.integration.fault_proxy import GARBAGE
from tests.integration.fault_proxy import HANG
from tests.integration.fault_proxy import LOST
from tests.integration.fault_proxy import RETRIED


@pytest.fixture
def proxy(placement_url):
    proxy = FaultProxy(placement_url)
    yield proxy
    proxy.close()


def _client(url, timeout=None):
    return adapter.Adapter(session.Session(timeout=timeout),
                           service_type='placement',
                           auth=token_endpoint.Token(url, 'admin'))


@pytest.mark.parametrize('fault,status,entry_status', [
    (409, write.SKIPPED, 'refused'),
    (500, write.FAILED, 'failed'),
    (HANG, 'unknown', 'unknown'),
])
def test_fault_mid_batch_is_reported_per_row_and_restorable(
        placement, build, journal, proxy, fault, status, entry_status):
    consumers, plans = trim_batch(build, 4)
    initial = held(placement, consumers)
    proxy.inject('PUT', '/allocations/', 2, fault)
    client = _client(proxy.url, timeout=3)
    outcomes = [write_plan(client, journal, plan) for plan in plans]
    assert [o.status for o in outcomes] == [
        write.DONE, status, write.DONE, write.DONE]
    entries = [logged(consumer=c)[0] for c in consumers]
    assert [e.status for e in entries] == [
        'applied', entry_status, 'applied', 'applied']
    after = held(placement, consumers)
    assert after[1] == initial[1]
    assert all(after[i] == plans[i].after for i in (0, 2, 3))

    _, results = restore_entries(placement, journal, entries)
    # The refused write, and the one Placement answered with an error,
    # changed nothing: nothing to restore.  A write never answered may
    # have been done, or be done yet: the restore reads what it finds.
    assert [r.status for r in results] == [
        write.DONE, write.SKIPPED, write.DONE, write.DONE]
    expected = {409: 'changed nothing: Placement refused it',
                500: 'changed nothing: Placement answered it with an error',
                HANG: 'already as it was before'}[fault]
    assert expected in str(results[1].message)
    assert held(placement, consumers) == initial


def test_a_write_placement_applied_but_whose_answer_was_lost_is_done(
        placement, build, journal, proxy):
    """A 5xx after Placement applied the PUT: read back, the consumer
    holds the plan's after, so the write is done and restorable, not a
    failure standing in the way."""
    consumers, (plan,) = trim_batch(build, 1)
    initial = held(placement, consumers)
    proxy.inject('PUT', '/allocations/', 1, LOST)
    outcome = write_plan(_client(proxy.url, timeout=3), journal, plan)
    assert outcome.status == write.DONE, outcome.message
    assert held(placement, consumers) == [plan.after]
    (entry,) = logged(consumer=consumers[0])
    assert entry.status == 'applied'
    _, results = restore_entries(placement, journal, [entry])
    assert [r.status for r in results] == [write.DONE], results
    assert held(placement, consumers) == initial


def test_a_put_a_gateway_sent_twice_is_done_and_restorable(
        placement, build, journal, proxy):
    """The gateway's first PUT lands, its retry meets the consumer
    generation it moved (409): the answer is the retry's conflict.  Read
    back, the consumer holds the plan, so the write is done, journaled
    with its new generation and restorable, never "wrote nothing"."""
    consumers, (plan,) = trim_batch(build, 1)
    initial = held(placement, consumers)
    proxy.inject('PUT', '/allocations/', 1, RETRIED)
    outcome = write_plan(_client(proxy.url, timeout=10), journal, plan)
    put = ('PUT', '/allocations/%s' % consumers[0])
    assert proxy.forwarded.count(put) == 2
    assert outcome.status == write.DONE, outcome.message
    assert 'conflict' in str(outcome.message)
    assert held(placement, consumers) == [plan.after]
    (entry,) = logged(consumer=consumers[0])
    assert (entry.status, entry.new_generation) == (
        'applied', plan.generation + 1)
    _, (restored,) = restore_entries(placement, journal, [entry])
    assert restored.status == write.DONE, restored.message
    assert held(placement, consumers) == initial


def _until(check, seconds=30):
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, 'still not so'
        time.sleep(0.2)


def test_a_504_while_placement_still_applies_the_put_is_done_once_it_lands(
        placement, build, journal, proxy):
    """A gateway answers 504 and Placement applies the PUT a second
    later: the first read back finds the consumer as it was, a later one
    the plan's after.  Done, journaled with its new generation and
    restorable; never "failed, changed nothing"."""
    consumers, (plan,) = trim_batch(build, 1)
    initial = held(placement, consumers)
    proxy.delay = 1
    proxy.inject('PUT', '/allocations/', 1, EARLY)
    outcome = write_plan(_client(proxy.url, timeout=10), journal, plan)
    assert outcome.status == write.DONE, outcome.message
    assert 'holds what this change writes' in str(outcome.message)
    # Read back before Placement had it, and again after.
    put = ('PUT', '/allocations/%s' % consumers[0])
    read = ('GET', '/allocations/%s' % consumers[0])
    assert proxy.forwarded.index(read) < proxy.forwarded.index(put)
    assert read in proxy.forwarded[proxy.forwarded.index(put):]
    (entry,) = logged(consumer=consumers[0])
    assert (entry.status, entry.new_generation) == ('applied', 2)
    _, (restored,) = restore_entries(placement, journal, [entry])
    assert restored.status == write.DONE, restored.message
    assert held(placement, consumers) == initial


def test_a_504_whose_put_lands_after_the_wait_is_unknown_and_restorable(
        placement, build, journal, proxy):
    """Placement applies the PUT only after the bounded wait: the
    consumer read as it was all along is no proof, so the outcome is
    unknown, its before kept restorable; once the write lands, History
    restores it."""
    consumers, (plan,) = trim_batch(build, 1)
    initial = held(placement, consumers)
    proxy.delay = 6  # past the reads' bounded wait
    proxy.inject('PUT', '/allocations/', 1, EARLY)
    outcome = write_plan(_client(proxy.url, timeout=10), journal, plan)
    assert outcome.status == 'unknown', outcome.message
    text = str(outcome.message)
    assert 'no clear answer' in text and 'may yet land' in text, text
    assert 'History keeps what it held' in text, text
    (entry,) = logged(consumer=consumers[0])
    assert entry.status == 'unknown' and not entry.changed_nothing
    assert held(placement, consumers) == initial
    _until(lambda: held(placement, consumers) == [plan.after])
    assert journal_module.restorable(CLOUD, consumers)[consumers[0]] == {
        entry.id}
    (row,), (restored,) = restore_entries(placement, journal, [entry])
    assert row.error is None, row.error
    assert restored.status == write.DONE, restored.message
    assert held(placement, consumers) == initial


def test_a_504_whose_consumer_cannot_be_read_back_is_unknown(
        placement, build, journal, proxy):
    """Every read back answered 504 too: nothing says where the write
    stands, so it is unknown, not a failure that changed nothing; its
    entry stays restorable, and the restore reads what Placement holds."""
    consumers, (plan,) = trim_batch(build, 1)
    initial = held(placement, consumers)
    proxy.inject('PUT', '/allocations/', 1, 504)
    for nth in range(1, 10):
        proxy.inject('GET', '/allocations/', nth, 504)
    outcome = write_plan(_client(proxy.url, timeout=10), journal, plan)
    assert outcome.status == 'unknown', outcome.message
    assert 'could not be read back' in str(outcome.message)
    (entry,) = logged(consumer=consumers[0])
    assert entry.status == 'unknown' and not entry.changed_nothing
    assert journal_module.restorable(CLOUD, consumers)[consumers[0]] == {
        entry.id}
    (row,), (restored,) = restore_entries(placement, journal, [entry])
    assert restored.status == write.SKIPPED
    assert 'already as it was before' in str(row.error)
    assert held(placement, consumers) == initial


def test_a_504_on_a_provider_delete_placement_still_applies_is_done(
        placement, build, journal, proxy):
    """DELETE /resource_providers/{uuid} answered 504 while Placement
    still deletes it: read back until it is gone, the delete is done and
    restorable (it used to fail, the provider gone meanwhile)."""
    rp = build.provider('gone')
    record = api.provider_record(placement, rp)
    plan = repair.ProviderPlan(m.DELETE_PROVIDER, rp, record['name'],
                               record['generation'], record)
    proxy.inject('DELETE', '/resource_providers/', 1, EARLY)
    outcome = provider_writes.delete_provider(
        _client(proxy.url, timeout=10), journal, plan)
    assert outcome.status == write.DONE, outcome.message
    assert api.provider_record(placement, rp) is None
    (entry,) = logged(provider=rp)
    assert entry.status == entry.APPLIED
    _, (restored,) = restore_entries(placement, journal, [entry])
    assert restored.status == write.DONE, restored.message
    assert api.provider_record(placement, rp)['inventories'] == \
        record['inventories']


def test_a_504_on_a_provider_delete_placement_never_saw_is_unknown(
        placement, build, journal, proxy):
    """The gateway gave up and Placement never had the delete: the
    provider still there after the wait is no proof it will not go, so
    the outcome is unknown, never "failed, changed nothing"."""
    rp = build.provider('kept')
    record = api.provider_record(placement, rp)
    plan = repair.ProviderPlan(m.DELETE_PROVIDER, rp, record['name'],
                               record['generation'], record)
    proxy.inject('DELETE', '/resource_providers/', 1, 504)
    outcome = provider_writes.delete_provider(
        _client(proxy.url, timeout=10), journal, plan)
    assert outcome.status == 'unknown', outcome.message
    assert 'may yet land' in str(outcome.message)
    (entry,) = logged(provider=rp)
    assert entry.status == 'unknown' and not entry.changed_nothing
    assert api.provider_record(placement, rp) == record


def _journal_rows(path):
    with sqlite3.connect(path) as db:
        return db.execute(
            'select id, consumer, status from orphan_dashboard_journalentry '
            'order by id').fetchall()


def test_process_killed_mid_batch(placement, placement_url, build, proxy,
                                  tmp_path):
    consumers, plans = trim_batch(build, 4)
    initial = held(placement, consumers)
    proxy.inject('PUT', '/allocations/', 3, HANG)
    plans_file = tmp_path / 'plans.json'
    plans_file.write_text(json.dumps([dataclasses.asdict(p) for p in plans]))
    env = dict(os.environ, ORPHAN_AUDIT_JOURNAL_DIR=str(tmp_path))
    env.pop('DJANGO_SETTINGS_MODULE', None)
    worker = subprocess.Popen(
        [sys.executable, '-m', 'tests.integration.batch_worker', proxy.url,
         str(plans_file), placement_url], env=env, stdout=subprocess.PIPE,
        text=True)
    db_path = tmp_path / 'journal.sqlite3'
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if len(_journal_rows(db_path)) == 3:
                break
        except sqlite3.OperationalError:
            pass  # not created or migrated yet, or locked by the writer
        time.sleep(0.1)
    time.sleep(0.5)
    worker.kill()
    worker.wait(10)

    rows = _journal_rows(db_path)
    assert [(c, s) for _, c, s in rows] == [
        (consumers[0], 'applied'), (consumers[1], 'applied'),
        (consumers[2], 'pending')]
    after = held(placement, consumers)
    assert after[:2] == [plans[0].after, plans[1].after]
    assert after[2:] == initial[2:]

    restore = subprocess.run(
        [sys.executable, '-m', 'orphan_dashboard.cli', 'restore', '--apply',
         *[str(i) for i, _, _ in rows]],
        env={**env, 'OS_AUTH_TYPE': 'admin_token',
             'OS_ENDPOINT': placement_url, 'OS_TOKEN': 'admin'},
        capture_output=True, text=True, timeout=120)
    assert restore.returncode == 4, restore.stdout + restore.stderr
    assert held(placement, consumers) == initial
    statuses = [s for _, _, s in _journal_rows(db_path)]
    assert statuses == ['applied', 'applied', 'pending', 'applied',
                        'applied']


class FlakyJournal:
    """The real journal, failing where a test says: its database gone."""

    def __init__(self, journal, fail_begin=(), fail_finish=()):
        self.journal = journal
        self.fail_begin, self.fail_finish = set(fail_begin), set(fail_finish)
        self.begun = self.finished = 0

    def begin(self, plan, restores=None):
        self.begun += 1
        if self.begun in self.fail_begin:
            raise RuntimeError('database is locked')
        return self.journal.begin(plan, restores)

    def finish(self, entry, *args, **kwargs):
        self.finished += 1
        if self.finished in self.fail_finish:
            raise RuntimeError('server has gone away')
        return self.journal.finish(entry, *args, **kwargs)


def test_a_write_the_journal_cannot_record_is_not_sent(placement, build,
                                                       journal):
    consumers, plans = trim_batch(build, 2)
    initial = held(placement, consumers)
    flaky = FlakyJournal(journal, fail_begin={1})
    outcomes = [write_plan(placement, flaky, plan) for plan in plans]
    assert [o.status for o in outcomes] == [write.FAILED, write.DONE]
    assert 'not written: the journal could not record it first' in \
        str(outcomes[0].message)
    assert outcomes[0].entry_id is None
    assert held(placement, consumers) == [initial[0], plans[1].after]
    assert logged(consumer=consumers[0]) == []


def test_a_write_whose_outcome_the_journal_lost_stays_pending(
        placement, build, journal):
    consumers, plans = trim_batch(build, 1)
    flaky = FlakyJournal(journal, fail_finish={1})
    (outcome,) = [write_plan(placement, flaky, plan) for plan in plans]
    assert outcome.status == write.DONE
    assert held(placement, consumers) == [plans[0].after]
    (entry,) = logged(consumer=consumers[0])
    assert entry.status == entry.PENDING and outcome.entry_id == entry.id
    message = str(outcome.message)
    assert ('journal entry %d could not be updated' % entry.id in
            message and 'see History' in message)
    # Pending: restorable all the same.
    _, (restored,) = restore_entries(placement, journal, [entry])
    assert restored.status == write.DONE, restored.message


def test_an_unexpected_error_re_creating_a_provider_says_what_happened(
        placement, build, journal, proxy):
    """Placement created the provider, then an answer that is not JSON
    (not a keystoneauth error) broke off the rest: the outcome says it
    may be partly written and points to History, instead of "nothing was
    written"; its entry is closed as failed, and a restore stays
    possible."""
    from orphan_dashboard.api import placement as api
    from orphan_dashboard.audit import model as m

    rp = build.provider('gone')
    record = api.provider_record(placement, rp)
    plan = repair.ProviderPlan(m.DELETE_PROVIDER, rp, record['name'],
                               record['generation'], record)
    assert provider_writes.delete_provider(
        placement, journal, plan).status == write.DONE
    (deleted,) = logged(provider=rp)
    proxy.inject('PUT', '/resource_providers/%s/inventories' % rp, 1,
                 GARBAGE)
    _, (outcome,) = restore_entries(_client(proxy.url, timeout=10), journal,
                                    [deleted])
    assert outcome.status == write.FAILED
    text = str(outcome.message)
    assert 'partly written' in text and 'History' in text, text
    assert 'proxy error' not in text and 'Expecting value' not in text
    recreated = logged(provider=rp)[0]
    assert recreated.restores_id == deleted.id
    assert recreated.status == recreated.FAILED
    assert api.provider_record(placement, rp)['inventories'] == {}


def _moved_back(build):
    """A stuck move on real Placement: the migration's consumer holds the
    source, the server's the destination; the plan of one write that
    gives the server the source and empties the migration's consumer."""
    source, dest = build.provider('source'), build.provider('dest')
    server = build.allocate({dest: SMALL})
    migration = build.allocate({source: SMALL})
    plan = m.Plan(m.MOVE_BACK, server, dest, m.STUCK_MIGRATION, 'stuck', 1,
                  'p', 'u', {dest: SMALL}, {source: SMALL},
                  partner={'consumer': migration, 'generation': 1,
                           'project_id': 'p', 'user_id': 'u',
                           'before': {source: SMALL}, 'after': {}})
    return (server, migration), plan


@pytest.mark.parametrize('fault', [None, RETRIED])
def test_a_stuck_move_is_moved_back_in_one_write_and_restorable(
        placement, build, journal, proxy, fault):
    """One ``POST /allocations`` of both consumers, each generation
    checked; a gateway's retry of it meets its own write (409), which
    read back is done.  Each consumer is journaled, and restored."""
    consumers, plan = _moved_back(build)
    initial = held(placement, consumers)
    if fault:
        proxy.inject('POST', '/allocations', 1, fault)
    outcome = write_plan(_client(proxy.url, timeout=10), journal, plan)
    assert outcome.status == write.DONE, outcome.message
    posts = [f for f in proxy.forwarded if f == ('POST', '/allocations')]
    assert len(posts) == (2 if fault else 1)
    assert not [f for f in proxy.forwarded if f[0] == 'PUT']
    assert held(placement, consumers) == [plan.after, {}]
    entries = [logged(consumer=c)[0] for c in consumers]
    assert [(e.status, e.action) for e in entries] == [
        ('applied', m.MOVE_BACK)] * 2
    assert entries[0].new_generation == 2
    _, results = restore_entries(placement, journal, entries)
    assert [r.status for r in results] == [write.DONE] * 2, results
    assert held(placement, consumers) == initial


def test_a_move_back_one_consumer_of_which_changed_writes_neither(
        placement, build, journal):
    """The migration's consumer written since the preview: Placement
    refuses the whole POST, and neither consumer is changed."""
    consumers, plan = _moved_back(build)
    plan = dataclasses.replace(plan, partner=dict(plan.partner,
                                                  generation=7))
    initial = held(placement, consumers)
    outcome = write_plan(placement, journal, plan)
    assert outcome.status == write.SKIPPED, outcome.message
    assert held(placement, consumers) == initial
    assert [logged(consumer=c)[0].status for c in consumers] == [
        'refused'] * 2
