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

"""Repairs as data: what one write leaves a consumer holding.

:func:`target` is the only place that decides what a repair writes; the
auditor offers a repair only when its target puts the whole consumer right
(:meth:`classify.Auditor.consumer_findings`), and plans it with the same
function (:meth:`classify.Auditor.plan`).  A target is computed from the
consumer as Placement holds it in the snapshot (a repair re-reads it first)
and is written in one generation-checked PUT, so a running server never
holds nothing, not even for a moment.
"""

import typing

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import ports
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit.reasons import action_name
from orphan_dashboard.audit.reasons import format_allocations
from orphan_dashboard.audit.reasons import format_resources
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.audit import server_needs
from orphan_dashboard.audit import stalls


class CannotRepair(reasons.Refusal):
    """This repair cannot be planned; its :class:`~reasons.Reason` says
    why."""


class Target(typing.NamedTuple):
    after: m.ByProvider
    project_id: typing.Optional[str]
    user_id: typing.Optional[str]
    bindings: dict = {}
    """``{port id: {group: provider}}``: what each port's binding must
    name before Placement is written (:attr:`~model.Plan.ports`)."""
    kept: tuple = ()
    """The protected providers the target holds exactly as read."""
    partner: typing.Optional[tuple] = None
    """``(consumer, after, project, user)``: the other consumer the same
    write leaves holding ``after`` (:func:`_moved_back`)."""


def owner(snapshot, consumer_uuid):
    """The project and user a write must name.

    The consumer's own, except where Placement holds none or the pre-1.8
    placeholder: then its server's, as ``heal_allocations`` does.
    """
    consumer = snapshot.consumers.get(consumer_uuid)
    project = consumer.project_id if consumer else None
    user = consumer.user_id if consumer else None
    server = snapshot.servers.get(consumer_uuid)
    if server is not None and server.project_id and server.user_id and (
            not project or not user or m.INCOMPLETE in (project, user)):
        return server.project_id, server.user_id
    return project, user


def _port_share(topology, server):
    """``(share, bindings)``: what the server's ports request on the
    providers of its node's tree (``{provider: Resources}``), and the
    bindings that must name the providers Placement's one candidate chose
    (:func:`ports.requested`); ``(None, {})`` where ports are not judged.

    Raises :class:`CannotRepair` for a port whose request no single
    candidate there places: which NIC should serve it cannot be told.
    """
    snapshot = topology.snapshot
    if not ports.judged(snapshot):
        return None, {}
    request = ports.requested(topology, server)
    if request.unplaced:
        raise CannotRepair(why(
            'cannot.port_unplaced', server=server.uuid, host=server.node,
            ports=', '.join(sorted({p.name or p.id
                                    for p in request.unplaced})),
            candidates=candidates_said(topology, request)))
    return ({p: dict(r) for p, r in request.wanted.items()},
            request.bindings)


def candidates_said(topology, request):
    """What Placement's candidates say of ``request``'s unplaced ports, in
    words naming them: none, several, or no answer."""
    if request.candidates is None:
        return why('candidates.unread')
    if not request.candidates:
        return why('candidates.none')
    return why('candidates.several', providers=', '.join(
        topology.name(p) for p in request.candidates))


def _rebuilt_ports(topology, server, after, root):
    """``(after, bindings)``: ``after`` with the port providers of
    ``root``'s tree holding what the server's ports request there, nothing
    more (unchanged where ports are not judged), and the bindings that
    must name the providers newly chosen for them."""
    share, bindings = _port_share(topology, server)
    if share is None:
        return after, {}
    rebuilt = {p: r for p, r in after.items()
               if topology.root(p) != root or
               not ports.is_port_provider(topology, p)}
    rebuilt.update(share)
    return rebuilt, bindings


