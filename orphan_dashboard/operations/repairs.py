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

"""Repairs (use case): the rows to repair, a fresh preview of each, and
applying what was previewed, never on data older than the click.

Both steps re-read the chosen consumers from Nova and Placement
(:func:`refresh.consumer_snapshot`) and plan through the one engine call,
:meth:`classify.Auditor.plan`; the command line, whose own sweep was read
after its start, previews from that sweep and re-reads only the consumers
it writes, their servers and migrations.  At submit time a row is
written only if the fresh plan is exactly the one the operator confirmed
(generation, the whole body before, and the body after: generations
restart at 1 when a consumer is emptied and recreated), and the write
itself is generation-checked.
Every write is journaled before it is sent (:func:`write.allocations`)
and every row gets an outcome, whatever happens to the rows around it.

Providers left behind are deleted the same way: each tree judged again as
the audit judges it, on a fresh read (a sharing provider, another
service's, a node Nova did not say is gone, a host not mapped to a cell
yet is refused whatever asked for it), each provider journaled whole
first, children before their parents.
"""

import logging
import typing

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import cyborg
from orphan_dashboard.api import placement
from orphan_dashboard.audit import accelerators
from orphan_dashboard.audit import capacity
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import limits
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import plan as planning
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.audit import topology
from orphan_dashboard.reading import collect
from orphan_dashboard.reading import refresh
from orphan_dashboard.writing import equivalents
from orphan_dashboard.writing import providers
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write

LOG = logging.getLogger(__name__)

ProviderPlan = repair.ProviderPlan
Outcome = write.Outcome
DONE = write.DONE
SKIPPED = write.SKIPPED
FAILED = write.FAILED
UNKNOWN = write.UNKNOWN
"""What a front end names of a repair: the row chosen, a provider's plan,
an outcome and its status."""
commands = equivalents.for_plan
"""The ``openstack`` commands that do what a plan does, shown with it."""


def selections(summary, chosen, provider_uuids):
    """The rows to repair: ``chosen`` as they are, plus the recommended
    repair of every consumer with a finding on ``provider_uuids`` in the
    ``summary`` the operator was shown (None before the first audit), each
    once (a row ticked and its hypervisor too).

    Returns ``(selections, instance hints)``: the servers whose migrations
    the engine reads too.  Raises ``LookupError`` for a provider the
    report does not have.
    """
    problems = [f for tree in _trees(summary, provider_uuids)
                for f in tree.problems]
    found = list(dict.fromkeys(
        list(chosen) + planning.recommended_selections(problems)))
    return found, planning.instance_hints(
        summary.findings if summary else [], found)


def unknown_selections(summary, provider_uuids=()):
    """The delete of every unknown consumer the ``summary`` the operator
    was shown offers one for, on ``provider_uuids``' trees (every tree
    when none): what the panel's *Delete unknown consumers* previews.
    Raises ``LookupError`` for a provider the report does not have."""
    if summary is None:
        return []
    if not provider_uuids:
        return planning.unknown_deletes(summary.findings)
    return planning.unknown_deletes([f for tree in _trees(
        summary, provider_uuids) for f in tree.findings])


def _trees(summary, provider_uuids):
    """The provider trees ``provider_uuids`` name in ``summary`` (None
    before the first audit); ``LookupError`` for one it does not have."""
    trees = []
    for provider_uuid in provider_uuids:
        tree = summary and summary.provider(provider_uuid)
        if tree is None:
            raise LookupError(provider_uuid)
        trees.append(tree)
    return trees


def recommended(report, only=None, unknown=False):
    """Every recommended repair of ``report``, with its instance hints;
    of the verdicts ``only`` alone where given
    (:func:`~.audit.limits.eligible`); with ``unknown``, the delete of
    every unknown consumer too (:func:`~.audit.plan.unknown_deletes`)."""
    problems = limits.eligible(report.problems, only)
    found = planning.recommended_selections(problems)
    if unknown:
        taken = {s.consumer for s in found}
        found += [s for s in planning.unknown_deletes(problems)
                  if s.consumer not in taken]
    return found, planning.instance_hints(report.findings, found)


def bounded(report, bounds, unknown=False):
    """A run of every recommended repair of ``report`` within ``bounds``
    (a :class:`~.audit.limits.Limits`): its selections of the verdicts
    ``bounds.only`` (and every unknown consumer's delete, with
    ``unknown``), their instance hints, and the
    :class:`~.audit.limits.Decision` whether it may write them."""
    found, hints = recommended(report, bounds.only, unknown)
    return found, hints, limits.decide(bounds, found, report.findings,
                                       report.consumers)


class Held(Exception):
    """A confirmed batch past the run's limits: nothing was written."""

    def __init__(self, decision):
        self.decision = decision
        self.reason = limits.refusal(decision)
        super().__init__(str(self.reason))


