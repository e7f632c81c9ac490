"""The snapshot cache behind every page (``service.report``).

The engine is real; only the collection from the cloud is mocked, counted
and given snapshots taken now.
"""

import dataclasses
import datetime
from unittest import mock

from django.core.cache import cache
import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard import collect
from orphan_dashboard import service
from tests.views.base import H1, Incidents

KEY = 'orphan_dashboard:snapshot:test'


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


@pytest.fixture
def cloud(settings):
    """``service.report`` wired to a counted, mocked ``collect.snapshot``."""
    settings.ORPHAN_AUDIT_SNAPSHOT_TTL = 300
    settings.ORPHAN_AUDIT_MIN_AGE = 600
    cache.clear()
    service._audited.clear()
    incidents = Incidents()
    snapshots = []

    def collected(placement, nova, cached=None, **kwargs):
        snapshot = dataclasses.replace(incidents.snapshot, taken_at=_now())
        snapshots.append((snapshot, cached, kwargs['touched']))
        return snapshot

    with mock.patch.object(service, '_cache_key', return_value=KEY), \
            mock.patch.object(service.client, 'for_request'), \
            mock.patch.object(collect, 'snapshot', side_effect=collected), \
            mock.patch.object(classify, 'audit',
                              wraps=classify.audit) as audit:
        yield dict(collected=snapshots, audits=audit, incidents=incidents)
    service._audited.clear()
    cache.clear()


def test_warm_pages_neither_collect_nor_audit_again(cloud):
    first = service.report(None)
    assert len(cloud['collected']) == 1
    assert cloud['collected'][0][1] is None          # a full sweep
    assert service.report(None) is first
    assert service.report(None) is first
    assert len(cloud['collected']) == 1
    assert cloud['audits'].call_count == 1
    assert first.provider(H1).problems


def test_another_worker_renders_from_the_shared_cache(cloud):
    first = service.report(None)
    service._audited.clear()          # a second process: nothing in memory
    second = service.report(None)
    assert len(cloud['collected']) == 1
    assert second is not first
    assert cloud['audits'].call_count == 2
    assert [p.provider.uuid for p in second.providers] == \
        [p.provider.uuid for p in first.providers]


def test_a_write_makes_the_next_page_refresh_with_the_consumers_written(
        cloud):
    service.report(None)
    service.forget_snapshot(None, {'c1'})
    service.forget_snapshot(None, {'c2'})
    service.report(None)
    snapshot, cached, touched = cloud['collected'][1]
    assert cached is cloud['collected'][0][0]          # incremental
    assert touched == {'c1', 'c2'}
    service.report(None)
    assert len(cloud['collected']) == 2
    assert cloud['audits'].call_count == 2


def test_a_write_elsewhere_reaches_this_worker(cloud):
    before = service.report(None)
    other = dict(service._audited)
    service._audited.clear()
    service.forget_snapshot(None, {'c1'})             # another process
    service.report(None)
    service._audited.update(other)                    # back to the first
    after = service.report(None)
    assert len(cloud['collected']) == 2
    assert after is not before


def test_refresh_is_a_full_sweep(cloud):
    service.report(None)
    service.report(None, full=True)
    assert [c[1] for c in cloud['collected']] == [None, None]


def test_an_old_snapshot_is_refreshed(cloud, settings):
    service.report(None)
    settings.ORPHAN_AUDIT_SNAPSHOT_TTL = 0
    service.report(None)
    assert len(cloud['collected']) == 2
    assert cloud['collected'][1][1] is cloud['collected'][0][0]


def test_a_new_minimum_age_re_audits_the_same_snapshot(cloud, settings):
    service.report(None)
    settings.ORPHAN_AUDIT_MIN_AGE = 0
    service.report(None)
    assert len(cloud['collected']) == 1
    assert cloud['audits'].call_count == 2
    assert cloud['audits'].call_args.kwargs == {'min_age': 0}


def test_a_lost_snapshot_means_a_full_sweep(cloud):
    service.report(None)
    cache.delete(KEY)
    service._audited.clear()
    service.report(None)
    assert [c[1] for c in cloud['collected']] == [None, None]