def _healed(topology, server, before, root):
    """``before`` with the node's share rebuilt from the flavor.

    Returns ``(after, bindings)`` (see :func:`_rebuilt_ports`).  Port
    providers hold what the server's ports request (where Neutron was
    read); other nested children (vGPU, PCI) are kept as they are: the API
    cannot rebuild them.  Classes a sharing provider serves stay there, at
    the amount the flavor needs.
    """
    if server.flavor is None or server.flavor.extra_specs is None:
        raise CannotRepair(why('cannot.no_flavor', server=server.uuid))
    try:
        candidates = server_needs.expected_resources(server)
    except server_needs.CannotHeal as exc:
        raise CannotRepair(why('cannot.heal', server=server.uuid,
                               why=exc.reason))
    current = before.get(root, {})
    needs = next((c for c in candidates
                  if c.get(server_needs.DISK_GB) ==
                  current.get(server_needs.DISK_GB)),
                 candidates[0])
    _keeps_what_the_image_could_explain(topology, server, before, needs)
    after = {}
    shared = {}
    for provider, resources in before.items():
        if topology.is_sharing(provider):
            after[provider] = dict(resources)
            for rc in resources:
                shared.setdefault(rc, []).append(provider)
        elif provider != root and topology.root(provider) == root:
            after[provider] = dict(resources)
    for rc, providers in shared.items():
        if rc not in needs:
            continue
        if len(providers) > 1:
            raise CannotRepair(why('cannot.split_sharing',
                                   resource_class=rc, count=len(providers)))
        after[providers[0]][rc] = needs[rc]
    in_children = {rc for p, r in after.items()
                   if not topology.is_sharing(p) for rc in r}
    root_needs = {rc: n for rc, n in needs.items()
                  if rc not in shared and rc not in in_children}
    if root_needs:
        after[root] = root_needs
    return _rebuilt_ports(topology, server, after, root)


def _keeps_what_the_image_could_explain(topology, server, before, needs):
    """Refuse to rebuild from ``needs`` (what the flavor says) a tree
    holding what the server's unread image could explain (a pinned CPU,
    memory encryption): the rebuild would turn PCPU into VCPU."""
    shared, trees = {}, {}
    for provider, resources in before.items():
        totals = shared if topology.is_sharing(provider) else \
            trees.setdefault(topology.root(provider), {})
        for rc, amount in resources.items():
            totals[rc] = totals.get(rc, 0) + amount
    for totals in trees.values():
        held = {rc: totals.get(rc, 0) + shared.get(rc, 0)
                for rc in set(totals) | set(shared)}
        if server_needs.explained_by_image(server, held, needs):
            raise CannotRepair(why(
                'cannot.image_unread', server=server.uuid,
                held=format_resources(held), needs=format_resources(needs),
                why=reasons.image_unread(server)))


def _keeps_what_cannot_be_rebuilt(topology, server, before, after):
    """Refuse to drop what a flavor cannot rebuild.

    Resources on nested children of another host (bandwidth of a port,
    PCI devices, vGPUs, accelerators) may only go if the server's current
    tree holds the same classes already.
    """
    kept = {rc for resources in after.values() for rc in resources}
    judged = ports.judged(topology.snapshot)
    lost = []
    for provider, resources in sorted(before.items()):
        if provider in after or not topology.is_child(provider):
            continue
        if judged and ports.is_port_provider(topology, provider):
            # What the ports request was rebuilt; the verdicts on the
            # result say whether it is right.
            continue
        gone = {rc: n for rc, n in resources.items() if rc not in kept}
        if gone:
            lost.append(why('cannot.on_child',
                            resources=format_resources(gone),
                            provider=topology.name(provider),
                            root=topology.name(topology.root(provider))))
    if lost:
        raise CannotRepair(why('cannot.not_rebuildable',
                               lost=reasons.listing(lost),
                               server=server.uuid))


def _released(topology, server, before, root):
    """``before`` less what no port requests on the port providers of
    ``root``'s tree: exactly the leaked amounts, nothing else."""
    share, _bindings = _port_share(topology, server)
    if share is None:
        raise CannotRepair(why('cannot.nothing_to_change'))
    after = {}
    for provider, resources in before.items():
        if (topology.root(provider) == root and
                ports.is_port_provider(topology, provider)):
            want = share.get(provider, {})
            resources = {rc: min(n, want.get(rc, 0))
                         for rc, n in resources.items()
                         if want.get(rc, 0)}
            if not resources:
                continue
        after[provider] = dict(resources)
    return after


