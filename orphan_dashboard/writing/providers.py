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

"""Deleting providers Nova left behind, and re-creating one a restore
brings back (I/O).

Each provider's tree is judged again as the audit judges it, on a fresh
read, before it is deleted (a sharing provider, another service's, a node
Nova did not say is gone, a host not mapped to a cell yet is refused
whatever asked for it), each provider journaled whole first, children
before their parents.
"""

from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.audit import topology
from orphan_dashboard.reading import collect
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write


def preview_provider_delete(placement_client, nova_client, roots):
    """One row per provider of each tree in ``roots``, children first: its
    record as Placement holds it now, or why it cannot be deleted."""
    judged = _judged(placement_client, nova_client, roots)
    rows = []
    for root in roots:
        tree = judged.providers_of(root)
        if not tree:
            rows.append(repair.Row(
                m.Selection('', root, m.DELETE_PROVIDER),
                error=why('provider.gone', provider=root)))
            continue
        for uuid in tree:
            rows.append(_provider_row(placement_client, uuid, judged))
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


def _judged(placement_client, nova_client, roots):
    snapshot = m.Snapshot(consumers={}, servers={}, migrations={},
                          **collect.read_topology(placement_client,
                                                  nova_client))
    trees = {p.uuid for p in snapshot.providers.values()
             if p.root_uuid in set(roots)}
    snapshot.consumers = parse.consumers_from_providers({
        uuid: collect.read_allocations(placement_client, uuid)
        for uuid in sorted(trees)})
    collect.confirm_nodes(nova_client, snapshot, len(roots) or 1,
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


def delete_providers(placement_client, nova_client, journal, confirmed):
    """Judge each confirmed provider's tree again as the audit does, on a
    fresh read, journal each provider whole, delete it.

    Children come first (the preview's order); the first failure stops the
    rest, since a parent with a child left cannot go.
    """
    outcomes = []
    halted = None
    judged = _judged(placement_client, nova_client, sorted({
        plan.record.get('root_provider_uuid') or plan.provider
        for plan in confirmed}))
    for plan in confirmed:
        if halted:
            outcomes.append(write.Outcome(plan.selection, write.SKIPPED,
                                          halted, plan))
            continue
        row = _provider_row(placement_client, plan.provider, judged)
        if row.error or row.plan != plan:
            outcomes.append(write.Outcome(
                plan.selection, write.SKIPPED,
                row.error or why('provider.changed', name=plan.name), plan))
            halted = why('provider.halted')
            continue
        outcome = delete_provider(placement_client, journal, plan)
        outcomes.append(outcome)
        if outcome.status != write.DONE:
            halted = why('provider.halted')
    return outcomes


def delete_provider(placement_client, journal, plan, entry=None):
    """Journal a provider whole (unless ``entry`` already does), then
    delete it."""
    def begin():
        return entry or journal.begin_provider(
            m.DELETE_PROVIDER, plan.record, {}, 'provider %s' % plan.name)

    return write.provider(placement_client, journal, plan, begin)


def recreate_provider(placement_client, journal, plan, entry):
    """Re-create a deleted provider as its journal entry recorded it."""
    return write.provider(placement_client, journal, plan, lambda: (
        journal.begin_provider(m.RESTORE, {}, plan.record,
                               'provider %s' % plan.name, restores=entry)))
