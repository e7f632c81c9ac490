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

"""Previewing and applying repairs (I/O), never on data older than the click.

Both steps re-read the chosen consumers from Nova and Placement
(:func:`refresh.consumer_snapshot`) and plan through the one engine call,
:meth:`classify.Auditor.plan`.  At submit time a row is written only if the
fresh plan is exactly the one the operator confirmed (generation, the whole
body before, and the body after: generations restart at 1 when a consumer
is emptied and recreated), and the write itself is generation-checked.
Every write is journaled before it is sent
(:mod:`orphan_dashboard.writing.journal`) and every row gets an outcome,
whatever happens to the rows around it.
"""

import dataclasses
import logging
import operator
import typing

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import neutron
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit.plan import CannotRepair
from orphan_dashboard.audit.plan import recommended
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard import conf
from orphan_dashboard.reading import refresh
from orphan_dashboard.writing import commands

LOG = logging.getLogger(__name__)

DONE = 'done'
SKIPPED = 'skipped'
FAILED = 'failed'

BEFORE = 'before'
AFTER = 'after'
"""Where a write that got no clear answer left its subject, read back."""


@dataclasses.dataclass(frozen=True)
class Selection:
    """One row an operator chose: a consumer, where, and what to do.  Only
    ids: what they stand for is re-read."""

    consumer: str
    provider: str
    action: str


@dataclasses.dataclass(frozen=True)
class ProviderPlan:
    """Delete a provider (``record`` is all it holds), or re-create it."""

    action: str
    provider: str
    name: str
    generation: typing.Optional[int]
    record: dict
    """What the provider holds before (delete) or after (restore)."""

    @property
    def consumer(self):
        return ''


@dataclasses.dataclass
class Row:
    selection: Selection
    plan: typing.Any = None
    """A :class:`~model.Plan`, a :class:`ProviderPlan`, or None."""
    error: typing.Any = None
    """Why no plan: the engine's :class:`~reasons.Reason` or this
    module's own words."""
    notes: tuple = ()
    """What the operator should know before confirming."""
    finding: typing.Optional[m.Finding] = None
    """The row's finding as just re-read (what Nova says of it now)."""
    server: typing.Optional[str] = None
    """The name of the consumer's server as just read, where it has one
    (a restore's row, which has no finding)."""

    @property
    def commands(self):
        return commands.for_plan(self.plan)


@dataclasses.dataclass
class Outcome:
    selection: Selection
    status: str
    message: typing.Any
    """Text, or the engine's :class:`~reasons.Reason` for a skipped row."""
    plan: typing.Any = None
    entry_id: typing.Optional[int] = None


def selection_of(plan):
    return Selection(plan.consumer, plan.provider, plan.action)


# -- consumer repairs --------------------------------------------------------

def _plan_rows(snapshot, selections, min_age):
    auditor = classify.Auditor(snapshot, min_age=min_age)
    rows = []
    for selection in selections:
        row = Row(selection, finding=auditor.finding(selection.consumer,
                                                     selection.provider))
        try:
            row.plan = auditor.plan(selection.consumer, selection.provider,
                                    selection.action)
        except CannotRepair as exc:
            row.error = exc.reason
        rows.append(row)
    return rows


def recommended_selections(findings):
    """The recommended repair of each consumer among ``findings``."""
    return [Selection(f.consumer, f.provider, action)
            for f, action in recommended(findings)]


def instance_hints(findings, selections):
    """The servers behind the selected migration consumers, as the
    snapshot the operator saw knew them (see :func:`preview`)."""
    consumers = {s.consumer for s in selections}
    return sorted({f.instance for f in findings
                   if f.consumer in consumers and f.instance and
                   f.instance != f.consumer})


def _read(placement_client, nova_client, consumers, instance_hints,
          network_client):
    return refresh.consumer_snapshot(placement_client, nova_client,
                                     consumers, instance_hints,
                                     network_client=network_client)


def preview(placement_client, nova_client, selections,
            min_age=conf.MIN_AGE.default, instance_hints=(),
            network_client=None):
    """Plans for ``selections`` from a fresh read, with per-row errors.

    ``instance_hints``: servers whose migrations to read as well, from the
    snapshot the operator was shown (never from the request).
    """
    snapshot = _read(placement_client, nova_client,
                     [s.consumer for s in selections], instance_hints,
                     network_client)
    return _plan_rows(snapshot, selections, min_age)


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
    return None


