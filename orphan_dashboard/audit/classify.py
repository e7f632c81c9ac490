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

"""Verdicts: why each allocation exists, and whether it should.

Pure functions over a :class:`~orphan_dashboard.audit.model.Snapshot`.  The
rules follow ``nova-manage placement audit`` and ``heal_allocations``
(``nova/cmd/manage.py``) but only from what the public APIs show, and err on
the side of :data:`~model.PROTECTED`: a wrong "orphaned" costs a running
server its resources, a missed one only costs capacity.

:meth:`Auditor.consumer_findings` is the only source of a finding: the
report (gathered in :mod:`report`), the preview, the confirm, the CLI and
restore all ask it.
"""

import dataclasses
import datetime

from orphan_dashboard.audit import heal
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan
from orphan_dashboard.audit import ports
from orphan_dashboard.audit.reasons import action_name
from orphan_dashboard.audit.reasons import format_resources
from orphan_dashboard.audit.reasons import image_unread
from orphan_dashboard.audit.reasons import named
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.audit.reasons import verdict_name
from orphan_dashboard.audit import report
from orphan_dashboard.audit.topology import Topology

MOVE_AWAITING_CONFIRM = 'finished'
"""A resize or cold migration in VERIFY_RESIZE."""
DOWN_CELL_CONSUMER = 'protected.down_cell_consumer'
"""The reason of a consumer Nova did not say it knows while a cell is
down: it could be the down cell's (a migration's, whose uuid has no
instance mapping to answer for it)."""
IMAGE_UNREAD = 'protected.image_unread'
"""The reason of a server's allocation that what its boot image made Nova
allocate could explain, while Nova has not shown that image."""


def _age(since, now):
    if since is None or now is None:
        return None
    if isinstance(since, str):
        try:
            since = datetime.datetime.fromisoformat(
                since.replace('Z', '+00:00'))
        except ValueError:
            return None
    if since.tzinfo is None:
        since = since.replace(tzinfo=datetime.timezone.utc)
    return (now - since).total_seconds()


def _add(totals, resources):
    for rc, amount in resources.items():
        totals[rc] = totals.get(rc, 0) + amount


def kept_as_read(finding, before, after):
    """A protected allocation that a repair leaves exactly as it is (a
    share on a host of a down cell, a port's while Neutron is unread): it
    does not stand in the way of the repair of the rest."""
    return (finding.verdict == m.PROTECTED and
            after.get(finding.provider) == before.get(finding.provider))


def awaits_nova(finding):
    """Protected only because a cell is down and Nova was not asked what
    its consumer is: its instance actions may still answer (through the
    instance's mapping, from a healthy cell), so the sweep asks."""
    return getattr(finding.reason, 'code', None) == DOWN_CELL_CONSUMER


def awaits_image(finding):
    """Protected only because its server's boot image properties are not
    known yet: Nova shows them one server at a time, so the sweep asks."""
    return getattr(finding.reason, 'code', None) == IMAGE_UNREAD


def _move(migration):
    """A migration in words: "resize 1f0e... (host2 → host3)"."""
    return why('move', type=migration.migration_type or 'migration',
               migration=migration.uuid,
               source=(migration.source_compute or migration.source_node or
                       '?'),
               dest=migration.dest_compute or migration.dest_node or '?')


