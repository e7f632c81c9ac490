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

"""Decommissioning a dead hypervisor, as data (pure): everything that blocks
deleting its compute service and provider tree, and the repairs that
clear it.

Pure, like the rest of the engine: :func:`plan` takes a snapshot holding
the host's topology, every consumer on its provider trees and the servers
Nova still places on it, read just before (see
:mod:`orphan_dashboard.operations.decommission`).
"""

import dataclasses
import typing

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import ownership
from orphan_dashboard.audit.plan import recommended
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit.reasons import reason as why


@dataclasses.dataclass
class Step:
    """One consumer on the host's trees and the write that clears it."""

    consumer: str
    finding: m.Finding
    plan: typing.Optional[m.Plan] = None
    error: typing.Any = ''
    """Why no write clears it: a :class:`~reasons.Reason`."""
    optional: bool = False
    """An unknown consumer: deleted only by an explicit choice."""
    notes: tuple = ()
    """What the preview adds: where Placement may refuse the write for a
    provider's capacity (reasons)."""


@dataclasses.dataclass
class Decommission:
    name: str
    """What the operator asked for: a host, a hypervisor or a provider."""
    host: typing.Optional[str]
    service: typing.Optional[m.Service]
    roots: list
    providers: list
    """Every provider of the host's trees, children first (delete order)."""
    servers: list
    """Servers Nova still places there: not ours to move."""
    steps: list
    cell_down: typing.Any = ''
    """Why nothing of it may go while a cell is down: a reason."""
    foreign: dict = dataclasses.field(default_factory=dict)
    """``{root: Ownership}`` of the roots not proven Nova's: never
    deleted (but for the suspects Nova has no node for, which are
    :attr:`foreign_children`)."""
    names: dict = dataclasses.field(default_factory=dict)
    """``{provider uuid: name}`` of the trees."""
    nodes: list = dataclasses.field(default_factory=list)
    """Every compute node root of the host's service (several for an
    Ironic conductor)."""
    whole_service: bool = False
    """The operator chose the whole service, every node of it."""
    keeps_service: bool = False
    """A node of a multi-node service chosen alone: the service stays."""
    named_host: bool = False
    """The name was the compute host's, not one node's."""
    foreign_children: dict = dataclasses.field(default_factory=dict)
    """``{provider uuid: likely owner or None}``: the children of the
    trees another service owns or nobody proves Nova's, and the roots
    shaped like a compute node that nobody proves Nova's and Nova answers
    it has no node of (:func:`ownership.suspected`); each is deleted only
    when explicitly ticked by name."""
    child_named: typing.Any = ''
    """Why nothing is taken: the name is a child provider's, never
    decommissioned by itself nor taken for its host's tree (a reason), or
    ''."""
    replaced: dict = dataclasses.field(default_factory=dict)
    """``{root: Hypervisor}``: the roots Nova created a new compute node
    in place of (:meth:`.Topology.replaced_by`), taken alone, the host's
    service and new node kept."""

    def replacements(self):
        """What the operator is told of each replaced root: a reason."""
        return [reasons.replaced(self.names.get(r, r), h)
                for r, h in sorted(self.replaced.items())]

    @property
    def gone(self):
        """Nothing left to decommission: no service, no provider."""
        return (self.service is None and not self.providers and
                not self.child_named)

    @property
    def deletes_service(self):
        return self.service is not None and not self.keeps_service

    @property
    def other_nodes(self):
        """The service's nodes this decommission leaves alone."""
        return [n for n in self.nodes if n not in self.roots]

    @property
    def up(self):
        return (self.service is not None and not self.service.down and
                self.service.status != m.DOWN_CELL_STATUS)

    def refusals(self):
        """Why none of it is ours to delete: a child provider named, roots
        not proven Nova's."""
        return ([self.child_named] if self.child_named else []) + [
            reasons.not_ours(self._name(root), found.owner,
                             ownership.suspected(found))
            for root, found in sorted(self.foreign.items())]

    def child_blocker(self, uuid):
        """Why a foreign child stops the decommission: its owner and the
        owner's own way to remove it."""
        return child_reason(self.names.get(uuid, uuid), uuid,
                            self.foreign_children[uuid], self.host)

    def blockers(self, chosen=(), children=()):
        """Why the flow cannot run to its end now: reasons.  ``chosen``:
        the unknown consumers ticked; ``children``: the foreign children
        ticked."""
        found = [self.cell_down] if self.cell_down else []
        found += self.refusals()
        found += [self.child_blocker(c) for c in sorted(
            self.foreign_children, key=self._name) if c not in children]
        if self.keeps_service and self.named_host:
            found.append(why('blocker.several_nodes', host=self.service.host,
                             count=len(self.nodes), nodes=reasons.listing(
                                 self._name(n) for n in self.nodes)))
        elif self.keeps_service:
            found.extend(why('blocker.node_listed', node=self._name(n),
                             host=self.service.host)
                         for n in self.roots if n in self.nodes)
        if self.up and self.deletes_service:
            found.append(why('blocker.service_up', host=self.service.host))
        if self.servers:
            found.append(why('blocker.servers', servers=reasons.listing(
                '%s (%s)' % (s.name or s.uuid, s.uuid)
                for s in self.servers)))
        for step in self.steps:
            if step.error:
                found.append(why('blocker.consumer', consumer=step.consumer,
                                 error=step.error))
            elif step.optional and step.consumer not in chosen:
                found.append(why('blocker.unknown_consumer',
                                 consumer=step.consumer))
        return found

    @property
    def optional(self):
        """The unknown consumers a confirm deletes only when ticked."""
        return [s.consumer for s in self.steps if s.optional]

    def actionable(self):
        """Nothing blocks it but the unknown consumers and the foreign
        children, which are offered to tick: the confirm may be shown."""
        return not self.gone and not self.blockers(self.optional,
                                                   self.foreign_children)

    def pick_children(self, wanted):
        """The foreign children named (by name or uuid, any case) in
        ``wanted``; the names that match none of them, as a second set."""
        wanted = {w.lower() for w in wanted}
        picked = {c for c in self.foreign_children
                  if c.lower() in wanted or
                  self.names.get(c, '').lower() in wanted}
        matched = {w for w in wanted for c in picked
                   if w in (c.lower(), self.names.get(c, '').lower())}
        return picked, wanted - matched

    def _name(self, uuid):
        return '%s (%s)' % (self.names.get(uuid, uuid), uuid)

    def binding(self):
        """What a confirm must find unchanged: the compute service and
        the providers the preview showed, and the choice of scope."""
        return {'service': self.service.uuid if self.service else None,
                'providers': sorted(self.providers),
                'whole_service': self.whole_service}

    def changed_since(self, bound):
        """Why this fresh plan is not the one ``bound`` (a
        :meth:`binding`) was shown, or None."""
        changes = []
        now = self.binding()
        if now['service'] != bound.get('service'):
            changes.append(why('changed.service', host=self.host,
                               uuid=now['service'] or '-',
                               was=bound.get('service') or '-'))
        added = sorted(set(now['providers']) -
                       set(bound.get('providers') or ()))
        gone = sorted(set(bound.get('providers') or ()) -
                      set(now['providers']))
        if added:
            changes.append(why('changed.added', providers=reasons.listing(
                self._name(p) for p in added)))
        if gone:
            changes.append(why('changed.gone', providers=reasons.listing(
                gone)))
        if now['whole_service'] != bool(bound.get('whole_service')):
            changes.append(why('changed.scope'))
        if not changes:
            return None
        return why('changed.decommission', changes=reasons.listing(changes))

    def plans(self, chosen=()):
        """The writes to make: every repair, and the chosen deletes."""
        return [s.plan for s in self.steps if s.plan and (
            not s.optional or s.consumer in chosen)]


