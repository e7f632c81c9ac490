"""What the panel's views call: the engine wired to the Horizon user.

Views and tables only call these functions (tests mock them), and these
only wire :mod:`collect`, :mod:`audit` and :mod:`repair` together.
"""

from django.conf import settings

from orphan_dashboard.api import client
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard import collect
from orphan_dashboard import journal
from orphan_dashboard import repair


def min_age():
    return getattr(settings, 'ORPHAN_AUDIT_MIN_AGE',
                   classify.DEFAULT_MIN_AGE)


def concurrency():
    return getattr(settings, 'ORPHAN_AUDIT_CONCURRENCY',
                   collect.DEFAULT_CONCURRENCY)


def report(request):
    """The audit :class:`~audit.model.Report` of the whole cloud."""
    clients = client.for_request(request)
    snapshot = collect.full_snapshot(clients.placement, clients.nova,
                                     concurrency=concurrency())
    return classify.audit(snapshot, min_age=min_age())


def preview(request, selections):
    """A fresh plan (or the reason there is none) for each selection."""
    clients = client.for_request(request)
    return repair.preview(clients.placement, clients.nova, selections,
                          min_age=min_age())


def apply(request, selections, fingerprints):
    """Re-verify, journal and write each selection; one outcome per row."""
    clients = client.for_request(request)
    return repair.apply(clients.placement, clients.nova,
                        journal.Journal.for_request(request), selections,
                        fingerprints, min_age=min_age())


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
    return repair.restore(client.for_request(request).placement,
                          journal.Journal.for_request(request), entries,
                          fingerprints)


def inventories(request, provider_uuid):
    return placement.provider_inventories(
        client.for_request(request).placement, provider_uuid)


def delete_provider(request, provider_uuid):
    placement.delete_provider(client.for_request(request).placement,
                              provider_uuid)
