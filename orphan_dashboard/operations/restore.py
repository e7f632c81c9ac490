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

"""Restores (use case): putting journaled changes back, previewed first.

A restore is previewed from a fresh read (a consumer's allocations and
port bindings as they were before, a deleted provider re-created, with
what Nova says of each consumer now) and written only if the plan is
still the one the operator confirmed, journaled like any repair
(:func:`write.allocations`), so it can be undone too.
"""

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import neutron
from orphan_dashboard.api import placement
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit.plan import CannotRepair
from orphan_dashboard.audit.plan import restore_plan
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.audit import restore as restore_rules
from orphan_dashboard.audit import topology
from orphan_dashboard.reading import refresh
from orphan_dashboard.writing import journal
from orphan_dashboard.writing import providers
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write


def restorable(cloud, entries):
    """``{subject: restorable entry ids}`` of ``entries``' subjects."""
    return journal.restorable(cloud, {e.subject for e in entries})


def preview(clients, entries, restorable_):
    """``[(entry, row)]``: a fresh restore plan per entry, with what Nova
    says of its consumer now in the row's notes and its server's name."""
    rows = fresh_plans(clients, entries, restorable_)
    notes, servers = restore_notes(clients, entries)
    for entry, row in rows:
        row.notes = notes.get(entry.id, ())
        row.server = servers.get(entry.consumer)
    return rows


def restore(clients, journal_, entries, confirmed, restorable_):
    """Put each entry's subject back as it was before; one outcome each.

    ``confirmed`` maps an entry id to the plan the operator confirmed.  A
    restore is itself journaled, so it can be undone too.
    """
    outcomes = []
    for entry, row in fresh_plans(clients, entries, restorable_):
        expected = confirmed.get(entry.id)
        if row.error:
            outcomes.append(write.Outcome(row.selection, write.SKIPPED,
                                          row.error))
        elif expected is None or row.plan != expected:
            outcomes.append(write.Outcome(row.selection, write.SKIPPED,
                                          why('restore.changed'), row.plan))
        elif isinstance(row.plan, repair.ProviderPlan):
            outcomes.append(providers.recreate_provider(
                clients.placement, journal_, row.plan, entry))
        else:
            outcomes.append(write.allocations(
                clients.placement, journal_, row.plan, row.selection,
                restores=entry, network_client=clients.network))
    return outcomes


def changes_providers(entries):
    """Whether restoring ``entries`` re-creates or deletes providers."""
    return any(e.kind != e.ALLOCATIONS for e in entries)


def _restore_row(placement_client, entry, restorable, restored=(),
                 network_client=None):
    row = repair.Row(m.Selection(entry.consumer, entry.provider,
                                 m.RESTORE))
    row.error = restore_rules.refusal(entry,
                                      restorable.get(entry.subject, set()))
    if row.error:
        return row
    try:
        if entry.kind == entry.PROVIDER:
            row.plan = _provider_restore_plan(placement_client, entry,
                                              restored)
        else:
            consumer = parse.consumer(
                entry.consumer, placement.consumer_allocations(
                    placement_client, entry.consumer))
            row.plan = restore_plan(entry, consumer, _ports_now(
                network_client, entry))
    except CannotRepair as exc:
        row.error = exc.reason
    return row


def _ports_now(network_client, entry):
    """``{port id: Port or None}`` of the ports whose binding ``entry``
    wrote, as Neutron holds them now (None: the port is gone)."""
    if not entry.ports:
        return {}
    if network_client is None:
        raise CannotRepair(why('restore.no_neutron'))
    found = {}
    for port in sorted(entry.ports):
        try:
            body = neutron.port_get(network_client, port)
        except ks_exc.ClientException as exc:
            raise CannotRepair(why('restore.neutron_unread',
                                   detail=neutron.error_detail(exc)))
        found[port] = parse.port(body) if body is not None else None
    return found


def _provider_restore_plan(placement_client, entry, restored):
    record = entry.before
    if entry.action != m.DELETE_PROVIDER or not record:
        raise CannotRepair(why('restore.recreated', entry=entry.id,
                               provider=entry.provider))
    if placement.provider_record(placement_client, entry.provider):
        raise CannotRepair(why('restore.exists_again',
                               name=record['name'],
                               provider=entry.provider))
    # Placement refuses a second provider of a name (409): a host
    # reinstalled under its old name has its new node's provider by now.
    taken = [p['uuid'] for p in placement.provider_list(
        placement_client, name=record['name'])]
    if taken:
        raise CannotRepair(why('restore.name_taken', name=record['name'],
                               provider=taken[0]))
    parent = record.get('parent_provider_uuid')
    if parent and parent not in restored and not placement.provider_record(
            placement_client, parent):
        raise CannotRepair(why('restore.parent_gone', parent=parent))
    return repair.ProviderPlan(m.RESTORE, entry.provider, record['name'],
                               None, record)


def _parents_first(entries):
    """Provider re-creations first, a parent before its children, then the
    consumer restores in their order (they may need those providers).  A
    provider is placed under the first entry of its parent, if any."""
    providers = [e for e in entries if e.kind == e.PROVIDER]
    parents = {}
    for entry in providers:
        parents.setdefault(entry.provider, _journaled_parent(entry))
    depths = topology.depths_in({uuid: parent if parent in parents else None
                                 for uuid, parent in parents.items()})

    def level(entry):
        if entry.kind != entry.PROVIDER:
            return len(entries)
        parent = _journaled_parent(entry)
        return 1 + depths[parent] if parent in parents else 0

    return sorted(entries, key=level)


def _journaled_parent(entry):
    return (entry.before or {}).get('parent_provider_uuid')


def fresh_plans(clients, entries, restorable):
    """Restore plans for journal ``entries``, from a fresh read by
    ``clients`` (Placement, and Neutron for the bindings).

    ``restorable`` maps each entry's subject to the ids that may be
    restored (:func:`journal.restorable`).
    """
    rows, restored = [], set()
    for entry in _parents_first(entries):
        row = _restore_row(clients.placement, entry, restorable, restored,
                           clients.network)
        if row.plan is not None and entry.kind == entry.PROVIDER:
            restored.add(entry.provider)
        rows.append((entry, row))
    return rows


def restore_notes(clients, entries):
    """``({entry id: notes}, {consumer: server name})``: the notes
    (:func:`audit.restore.notes`) of the consumer entries and the names
    of their servers, from a fresh read of Nova and Placement."""
    consumers = [e for e in entries if e.kind == e.ALLOCATIONS]
    if not consumers:
        return {}, {}
    try:
        snapshot = refresh.consumer_snapshot(
            clients, [e.consumer for e in consumers],
            providers={p for e in consumers for p in e.before})
    except ks_exc.ClientException as exc:
        unknown = (restore_rules.unreadable(str(exc)),)
        return {e.id: unknown for e in consumers}, {}
    return ({e.id: restore_rules.notes(snapshot, e) for e in consumers},
            {e.consumer: snapshot.servers[e.consumer].name
             for e in consumers if e.consumer in snapshot.servers})