def apply(placement_client, nova_client, journal, confirmed,
          min_age=conf.MIN_AGE.default, instance_hints=(),
          network_client=None):
    """Re-read, re-plan and write each confirmed plan; an outcome per row.

    A row is written only if its fresh plan is the confirmed one.  If the
    journal fails, nothing more is written (an unjournaled write could not
    be undone), and the rows not attempted say so.
    """
    selections = [selection_of(p) for p in confirmed]
    snapshot = _read(placement_client, nova_client,
                     [s.consumer for s in selections], instance_hints,
                     network_client)
    rows = _plan_rows(snapshot, selections, min_age)
    names = {uuid: p.name for uuid, p in snapshot.providers.items()}
    outcomes = []
    written = set()
    halted = None
    for row, plan in zip(rows, confirmed):
        selection = row.selection
        if halted:
            outcomes.append(Outcome(selection, SKIPPED, halted, plan))
        elif selection.consumer in written:
            outcomes.append(Outcome(selection, SKIPPED,
                                    why('write.repaired_by_other')))
        elif row.error:
            outcomes.append(Outcome(selection, SKIPPED, row.error))
        elif _differs(row.plan, plan, names):
            outcomes.append(Outcome(selection, SKIPPED,
                                    _differs(row.plan, plan, names),
                                    row.plan))
        else:
            outcome = write(placement_client, journal, row.plan,
                            network_client=network_client)
            outcomes.append(outcome)
            if outcome.status == DONE:
                written.add(selection.consumer)
            if outcome.status == FAILED and outcome.entry_id is None:
                halted = why('write.halted_journal')
    return outcomes


def write(placement_client, journal, plan, restores=None,
          network_client=None):
    """Journal, then one generation-checked PUT (after the plan's port
    bindings, see :func:`_send`), then journal the outcome with the
    consumer's new generation (see :func:`journaled`)."""
    return journaled(
        journal, plan, lambda: journal.begin(plan, restores=restores),
        lambda: _send(placement_client, network_client, plan),
        lambda: _generation(placement_client, plan.consumer),
        lambda: _consumer_now(placement_client, plan.consumer))


class BindingError(Exception):
    """Neutron did not take a port's binding, so Placement was not
    written; the bindings written before it, and this one if read back
    written, were put back (``bindings``: those written and those Neutron
    would not take back, as :func:`_with_bindings` reads them).
    ``refused``: a definite refusal (:func:`_refused`), which wrote
    nothing; otherwise Neutron failed with no clear answer."""

    def __init__(self, reason, written=None, failed=None, refused=True):
        super().__init__(str(reason))
        self.reason = reason
        self.bindings = (written or {}, failed or {})
        self.refused = refused


def _refused(exc):
    """The error is a definite refusal (a 4xx, or no endpoint to send
    to): nothing was written.  A timeout, a lost connection or a 5xx do
    not say whether the write was applied; only reading it back does
    (:func:`_landed`)."""
    return isinstance(exc, (ks_exc.HTTPClientError, ks_exc.CatalogException))


def _landed(now, before, after, holds=operator.eq):
    """Where a write with no clear answer left its subject, read back as
    ``now`` (None: it could not be read): :data:`AFTER`, :data:`BEFORE`,
    or None when it holds something else or cannot be told."""
    if now is None:
        return None
    if holds(now, after):
        return AFTER
    if holds(now, before):
        return BEFORE
    return None


def _send(placement_client, network_client, plan):
    """The plan's port bindings to Neutron first, then the allocations to
    Placement, as ``heal_allocations`` orders them.  If Placement does not
    take them, its error goes on carrying where the consumer stands
    (``landed``, :func:`_consumer_landed`): the bindings are put back only
    while it holds the plan's before (``bindings``), else left as written
    (``left``), as :func:`_with_bindings` tells."""
    written = _write_bindings(network_client, plan)
    try:
        placement.put_allocations(
            placement_client, plan.consumer, plan.after, plan.generation,
            plan.project_id, plan.user_id)
    except Exception as exc:
        exc.landed = _consumer_landed(placement_client, plan, exc)
        if exc.landed[0] == BEFORE:
            exc.bindings = (written, _put_back(network_client, plan,
                                               written))
        else:
            exc.left = written
        raise


def _consumer_landed(placement_client, plan, exc):
    """``(where, consumer read back or None)`` after Placement's error
    ``exc``: a refusal left the plan's before without a read."""
    if _refused(exc):
        return BEFORE, None
    found = _consumer_now(placement_client, plan.consumer)
    before = (plan.before, plan.before_project or plan.project_id,
              plan.before_user or plan.user_id)
    after = (plan.after, plan.project_id, plan.user_id)
    return _landed(found, before, after, lambda consumer, side: _holds(
        consumer, *side)), found