def protected_rows(findings):
    """The providers whose row among ``findings`` (one consumer's) is
    protected: no repair of that consumer may change what it holds there,
    whichever of its rows was chosen."""
    return frozenset(f.provider for f in findings if f.verdict == m.PROTECTED)


def _keeping(before, after, kept):
    """``after`` with each provider of ``kept`` holding exactly what it
    holds in ``before`` (nothing where it holds nothing)."""
    after = {p: r for p, r in after.items() if p not in kept}
    after.update((p, dict(before[p])) for p in kept if p in before)
    return after


def target(snapshot, topology, consumer_uuid, action, kept=frozenset()):
    """What ``action`` leaves ``consumer_uuid`` holding, and in whose name.

    ``kept``: the providers whose rows are protected
    (:func:`protected_rows`), held exactly as read whatever the action.
    Every repair writes the whole consumer, so this is the one place that
    keeps a write inside what the audit judged.  Raises
    :class:`CannotRepair` when the repair cannot be made.
    """
    consumer = snapshot.consumers.get(consumer_uuid)
    before = consumer.allocations if consumer else {}
    server = snapshot.servers.get(consumer_uuid)
    root = topology.server_root(server) if server is not None else None
    bindings = {}
    stall = stalls.of(snapshot, topology, consumer_uuid)
    if action == m.MOVE_BACK:
        return _moved_back(snapshot, consumer_uuid, stall, kept)
    if stall is not None and consumer_uuid in stall.consumers and \
            action in stalls.WRITES and \
            action not in stalls.WRITES[stall.action]:
        raise CannotRepair(why('cannot.stall_takes',
                               action=action_name(stall.action)))
    if action == m.DELETE:
        after = {}
    elif action == m.TRIM:
        if root is None:
            raise CannotRepair(why('cannot.no_node_to_trim'))
        after = {p: dict(r) for p, r in before.items()
                 if topology.legitimate(root, p)}
        if not any(topology.root(p) == root for p in after):
            raise CannotRepair(why('cannot.trim_leaves_nothing',
                                   host=server.node))
        after, bindings = _rebuilt_ports(topology, server, after, root)
    elif action == m.RELEASE:
        if root is None:
            raise CannotRepair(why('cannot.no_node_to_trim'))
        after = _released(topology, server, before, root)
    elif action in (m.DELETE_AND_HEAL, m.HEAL):
        if server is None:
            raise CannotRepair(why('cannot.not_a_server'))
        if root is None:
            if action == m.HEAL:
                raise CannotRepair(why('cannot.no_node_to_heal'))
            after = {}
        else:
            after, bindings = _healed(topology, server, before, root)
            if action == m.HEAL:
                after = {**{p: dict(r) for p, r in before.items()}, **after}
    elif action == m.SET_OWNER:
        after = {p: dict(r) for p, r in before.items()}
    else:
        raise CannotRepair(why('cannot.unknown_action', action=action))
    after = _keeping(before, after, kept)
    if action in (m.TRIM, m.DELETE_AND_HEAL, m.HEAL):
        _keeps_what_cannot_be_rebuilt(topology, server, before, after)
    project, user = owner(snapshot, consumer_uuid)
    now = (consumer.project_id, consumer.user_id) if consumer else (None,
                                                                    None)
    if after == before and not bindings and (
            not after or (project, user) == now):
        raise CannotRepair(why('cannot.nothing_to_change'))
    if after and not (project and user):
        raise CannotRepair(why('cannot.unknown_owner',
                               consumer=consumer_uuid))
    return Target(after, project, user, bindings,
                  tuple(sorted(p for p in kept if p in before)))


def _moved_back(snapshot, consumer_uuid, stall, kept):
    """The one write that puts a stuck move's allocations where its server
    runs, as Nova's ``revert_allocation_for_migration`` does: the server's
    consumer holds what the migration's holds, the migration's holds
    nothing, nothing is left on the destination."""
    if stall is None or stall.action != m.MOVE_BACK:
        raise CannotRepair(why('cannot.not_stuck'))
    if kept:
        raise CannotRepair(why('cannot.stuck_kept', providers=', '.join(
            sorted(kept))))
    server, migration = stall.server.uuid, stall.migration.uuid
    moving = snapshot.consumers[migration]
    after = {server: {p: dict(r) for p, r in moving.allocations.items()},
             migration: {}}
    owners = {server: owner(snapshot, server),
              migration: owner(snapshot, migration)}
    project, user = owners[server]
    if not (project and user):
        raise CannotRepair(why('cannot.unknown_owner', consumer=server))
    other = migration if consumer_uuid == server else server
    return Target(after[consumer_uuid], *owners[consumer_uuid],
                  partner=(other, after[other]) + owners[other])


