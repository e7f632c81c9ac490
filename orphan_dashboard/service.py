"""What the panel's views call: the engine wired to the Horizon user.

Views and tables only call these functions (tests mock them), and these
only wire :mod:`collect`, :mod:`audit` and :mod:`repair` together.
"""

from django.conf import settings
from django.core.cache import cache
from openstack_dashboard.api import base

from orphan_dashboard.api import client
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard import collect
from orphan_dashboard import journal
from orphan_dashboard import repair


def min_age():
    return getattr(settings, 'ORPHAN_AUDIT_MIN_AGE',
                   classify.DEFAULT_MIN_AGE)


def snapshot_ttl():
    return getattr(settings, 'ORPHAN_AUDIT_SNAPSHOT_TTL', 300)


def concurrency():
    return getattr(settings, 'ORPHAN_AUDIT_CONCURRENCY',
                   collect.DEFAULT_CONCURRENCY)


def _cache_key(request):
    return 'orphan_dashboard:snapshot:%s:%s' % (
        request.user.services_region, base.url_for(request, 'placement'))


def report(request, refresh=False):
    """The audit :class:`~audit.model.Report` of the whole cloud.

    Pages render from a snapshot cached for ``ORPHAN_AUDIT_SNAPSHOT_TTL``
    seconds in Django's cache (shared by all workers when that is memcached
    or redis); the report's ``taken_at`` says how old it is.  Repairs never
    use it: they re-read what they touch.
    """
    key = _cache_key(request)
    snapshot = None if refresh else cache.get(key)
    if snapshot is None:
        clients = client.for_request(request)
        snapshot = collect.full_snapshot(clients.placement, clients.nova,
                                         concurrency=concurrency())
        cache.set(key, snapshot, snapshot_ttl())
    return classify.audit(snapshot, min_age=min_age())


def forget_snapshot(request):
    """Drop the cached snapshot, e.g. after a repair changed Placement."""
    cache.delete(_cache_key(request))


def preview(request, selections):
    """A fresh plan (or the reason there is none) for each selection."""
    clients = client.for_request(request)
    return repair.preview(clients.placement, clients.nova, selections,
                          min_age=min_age())


def apply(request, selections, fingerprints):
    """Re-verify, journal and write each selection; one outcome per row."""
    clients = client.for_request(request)
    try:
        return repair.apply(clients.placement, clients.nova,
                            journal.Journal.for_request(request), selections,
                            fingerprints, min_age=min_age())
    finally:
        forget_snapshot(request)


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
        forget_snapshot(request)


def inventories(request, provider_uuid):
    return placement.provider_inventories(
        client.for_request(request).placement, provider_uuid)


def delete_provider(request, provider_uuid):
    try:
        placement.delete_provider(client.for_request(request).placement,
                                  provider_uuid)
    finally:
        forget_snapshot(request)
