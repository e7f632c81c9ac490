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

"""What the panel's views call: the engine wired to the Horizon user.

Views and tables only call these functions (tests mock them), and these
only wire :mod:`collect`, :mod:`audit` and :mod:`repair` together.
"""

import datetime
import logging
import time
import typing

from orphan_dashboard.api import client
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan
from orphan_dashboard.audit import reasons
from orphan_dashboard import conf
from orphan_dashboard.reading import collect
from orphan_dashboard.reading import snapshots
from orphan_dashboard.writing import journal
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import teardown


LOG = logging.getLogger(__name__)


def _store(request):
    return snapshots.Store(client.cloud_for_request(request).key,
                           timeout=2 * conf.FULL_SWEEP.get())


class _Shown(typing.NamedTuple):
    version: str
    min_age: int
    report: object
    """The report's summary, as the index shows it."""
    audited: object = None
    """The whole report, when this process audited the snapshot again."""


_shown = {}
"""Per process and cloud: the report of the version last shown.  A page
reads only the small state entry while the version does not change."""


def _age(taken_at):
    return (datetime.datetime.now(datetime.timezone.utc) -
            taken_at).total_seconds()


def _sweep(request, store, full=False):
    """Start a background sweep unless one runs (in any process)."""
    return snapshots.start(
        store, client.credentials_for_request(request),
        api_timeout=conf.API_TIMEOUT.get(), python=conf.SWEEP_PYTHON.get(),
        full=full, min_age=conf.MIN_AGE.get(),
        full_sweep_interval=conf.FULL_SWEEP.get(),
        concurrency=conf.CONCURRENCY.get())


def _current(request):
    """``(store, _Shown)`` of the last snapshot (``_Shown`` is None before
    the first sweep of this cloud has finished).

    Pages never sweep: they render the report published with the last
    snapshot in Django's cache (shared by all workers when that is
    memcached or redis) and start a background sweep when it is older than
    ``ORPHAN_AUDIT_SNAPSHOT_TTL``, when one was asked for, or when there is
    none (see :mod:`orphan_dashboard.reading.snapshots`).  Repairs never use
    it: they re-read what they touch.
    """
    store = _store(request)
    state = store.state()
    if state['version'] is None or state['wanted'] or \
            _age(state['taken_at']) >= conf.SNAPSHOT_TTL.get():
        _sweep(request, store, full=state['wanted'] == 'full')
    if state['version'] is None:
        return store, None
    min_age = conf.MIN_AGE.get()
    shown = _shown.get(store.base)
    if shown is None or (shown.version, shown.min_age) != (
            state['version'], min_age):
        if state['min_age'] != min_age:
            snapshot = store.load_snapshot(state['version'])
            audited = snapshot and classify.audit(snapshot, min_age=min_age)
            shown = audited and _Shown(state['version'], min_age,
                                       audited.summary(), audited)
        else:
            summary = store.load_report(state['version'])
            shown = summary and _Shown(state['version'], min_age, summary)
        if shown is None:       # evicted from the cache: sweep again
            _sweep(request, store, full=True)
            return store, None
        _shown[store.base] = shown
    return store, shown


def report(request):
    """The audit :class:`~audit.model.Report` of the whole cloud as its
    :meth:`~audit.model.Report.summary` (no ``ok`` findings), or None
    before the first sweep of this cloud has finished.  Its ``taken_at``
    says how old it is."""
    shown = _current(request)[1]
    return shown and shown.report


def provider_report(request, provider_uuid):
    """One provider tree of the same report, with every finding (``ok``
    included), or None where the report has no such provider."""
    store, shown = _current(request)
    if shown is None or shown.report.provider(provider_uuid) is None:
        return None
    if shown.audited is not None:
        return shown.audited.provider(provider_uuid)
    tree = store.load_tree(shown.version, provider_uuid)
    if tree is None:            # evicted from the cache: sweep again
        _sweep(request, store, full=True)
    return tree


def refresh(request):
    """The operator's *Refresh*: a full sweep, in the background."""
    store = _store(request)
    store.want(full=True)
    _sweep(request, store, full=True)