def check_limits(bounds, plans, findings, consumers=None):
    """Raise :class:`Held` where writing ``plans`` (a batch an operator
    confirmed, a decommission's repairs) goes past ``bounds``:
    :func:`~.audit.limits.decide` with ``findings`` and ``consumers``."""
    decision = limits.decide(bounds, plans, findings, consumers)
    if decision.held:
        raise Held(decision)


def preview(clients, selections_, settings, instance_hints=(), swept=None):
    """A fresh plan (or the reason there is none) for each selection, a
    consumer's repair once (:func:`once`), with a note where Placement may
    refuse the write for a provider's capacity (:func:`capacity_notes`)
    and where Cyborg keeps the server's ARQs bound
    (:func:`note_accelerators`).

    ``instance_hints``: servers whose migrations to read as well, from the
    snapshot the operator was shown (never from the request).  ``swept``:
    the whole cloud's snapshot read after the click (the command line's
    own sweep): the rows are planned from it, with nothing read again.
    """
    snapshot = swept or _fresh(clients, selections_, instance_hints)
    rows = once(_plan_rows(snapshot, selections_, settings))
    note_capacity(clients, rows, settings, snapshot.providers)
    note_accelerators(clients, rows, settings)
    return rows


def note_accelerators(clients, items, settings):
    """Each of ``items`` whose write leaves its server's consumer holding
    nothing (:func:`~.audit.accelerators.asked`) noted with the ARQs Cyborg
    still keeps bound to that server, read now, or with Cyborg unread;
    nothing is read where the catalog has no Cyborg."""
    asked = [item for item in items if accelerators.asked(item.plan)]
    if not asked or clients.accelerator is None:
        return

    def read(consumer):
        try:
            return cyborg.instance_requests(clients.accelerator, consumer)
        except (ks_exc.EndpointNotFound, ks_exc.EmptyCatalog):
            return ()
        except (ks_exc.ClientException, KeyError, TypeError,
                ValueError) as exc:
            LOG.warning('accelerator requests of %s not read: %s',
                        consumer, exc)
            return None
    found = collect.concurrently(
        read, sorted({item.plan.consumer for item in asked}),
        settings.concurrency)
    for item in asked:
        consumer = item.plan.consumer
        arqs = found[consumer]
        item.notes += accelerators.notes(arqs, cyborg.requests_url(
            clients.accelerator, consumer) if arqs else None)


def note_capacity(clients, items, settings, providers):
    """Each of ``items`` with a ``plan`` (a preview's rows, a
    decommission's steps) noted, after its own notes, with what its
    write leaves over capacity where Placement may refuse it
    (:func:`capacity_notes`)."""
    planned = [item for item in items if item.plan]
    notes = capacity_notes(clients, [item.plan for item in planned],
                           settings, providers)
    for item in planned:
        item.notes += notes.get(item.plan.consumer, ())


def capacity_notes(clients, plans, settings, providers):
    """``{consumer: notes}``: what each plan's write leaves over capacity
    where Placement may refuse it (:func:`~.audit.capacity.excess_notes`),
    from the inventories and usages of the providers it writes onto, read
    now; Placement's newest microversion is asked only if one does and
    the release setting does not say.  ``providers``: the snapshot's, for
    their names."""
    onto = {p for plan in plans for _before, after in plan.sides
            for p in after}
    inventories, usages = collect.read_capacity(
        clients.placement, onto, settings.concurrency)
    found = {plan.consumer: capacity.excesses(plan, inventories, usages)
             for plan in plans}
    refuses = capacity.release_refuses_excess(settings.placement_release)
    if refuses is None and any(found.values()):
        try:
            newest = placement.max_microversion(clients.placement)
        except ks_exc.ClientException:
            newest = None
        refuses = capacity.release_refuses_excess(None, newest)
    names = {uuid: p.name for uuid, p in providers.items()}
    return {consumer: capacity.excess_notes(each, refuses, names)
            for consumer, each in found.items() if each}


def _fresh(clients, selections_, instance_hints, swept=None):
    """The chosen consumers read now; the topology ``swept`` read (a
    snapshot read after the click), if given, is not read again."""
    return refresh.consumer_snapshot(
        clients, [s.consumer for s in selections_], instance_hints,
        topology=swept and collect.topology_of(swept))


def _plan_rows(snapshot, selections_, settings):
    auditor = classify.Auditor(snapshot, min_age=settings.min_age,
                               stuck_after=settings.stuck_after)
    rows = []
    for selection in selections_:
        row = repair.Row(selection, finding=auditor.finding(
            selection.consumer, selection.provider))
        try:
            row.plan = auditor.plan(selection.consumer, selection.provider,
                                    selection.action)
        except planning.CannotRepair as exc:
            row.error = exc.reason
        rows.append(row)
    return rows


