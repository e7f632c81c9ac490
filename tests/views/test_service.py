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

"""The snapshot store behind every page (``service.report``): pages never
sweep, sweeps run in the background one at a time, and what the panel
writes is shown at once.

The engine and the store are real (over Django's test cache); only the
collection from the cloud is mocked, counted, and can be held.
"""

import dataclasses
import datetime
import threading
import time
import types
from unittest import mock

from django.core.cache import cache
from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.api import client
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import report as assembly
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.reading import collect
from orphan_dashboard.reading import refresh
from orphan_dashboard.sweep import lock
from orphan_dashboard.sweep import status
from orphan_dashboard.sweep import store as stores
from orphan_dashboard.sweep import worker
from tests.views.base import H1
from tests.views.base import H2
from tests.views.base import H3
from tests.views.base import Incidents

STORE = stores.Store('test-cloud', timeout=3600)


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def wait_idle(timeout=10):
    """Until every background sweep of this process has ended."""
    for thread in threading.enumerate():
        if thread.name.startswith('orphan-sweep-'):
            thread.join(timeout)
            assert not thread.is_alive(), 'the sweep did not finish'


@pytest.fixture
def cloud(settings):
    """``service.report`` over the real store, a counted ``collect``."""
    settings.ORPHAN_AUDIT_SNAPSHOT_TTL = 300
    settings.ORPHAN_AUDIT_MIN_AGE = 600
    cache.clear()
    service._shown.clear()
    incidents = Incidents()
    state = dict(collected=[], incidents=incidents, gate=threading.Event(),
                 flush=True)
    state['gate'].set()

    def collected(placement, nova, cached=None, progress=None, **kwargs):
        progress.total('providers', 3)
        progress.advance('providers', 1)
        if state['flush']:
            progress.flush(force=True)
        assert state['gate'].wait(10)
        if state.get('fail'):
            raise state['fail']
        snapshot = dataclasses.replace(incidents.snapshot, taken_at=_now())
        snapshot.full_sweep_at = snapshot.taken_at \
            if cached is None or kwargs.get('full') else cached.full_sweep_at
        state['collected'].append(dict(kwargs, cached=cached,
                                       snapshot=snapshot))
        return snapshot

    credentials = client.Credentials('token', 'http://placement',
                                     'http://nova', 'http://keystone', True)
    with mock.patch.object(service, '_store', return_value=STORE), \
            mock.patch.object(service, '_clients'), \
            mock.patch.object(service, 'credentials_for_request',
                              return_value=credentials), \
            mock.patch.object(client, 'for_credentials'), \
            mock.patch.object(refresh, 'snapshot', side_effect=collected), \
            mock.patch.object(classify, 'audit',
                              wraps=classify.audit) as audit:
        state['audits'] = audit
        yield state
        state['gate'].set()
        wait_idle()
    service._shown.clear()
    cache.clear()