def sweep_state(request):
    """What the page's progress bar shows: the snapshot's version and age,
    and the running sweep's progress, if one runs."""
    store = _store(request)
    state = store.state()
    sweeping = store.sweeper() is not None
    progress = (store.progress() if sweeping else None) or {
        'full': None, 'started': time.time(), 'done': {}, 'totals': {}}
    return {
        'version': state['version'],
        'age': int(_age(state['taken_at'])) if state['taken_at'] else None,
        'sweeping': sweeping,
        'progress': sweeping and {
            'full': progress['full'],
            'elapsed': int(time.time() - progress['started']),
            'read': {kind: [progress['done'].get(kind, 0),
                            progress['totals'].get(kind)]
                     for kind in collect.KINDS}} or None,
    }


_names = {}
"""Per process and cloud: Keystone's names as the last sweep read them."""


def names(request):
    """``{'projects': {id: name}, 'users': {id: name}}`` as the last sweep
    read them from Keystone: a page never waits for Keystone."""
    store = _store(request)
    version = store.state().get('names')
    cached = _names.get(store.base)
    if cached is None or cached[0] != version:
        cached = _names[store.base] = (version, store.names())
    return cached[1]


FINDING_FIELDS = (
    'provider_name', 'provider', 'consumer', 'verdict', 'reason',
    'reason_code', 'action', 'actions', 'blocked', 'resources', 'nova',
    'host', 'instance', 'project_id', 'project_name', 'user_id', 'user_name')


def findings_export(request, provider_uuid=None):
    """The findings as the panel lists them, as dicts of
    :data:`FINDING_FIELDS`: every problem of the cloud, or every row of one
    provider tree.  None before the first audit; ``LookupError`` for a
    provider it does not have."""
    shown = report(request)
    if shown is None:
        return None
    if provider_uuid:
        provider = provider_report(request, provider_uuid.lower())
        if provider is None:
            raise LookupError(provider_uuid)
        findings = provider.findings
    else:
        findings = [f for f in shown.findings if f.verdict != m.OK]
    owners = names(request)
    return [dict(f.as_dict(), provider_name=shown.names.get(f.provider),
                 project_name=owners['projects'].get(f.project_id),
                 user_name=owners['users'].get(f.user_id))
            for f in findings]


def provider_names(request):
    """``{provider uuid: name}`` of every provider in the shown snapshot."""
    shown = report(request)
    return shown.names if shown is not None else {}


def note_written(request, consumers=(), providers_changed=False):
    """After our own writes: the shown snapshot re-reads the consumers at
    once (a refresh is asked for when providers changed).  Best effort:
    a failure leaves them touched for the next sweep."""
    store = _store(request)
    if providers_changed:
        store.want()
    consumers = {c for c in consumers if c}
    if not consumers:
        return
    try:
        snapshots.patch(store, _clients(request), consumers,
                        conf.MIN_AGE.get(), conf.CONCURRENCY.get())
    except Exception:
        LOG.exception('re-reading written consumers failed')
        store.touch(consumers)


def _clients(request):
    return client.for_request(request, timeout=conf.API_TIMEOUT.get())


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
        provider = report_ and report_.provider(provider_uuid)
        if provider is None:
            raise LookupError(provider_uuid)
        problems.extend(provider.problems)
    found = list(chosen) + repair.recommended_selections(problems)
    return found, repair.instance_hints(
        report_.findings if report_ else [], found)


def preview(request, selections_, instance_hints=()):
    """A fresh plan (or the reason there is none) for each selection."""
    clients = _clients(request)
    return repair.preview(clients.placement, clients.nova, selections_,
                          min_age=conf.MIN_AGE.get(),
                          instance_hints=instance_hints)


def apply(request, plans, instance_hints=()):
    """Re-verify, journal and write each confirmed plan; an outcome each."""
    clients = _clients(request)
    try:
        return repair.apply(clients.placement, clients.nova,
                            _journal(request), plans,
                            min_age=conf.MIN_AGE.get(),
                            instance_hints=instance_hints)
    finally:
        note_written(request, {p.consumer for p in plans})


def _named(request, provider):
    """The providers whose names hold ``provider``, as History names them
    (the last audit's names): the filter finds what the tab shows."""
    if not provider:
        return ()
    try:
        names = provider_names(request)
    except Exception:
        LOG.exception('provider names unavailable to the History filter')
        return ()
    text = provider.lower()
    return sorted(uuid for uuid, name in names.items()
                  if name and text in name.lower())


