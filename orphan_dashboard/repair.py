"""Previewing and applying repairs (I/O), never on data older than the click.

Both steps re-read the chosen consumers (:func:`collect.consumer_snapshot`)
and re-plan.  At submit time a row is written only if its verdict still
allows the action and its allocations are exactly what the operator saw in
the preview (generation *and* body: generations restart at 1 when a consumer
is emptied and recreated), and the write itself is generation-checked.
Every write is journaled before it is sent (:mod:`orphan_dashboard.journal`).
"""

import dataclasses
import hashlib
import json
import typing

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import plan as planner
from orphan_dashboard import collect

DONE = 'done'
SKIPPED = 'skipped'
FAILED = 'failed'


@dataclasses.dataclass(frozen=True)
class Selection:
    """One row an operator chose: a consumer, where, and what to do."""

    consumer: str
    provider: str
    action: str
    migration_instance: typing.Optional[str] = None


@dataclasses.dataclass
class Row:
    selection: Selection
    plan: typing.Optional[m.Plan] = None
    error: typing.Optional[str] = None
    fingerprint: typing.Optional[str] = None

    @property
    def commands(self):
        return planner.osc_commands(self.plan) if self.plan else []


@dataclasses.dataclass
class Outcome:
    selection: Selection
    status: str
    message: str
    plan: typing.Optional[m.Plan] = None


def fingerprint(consumer):
    """Identify a consumer's exact state: generation and whole body.

    A consumer without allocations does not exist in Placement, whatever
    generation it had.
    """
    held = consumer is not None and bool(consumer.allocations)
    state = {'generation': consumer.generation if held else None,
             'allocations': consumer.allocations if held else {}}
    return hashlib.sha256(
        json.dumps(state, sort_keys=True).encode()).hexdigest()[:16]


def _plan_rows(snapshot, selections, min_age):
    auditor = classify.Auditor(snapshot, min_age=min_age)
    rows = []
    for selection in selections:
        row = Row(selection, fingerprint=fingerprint(
            snapshot.consumers.get(selection.consumer)))
        rows.append(row)
        finding = _finding(auditor, snapshot, selection)
        if selection.action not in finding.actions:
            row.error = 'now %s (%s): %s is not allowed' % (
                finding.verdict, finding.reason, selection.action)
            continue
        try:
            row.plan = planner.make_plan(snapshot, finding, selection.action)
        except planner.PlanError as exc:
            row.error = str(exc)
    return rows


def _finding(auditor, snapshot, selection):
    consumer = snapshot.consumers.get(selection.consumer)
    held = consumer.allocations if consumer else {}
    if selection.provider in held:
        return auditor.finding(selection.consumer, selection.provider,
                               held[selection.provider])
    server = snapshot.servers.get(selection.consumer)
    root = auditor.topology.server_root(server) if server else None
    if root == selection.provider:
        missing = auditor.server_findings(server, root)
        if missing is not None:
            return missing
    return m.Finding(selection.consumer, selection.provider, m.OK,
                     'no longer holds anything on this provider', {}, ())


def _read(placement_client, nova_client, selections):
    return collect.consumer_snapshot(
        placement_client, nova_client, [s.consumer for s in selections],
        [s.migration_instance for s in selections if s.migration_instance])


def preview(placement_client, nova_client, selections,
            min_age=classify.DEFAULT_MIN_AGE):
    """Plans for ``selections`` from a fresh read, with per-row errors."""
    snapshot = _read(placement_client, nova_client, selections)
    return _plan_rows(snapshot, selections, min_age)


def apply(placement_client, nova_client, journal, selections, fingerprints,
          min_age=classify.DEFAULT_MIN_AGE):
    """Re-read, re-plan and write each row; one :class:`Outcome` per row.

    ``fingerprints`` maps a consumer to the :func:`fingerprint` shown in its
    preview; a consumer that changed since is skipped.
    """
    snapshot = _read(placement_client, nova_client, selections)
    outcomes = []
    written = set()
    for row in _plan_rows(snapshot, selections, min_age):
        selection = row.selection
        if selection.consumer in written:
            outcomes.append(Outcome(selection, SKIPPED, 'consumer already '
                                    'repaired by another row of this batch'))
            continue
        if row.fingerprint != fingerprints.get(selection.consumer):
            outcomes.append(Outcome(
                selection, SKIPPED, 'allocations changed since the preview; '
                'review them again', row.plan))
            continue
        if row.error:
            outcomes.append(Outcome(selection, SKIPPED, row.error))
            continue
        outcomes.append(write(placement_client, journal, row.plan))
        written.add(selection.consumer)
    return outcomes


def write(placement_client, journal, plan, restores=None):
    """Journal, then one generation-checked PUT, then journal the outcome.

    Placement's refusal (409) skips the row with Placement's words; any
    other error fails it.  After a success the consumer is read back for
    its new generation.
    """
    selection = Selection(plan.consumer, plan.provider, plan.action)
    entry = journal.begin(plan, restores=restores)
    try:
        placement.put_allocations(placement_client, plan.consumer, plan.after,
                                  plan.generation, plan.project_id,
                                  plan.user_id)
    except ks_exc.Conflict as exc:
        detail, _code = placement.error_detail(exc)
        journal.finish(entry, entry.REFUSED, detail)
        return Outcome(selection, SKIPPED, 'Placement refused: %s' % detail,
                       plan)
    except ks_exc.ClientException as exc:
        detail, _code = placement.error_detail(exc)
        journal.finish(entry, entry.FAILED, detail)
        return Outcome(selection, FAILED, 'Placement failed: %s' % detail,
                       plan)
    generation = None
    try:
        generation = placement.consumer_allocations(
            placement_client, plan.consumer).get('consumer_generation')
    except ks_exc.ClientException:
        pass
    journal.finish(entry, entry.APPLIED, new_generation=generation)
    return Outcome(selection, DONE, '%s done' % plan.action, plan)


def _restore_row(placement_client, entry):
    consumer = parse.consumer(entry.consumer, placement.consumer_allocations(
        placement_client, entry.consumer))
    row = Row(Selection(entry.consumer, entry.provider, m.RESTORE),
              fingerprint=fingerprint(consumer))
    try:
        row.plan = planner.restore_plan(entry, consumer)
    except planner.PlanError as exc:
        row.error = str(exc)
    return row


def preview_restore(placement_client, entries):
    """Restore plans for journal ``entries``, from a fresh read."""
    return [_restore_row(placement_client, entry) for entry in entries]


def restore(placement_client, journal, entries, fingerprints):
    """Put each entry's consumer back as it was before; one outcome each.

    A restore is itself journaled, so it can be undone too.
    """
    outcomes = []
    for entry in entries:
        row = _restore_row(placement_client, entry)
        if row.fingerprint != fingerprints.get(entry.consumer):
            outcomes.append(Outcome(row.selection, SKIPPED,
                                    'allocations changed since the preview; '
                                    'review them again', row.plan))
        elif row.error:
            outcomes.append(Outcome(row.selection, SKIPPED, row.error))
        else:
            outcomes.append(write(placement_client, journal, row.plan,
                                  restores=entry))
    return outcomes