def resolve(snapshot, name):
    """``(host, service, roots)`` for a compute host, hypervisor or
    provider name or uuid; roots are empty when nothing of it is left."""
    host, roots, _named_host, _child = _resolve(snapshot, name)
    topology = classify.Topology(snapshot)
    if host is not None:
        roots |= {topology.root(h.uuid) for h in snapshot.hypervisors.values()
                  if h.host == host}
    return host, snapshot.services.get(host), sorted(roots)


def _resolve(snapshot, name):
    """``(host, roots named, whether the name is the host's, the child
    provider named)``: a child provider's name names no root, and the
    child counts only when the name is nothing else's."""
    topology = classify.Topology(snapshot)
    wanted = name.lower()
    host = next((h for h in snapshot.services if h.lower() == wanted), None)
    named_host = host is not None
    roots = set()
    child = None
    for hypervisor in snapshot.hypervisors.values():
        if wanted in (hypervisor.uuid, hypervisor.hostname.lower()):
            host = host or hypervisor.host
            roots.add(topology.root(hypervisor.uuid))
    for provider in snapshot.providers.values():
        if wanted not in (provider.uuid, provider.name.lower()):
            continue
        if provider.root_uuid != provider.uuid:
            child = provider
            continue
        roots.add(provider.uuid)
        hypervisor = snapshot.hypervisors.get(provider.uuid)
        host = host or (hypervisor.host if hypervisor else None)
    if host is not None or roots:
        child = None
    return host, roots, named_host, child