def once(rows):
    """One row per consumer and repair, where the first of them stood:
    every repair writes the whole consumer, so a consumer chosen on two of
    its providers (a server's leftover on a host and its port's bandwidth
    on that host's NIC) is one write, previewed and confirmed once.  The
    row kept is the first with a plan, else the first."""
    kept = {}
    for row in rows:
        consumers = getattr(row.plan, 'consumers', (row.selection.consumer,))
        key = (frozenset(consumers), row.selection.action)
        if key not in kept or (row.plan and not kept[key].plan):
            kept[key] = row     # (a key replaced keeps its place)
    return list(kept.values())


def _differs(fresh, confirmed, names):
    """Why a fresh plan is not the confirmed one, or None; providers by
    their ``names`` (``{uuid: name}``) where known."""
    if (fresh.before, fresh.generation) != (confirmed.before,
                                            confirmed.generation):
        return why('changed.allocations',
                   now=reasons.format_allocations(fresh.before, names))
    if (fresh.after, fresh.project_id, fresh.user_id) != (
            confirmed.after, confirmed.project_id, confirmed.user_id):
        return why('changed.after',
                   after=reasons.format_allocations(fresh.after, names))
    for port in sorted(set(fresh.ports) | set(confirmed.ports)):
        if fresh.ports.get(port) != confirmed.ports.get(port):
            return why('changed.binding', port=port)
    if fresh.partner != confirmed.partner:
        now = (fresh.partner or {}).get('before', {})
        return why('changed.partner', consumer=(
            confirmed.partner or fresh.partner)['consumer'],
            now=reasons.format_allocations(now, names))
    return None


def apply(clients, journal, plans, settings, instance_hints=(),
          swept=None):
    """Re-read, re-plan and write each confirmed plan; an outcome per row.

    A row is written only if its fresh plan is the confirmed one.  If the
    journal fails, nothing more is written (an unjournaled write could not
    be undone), and the rows not attempted say so.  The writes that only
    free resources go first (:func:`~.audit.plan.frees_first`).  Where
    ``swept`` (read after the click) gives the topology, only the
    consumers, their servers and migrations are read again.
    """
    plans = planning.frees_first(plans)
    selections_ = [p.selection for p in plans]
    snapshot = _fresh(clients, selections_, instance_hints, swept)
    rows = _plan_rows(snapshot, selections_, settings)
    names = {uuid: p.name for uuid, p in snapshot.providers.items()}
    outcomes = []
    written = set()
    halted = None
    for row, plan in zip(rows, plans):
        selection = row.selection
        if halted:
            outcomes.append(write.Outcome(selection, write.SKIPPED, halted,
                                          plan))
        elif written.intersection(plan.consumers):
            outcomes.append(write.Outcome(selection, write.SKIPPED,
                                          why('write.repaired_by_other')))
        elif row.error:
            outcomes.append(write.Outcome(selection, write.SKIPPED,
                                          row.error))
        elif changed := _differs(row.plan, plan, names):
            outcomes.append(write.Outcome(selection, write.SKIPPED, changed,
                                          row.plan))
        else:
            outcome = write.allocations(clients.placement, journal,
                                        row.plan, selection,
                                        network_client=clients.network)
            outcomes.append(outcome)
            if outcome.status == write.DONE:
                written.update(row.plan.consumers)
            if outcome.status == write.FAILED and outcome.entry_id is None:
                halted = why('write.halted_journal')
    return outcomes


def apply_previewed(clients, journal, rows, settings, instance_hints=(),
                    swept=None):
    """Apply every plan of the previewed ``rows``; the rows with none are
    skipped, with the reason their preview gave."""
    outcomes = apply(clients, journal, [r.plan for r in rows if r.plan],
                     settings, instance_hints, swept)
    return outcomes + [write.Outcome(r.selection, write.SKIPPED, r.error)
                       for r in rows if r.plan is None]


class Run(typing.NamedTuple):
    """What a run of repairs did: the rows previewed, the outcomes of
    their writes (none on a dry run), and, for the recommended repairs,
    the limits' :class:`~.audit.limits.Decision`."""
    rows: list
    outcomes: list
    decision: object = None


def run(clients, swept, selections_, instance_hints, settings, journal=None,
        before_write=None):
    """The command line's apply sequence: ``selections_`` previewed from
    ``swept`` (the :class:`~.operations.report.Swept` read after the
    command started) and, unless ``journal`` is None (a dry run), written
    as previewed.

    ``journal`` is called for the :class:`~.writing.journal.Journal` only
    once there are rows to write (it needs Django); ``before_write`` is
    handed the rows first (``openstack placement orphan`` prints them).
    """
    if not selections_:
        return Run([], [])
    rows = preview(clients, selections_, settings, instance_hints,
                   swept=swept.snapshot)
    outcomes = []
    if rows and journal is not None:
        if before_write is not None:
            before_write(rows)
        outcomes = apply_previewed(clients, journal(), rows, settings,
                                   instance_hints, swept=swept.snapshot)
    return Run(rows, outcomes)


