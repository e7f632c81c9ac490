"""What the panel's views call: the engine wired to the Horizon user.

Views and tables only call these functions (tests mock them), and these
only wire :mod:`collect`, :mod:`audit` and :mod:`repair` together.
"""

import datetime
import typing
import uuid

from django.conf import settings
from django.core.cache import cache
from openstack_dashboard.api import base

from orphan_dashboard.api import client
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard import collect
from orphan_dashboard import journal
from orphan_dashboard import repair


DEFAULTS = {
    'MIN_AGE': classify.DEFAULT_MIN_AGE,
    'CONCURRENCY': collect.DEFAULT_CONCURRENCY,
    'SNAPSHOT_TTL': 300,
    'FULL_SWEEP': 1800,
}


def setting(name):
    """``ORPHAN_AUDIT_<name>`` from Django settings, or its default."""
    return getattr(settings, 'ORPHAN_AUDIT_' + name, DEFAULTS[name])


def _cache_key(request):
    return 'orphan_dashboard:snapshot:%s:%s' % (
        request.user.services_region, base.url_for(request, 'placement'))


def _age(snapshot):
    return (datetime.datetime.now(datetime.timezone.utc) -
            snapshot.taken_at).total_seconds()


class _Audited(typing.NamedTuple):
    version: str
    snapshot: object
    min_age: typing.Optional[int] = None
    report: object = None


_audited = {}
"""Per process and cache key: the last snapshot read from the cache and its
report.  Unpickling and auditing 10,000 servers takes about a second; a
page only pays for it when the shared snapshot's version changed."""


def _state(key):
    """The small shared entry every page reads: which snapshot is current
    (``version``), whether our own writes made it ``stale``, and the
    consumers they ``touched``."""
    return cache.get(key + ':state') or {
        'version': None, 'stale': True, 'touched': frozenset()}


def _cached(key, state):
    """The snapshot ``state`` names, from this process or the shared cache."""
    audited = _audited.get(key)
    if audited is not None and audited.version == state['version']:
        return audited
    cached = cache.get(key)
    if cached and cached['version'] == state['version']:
        return _Audited(state['version'], cached['snapshot'])
    return None


def _timeout():
    return 2 * setting('FULL_SWEEP')


def report(request, full=False):
    """The audit :class:`~audit.model.Report` of the whole cloud.

    Pages render from a snapshot in Django's cache (shared by all workers
    when that is memcached or redis) while it is younger than
    ``ORPHAN_AUDIT_SNAPSHOT_TTL`` and nothing was written through us since;
    then it is refreshed incrementally, with a full sweep every
    ``ORPHAN_AUDIT_FULL_SWEEP`` seconds or on ``full`` (the operator's
    *Refresh*, which must also see what others deleted).  The report's
    ``taken_at`` says how old it is: its verdicts are as of that moment, so
    it is kept with its snapshot.  Repairs never use it: they re-read what
    they touch.
    """
    key = _cache_key(request)
    state = _state(key)
    audited = _cached(key, state)
    snapshot = audited and audited.snapshot
    if (full or snapshot is None or state['stale'] or
            _age(snapshot) >= setting('SNAPSHOT_TTL')):
        clients = client.for_request(request)
        snapshot = collect.snapshot(
            clients.placement, clients.nova,
            cached=None if full else snapshot,
            full_sweep_interval=setting('FULL_SWEEP'),
            concurrency=setting('CONCURRENCY'), touched=state['touched'])
        audited = _Audited(uuid.uuid4().hex, snapshot)
        cache.set(key, {'version': audited.version, 'snapshot': snapshot},
                  _timeout())
        cache.set(key + ':state', {'version': audited.version,
                                   'stale': False, 'touched': frozenset()},
                  _timeout())
    min_age = setting('MIN_AGE')
    if audited.min_age != min_age:
        audited = audited._replace(min_age=min_age, report=classify.audit(
            snapshot, min_age=min_age))
    _audited[key] = audited
    return audited.report


def forget_snapshot(request, consumers=()):
    """Mark the cached snapshot stale after a write, naming the consumers we
    wrote so that the next page re-reads them: a PUT that drops a provider
    bumps no generation of it."""
    key = _cache_key(request)
    state = _state(key)
    cache.set(key + ':state', dict(
        state, stale=True, touched=state['touched'] | frozenset(consumers)),
        _timeout())


def preview(request, selections):
    """A fresh plan (or the reason there is none) for each selection."""
    clients = client.for_request(request)
    return repair.preview(clients.placement, clients.nova, selections,
                          min_age=setting('MIN_AGE'))


def apply(request, selections, fingerprints):
    """Re-verify, journal and write each selection; one outcome per row."""
    clients = client.for_request(request)
    try:
        return repair.apply(clients.placement, clients.nova,
                            journal.Journal.for_request(request), selections,
                            fingerprints, min_age=setting('MIN_AGE'))
    finally:
        forget_snapshot(request, {s.consumer for s in selections})


def history(request, provider=None, consumer=None):
    """Journal entries, newest first."""
    return journal.entries(provider=provider, consumer=consumer)


def journal_entries(request, entry_ids):
    """The entries with these ids; unknown ids raise ``DoesNotExist``."""
    return [journal.get(entry_id) for entry_id in entry_ids]


def preview_restore(request, entries):
    return repair.preview_restore(client.for_request(request).placement,
                                  entries)


def restore(request, entries, fingerprints):
    """Put each entry's consumer back as it was; journaled as well."""
    try:
        return repair.restore(client.for_request(request).placement,
                              journal.Journal.for_request(request), entries,
                              fingerprints)
    finally:
        forget_snapshot(request, {e.consumer for e in entries})


def inventories(request, provider_uuid):
    return placement.provider_inventories(
        client.for_request(request).placement, provider_uuid)


def delete_provider(request, provider_uuid):
    try:
        placement.delete_provider(client.for_request(request).placement,
                                  provider_uuid)
    finally:
        forget_snapshot(request)
