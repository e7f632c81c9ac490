"""Faults mid-batch: Placement 409 / 500 / no answer, and the process
applying the batch killed.  The journal must say exactly what was and was
not applied, and Restore must bring every touched consumer back."""

import dataclasses
import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest
from keystoneauth1 import adapter
from keystoneauth1 import session
from keystoneauth1 import token_endpoint

from orphan_dashboard import journal as journal_module
from orphan_dashboard import repair
from tests.integration.batches import held
from tests.integration.batches import trim_batch
from tests.integration.fault_proxy import FaultProxy, HANG


@pytest.fixture
def proxy(placement_url):
    proxy = FaultProxy(placement_url)
    yield proxy
    proxy.close()


def _client(url, timeout=None):
    return adapter.Adapter(session.Session(timeout=timeout),
                           service_type='placement',
                           auth=token_endpoint.Token(url, 'admin'))


def _restore_all(placement, journal, entries):
    rows = repair.preview_restore(placement, entries)
    return repair.restore(placement, journal, entries,
                          {r.selection.consumer: r.fingerprint for r in rows})


@pytest.mark.parametrize('fault,status,entry_status', [
    (409, repair.SKIPPED, 'refused'),
    (500, repair.FAILED, 'failed'),
    (HANG, repair.FAILED, 'failed'),
])
def test_fault_mid_batch_is_reported_per_row_and_restorable(
        placement, build, journal, proxy, fault, status, entry_status):
    consumers, plans = trim_batch(build, 4)
    initial = held(placement, consumers)
    proxy.inject('PUT', '/allocations/', 2, fault)
    client = _client(proxy.url, timeout=3)
    outcomes = [repair.write(client, journal, plan) for plan in plans]
    assert [o.status for o in outcomes] == [
        repair.DONE, status, repair.DONE, repair.DONE]
    entries = [journal_module.entries(consumer=c)[0] for c in consumers]
    assert [e.status for e in entries] == [
        'applied', entry_status, 'applied', 'applied']
    after = held(placement, consumers)
    assert after[1] == initial[1]
    assert all(after[i] == plans[i].after for i in (0, 2, 3))

    results = _restore_all(placement, journal, entries)
    assert [r.status for r in results] == [
        repair.DONE, repair.SKIPPED, repair.DONE, repair.DONE]
    assert 'already as it was before' in results[1].message
    assert held(placement, consumers) == initial


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
    env = dict(os.environ, ORPHAN_JOURNAL_DIR=str(tmp_path))
    env.pop('DJANGO_SETTINGS_MODULE', None)
    worker = subprocess.Popen(
        [sys.executable, '-m', 'tests.integration.batch_worker', proxy.url,
         str(plans_file)], env=env, stdout=subprocess.PIPE, text=True)
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
        [sys.executable, '-m', 'orphan_dashboard.cli', '--restore',
         *[str(i) for i, _, _ in rows]],
        env={**env, 'OS_AUTH_TYPE': 'admin_token',
             'OS_ENDPOINT': placement_url, 'OS_TOKEN': 'admin'},
        capture_output=True, text=True, timeout=120)
    assert restore.returncode == 4, restore.stdout + restore.stderr
    assert held(placement, consumers) == initial
    statuses = [s for _, _, s in _journal_rows(db_path)]
    assert statuses == ['applied', 'applied', 'pending', 'applied',
                        'applied']
