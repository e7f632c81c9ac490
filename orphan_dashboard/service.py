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
from orphan_dashboard import decommission
from orphan_dashboard import journal
from orphan_dashboard import repair


DEFAULTS = {
    'MIN_AGE': classify.DEFAULT_MIN_AGE,
    'CONCURRENCY': collect.DEFAULT_CONCURRENCY,
    'SNAPSHOT_TTL': 300,
    'FULL_SWEEP': 1800,
    'API_TIMEOUT': client.DEFAULT_TIMEOUT,
    'MAX_ROWS': 200,
    'PREVIEW_MAX_AGE': 600,
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
        clients = _clients(request)
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


def provider_names(request):
    """``{provider uuid: name}`` of every provider in the shown snapshot."""
    return report(request).names


def forget_snapshot(request, consumers=()):
    """Mark the cached snapshot stale after a write, naming the consumers we
    wrote so that the next page re-reads them: a PUT that drops a provider
    bumps no generation of it."""
    key = _cache_key(request)
    state = _state(key)
    cache.set(key + ':state', dict(
        state, stale=True, touched=state['touched'] | frozenset(consumers)),
        _timeout())


def _clients(request):
    return client.for_request(request, timeout=setting('API_TIMEOUT'))


def _journal(request):
    return journal.Journal.for_request(request,
                                       client.cloud_for_request(request))


def selections(request, chosen, provider_uuids):
    """The rows to repair: ``chosen`` as they are, plus the recommended
    repair of every consumer with a finding on ``provider_uuids``.

    Returns ``(selections, instance hints)``: the servers whose migrations
    the engine reads too, from the snapshot the operator was shown.
    Raises ``LookupError`` for a provider the report does not have.
    """
    report_ = report(request)
    problems = []
    for provider_uuid in provider_uuids:
        provider = report_.provider(provider_uuid)
        if provider is None:
            raise LookupError(provider_uuid)
        problems.extend(provider.problems)
    found = list(chosen) + repair.recommended_selections(problems)
    return found, repair.instance_hints(report_.findings, found)


def preview(request, selections_, instance_hints=()):
    """A fresh plan (or the reason there is none) for each selection."""
    clients = _clients(request)
    return repair.preview(clients.placement, clients.nova, selections_,
                          min_age=setting('MIN_AGE'),
                          instance_hints=instance_hints)


def apply(request, plans, instance_hints=()):
    """Re-verify, journal and write each confirmed plan; an outcome each."""
    clients = _clients(request)
    try:
        return repair.apply(clients.placement, clients.nova,
                            _journal(request), plans,
                            min_age=setting('MIN_AGE'),
                            instance_hints=instance_hints)
    finally:
        forget_snapshot(request, {p.consumer for p in plans})


def history(request, provider=None, consumer=None, batch=None, marker=None,
            prev_marker=None, limit=None):
    """This cloud's journal entries, newest first, a page at a time:
    ``(entries, has_prev, has_more, {subject: restorable entry ids})``."""
    cloud = client.cloud_for_request(request)
    found, has_prev, has_more = journal.entries(
        cloud, provider=provider, consumer=consumer, batch=batch,
        marker=marker, prev_marker=prev_marker, limit=limit)
    return found, has_prev, has_more, journal.restorable(
        cloud, {e.subject for e in found})


def history_export(request, provider=None, consumer=None, batch=None):
    """Every matching entry of this cloud, read as it is written out."""
    return journal.all_entries(client.cloud_for_request(request),
                               provider=provider, consumer=consumer,
                               batch=batch)


def batch_entries(request, batch):
    """This cloud's entries of one confirm or decommission."""
    return list(journal.all_entries(client.cloud_for_request(request),
                                    batch=batch))


def journal_entries(request, entry_ids):
    """This cloud's entries with these ids; others raise ``DoesNotExist``."""
    cloud = client.cloud_for_request(request)
    return [journal.get(cloud, entry_id) for entry_id in entry_ids]


def _restorable(request, entries):
    return journal.restorable(client.cloud_for_request(request),
                              {e.subject for e in entries})


def preview_restore(request, entries):
    """``[(entry, row)]``: a fresh restore plan per entry, with what Nova
    says of its consumer now."""
    clients = _clients(request)
    rows = repair.preview_restore(clients.placement, entries,
                                  _restorable(request, entries))
    notes = repair.restore_notes(clients.placement, clients.nova, entries,
                                 min_age=setting('MIN_AGE'))
    for entry, row in rows:
        row.notes = notes.get(entry.id, ())
    return rows


def restore(request, entries, confirmed):
    """Put each entry's subject back as it was; journaled as well."""
    try:
        return repair.restore(_clients(request).placement, _journal(request),
                              entries, confirmed,
                              _restorable(request, entries))
    finally:
        forget_snapshot(request, {e.consumer for e in entries})


def inventories(request, provider_uuid):
    return placement.provider_inventories(_clients(request).placement,
                                          provider_uuid)


def preview_provider_delete(request, roots):
    clients = _clients(request)
    return repair.preview_provider_delete(clients.placement, clients.nova,
                                          roots)


def delete_providers(request, plans):
    clients = _clients(request)
    try:
        return repair.delete_providers(clients.placement, clients.nova,
                                       _journal(request), plans)
    finally:
        forget_snapshot(request)


def preview_decommission(request, provider_uuid):
    """What decommissioning the hypervisor of ``provider_uuid`` takes, read
    now; the instance hints come from the snapshot shown."""
    clients = _clients(request)
    return decommission.preview(
        clients.placement, clients.nova, provider_uuid,
        min_age=setting('MIN_AGE'),
        instance_hints=_hints_for_tree(request, provider_uuid))


def decommission_apply(request, provider_uuid, plans, chosen):
    """Carry a previewed decommission out; an outcome per step."""
    clients = _clients(request)
    try:
        return decommission.apply(
            clients.placement, clients.nova, _journal(request), provider_uuid,
            plans, chosen, min_age=setting('MIN_AGE'),
            instance_hints=_hints_for_tree(request, provider_uuid))
    finally:
        forget_snapshot(request, {p.consumer for p in plans})


def _hints_for_tree(request, provider_uuid):
    provider = report(request).provider(provider_uuid)
    findings = provider.findings if provider else []
    return repair.instance_hints(findings, findings)