def port_writes(snapshot, bindings):
    """:attr:`~model.Plan.ports` of a target's ``bindings``: each port's
    ``binding:profile`` as read and as it must be written."""
    writes = {}
    for port_id, placed in sorted(bindings.items()):
        port = snapshot.ports[port_id]
        writes[port_id] = {'name': port.name, 'revision': port.revision,
                           'before': dict(port.profile),
                           'after': ports.binding_after(port, placed)}
    return writes


def plan(snapshot, finding, action, target_):
    """The :class:`~model.Plan` writing ``target_`` for ``finding``."""
    consumer = snapshot.consumers.get(finding.consumer)
    before_owner = ((consumer.project_id, consumer.user_id) if consumer
                    else (None, None))
    after_owner = (target_.project_id, target_.user_id)
    changed = bool(target_.after) and before_owner != after_owner
    return m.Plan(
        action=action, consumer=finding.consumer, provider=finding.provider,
        verdict=finding.verdict, reason=str(finding.reason),
        generation=consumer.generation if consumer and consumer.allocations
        else None,
        project_id=target_.project_id, user_id=target_.user_id,
        before={p: dict(r) for p, r in (consumer.allocations
                                        if consumer else {}).items()},
        after=target_.after,
        before_project=before_owner[0] if changed else None,
        before_user=before_owner[1] if changed else None,
        ports=port_writes(snapshot, target_.bindings),
        kept=list(target_.kept), partner=_partner(snapshot, target_))


def _partner(snapshot, target_):
    """:attr:`~model.Plan.partner` of ``target_``, from the snapshot."""
    if target_.partner is None:
        return None
    uuid, after, project, user = target_.partner
    consumer = snapshot.consumers.get(uuid)
    return {'consumer': uuid,
            'generation': consumer.generation if consumer and
            consumer.allocations else None,
            'project_id': project, 'user_id': user,
            'before': {p: dict(r) for p, r in (
                consumer.allocations if consumer else {}).items()},
            'after': after}


def refusal(finding, action, provider_name):
    """Why ``finding`` does not offer ``action``: a
    :class:`~reasons.Reason`."""
    name = action_name(action)
    if finding.verdict == m.OK and not finding.resources:
        return why('refused.nothing_left', action=name,
                   consumer=finding.consumer, provider=provider_name)
    if finding.verdict == m.OK:
        return why('refused.nothing_to_do', action=name,
                   reason=finding.reason)
    if finding.verdict == m.PROTECTED:
        return why('refused.not_now', reason=finding.reason)
    if finding.blocked or not finding.actions:
        return why('refused.cannot', action=name,
                   reason=finding.blocked or finding.reason)
    return why('refused.other_repairs', action=name, reason=finding.reason,
               actions=reasons.listing(action_name(a)
                                       for a in finding.actions))