class Auditor:
    """Classifies every allocation of one snapshot.  ``min_age`` (seconds:
    allocations written more recently are protected) is always the
    caller's: the engine reads no setting, and the default is the
    setting's (``ORPHAN_AUDIT_MIN_AGE``)."""

    def __init__(self, snapshot, now=None, *, min_age):
        self.snapshot = snapshot
        self.topology = Topology(snapshot)
        self.now = now or snapshot.taken_at
        self.min_age = min_age
        self.down_cells = snapshot.down_cells
        self.in_progress = {}
        self.evacuations = {}
        for migration in snapshot.migrations.values():
            if migration.status in m.MIGRATION_IN_PROGRESS:
                self.in_progress.setdefault(migration.instance_uuid,
                                            migration)
            if (migration.migration_type == 'evacuation' and
                    migration.status in m.EVACUATION_DONE):
                self.evacuations[(migration.instance_uuid,
                                  migration.source_node)] = migration
        self._findings = {}

    # -- the one source of findings -----------------------------------------

    def consumer_findings(self, consumer_uuid):
        """Every finding on one consumer, each offering exactly the repairs
        whose write leaves the whole consumer ``ok``."""
        found = self._findings.get(consumer_uuid)
        if found is None:
            consumer = self.snapshot.consumers.get(consumer_uuid)
            held = consumer.allocations if consumer else {}
            owner = ((consumer.project_id, consumer.user_id) if consumer
                     else (None, None))
            judged = self._judge(consumer_uuid, held, owner)
            kept = plan.protected_rows(judged)
            found = self._findings[consumer_uuid] = [
                self._unneeded(self._offer(f, kept)) for f in judged]
        return found

    def finding(self, consumer_uuid, provider_uuid):
        """The finding on one (consumer, provider) row: what a preview, a
        confirm or the CLI checks a chosen repair against."""
        for finding in self.consumer_findings(consumer_uuid):
            if finding.provider == provider_uuid:
                return finding
        return m.Finding(consumer_uuid, provider_uuid, m.OK,
                         why('ok.nothing_left'), {}, (),
                         **self.describe(consumer_uuid))

    def target(self, consumer_uuid, action):
        """:func:`plan.target` of ``action``, holding the consumer's
        protected rows as read."""
        return plan.target(
            self.snapshot, self.topology, consumer_uuid, action,
            plan.protected_rows(self.consumer_findings(consumer_uuid)))

    def plan(self, consumer_uuid, provider_uuid, action):
        """The :class:`~model.Plan` of ``action`` on one row, or
        :class:`~plan.CannotRepair` saying why not."""
        finding = self.finding(consumer_uuid, provider_uuid)
        if action not in finding.actions:
            raise plan.CannotRepair(plan.refusal(
                finding, action, self.topology.name(provider_uuid)))
        return plan.plan(self.snapshot, finding, action,
                         self.target(consumer_uuid, action))

    def _unneeded(self, finding):
        """``finding`` with what it holds that nothing needs
        (:attr:`~model.Finding.unneeded`): all it holds where its verdict
        needs nothing of it (an orphan's; a leak's, whose resources are
        already what no port requests), what it holds beyond :meth:`needs`
        where its server needs some (a wrong amount's excess); nothing
        where it needs what it holds, or holds nothing."""
        kind = m.VERDICT_KINDS[finding.verdict]
        if not (kind.problem and kind.holds) or kind.needed == m.AS_HELD:
            return finding
        if kind.needed == m.FROM_FLAVOR:
            unneeded = ports.difference(finding.resources,
                                        self.needs(finding))[0]
        else:
            unneeded = dict(finding.resources)
        return dataclasses.replace(finding, unneeded=unneeded) \
            if unneeded else finding

    def _offer(self, finding, kept):
        candidates = m.CANDIDATE_ACTIONS[finding.verdict]
        if not candidates:
            return finding
        offered, refused = [], []
        for action in candidates:
            try:
                target = plan.target(self.snapshot, self.topology,
                                     finding.consumer, action, kept)
            except plan.CannotRepair as exc:
                refused.append(exc.reason)
                continue
            consumer = self.snapshot.consumers.get(finding.consumer)
            before = consumer.allocations if consumer else {}
            left = [f for f in self._judge(
                finding.consumer, target.after,
                (target.project_id, target.user_id), judge_age=False)
                if f.verdict != m.OK and
                not kept_as_read(f, before, target.after)]
            if left:
                refused.append(why(
                    'cannot.still_wrong', action=action_name(action),
                    verdict=verdict_name(left[0].verdict),
                    reason=left[0].reason))
            else:
                offered.append(action)
        return dataclasses.replace(finding, actions=tuple(offered),
                                   blocked='' if offered else refused[0])

    def _judge(self, consumer_uuid, held, owner, judge_age=True):
        """The verdicts on ``consumer_uuid`` holding ``held`` in the name of
        ``owner``, before any repair is offered; with ``judge_age``, those
        that would write are protected while the consumer is too young
        (:meth:`_too_young_to_write`)."""
        findings = {p: self._allocation_finding(consumer_uuid, p, r)
                    for p, r in held.items()}
        server = self.snapshot.servers.get(consumer_uuid)
        root = (self.topology.server_root(server) if server is not None
                else None)
        if root is not None:
            extra = self._server_finding(server, root, held)
            if extra is not None:
                findings[root] = extra
            findings.update(self._port_findings(server, root, held,
                                                findings))
        if (root is not None and m.INCOMPLETE in owner and
                all(f.verdict == m.OK for f in findings.values())):
            reason = why('incomplete_consumer', project=server.project_id,
                         user=server.user_id)
            findings = {p: dataclasses.replace(
                f, verdict=m.INCOMPLETE_CONSUMER, reason=reason,
                actions=m.CANDIDATE_ACTIONS[m.INCOMPLETE_CONSUMER])
                for p, f in findings.items()}
        young = judge_age and self._too_young_to_write(consumer_uuid)
        if young:
            findings = {
                p: dataclasses.replace(
                    f, verdict=m.PROTECTED, actions=(),
                    reason=why('protected.young_finding', young=young,
                               reason=f.reason)) if f.problem else f
                for p, f in findings.items()}
        return list(findings.values())

    def _too_young_to_write(self, consumer_uuid):
        """Why no repair may write ``consumer_uuid`` yet, if so: its last
        write or its server's creation is younger than the minimum age, and
        Nova may still be writing it (a build, a resize, a QoS update, a
        heal).  Every repair writes the whole consumer: this one rule
        protects every verdict that offers one."""
        consumer = self.snapshot.consumers.get(consumer_uuid)
        age = self._too_young(consumer and consumer.modified)
        if age is not None:
            return why('protected.young', age=age, min_age=self.min_age)
        server = self.snapshot.servers.get(consumer_uuid)
        age = self._too_young(server and server.created)
        if age is not None:
            return why('protected.young_server', age=age,
                       min_age=self.min_age)
        return None

    # -- single allocations -------------------------------------------------

    def out_of_reach(self, provider_uuid):
        """Why nothing on ``provider_uuid``'s tree may be judged now, or
        None: its compute node is a down cell's, or may be (Nova could not
        list its nodes), or Nova's listing left it out and Nova did not
        answer for it alone, or its host is not mapped to a cell yet."""
        host, unconfirmed = self.topology.cut_off(provider_uuid)
        if host:
            return why('protected.down_cell_host', host=host)
        if unconfirmed and not self.snapshot.hypervisors_listed:
            return why('protected.unconfirmed_node', provider=unconfirmed)
        if unconfirmed:
            return why('protected.unproven_node', provider=unconfirmed)
        root = self.topology.root(provider_uuid)
        if self.topology.unmapped(root):
            return why('protected.unmapped_node',
                       host=self.topology.name(root))
        return None

    def classify(self, consumer_uuid, provider_uuid, held=None):
        """``(verdict, reason, candidate actions)`` of one allocation."""
        reach = self.out_of_reach(provider_uuid)
        if reach:
            return m.PROTECTED, reach, ()
        server = self.snapshot.servers.get(consumer_uuid)
        if server is not None:
            return self._classify_server(server, provider_uuid)
        migration = self.snapshot.migrations.get(consumer_uuid)
        if migration is not None:
            return self._classify_migration(migration)
        if consumer_uuid in self.snapshot.known_instances:
            return (m.DELETED_INSTANCE,
                    self._deleted_reason(consumer_uuid, provider_uuid),
                    m.CANDIDATE_ACTIONS[m.DELETED_INSTANCE])
        if consumer_uuid in self.snapshot.unresolved:
            return m.PROTECTED, why('protected.unresolved'), ()
        if self.down_cells:
            return m.PROTECTED, why(DOWN_CELL_CONSUMER), ()
        return (m.UNKNOWN_CONSUMER, why('unknown_consumer'),
                m.CANDIDATE_ACTIONS[m.UNKNOWN_CONSUMER])

    def _deleted_reason(self, consumer_uuid, provider_uuid):
        """Why a deleted server's allocation is left behind; on a PCI
        device, what its repair may take with it: Nova keeps a device
        removed from ``device_spec`` in Placement only while an allocation
        holds it (Nova bug 2115905), and neither Placement nor Nova's API
        tells such a device from one still listed."""
        if self.topology.pci_device(provider_uuid):
            return why('deleted_instance.pci_device', server=consumer_uuid)
        return why('deleted_instance', server=consumer_uuid)

    def _server_protection(self, server):
        if server.down_cell:
            return why('protected.down_cell_server')
        if server.hidden:
            return why('protected.hidden', rule=', '.join(server.hidden))
        migration = self.in_progress.get(server.uuid)
        if server.status == 'VERIFY_RESIZE' or (
                migration is not None and
                migration.status == MOVE_AWAITING_CONFIRM):
            if migration is None:
                return why('protected.resize_awaiting_confirm')
            return why('protected.awaiting_confirm', move=_move(migration))
        if server.task_state:
            return why('protected.task', task=server.task_state)
        if server.status == 'BUILD' or server.vm_state == 'building':
            return why('protected.building')
        if migration is not None:
            return why('protected.moving', move=_move(migration),
                       status=migration.status)
        return None

    def _classify_server(self, server, provider_uuid):
        protection = self._server_protection(server)
        if protection:
            return m.PROTECTED, protection, ()
        root = self.topology.server_root(server)
        if self.topology.legitimate(root, provider_uuid):
            return m.OK, why('ok.lives_here', server=server.name or
                             server.uuid, host=server.node), ()
        if root is None and server.node:
            return (m.PROTECTED,
                    why('protected.no_provider', node=server.node), ())
        if root is None and server.status == m.SHELVED_OFFLOADED_STATUS:
            return (m.SHELVED_OFFLOADED, why('shelved_offloaded'),
                    m.CANDIDATE_ACTIONS[m.SHELVED_OFFLOADED])
        if root is None:
            return (m.MOVED, why('moved.no_node', status=server.status),
                    m.CANDIDATE_ACTIONS[m.MOVED])
        here = self.topology.provider(self.topology.root(provider_uuid))
        evacuation = self.evacuations.get((server.uuid, here.name))
        if evacuation is not None:
            return (m.EVACUATED_SOURCE,
                    why('evacuated_source', source=here.name,
                        host=server.node, migration=evacuation.uuid,
                        status=evacuation.status),
                    m.CANDIDATE_ACTIONS[m.EVACUATED_SOURCE])
        return (m.MOVED, why('moved', host=server.node),
                m.CANDIDATE_ACTIONS[m.MOVED])

    def _classify_migration(self, migration):
        server = self._server_named(migration.instance_uuid)
        if migration.status in m.MIGRATION_FINAL:
            return (m.STALE_MIGRATION,
                    why('stale_migration', move=_move(migration),
                        server=server, status=migration.status),
                    m.CANDIDATE_ACTIONS[m.STALE_MIGRATION])
        if migration.status == MOVE_AWAITING_CONFIRM:
            return (m.PROTECTED,
                    why('protected.source_awaiting_confirm',
                        move=_move(migration), server=server), ())
        return (m.PROTECTED,
                why('protected.migration', move=_move(migration),
                    server=server, status=migration.status), ())

    def _server_named(self, uuid):
        """A server as a reason names it: its name with its uuid beside,
        where Nova still has it."""
        server = self.snapshot.servers.get(uuid)
        return named(uuid, {uuid: server.name} if server else {})

    def _too_young(self, since):
        """Seconds since ``since`` if fewer than the minimum age."""
        age = _age(since, self.now)
        if age is not None and self.min_age and age < self.min_age:
            return int(max(age, 0))
        return None

    def describe(self, consumer_uuid):
        """What Nova says of a consumer, and whose it is (its server's
        owner, else Placement's), as :class:`~model.Finding` fields."""
        server = self.snapshot.servers.get(consumer_uuid)
        if server is not None:
            return dict(nova=why('nova.server', name=server.name,
                                 status=server.status),
                        host=server.node, instance=server.uuid, live=True,
                        project_id=server.project_id, user_id=server.user_id)
        consumer = self.snapshot.consumers.get(consumer_uuid)
        owner = {}
        if consumer is not None and m.INCOMPLETE not in (
                consumer.project_id, consumer.user_id):
            owner = dict(project_id=consumer.project_id,
                         user_id=consumer.user_id)
        migration = self.snapshot.migrations.get(consumer_uuid)
        if migration is not None:
            return dict(nova=why('nova.migration',
                                 type=migration.migration_type,
                                 source=migration.source_node,
                                 dest=migration.dest_node,
                                 status=migration.status),
                        instance=migration.instance_uuid,
                        live=migration.instance_uuid in self.snapshot.servers,
                        **owner)
        if consumer_uuid in self.snapshot.known_instances:
            return dict(nova=why('nova.deleted_server'),
                        instance=consumer_uuid, **owner)
        return dict(nova=why('nova.unknown'), **owner)

    def _allocation_finding(self, consumer_uuid, provider_uuid, resources):
        verdict, reason, actions = self.classify(consumer_uuid, provider_uuid)
        return m.Finding(consumer_uuid, provider_uuid, verdict, reason,
                         dict(resources), tuple(actions),
                         **self.describe(consumer_uuid))

    # -- per server: missing and wrong amounts ------------------------------

    def expected(self, server):
        """Candidate needs from its flavor and image, or None when they
        cannot be known."""
        if server.flavor is None or server.flavor.extra_specs is None:
            return None
        try:
            return heal.expected_resources(server)
        except heal.CannotHeal:
            return None

    def _elsewhere(self, held):
        names = sorted({self.topology.name(self.topology.root(p))
                        for p in held})
        return ', '.join(names)

    def _server_finding(self, server, root, held):
        """The finding on ``root`` only a server's whole picture shows."""
        in_tree = {p: r for p, r in held.items()
                   if self.topology.legitimate(root, p)}
        candidates = self.expected(server)
        if not in_tree:
            needs = candidates[0] if candidates else {}
            protection = self._server_protection(server)
            if protection:
                return m.Finding(server.uuid, root, m.PROTECTED,
                                 why('protected.holds_nothing',
                                     protection=protection),
                                 needs, (), **self.describe(server.uuid))
            reason = why('missing', host=server.node)
            if held:
                reason = why('missing.elsewhere', host=server.node,
                             elsewhere=self._elsewhere(held))
            return m.Finding(server.uuid, root, m.MISSING, reason, needs,
                             m.CANDIDATE_ACTIONS[m.MISSING],
                             **self.describe(server.uuid))
        if candidates is None or self._server_protection(server):
            return None
        totals = {}
        for resources in in_tree.values():
            _add(totals, resources)
        for needs in candidates:
            judged = set(needs) | set(held.get(root, {}))
            if all(totals.get(rc, 0) == needs.get(rc, 0) for rc in judged):
                return None
        if any(heal.explained_by_image(server, totals, needs)
               for needs in candidates):
            return m.Finding(
                server.uuid, root, m.PROTECTED,
                why(IMAGE_UNREAD, held=format_resources(totals),
                    flavor=server.flavor.name,
                    needs=format_resources(candidates[0]),
                    why=image_unread(server)),
                held.get(root, {}), (), **self.describe(server.uuid))
        return m.Finding(
            server.uuid, root, m.WRONG_AMOUNT,
            why('wrong_amount', held=format_resources(totals),
                flavor=server.flavor.name,
                needs=format_resources(candidates[0])),
            held.get(root, {}), m.CANDIDATE_ACTIONS[m.WRONG_AMOUNT],
            **self.describe(server.uuid))

    # -- per server: what its ports request ---------------------------------

    def _port_findings(self, server, root, held, judged):
        """The findings on the port providers of ``server``'s tree: what
        it holds on each against what its ports request there
        (:mod:`.ports`); protected where Neutron could not be read.  A
        provider ``judged`` protected already (a cell down) stays so."""
        if self._server_protection(server) or (
                root in judged and judged[root].verdict == m.PROTECTED):
            return {}
        root_finding = judged.get(root)
        tree = self.topology.tree(root)
        nics = {p for p in held if p in tree and
                ports.is_port_provider(self.topology, p)}
        fault = ports.unreadable(self.snapshot)
        if fault:
            reason = {m.NEUTRON_ABSENT: why('protected.neutron_absent'),
                      m.NEUTRON_DOWN: why('protected.neutron_down'),
                      m.NEUTRON_FORBIDDEN: why('protected.neutron_forbidden'),
                      m.NEUTRON_HIDDEN: why('protected.neutron_hidden'),
                      }[fault]
            return {p: self._port_finding(server, p, m.PROTECTED, reason,
                                          held[p]) for p in nics}
        if not ports.judged(self.snapshot):
            return {}
        request = ports.requested(self.topology, server)
        found = {}
        for p in sorted(nics | set(request.wanted)):
            want, have = request.wanted.get(p, {}), held.get(p, {})
            excess, short = ports.difference(have, want)
            args = dict(provider=self.topology.name(p),
                        ports=self._port_names(server, p, request),
                        server=server.name or server.uuid)
            binds = any(p in placed.values()
                        for placed in request.bindings.values())
            if not excess and not short:
                reason = why('ok.port_unbound', host=server.node, **args) \
                    if binds else why('ok.port', **args)
                found[p] = self._port_finding(server, p, m.OK, reason, have)
            elif not have:
                if binds:
                    reason = why('missing.port_to_bind', host=server.node,
                                 needs=format_resources(want), **args)
                else:
                    reason = why('missing.port',
                                 needs=format_resources(want), **args)
                found[p] = self._port_finding(server, p, m.MISSING, reason,
                                              want)
            elif short:
                if binds:
                    reason = why('wrong_amount.port_to_bind',
                                 held=format_resources(have),
                                 needs=format_resources(want),
                                 host=server.node, **args)
                else:
                    reason = why('wrong_amount.port',
                                 held=format_resources(have),
                                 needs=format_resources(want), **args)
                found[p] = self._port_finding(server, p, m.WRONG_AMOUNT,
                                              reason, have)
            else:
                found[p] = self._port_finding(
                    server, p, m.LEAKED_PORT,
                    why('leaked_port', leaked=format_resources(excess),
                        **args), excess)
        if request.unplaced and (root_finding is None or
                                 root_finding.verdict == m.OK):
            requests = {}
            for port in request.unplaced:
                for resources in port.requests.values():
                    _add(requests, resources)
            found[root] = self._port_finding(
                server, root, m.MISSING,
                why('missing.port_unplaced', host=server.node,
                    ports=', '.join(sorted({p.name or p.id
                                            for p in request.unplaced})),
                    needs=format_resources(requests),
                    candidates=plan.candidates_said(self.topology,
                                                    request)), requests)
        return found

    def _port_names(self, server, provider, request):
        return ', '.join(
            p.name or p.id for p in ports.of_server(self.topology,
                                                    server.uuid)
            if provider in p.allocation.values() or
            provider in request.bindings.get(p.id, {}).values()) or '-'

    def _port_finding(self, server, provider, verdict, reason, resources):
        return m.Finding(server.uuid, provider, verdict, reason,
                         dict(resources), m.CANDIDATE_ACTIONS[verdict],
                         **self.describe(server.uuid))

    def needs(self, finding):
        """What a finding whose verdict counts :data:`~model.FROM_FLAVOR`
        or :data:`~model.FROM_PORTS` adds to its provider's ``needed``: its
        ports' request on a port provider, else its server's flavor."""
        server = self.snapshot.servers[finding.consumer]
        if ports.is_port_provider(self.topology, finding.provider):
            return ports.requested(self.topology, server).wanted.get(
                finding.provider, {})
        candidates = self.expected(server) or [finding.resources]
        return candidates[0]


def audit(snapshot, now=None, *, min_age):
    """Classify every allocation in ``snapshot``; see :class:`Auditor`."""
    return report.report(Auditor(snapshot, now=now, min_age=min_age))