def plan(snapshot, name, min_age, whole_service=False, *,
         stuck_after=m.STUCK_AFTER):
    """What decommissioning ``name`` takes, from a fresh snapshot.

    A node of a service with several (an Ironic conductor's) is handled
    alone, its service kept, unless ``whole_service``: deleting the service
    deletes every node's provider, never the side effect of naming one.
    So is a provider Nova created a new compute node in place of
    (:meth:`.Topology.replaced_by`), named by the host or itself: the
    host's service and new node are alive.
    """
    host, roots, named_host, child = _resolve(snapshot, name)
    service = snapshot.services.get(host)
    auditor = classify.Auditor(snapshot, min_age=min_age,
                               stuck_after=stuck_after)
    nodes = sorted({auditor.topology.root(h.uuid)
                    for h in snapshot.hypervisors.values()
                    if host is not None and h.host == host})
    keeps_service = len(nodes) > 1 and not whole_service
    if named_host or not keeps_service:
        roots |= set(nodes)
    replaced = {
        root: node for root, node in auditor.topology.replacements().items()
        if root in roots or node.uuid in roots}
    if whole_service:
        roots |= set(replaced)
        replaced = {}
    elif replaced:
        # The old provider alone: the host's service and its new node
        # are alive.
        roots, keeps_service, named_host = set(replaced), True, False
        host = host or next(iter(replaced.values())).host
        service = snapshot.services.get(host)
    roots = sorted(roots)
    tree = set(auditor.topology.children_first(roots))
    servers = sorted((s for s in snapshot.servers.values()
                      if (host and not keeps_service and s.host == host) or
                      auditor.topology.server_root(s) in roots),
                     key=lambda s: (s.name, s.uuid))
    living = {s.uuid for s in servers}
    steps = []
    for uuid in sorted(snapshot.consumers):
        consumer = snapshot.consumers[uuid]
        if uuid in living or not set(consumer.allocations) & tree:
            continue
        steps.append(_step(auditor, uuid, tree))
    owners = {root: ownership.root_ownership(snapshot, root)
              for root in roots}
    children = {c: o for c, o in ownership.child_owners(snapshot).items()
                if c in tree}
    children.update((r, None) for r, found in owners.items()
                    if ownership.suspected(found) and
                    auditor.topology.node_gone(r))
    return Decommission(name=name, host=host, service=service, roots=roots,
                        providers=auditor.topology.children_first(roots),
                        servers=servers, steps=steps,
                        cell_down=_cell_down(snapshot, auditor, host, roots),
                        foreign={r: found for r, found in owners.items()
                                 if found.owner != ownership.NOVA and
                                 r not in children},
                        names={p.uuid: p.name
                               for p in snapshot.providers.values()
                               if p.root_uuid in roots or p.uuid in nodes},
                        nodes=nodes, whole_service=whole_service,
                        keeps_service=keeps_service, named_host=named_host,
                        foreign_children=children, replaced=replaced,
                        child_named=child and _child_named(snapshot, child))


