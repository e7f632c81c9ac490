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
Every write is journaled before it is sent (:func:`write.allocations`)
and every row gets an outcome, whatever happens to the rows around it.
"""

import dataclasses
import typing

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit.plan import CannotRepair
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard import conf
from orphan_dashboard.reading import refresh
from orphan_dashboard.writing import equivalents
from orphan_dashboard.writing import write


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
    def selection(self):
        return m.Selection('', self.provider, self.action)


@dataclasses.dataclass
class Row:
    selection: m.Selection
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
        return equivalents.for_plan(self.plan)


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


def preview(placement_client, nova_client, selections,
            min_age=conf.MIN_AGE.default, instance_hints=(),
            network_client=None):
    """Plans for ``selections`` from a fresh read, with per-row errors.

    ``instance_hints``: servers whose migrations to read as well, from the
    snapshot the operator was shown (never from the request).
    """
    snapshot = refresh.consumer_snapshot(
        placement_client, nova_client, [s.consumer for s in selections],
        instance_hints, network_client=network_client)
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
    selections = [p.selection for p in confirmed]
    snapshot = refresh.consumer_snapshot(
        placement_client, nova_client, [s.consumer for s in selections],
        instance_hints, network_client=network_client)
    rows = _plan_rows(snapshot, selections, min_age)
    names = {uuid: p.name for uuid, p in snapshot.providers.items()}
    outcomes = []
    written = set()
    halted = None
    for row, plan in zip(rows, confirmed):
        selection = row.selection
        if halted:
            outcomes.append(write.Outcome(selection, write.SKIPPED, halted,
                                          plan))
        elif selection.consumer in written:
            outcomes.append(write.Outcome(selection, write.SKIPPED,
                                          why('write.repaired_by_other')))
        elif row.error:
            outcomes.append(write.Outcome(selection, write.SKIPPED,
                                          row.error))
        elif _differs(row.plan, plan, names):
            outcomes.append(write.Outcome(selection, write.SKIPPED,
                                          _differs(row.plan, plan, names),
                                          row.plan))
        else:
            outcome = write.allocations(placement_client, journal, row.plan,
                                        selection,
                                        network_client=network_client)
            outcomes.append(outcome)
            if outcome.status == write.DONE:
                written.add(selection.consumer)
            if outcome.status == write.FAILED and outcome.entry_id is None:
                halted = why('write.halted_journal')
    return outcomes