def read_once_providers_read(timeout=5 * status.PROGRESS_EVERY):
    """The bar's counts once it shows a provider read (or the timeout
    passed): the sweep's thread reports when it gets there."""
    deadline = time.monotonic() + timeout
    read = service.sweep_state(None)['progress']['read']
    while read['providers'][0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
        read = service.sweep_state(None)['progress']['read']
    return read


def first_report(cloud):
    assert service.report(None) is None
    wait_idle()
    return service.report(None)


def test_the_first_page_does_not_wait_for_the_first_sweep(cloud):
    cloud['gate'].clear()              # Nova is slow today
    started = time.monotonic()
    assert service.report(None) is None
    assert time.monotonic() - started < 1
    state = service.sweep_state(None)
    assert state['version'] is None and state['sweeping']
    assert read_once_providers_read()['providers'] == [1, 3]
    cloud['gate'].set()
    wait_idle()
    report = service.report(None)
    assert report.provider(H1).problems
    assert not service.sweep_state(None)['sweeping']
    assert cloud['collected'][0]['cached'] is None     # a full sweep


def test_a_sweep_publishes_its_servers_names_beside_keystones(cloud):
    """History names its consumers from them, as ``orphan-audit
    history`` names them from Nova: a page never waits for Nova."""
    first_report(cloud)
    service._names.clear()
    servers = service.names(None)['servers']
    assert servers[cloud['incidents'].bare] == 'bare'
    assert {u: s.name for u, s in
            cloud['incidents'].snapshot.servers.items() if s.name} == servers


def test_warm_pages_neither_sweep_nor_load_again(cloud):
    report = first_report(cloud)
    with mock.patch.object(STORE, 'load_report',
                           wraps=STORE.load_report) as load:
        assert service.report(None) is report
        assert service.report(None) is report
    assert load.call_count == 0
    assert len(cloud['collected']) == 1
    assert cloud['audits'].call_count == 1        # by the sweep itself


def test_one_sweep_at_a_time(cloud, settings):
    first_report(cloud)
    settings.ORPHAN_AUDIT_SNAPSHOT_TTL = 0         # every page wants one
    cloud['gate'].clear()
    for _ in range(5):
        assert service.report(None) is not None    # the old one, at once
    cloud['gate'].set()
    wait_idle()
    # Counted once it has ended: a sweep counts itself from its own thread.
    assert status.sweeps(STORE) == 2
    assert len(cloud['collected']) == 2


def test_a_killed_sweeper_does_not_wedge_the_sweeps(cloud, monkeypatch):
    monkeypatch.setattr(lock, 'TTL', 1)
    assert lock.acquire(STORE, 'a worker that was killed')
    assert service.report(None) is None
    assert status.sweeps(STORE) == 0
    time.sleep(1.5)
    assert first_report(cloud) is not None
    assert status.sweeps(STORE) == 1


def test_a_failed_sweep_is_on_the_page_until_one_publishes(cloud, caplog):
    """The first 100,000-server sweep failed in Horizon's log only: the
    index listed nothing and said nothing."""
    cloud['fail'] = ks_exc.ConnectTimeout(
        'Request to http://nova:8774/v2.1/os-hypervisors/detail timed out')
    assert service.report(None) is None
    wait_idle()
    assert 'background sweep failed' in caplog.text
    failure = service.sweep_state(None)['failure']
    assert (failure['kind'], failure['url']) == (
        status.TIMED_OUT, 'http://nova:8774/v2.1/os-hypervisors/detail')
    assert not service.sweep_state(None)['sweeping']
    cloud['fail'] = None
    assert first_report(cloud).provider(H1).problems
    assert service.sweep_state(None)['failure'] is None


def test_refresh_is_a_full_sweep_in_the_background(cloud):
    first_report(cloud)
    cloud['gate'].clear()
    started = time.monotonic()
    service.refresh(None)
    assert time.monotonic() - started < 1
    # The bar measures the full sweep against the last snapshot's counts.
    read = read_once_providers_read()
    assert read['servers'] == [0, len(cloud['incidents'].snapshot.servers)]
    assert read['providers'] == [1, 3]
    cloud['gate'].set()
    wait_idle()
    assert [c['full'] for c in cloud['collected']] == [False, True]


def test_a_page_shows_one_snapshot_though_a_sweep_publishes_meanwhile(
        cloud):
    """The index reads its report, then what the findings hold and the
    version its script compares: a sweep published between them does
    not mix two snapshots on one page; the next page shows the new one."""
    cloud['incidents'].snapshot.inventories = {
        host: {'VCPU': {'total': 8, 'reserved': 0, 'min_unit': 1,
                        'max_unit': 8, 'step_size': 1,
                        'allocation_ratio': 1.0}}
        for host in (H1, H2, H3)}
    first_report(cloud)
    page = types.SimpleNamespace()
    report = service.report(page)
    version = service.shown_version(page)
    assert version == STORE.state()['version']
    service.refresh(None)
    wait_idle()
    newer = STORE.state()['version']
    assert newer != version
    assert service.shown_version(page) == version
    assert service.report(page) is report
    assert service.capacity(page).taken_at == report.taken_at
    following = types.SimpleNamespace()
    assert service.shown_version(following) is None
    assert service.capacity(following).taken_at > report.taken_at
    assert service.report(following).taken_at > report.taken_at
    assert service.shown_version(following) == newer


def test_refresh_behind_a_running_sweep_starts_after_it(cloud, settings):
    """*Refresh* while another sweep runs says so (False); the first
    page after that sweep starts the full one."""
    first_report(cloud)
    settings.ORPHAN_AUDIT_SNAPSHOT_TTL = 0         # the page wants one
    cloud['gate'].clear()
    assert service.report(None) is not None
    read_once_providers_read()      # it runs: what it was asked is taken
    assert service.refresh(None) is False
    cloud['gate'].set()
    wait_idle()
    settings.ORPHAN_AUDIT_SNAPSHOT_TTL = 300
    assert service.report(None) is not None
    wait_idle()
    assert [c['full'] for c in cloud['collected']] == [False, False, True]


def test_refresh_behind_a_running_sweep_starts_at_the_next_poll(cloud):
    """The page the *Refresh* was clicked on only polls: its first poll
    once the other sweep has ended starts the full one, and already says
    it runs.  A poll while the other runs starts nothing more."""
    first_report(cloud)
    cloud['gate'].clear()
    assert service.refresh(None) is True            # this one runs
    read_once_providers_read()      # it took the full sweep asked for
    assert service.refresh(None) is False           # this one waits
    assert service.sweep_state(None)['sweeping']
    cloud['gate'].set()
    wait_idle()
    assert [c['full'] for c in cloud['collected']] == [False, True]
    cloud['gate'].clear()
    assert service.sweep_state(None)['sweeping']
    cloud['gate'].set()
    wait_idle()
    assert [c['full'] for c in cloud['collected']] == [False, True, True]
    assert not service.sweep_state(None)['sweeping']
    assert len(cloud['collected']) == 3


def test_a_refresh_that_could_not_start_raises(cloud):
    first_report(cloud)
    with mock.patch.object(worker, 'start',
                           return_value=False):
        with pytest.raises(service.SweepNotStarted):
            service.refresh(None)
    assert service.refresh(None) is True
    wait_idle()


def test_the_bar_shows_reads_done_in_one_burst_while_the_sweep_runs(
        cloud):
    """Reads done faster than the throttle (a provider read, then Nova's
    long listing) reach the page within the throttle's delay, not when
    the sweep ends: the bar's counts move during the sweep."""
    first_report(cloud)
    cloud['gate'].clear()                  # then Nova's listing is slow
    cloud['flush'] = False                 # as collect reports: no force
    service.refresh(None)
    read = read_once_providers_read()
    assert service.sweep_state(None)['sweeping']
    assert read['providers'] == [1, 3]
    cloud['gate'].set()
    wait_idle()


def test_a_closed_progress_writes_nothing_more(monkeypatch):
    """Once the sweep is over, a pending trailing write is dropped: the
    next sweep's bar is its own."""
    monkeypatch.setattr(status, 'PROGRESS_EVERY', 0.2)
    store = mock.Mock()
    progress = status.CacheProgress(store, 'me', True)
    assert store.cache.set.call_count == 1
    progress.advance('providers')
    progress.close()
    time.sleep(0.4)
    assert store.cache.set.call_count == 1


def test_an_old_snapshot_is_refreshed_from_the_stored_one(cloud, settings):
    first_report(cloud)
    settings.ORPHAN_AUDIT_SNAPSHOT_TTL = 0
    service.report(None)
    wait_idle()
    first, second = cloud['collected']
    assert second['cached'] == first['snapshot'] and not second['full']


def test_our_writes_are_shown_at_once_and_read_by_the_next_sweep(
        cloud, settings):
    report = first_report(cloud)
    vm = cloud['incidents'].vm
    assert report.provider(H1).problems
    trimmed = {'allocations': {H2: {'resources': {'VCPU': 1}}},
               'consumer_generation': 2, 'project_id': 'p', 'user_id': 'u'}
    with mock.patch.object(collect.placement, 'consumer_allocations',
                           return_value=trimmed):
        service.note_written(None, {vm})
    after = service.report(None)
    assert not [f for f in after.provider(H1).findings if f.consumer == vm]
    assert len(cloud['collected']) == 1             # no sweep for it
    assert STORE.state()['touched'] == {vm}
    settings.ORPHAN_AUDIT_SNAPSHOT_TTL = 0
    service.report(None)
    wait_idle()
    assert cloud['collected'][1]['touched'] == {vm}
    assert STORE.state()['touched'] == frozenset()


def test_the_index_loads_the_summary_a_provider_page_its_tree(cloud):
    """A new snapshot costs a page only what it shows: the index the
    findings that are not ``ok``, a provider's page that one tree whole."""
    report = first_report(cloud)
    full = classify.audit(cloud['incidents'].snapshot, min_age=600)
    assert {f.verdict for f in report.findings} - {m.OK} == \
        {f.verdict for f in full.findings} - {m.OK}
    assert m.OK not in {f.verdict for f in report.findings}
    assert [(p.provider.uuid, p.counts.get(m.PROTECTED), p.needs_attention)
            for p in report.providers] == \
        [(p.provider.uuid, p.counts.get(m.PROTECTED), p.needs_attention)
         for p in full.providers]
    tree = service.provider_report(None, H3)
    assert tree.findings == full.provider(H3).findings
    assert m.OK in {f.verdict for f in tree.findings}
    assert service.provider_report(None, 'no-such-provider') is None
    assert len(cloud['collected']) == 1


def test_an_evicted_tree_means_a_full_sweep(cloud):
    first_report(cloud)
    cache.delete(STORE.key('tree', STORE.state()['version'], H3))
    assert service.provider_report(None, H3) is None
    wait_idle()
    assert [c['full'] for c in cloud['collected']] == [False, True]
    assert service.provider_report(None, H3) is not None


def refreshed(cloud, settings):
    """After the first report, a refresh's: ``(what the refresh's audit
    took as it was, its snapshot, the version it published)``."""
    settings.ORPHAN_AUDIT_SNAPSHOT_TTL = 0
    service.report(None)
    wait_idle()
    assert [c['cached'] is None for c in cloud['collected']] == [True, False]
    swept = [c.kwargs['known'] for c in cloud['audits'].call_args_list
             if 'known' in c.kwargs]      # a page's own audits pass none
    return (swept[-1], cloud['collected'][1]['snapshot'],
            STORE.state()['version'])


def published_as_a_whole_audit(snapshot, version):
    whole = classify.audit(snapshot, min_age=600)
    assert [STORE.load_tree(version, p.provider.uuid)
            for p in whole.providers] == whole.providers
    assert STORE.load_report(version) == whole.summary()


def test_a_refresh_judges_again_only_what_may_have_changed(cloud, settings):
    """A refresh's report takes the last report's findings, read from the
    trees the cache keeps, on every consumer nothing changed for but those
    protected for their age; what it publishes is a whole audit's."""
    first_report(cloud)
    known, snapshot, version = refreshed(cloud, settings)
    aged = {f.consumer for f in classify.audit(snapshot, min_age=600).findings
            if classify.aged(f)}
    assert known and set(known) == set(snapshot.consumers) - aged
    published_as_a_whole_audit(snapshot, version)


def test_a_refresh_judges_everything_again_without_every_tree(
        cloud, settings):
    first_report(cloud)
    cache.delete(STORE.key('tree', STORE.state()['version'], H3))
    known, snapshot, version = refreshed(cloud, settings)
    assert known == {}
    published_as_a_whole_audit(snapshot, version)


def test_a_refresh_at_another_minimum_age_judges_everything_again(
        cloud, settings):
    first_report(cloud)
    settings.ORPHAN_AUDIT_MIN_AGE = 0
    known, snapshot, version = refreshed(cloud, settings)
    assert not known and STORE.state()['min_age'] == 0


def test_the_last_findings_load_while_the_refresh_reads(
        cloud, settings, monkeypatch):
    first_report(cloud)
    loading = threading.Event()
    load = STORE.load_findings

    def load_findings(version):
        loading.set()
        return load(version)
    monkeypatch.setattr(STORE, 'load_findings', load_findings)
    cloud['gate'].clear()               # the refresh's reads wait
    settings.ORPHAN_AUDIT_SNAPSHOT_TTL = 0
    service.report(None)
    assert loading.wait(5)
    cloud['gate'].set()
    wait_idle()
    assert [c.kwargs['known'] for c in cloud['audits'].call_args_list
            if 'known' in c.kwargs][-1]


def test_another_worker_renders_from_the_shared_cache(cloud):
    first = first_report(cloud)
    service._shown.clear()          # a second process: nothing in memory
    second = service.report(None)
    assert second is not first
    assert len(cloud['collected']) == 1
    assert [p.provider.uuid for p in second.providers] == \
        [p.provider.uuid for p in first.providers]


def test_a_new_minimum_age_re_audits_the_same_snapshot(cloud, settings):
    first_report(cloud)
    settings.ORPHAN_AUDIT_MIN_AGE = 0
    service.report(None)
    assert len(cloud['collected']) == 1
    assert cloud['audits'].call_args.kwargs == {
        'min_age': 0, 'stuck_after': m.STUCK_AFTER}


def test_a_lost_snapshot_means_a_full_sweep(cloud):
    first_report(cloud)
    cache.clear()
    service._shown.clear()
    assert first_report(cloud) is not None
    assert [c['cached'] for c in cloud['collected']] == [None, None]


def test_blobs_are_cut_below_memcacheds_item_limit(monkeypatch):
    """A 10,000-server snapshot compresses to about a megabyte: stored in
    chunks, read back whole; a missing chunk reads as nothing."""
    monkeypatch.setattr(stores, 'CHUNK', 1000)
    cache.clear()
    snapshot = Incidents().snapshot
    version = STORE.save(snapshot, classify.audit(snapshot, min_age=600), 600)
    assert cache.get(STORE.key('snapshot', version)) > 1
    again = STORE.load_snapshot(version)
    assert again.consumers == snapshot.consumers
    assert isinstance(STORE.load_report(version), assembly.Report)
    assert STORE.load_tree(version, H1).provider.uuid == H1
    cache.delete(STORE.key('snapshot', version, 0))
    assert STORE.load_snapshot(version) is None
    cache.clear()


def test_a_sweep_keeps_its_lock_while_it_audits_and_publishes(
        cloud, monkeypatch):
    """Past its last read a sweep audits and publishes with no progress to
    report (minutes at 100,000 servers): its lock outlives that, so the
    pages still say it runs and no second sweep starts."""
    monkeypatch.setattr(lock, 'TTL', 1)
    audit = cloud['audits']._mock_wraps

    def long_audit(*args, **kwargs):
        time.sleep(2.5)
        return audit(*args, **kwargs)
    cloud['audits'].side_effect = long_audit
    assert service.report(None) is None
    time.sleep(2)
    assert service.sweep_state(None)['sweeping']
    assert service.report(None) is None
    assert status.sweeps(STORE) == 1
    assert first_report(cloud) is not None
    assert len(cloud['collected']) == 1
