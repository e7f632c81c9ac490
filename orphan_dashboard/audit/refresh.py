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

"""What a refresh keeps, re-reads and merges (pure).

A refresh (:func:`orphan_dashboard.reading.refresh.refresh_snapshot`)
reads only what changed since the last snapshot; these functions decide
which providers it reads again whole, what the consumers hold once those
are read, which consumers it identifies and which its report judges
again.
"""

import dataclasses

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import ownership


def suspects(snapshot, consumers):
    """Which of ``consumers`` a sweep identifies: those with a problem
    whatever their age (each judged alone, not the whole snapshot), and
    migration consumers, shown even when protected with the owner only
    Placement knows (a server's comes from Nova).  A large cloud has few
    of either: the others are not read.  So are the consumers protected
    only until Nova is asked: what they are while a cell is down
    (:func:`classify.awaits_nova`: a healthy cell's deleted servers),
    what their boot image made Nova allocate
    (:func:`classify.awaits_image`)."""
    auditor = classify.Auditor(snapshot, min_age=0)
    return {u for u in consumers if u in snapshot.migrations or
            any(f.problem or classify.awaits_nova(f) or
                classify.awaits_image(f)
                for f in auditor.consumer_findings(u))}


def relisted(before, listed):
    """``listed`` (a server as Nova's listing shows it: no boot image
    properties) with what ``before`` (the same server in the last
    snapshot) knew of them, where it still boots from the same image: a
    listing never shows them, and a refresh judges again only what
    changed.  (A rebuild from the same image copies its properties again:
    the preview and the submit read them from Nova anyway.)"""
    if before is None or before.image_ref != listed.image_ref or \
            listed.image_fault != m.IMAGE_UNSHOWN:
        return listed
    return dataclasses.replace(listed,
                               image_properties=before.image_properties,
                               image_fault=before.image_fault)


def image_unknown(snapshot, uuids):
    """The servers among ``uuids`` booted from an image whose properties
    Nova has not shown us yet (its listing never does): each is read
    alone before its verdict leads to a write."""
    return {u for u in uuids if u in snapshot.servers and
            snapshot.servers[u].image_fault in (m.IMAGE_UNSHOWN,
                                                m.IMAGE_DOWN)}


def _judged_against(snapshot):
    """What every consumer is judged against: the trees and their owners,
    Nova's nodes and services, the nodes Nova answered 404 for alone (what
    makes a node gone, unmapped or unconfirmed), the hosts whose
    migrations were listed whole, the providers ports'
    bindings name and the classes held on children (a child's owner is
    read from them).  A server's own proofs (its hidden fields, its boot
    image) are compared with the server."""
    providers = snapshot.providers
    return (
        {u: (p.name, p.root_uuid, p.parent_uuid)
         for u, p in providers.items()},
        snapshot.hypervisors, snapshot.services, snapshot.sharing_providers,
        snapshot.owner_traits, snapshot.inventory_classes,
        snapshot.hypervisors_listed, snapshot.down_cells, snapshot.nodes_gone,
        snapshot.migration_hosts, snapshot.neutron,
        frozenset(rp for port in (snapshot.ports or {}).values()
                  for rp in port.allocation.values()),
        {rp: classes
         for rp, classes in ownership.held_classes(snapshot).items()
         if rp in providers and providers[rp].root_uuid != rp})


def _differing(before, after):
    """The keys whose values differ between two dicts (either side
    missing included)."""
    return {k for k in before.keys() | after.keys()
            if before.get(k) is not after.get(k) and
            before.get(k) != after.get(k)}


def reconsidered(old, new):
    """The consumers of ``new`` whose verdicts may differ from ``old``'s.

    Every one when anything all are judged against changed
    (:func:`_judged_against`); else those whose allocations or owner
    changed, whose server or migrations changed (a migration's verdict
    names its server's), a migration's and its server's where either's
    allocations changed (a stuck move is judged from both), whose ports or
    the candidates Placement offered them changed, and those Nova's answer
    about a deleted instance now differs for. The others' verdicts are
    ``old``'s: a refresh judges only these again to pick its suspects, and
    its report only these and the consumers protected for their age
    (:func:`reusable`).
    """
    if _judged_against(old) != _judged_against(new):
        return set(new.consumers)
    changed = {u for u, c in new.consumers.items()
               if u not in old.consumers or
               (c.generation, c.allocations, c.project_id, c.user_id) != (
                   old.consumers[u].generation, old.consumers[u].allocations,
                   old.consumers[u].project_id, old.consumers[u].user_id)}
    instances = _differing(old.servers, new.servers)
    for uuid in _differing(old.migrations, new.migrations):
        for migration in (old.migrations.get(uuid), new.migrations.get(uuid)):
            if migration is not None:
                changed.add(uuid)
                instances.add(migration.instance_uuid)
    changed |= instances | {g.uuid for g in new.migrations.values()
                            if g.instance_uuid in instances}
    # A stuck move's verdicts read both its consumers (audit/stalls.py).
    changed |= {g.instance_uuid for g in new.migrations.values()
                if g.uuid in changed}
    changed |= {g.uuid for g in new.migrations.values()
                if g.instance_uuid in changed}
    changed |= old.known_instances ^ new.known_instances
    changed |= old.unresolved ^ new.unresolved
    for port_id in _differing(old.ports or {}, new.ports or {}):
        changed |= {port.device_id for port in (
            (old.ports or {}).get(port_id), (new.ports or {}).get(port_id))
            if port is not None}
    changed |= _differing(old.port_candidates, new.port_candidates)
    return changed & set(new.consumers)