def history(request, provider=None, consumer=None, batch=None, marker=None,
            prev_marker=None, limit=None):
    """This cloud's journal entries, newest first, a page at a time:
    ``(entries, has_prev, has_more, {subject: restorable entry ids})``."""
    cloud = client.cloud_for_request(request)
    found, has_prev, has_more = journal.entries(
        cloud, provider=provider, consumer=consumer, batch=batch,
        marker=marker, prev_marker=prev_marker, limit=limit,
        named=_named(request, provider))
    return found, has_prev, has_more, journal.restorable(
        cloud, {e.subject for e in found})


def history_export(request, provider=None, consumer=None, batch=None):
    """Every entry History shows with the same filter, read as it is
    written out."""
    return journal.all_entries(client.cloud_for_request(request),
                               provider=provider, consumer=consumer,
                               batch=batch, named=_named(request, provider))


def batch_entries(request, batch):
    """This cloud's entries of exactly one confirm or decommission."""
    return journal.batch_entries(client.cloud_for_request(request), batch)


def journal_entries(request, entry_ids):
    """This cloud's entries with these ids; others raise ``DoesNotExist``."""
    cloud = client.cloud_for_request(request)
    return [journal.get(cloud, entry_id) for entry_id in entry_ids]


def batch_of(request, outcomes):
    """The journal batch these outcomes were written in, or None when
    nothing was journaled."""
    for outcome in outcomes:
        if outcome.entry_id is not None:
            return journal_entries(request, [outcome.entry_id])[0].batch
    return None


def _restorable(request, entries):
    return journal.restorable(client.cloud_for_request(request),
                              {e.subject for e in entries})


def preview_restore(request, entries):
    """``[(entry, row)]``: a fresh restore plan per entry, with what Nova
    says of its consumer now."""
    clients = _clients(request)
    rows = repair.preview_restore(clients.placement, entries,
                                  _restorable(request, entries))
    notes = repair.restore_notes(clients.placement, clients.nova, entries)
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
        note_written(request, {e.consumer for e in entries},
                     providers_changed=any(e.kind != e.ALLOCATIONS
                                           for e in entries))


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
        note_written(request, providers_changed=True)


def preview_decommission(request, provider_uuid, whole_service=False):
    """What decommissioning the hypervisor of ``provider_uuid`` (with
    ``whole_service``, every node of its compute service) takes, read now;
    the instance hints come from the snapshot shown."""
    clients = _clients(request)
    return teardown.preview(
        clients.placement, clients.nova, provider_uuid,
        min_age=conf.MIN_AGE.get(),
        instance_hints=_hints_for_tree(request, provider_uuid),
        whole_service=whole_service)


def decommission_apply(request, provider_uuid, plans, chosen, bound=None):
    """Carry a previewed decommission out, if its compute service and
    providers are still those ``bound`` says it showed; an outcome per
    step."""
    clients = _clients(request)
    try:
        return teardown.apply(
            clients.placement, clients.nova, _journal(request), provider_uuid,
            plans, chosen, min_age=conf.MIN_AGE.get(),
            instance_hints=_hints_for_tree(request, provider_uuid),
            bound=bound)
    finally:
        note_written(request, {p.consumer for p in plans},
                     providers_changed=True)


def _hints_for_tree(request, provider_uuid):
    provider = provider_report(request, provider_uuid)
    findings = provider.findings if provider else []
    return repair.instance_hints(findings, findings)


# -- the engine's names and formats, for the panel ---------------------------
# The panel's views, tables, tabs and forms import this module and labels,
# never the layers below: what they need of the engine passes through here.

Selection = repair.Selection
ProviderPlan = repair.ProviderPlan
Plan = m.Plan
DONE = repair.DONE
SKIPPED = repair.SKIPPED
FAILED = repair.FAILED
REPAIRS = m.ACTIONS
"""The repairs of one consumer, in the order the tables offer them."""
VERDICTS = m.VERDICTS
OK = m.OK
format_resources = reasons.format_resources
format_allocations = reasons.format_allocations
down_cells = reasons.down_cells
osc_commands = plan.osc_commands