def _write_bindings(network_client, plan):
    """Write each port's binding ``after``, compare-and-swap on the
    revision the plan read; ``{port: revision after}``.  When Neutron does
    not take one, the ones written (that one too, read back written) are
    put back and :class:`BindingError` says why."""
    written = {}
    for port, change in sorted(plan.ports.items()):
        try:
            if network_client is None:
                raise ks_exc.EndpointNotFound('network')
            answer = neutron.update_binding_profile(
                network_client, port, change['after'], change['revision'])
        except ks_exc.ClientException as exc:
            refused = _refused(exc)
            unknown = {} if refused else _binding_landed(
                network_client, plan, port, written)
            failed = dict(unknown, **_put_back(network_client, plan,
                                               written))
            if isinstance(exc, ks_exc.PreconditionFailed):
                reason = why('write.binding_changed', port=port)
            elif refused:
                reason = why('write.binding_refused', port=port,
                             detail=neutron.error_detail(exc))
            else:
                reason = why('write.binding_failed', port=port,
                             detail=neutron.error_detail(exc))
            raise BindingError(reason, written, failed, refused)
        written[port] = answer.get('revision_number')
    return written


def _binding_landed(network_client, plan, port, written):
    """Read back a binding write Neutron gave no clear answer to: written,
    it joins ``written`` at its new revision (to be put back); ``{port:
    why not}`` when it cannot be read or names something else."""
    change = plan.ports[port]
    try:
        body = neutron.port_get(network_client, port)
    except ks_exc.ClientException as exc:
        return {port: neutron.error_detail(exc)}
    if body is None:
        return {}
    profile = dict(body.get('binding:profile') or {})
    where = _landed(profile, change['before'], change['after'])
    if where == AFTER:
        written[port] = body.get('revision_number')
    elif where is None:
        return {port: why('write.binding_now', allocation=str(
            profile.get('allocation') or '-'))}
    return {}


def _put_back(network_client, plan, written):
    """The bindings ``written`` put back as they were: ``{port: error}``
    of those Neutron would not take back."""
    failed = {}
    for port, revision in sorted(written.items()):
        try:
            neutron.update_binding_profile(
                network_client, port, plan.ports[port]['before'], revision)
        except Exception as exc:
            LOG.exception('the binding of port %s could not be put back',
                          port)
            failed[port] = str(exc)
    return failed


def _with_bindings(exc, plan, status, message):
    """``(status, message)`` of a write Placement did not take, told what
    became of the bindings written before it: put back, or a failure with
    the command that puts them back, or left as written where Placement
    may hold their share."""
    written, failed = getattr(exc, 'bindings', ({}, {}))
    left = sorted(getattr(exc, 'left', None) or ())
    if left:
        return FAILED, why('write.bindings_left', outcome=message,
                           ports=', '.join(left),
                           commands=' ; '.join(commands.binding(
                               port, plan.ports[port]['before'])
                               for port in left))
    for port, detail in sorted(failed.items()):
        return FAILED, why('write.rollback_failed', outcome=message,
                           port=port, detail=detail,
                           command=commands.binding(
                               port, plan.ports[port]['before']))
    if written:
        return status, why('write.rolled_back', outcome=message,
                           ports=', '.join(sorted(written)))
    return status, message


def _generation(placement_client, consumer):
    try:
        return placement.consumer_allocations(
            placement_client, consumer).get('consumer_generation')
    except ks_exc.ClientException:
        return None


def _consumer_now(placement_client, consumer):
    """The consumer as Placement holds it now, or None if unreadable."""
    try:
        return parse.consumer(consumer, placement.consumer_allocations(
            placement_client, consumer))
    except Exception:
        LOG.exception('consumer %s could not be read back', consumer)
        return None


def _holds(consumer, allocations, project_id, user_id):
    return consumer is not None and consumer.allocations == allocations \
        and (not allocations or (consumer.project_id, consumer.user_id) ==
             (project_id, user_id))