def _child_named(snapshot, child):
    """Why a child provider is not decommissioned by itself: its host's
    tree is, named by its root."""
    root = snapshot.providers.get(child.root_uuid)
    root_name = root.name if root else child.root_uuid
    return why('blocker.child_named',
               provider='%s (%s)' % (child.name, child.uuid),
               root='%s (%s)' % (root_name, child.root_uuid),
               host=root_name)


def child_reason(name, uuid, owner, host):
    """A child of a dead host's tree that is not Nova's: whose it likely
    is and how its owner removes it, or that nobody is proven."""
    provider = '%s (%s)' % (name, uuid)
    if owner is None:
        return why('blocker.unproven_child', provider=provider)
    return why('blocker.foreign_child', provider=provider,
               owner=owner.capitalize(), remedy=_remedy(name, owner, host))


def _remedy(name, owner, host):
    """The owner's own command for its provider: Neutron deletes an
    agent's providers with the agent, Blazar its ``blazar_<host>`` with
    the host, Cyborg a device as its agent stops reporting it."""
    if owner == ownership.NEUTRON:
        agent_host = name.split(':', 1)[0] if ':' in name else host
        return why('remedy.neutron', command=(
            'openstack network agent list --host %s; openstack network '
            'agent delete <agent ID>' % agent_host))
    if owner == ownership.BLAZAR:
        blazar_host = name[len('blazar_'):] if name.startswith(
            'blazar_') else host
        return why('remedy.blazar', command=(
            'openstack reservation host delete %s' % blazar_host))
    if owner == ownership.CYBORG:
        return why('remedy.cyborg', host=host or '-', command=(
            'openstack accelerator device list'))
    return why('remedy.other', owner=owner.capitalize())


def _cell_down(snapshot, auditor, host, roots):
    """Why Nova's reach forbids this decommission now (a down cell, a
    node it did not answer for, a host not mapped yet), or ''."""
    if host in snapshot.down_hosts:
        return why('blocker.not_now', reason=why(
            'protected.down_cell_host', host=host))
    for root in roots:
        reach = auditor.out_of_reach(root)
        if reach:
            return why('blocker.not_now', reason=reach)
    return ''


def _step(auditor, uuid, tree):
    here = [f for f in auditor.consumer_findings(uuid) if f.provider in tree]
    finding = here[0] if here else auditor.finding(uuid, sorted(tree)[0])
    chosen = recommended(here)
    optional = False
    if not chosen:
        unknown = [f for f in here if f.verdict == m.UNKNOWN_CONSUMER and
                   m.DELETE in f.actions]
        if unknown:
            chosen, optional = [(unknown[0], m.DELETE)], True
    if not chosen:
        if finding.verdict == m.PROTECTED:
            error = why('blocker.not_now', reason=finding.reason)
        elif finding.blocked:
            error = why('blocker.blocked', reason=finding.reason,
                        blocked=finding.blocked)
        else:
            error = why('blocker.no_repair', reason=finding.reason)
        return Step(uuid, finding, error=error)
    finding, action = chosen[0]
    write = auditor.plan(uuid, finding.provider, action)
    left = sorted(set(write.after) & tree)
    if left:
        return Step(uuid, finding, error=why(
            'blocker.still_on', action=reasons.action_name(action),
            providers=reasons.listing(auditor.topology.name(p)
                                      for p in left)))
    return Step(uuid, finding, plan=write, optional=optional)
