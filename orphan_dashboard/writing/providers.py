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

Each provider is re-read and proven Nova's before it is deleted, journaled
whole first, children before their parents.
"""

from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import ownership
from orphan_dashboard.audit import parse
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.audit import topology
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write


def preview_provider_delete(placement_client, nova_client, roots):
    """One row per provider of each tree in ``roots``, children first: its
    record as Placement holds it now, or why it cannot be deleted."""
    providers = [parse.provider(p)
                 for p in placement.provider_list(placement_client)]
    nodes = _nova_nodes(nova_client)
    rows = []
    for root in roots:
        tree = topology.children_first(providers, [root])
        if not tree:
            rows.append(repair.Row(
                repair.Selection('', root, m.DELETE_PROVIDER),
                error=why('provider.gone', provider=root)))
            continue
        for uuid in tree:
            rows.append(_provider_row(placement_client, uuid, nodes))
    return rows


def _nova_nodes(nova_client):
    """``(compute node uuids, hypervisor and compute service names)``."""
    hypervisors = nova.hypervisor_list(nova_client)
    names = {h['hypervisor_hostname'] for h in hypervisors} | {
        s['host'] for s in nova.service_list(nova_client)}
    return {h['id'] for h in hypervisors}, frozenset(names)


def _not_novas(placement_client, record, nodes):
    """Why ``record`` is not ours to delete (a reason), or None when its
    root, and the provider itself if a child, are proven Nova's."""
    root = record.get('root_provider_uuid') or record['uuid']
    if root != record['uuid']:
        owner = ownership.child_owner(record['name'], record['inventories'],
                                      record['traits'])
        if owner != ownership.NOVA:
            return _refusal('%s (%s)' % (record['name'], record['uuid']),
                            owner)
    top = record if root == record['uuid'] else \
        placement.provider_record(placement_client, root)
    if top is None:
        return None
    owner = ownership.likely_owner(top['name'], top['traits'],
                                   top['inventories'], nodes[1],
                                   node=root in nodes[0])
    if owner == ownership.NOVA:
        return None
    return _refusal('%s (%s)' % (top['name'], root), owner)


def _refusal(name, owner):
    if owner is None:
        return why('blocker.not_proven', provider=name)
    return why('blocker.not_nova', provider=name, owner=owner)


def _provider_row(placement_client, uuid, nodes):
    row = repair.Row(repair.Selection('', uuid, m.DELETE_PROVIDER))
    record = placement.provider_record(placement_client, uuid)
    refusal = record and _not_novas(placement_client, record, nodes)
    if record is None:
        row.error = why('provider.gone', provider=uuid)
    elif uuid in nodes[0]:
        row.error = why('provider.compute_node', name=record['name'])
    elif refusal:
        row.error = refusal
    elif placement.provider_allocations(placement_client, uuid):
        row.error = why('provider.holds', name=record['name'])
    else:
        row.plan = repair.ProviderPlan(m.DELETE_PROVIDER, uuid,
                                       record['name'], record['generation'],
                                       record)
    return row


def delete_providers(placement_client, nova_client, journal, confirmed):
    """Re-read each confirmed provider, journal it whole, delete it.

    Children come first (the preview's order); the first failure stops the
    rest, since a parent with a child left cannot go.
    """
    outcomes = []
    halted = None
    nodes = _nova_nodes(nova_client)
    for plan in confirmed:
        if halted:
            outcomes.append(write.Outcome(plan.selection, write.SKIPPED,
                                          halted, plan))
            continue
        row = _provider_row(placement_client, plan.provider, nodes)
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