def journaled(journal, plan, begin, send, read_back=lambda: None,
              now=None):
    """``begin`` a journal entry, ``send`` the write, record the outcome.

    Placement's refusal (409) and Neutron's (a 4xx) skip the row, in
    words; any other error fails it.  A write the journal could not
    record first is not sent; one whose outcome it could not record stays
    ``pending`` in the journal, and the outcome says to look there.
    ``now`` (a consumer write's) re-reads the consumer after a conflict:
    one already holding exactly the plan's after is our own identical
    write that won (its entry says it all, this one is dropped).  After
    any other error of Placement, the consumer as :func:`_send` read it
    back says what is true: holding the plan's after, the write is done;
    holding its before after an error answer, nothing changed, so that
    entry never stands in the way of a restore (nor does a binding Neutron
    gave no clear answer to, once put back); anything else fails, saying
    what it holds.  The journal's own errors are logged, never shown.
    """
    selection = selection_of(plan)
    try:
        entry = begin()
    except Exception:
        LOG.exception('the journal could not record a write first')
        return Outcome(selection, FAILED,
                       reasons.reason('write.journal_before'), plan)
    try:
        send()
    except BindingError as exc:
        LOG.warning('Neutron did not take journal entry %s: %s', entry.id,
                    exc)
        status, message = _with_bindings(
            exc, plan, SKIPPED if exc.refused else FAILED, exc.reason)
        unchanged = None
        if not exc.refused and not exc.bindings[1]:
            unchanged = plan.generation
        return _finish(journal, entry, entry.REFUSED if status == SKIPPED
                       else entry.FAILED, Outcome(
                           selection, status, message, plan), str(message),
                       new_generation=unchanged)
    except ks_exc.Conflict as exc:
        detail, code = placement.error_detail(exc)
        LOG.warning('Placement refused journal entry %s: %s', entry.id,
                    detail)
        consumer = now() if now else None
        if not plan_ports(plan) and _holds(consumer, plan.after,
                                           plan.project_id, plan.user_id):
            return _drop(journal, entry, Outcome(
                selection, SKIPPED, reasons.reason('write.already_done'),
                plan))
        if code == placement.CONCURRENT_UPDATE:
            refused = reasons.reason('write.refused_changed')
        else:
            refused = reasons.reason('write.refused')
        status, refused = _with_bindings(exc, plan, SKIPPED, refused)
        return _finish(journal, entry, entry.REFUSED if status == SKIPPED
                       else entry.FAILED, Outcome(
                           selection, status, refused, plan), str(refused))
    except ks_exc.ClientException as exc:
        detail, _code = placement.error_detail(exc)
        landed = getattr(exc, 'landed', None)
        where, found = landed or (None, None)
        if where == AFTER:
            LOG.warning('journal entry %s: Placement answered %s, but holds '
                        'the write', entry.id, detail)
            return _finish(journal, entry, entry.APPLIED, Outcome(
                selection, DONE, why('write.done_unanswered', detail=detail),
                plan), new_generation=found.generation)
        if landed is None or where == BEFORE:
            failure = why('write.failed', detail=detail)
        elif found is None:
            failure = why('write.failed_unread', detail=detail)
        else:
            failure = why('write.failed_other', detail=detail,
                          now=reasons.format_allocations(found.allocations))
        status, message = _with_bindings(exc, plan, FAILED, failure)
        kept = getattr(exc, 'bindings', ({}, {}))[1]
        unchanged = None
        if isinstance(exc, ks_exc.HttpError) and where == BEFORE and \
                not kept:
            unchanged = plan.generation
        return _finish(journal, entry, entry.FAILED, Outcome(
            selection, status, message, plan), str(message),
            new_generation=unchanged)
    except Exception:
        LOG.exception('journal entry %s: unexpected error writing', entry.id)
        outcome = Outcome(selection, FAILED, reasons.reason(
            'write.unexpected', entry=entry.id), plan)
        return _finish(journal, entry, entry.FAILED, outcome,
                       'an unexpected error interrupted it after it was '
                       'sent: it may be partly written (see the logs)')
    return _finish(journal, entry, entry.APPLIED, Outcome(
        selection, DONE, why('write.done'), plan),
        new_generation=read_back())


def plan_ports(plan):
    """The port bindings a consumer plan writes first (none for a
    provider's plan)."""
    return getattr(plan, 'ports', None) or {}


def _drop(journal, entry, outcome):
    """Forget the entry of a write that changed nothing (a conflict with
    our own identical write): a refusal in History would be noise."""
    try:
        journal.discard(entry)
    except Exception:
        LOG.exception('journal entry %s could not be dropped', entry.id)
        return _finish(journal, entry, entry.REFUSED, outcome,
                       str(outcome.message))
    return outcome


def _finish(journal, entry, status, outcome, message='', new_generation=None):
    outcome.entry_id = entry.id
    try:
        journal.finish(entry, status, message, new_generation=new_generation)
    except Exception:
        LOG.exception('journal entry %s could not be updated', entry.id)
        outcome.message = reasons.reason(
            'write.journal_after', outcome=outcome.message, entry=entry.id)
    return outcome