def reusable(old, new, last_findings):
    """The findings of ``old``'s report, by consumer, that a report of
    ``new`` at the same minimum age takes as they are: those of the
    consumers :func:`reconsidered` does not name, none of whose findings
    is :func:`classify.aged`.  ``last_findings()`` gives every finding of
    that report, or None where they are lost (nothing is taken then); it
    is not asked when ``new`` is a full sweep, which judges every
    consumer again: it is what sees what a refresh cannot."""
    if new.full_sweep_at != old.full_sweep_at:
        return {}
    findings = last_findings()
    if findings is None:
        return {}
    again = reconsidered(old, new)
    by_consumer = {}
    for finding in findings:
        by_consumer.setdefault(finding.consumer, []).append(finding)
    return {uuid: found for uuid, found in by_consumer.items()
            if uuid in new.consumers and uuid not in again and
            not any(map(classify.aged, found))}


def moved(old, providers):
    """Of ``providers`` (``{uuid: Provider}`` as listed now), those whose
    generation moved since ``old`` (a write of allocations or inventories
    there bumps it) and those ``old`` did not have: read again whole."""
    return [uuid for uuid, provider in providers.items()
            if uuid not in old.providers or
            old.providers[uuid].generation != provider.generation]


def held(old, consumers):
    """The providers ``consumers`` (changed since ``old``, as Nova or our
    journal says) held in ``old``: read again whole, since a ``DELETE
    /allocations``, or a PUT that leaves a provider, bumps no generation of
    the providers it empties."""
    return {rp for uuid in consumers if uuid in old.consumers
            for rp in old.consumers[uuid].allocations}


def carried_over(old, providers):
    """``old``'s consumers on the ``providers`` still listed: ``old``'s
    own objects where they hold on nothing else (:func:`merged` copies
    one before it changes it), copies of what is left of the others."""
    consumers = {}
    listed = providers.keys()
    for uuid, consumer in old.consumers.items():
        if consumer.allocations.keys() <= listed:
            consumers[uuid] = consumer
            continue
        kept = {rp: r for rp, r in consumer.allocations.items()
                if rp in providers}
        if kept:
            consumers[uuid] = _copied(consumer, kept)
    return consumers


def _copied(consumer, allocations):
    return m.Consumer(consumer.uuid, consumer.generation,
                      {rp: dict(r) for rp, r in allocations.items()},
                      consumer.project_id, consumer.user_id,
                      consumer.modified)


def merged(old, consumers, fresh):
    """``consumers`` with the providers of ``fresh`` (``{provider:
    {consumer: allocation}}``, read whole) replaced by what they hold;
    the consumers left holding nothing dropped.  ``old``'s own consumers
    are copied before they change: ``old`` stays as it was read."""
    reread = set(fresh)

    def own(uuid):
        entry = consumers[uuid]
        if entry is old.consumers.get(uuid):
            entry = consumers[uuid] = _copied(entry, entry.allocations)
        return entry

    for uuid in [u for u, c in consumers.items()
                 if not reread.isdisjoint(c.allocations)]:
        entry = own(uuid)
        for rp in reread & entry.allocations.keys():
            del entry.allocations[rp]
    for rp, allocations in fresh.items():
        for uuid, alloc in allocations.items():
            generation = alloc.get('consumer_generation')
            previous = old.consumers.get(uuid)
            if uuid not in consumers:
                entry = consumers[uuid] = m.Consumer(uuid, generation, {})
                if previous is not None and previous.generation == generation:
                    entry.project_id = previous.project_id
                    entry.user_id = previous.user_id
                    entry.modified = previous.modified
            else:
                entry = own(uuid)
                if entry.generation != generation:
                    # Written since it was read: its owner and age are not
                    # known any more (the refresh reads them again if
                    # needed).
                    entry.project_id = entry.user_id = entry.modified = None
            entry.generation = generation
            entry.allocations[rp] = dict(alloc['resources'])
    return {uuid: c for uuid, c in consumers.items() if c.allocations}