def restore_plan(entry, consumer, ports_now=None):
    """Undo a journaled write: ``entry.after`` back to ``entry.before``.

    ``consumer`` is the consumer as just re-read, ``ports_now`` (``{port
    id: Port or None}``) the ports whose binding the entry wrote.  Refused
    unless all are exactly as the entry left them (allocations, owner,
    bindings), so a restore never clobbers a later change by Nova, Neutron
    or another admin; the bindings are put back first, as they went.
    """
    now = consumer.allocations if consumer else {}
    before_owner = (entry.before_project or entry.consumer_project,
                    entry.before_user or entry.consumer_user)
    now_owner = (consumer.project_id, consumer.user_id) if consumer and \
        now else (None, None)
    bindings = entry.ports or {}
    profiles = {p: (ports_now or {}).get(p) for p in bindings}
    profiles = {p: port.profile if port is not None else None
                for p, port in profiles.items()}
    if now == entry.before and (not now or now_owner == before_owner) and \
            all(profiles[p] == c['before'] for p, c in bindings.items()):
        raise CannotRepair(why('cannot.already_restored',
                               consumer=entry.consumer))
    if now != entry.after or (now and now_owner != (entry.consumer_project,
                                                    entry.consumer_user)):
        raise CannotRepair(why('cannot.changed_since',
                               consumer=entry.consumer,
                               now=format_allocations(now),
                               then=format_allocations(entry.after)))
    for port, change in sorted(bindings.items()):
        if profiles[port] != change['after']:
            raise CannotRepair(why(
                'cannot.port_changed_since', port=port,
                now=_allocation_of(profiles[port]),
                then=_allocation_of(change['after'])))
    return m.Plan(action=m.RESTORE, consumer=entry.consumer,
                  provider=entry.provider, verdict=entry.verdict,
                  reason='restore of journal entry %s' % entry.id,
                  generation=consumer.generation if now else None,
                  project_id=before_owner[0], user_id=before_owner[1],
                  before={p: dict(r) for p, r in now.items()},
                  after={p: dict(r) for p, r in entry.before.items()},
                  before_project=now_owner[0] if entry.before_project
                  else None,
                  before_user=now_owner[1] if entry.before_project else None,
                  ports={p: {'name': change.get('name', ''),
                             'revision': ports_now[p].revision,
                             'before': profiles[p],
                             'after': change['before']}
                         for p, change in bindings.items()})


def _allocation_of(profile):
    """A binding's allocation in words (the port gone: none)."""
    if profile is None:
        return '-'
    return str(profile.get('allocation') or '-')


def recommended(findings):
    """One recommended repair per consumer: ``[(finding, action)]``.

    A consumer can have several findings (left on an old host *and*
    missing on its current one, as after a failed cold migration): one
    write fixes them all, and a second would be refused for the generation
    the first one moved.
    """
    chosen = {}
    for finding in findings:
        if not finding.action:
            continue
        best = chosen.get(finding.consumer)
        if best is None or (m.PRIORITY.index(finding.action) <
                            m.PRIORITY.index(best.action)):
            chosen[finding.consumer] = finding
    return [(f, f.action) for f in chosen.values()]


def recommended_selections(findings):
    """The recommended repair of each consumer among ``findings``."""
    return [m.Selection(f.consumer, f.provider, action)
            for f, action in recommended(findings)]


def frees_first(plans):
    """``plans`` in the order a batch writes them: those that only take
    resources off their providers first, then those that add any (a heal,
    a move), each group as given.  Placement before 14.0.0 (bug 2104040)
    refuses any write onto a provider over its capacity, even one that
    makes it no worse: a batch's deletes on a provider must come before
    its heals there."""
    return sorted(plans, key=_adds)


def _adds(plan):
    """Whether ``plan`` leaves any provider holding more of a class than
    its consumer held there before."""
    return any(amount > plan.before.get(provider, {}).get(rc, 0)
               for provider, resources in plan.after.items()
               for rc, amount in resources.items())


def unknown_deletes(findings):
    """The delete of every unknown consumer among ``findings`` that may be
    deleted, one per consumer: never recommended (Zun's containers,
    Blazar's reservations or a consumer written by hand look the same,
    as do the leftovers of servers ``archive_deleted_rows`` purged), taken
    only when an operator chooses them all (``orphan-audit apply
    --yes-unknown``, the panel's *Delete unknown consumers*)."""
    chosen = {}
    for finding in findings:
        if finding.verdict == m.UNKNOWN_CONSUMER and \
                m.DELETE in finding.actions:
            chosen.setdefault(finding.consumer, m.Selection(
                finding.consumer, finding.provider, m.DELETE))
    return list(chosen.values())


def instance_hints(findings, selections):
    """The servers behind the selected migration consumers, as the
    snapshot the operator saw knew them: a repair reads their migrations
    too, from what was shown, never from the request."""
    consumers = {s.consumer for s in selections}
    return sorted({f.instance for f in findings
                   if f.consumer in consumers and f.instance and
                   f.instance != f.consumer})
