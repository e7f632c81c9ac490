"""What the panel's views call: the engine wired to the Horizon user.

Views and tables only call these functions (tests mock them), and these
only wire :mod:`collect`, :mod:`audit` and :mod:`repair` together.
"""

import datetime

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


def report(request, full=False):
    """The audit :class:`~audit.model.Report` of the whole cloud.

    Pages render from a snapshot in Django's cache (shared by all workers
    when that is memcached or redis) while it is younger than
    ``ORPHAN_AUDIT_SNAPSHOT_TTL`` and nothing was written through us since;
    then it is refreshed incrementally, with a full sweep every
    ``ORPHAN_AUDIT_FULL_SWEEP`` seconds or on ``full`` (the operator's
    *Refresh*, which must also see what others deleted).  The report's
    ``taken_at`` says how old it is.  Repairs never use it: they re-read
    what they touch.
    """
    key = _cache_key(request)
    cached = cache.get(key)
    snapshot = cached and cached['snapshot']
    touched = cached['touched'] if cached else frozenset()
    if (full or snapshot is None or cached['stale'] or
            _age(snapshot) >= setting('SNAPSHOT_TTL')):
        clients = client.for_request(request)
        snapshot = collect.snapshot(
            clients.placement, clients.nova,
            cached=None if full else snapshot,
            full_sweep_interval=setting('FULL_SWEEP'),
            concurrency=setting('CONCURRENCY'), touched=touched)
        cache.set(key, {'snapshot': snapshot, 'stale': False,
                        'touched': frozenset()},
                  2 * setting('FULL_SWEEP'))
    return classify.audit(snapshot, min_age=setting('MIN_AGE'))


def forget_snapshot(request, consumers=()):
    """Mark the cached snapshot stale after a write, naming the consumers we
    wrote so that the next page re-reads them: a PUT that drops a provider
    bumps no generation of it."""
    key = _cache_key(request)
    cached = cache.get(key)
    if cached:
        cache.set(key, dict(cached, stale=True, touched=cached['touched'] |
                            frozenset(consumers)),
                  2 * setting('FULL_SWEEP'))


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