def run_recommended(clients, swept, settings, bounds, journal=None,
                    unknown=False, before_write=None):
    """Every recommended repair of ``swept``'s report within ``bounds``
    (:func:`bounded`), through :func:`run`: ``orphan-audit apply`` and
    ``openstack placement orphan repair --all``.  A run the limits hold
    previews and writes nothing."""
    selections_, hints, decision = bounded(swept.report, bounds, unknown)
    if decision.held:
        return Run([], [], decision)
    return run(clients, swept, selections_, hints, settings, journal,
               before_write)._replace(decision=decision)


def preview_provider_delete(clients, roots):
    """One row per provider of each tree in ``roots``, children first: its
    record as Placement holds it now, or why it cannot be deleted."""
    judged = _judged(clients, roots)
    rows = []
    for root in roots:
        tree = judged.providers_of(root)
        if not tree:
            rows.append(repair.Row(
                m.Selection('', root, m.DELETE_PROVIDER),
                error=why('provider.gone', provider=root)))
            continue
        for uuid in tree:
            rows.append(_provider_row(clients.placement, uuid, judged))
    return rows


class _Judged:
    """The trees of some roots as the audit judges them from a fresh read:
    the topology, each root's compute node asked of Nova alone
    (:func:`collect.confirm_nodes`), and what the trees hold."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self.topology = topology.Topology(snapshot)
        self.report = classify.audit(snapshot, min_age=0)

    def providers_of(self, root):
        """The providers of ``root``'s tree, children first (none when it
        is gone or no root)."""
        if root not in self.snapshot.providers or \
                self.topology.root(root) != root:
            return []
        return self.topology.children_first([root])

    def refusal(self, uuid):
        """Why the audit would not offer to delete ``uuid``: a child not
        proven Nova's names its likely owner; any other provider, why its
        tree is no provider left behind
        (:meth:`~report.ProviderReport.not_orphaned`); None when it is."""
        owners = self.report.child_owners or {}
        if uuid in owners:
            return reasons.not_ours('%s (%s)' % (self.topology.name(uuid),
                                                 uuid), owners[uuid])
        tree = self.report.provider(self.topology.root(uuid))
        return tree.not_orphaned() if tree is not None else None


def _judged(clients, roots):
    snapshot = m.Snapshot(consumers={}, servers={}, migrations={},
                          **collect.read_topology(clients.placement,
                                                  clients.nova))
    trees = {p.uuid for p in snapshot.providers.values()
             if p.root_uuid in set(roots)}
    snapshot.consumers = parse.consumers_from_providers({
        uuid: collect.read_allocations(clients.placement, uuid)
        for uuid in sorted(trees)})
    collect.name_migrations(clients.nova, snapshot, roots, len(roots) or 1)
    collect.confirm_nodes(clients.nova, snapshot, len(roots) or 1,
                          among=set(roots))
    return _Judged(snapshot)


def _provider_row(placement_client, uuid, judged):
    row = repair.Row(m.Selection('', uuid, m.DELETE_PROVIDER))
    record = placement.provider_record(placement_client, uuid)
    if record is None:
        row.error = why('provider.gone', provider=uuid)
        return row
    row.error = judged.refusal(uuid)
    if row.error is None and placement.provider_allocations(
            placement_client, uuid):
        row.error = why('provider.holds', name=record['name'])
    if row.error is None:
        row.plan = repair.ProviderPlan(m.DELETE_PROVIDER, uuid,
                                       record['name'], record['generation'],
                                       record)
    return row


def delete_providers(clients, journal, plans):
    """Judge each confirmed provider's tree again as the audit does, on a
    fresh read, journal each provider whole, delete it.

    Children come first (the preview's order); the first failure stops the
    rest, since a parent with a child left cannot go.
    """
    outcomes = []
    halted = None
    judged = _judged(clients, sorted({
        plan.record.get('root_provider_uuid') or plan.provider
        for plan in plans}))
    for plan in plans:
        if halted:
            outcomes.append(write.Outcome(plan.selection, write.SKIPPED,
                                          halted, plan))
            continue
        row = _provider_row(clients.placement, plan.provider, judged)
        if row.error or row.plan != plan:
            outcomes.append(write.Outcome(
                plan.selection, write.SKIPPED,
                row.error or why('provider.changed', name=plan.name), plan))
            halted = why('provider.halted')
            continue
        outcome = providers.delete_provider(clients.placement, journal, plan)
        outcomes.append(outcome)
        if outcome.status != write.DONE:
            halted = why('provider.halted')
    return outcomes
