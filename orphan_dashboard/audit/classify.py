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
server its resources, a missed one only costs capacity.  They are a table,
:data:`.rules.STAGES`; the :class:`Auditor` runs it on each consumer and
offers the repairs that put the consumer right.

:meth:`Auditor.consumer_findings` is the only source of a finding: the
report (gathered in :mod:`report`), the preview, the confirm, the CLI and
restore all ask it.
"""

import dataclasses

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan
from orphan_dashboard.audit import ports
from orphan_dashboard.audit.reasons import action_name
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.audit.reasons import verdict_name
from orphan_dashboard.audit import report
from orphan_dashboard.audit import rules
from orphan_dashboard.audit import server_needs
from orphan_dashboard.audit.topology import Topology


def kept_as_read(finding, before, after):
    """A protected allocation that a repair leaves exactly as it is (a
    share on a host of a down cell, a port's while Neutron is unread): it
    does not stand in the way of the repair of the rest."""
    return (finding.verdict == m.PROTECTED and
            after.get(finding.provider) == before.get(finding.provider))


def awaits_nova(finding):
    """Protected only until Nova is asked what its consumer is: a cell is
    down, and its instance actions may still answer (through the
    instance's mapping, from a healthy cell); or its host's migrations
    were not listed by host yet (:func:`collect.read_host_migrations`).
    The sweep asks."""
    return getattr(finding.reason, 'code', None) in (
        rules.DOWN_CELL_CONSUMER, rules.MIGRATIONS_UNREAD)


def awaits_image(finding):
    """Protected only because its server's boot image properties are not
    known yet: Nova shows them one server at a time, so the sweep asks."""
    return getattr(finding.reason, 'code', None) == rules.IMAGE_UNREAD


def aged(finding):
    """Protected only for its age, or for a move's, which stalls into a
    stuck migration once old enough: the same consumer, older at the next
    sweep, may not be, so no refresh keeps this finding as it was."""
    return getattr(finding.reason, 'code', None) in rules.TIMED


class Auditor:
    """Classifies every allocation of one snapshot.  ``min_age`` (seconds:
    allocations written more recently are protected) is always the
    caller's: the engine reads no setting, and the default is the
    setting's (``ORPHAN_AUDIT_MIN_AGE``).  ``known`` (``{consumer:
    findings}``, :func:`.refresh.reusable`) are the last sweep's findings
    on the consumers nothing has changed for since: taken as they are,
    not judged again."""

    def __init__(self, snapshot, now=None, *, min_age, known=None,
                 stuck_after=m.STUCK_AFTER):
        self.snapshot = snapshot
        self.topology = Topology(snapshot)
        self.now = now or snapshot.taken_at
        self.min_age = min_age
        self.stuck_after = stuck_after
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
        self._findings = dict(known or {})

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
            judge = self._judge
            if target.partner is not None:
                protected = self._partner_protected(target.partner[0])
                if protected is not None:
                    refused.append(protected)
                    continue
                judge = self._as_after(finding.consumer, target)._judge
            left = [f for f in judge(
                finding.consumer, target.after,
                (target.project_id, target.user_id), judge_age=False)
                if f.verdict != m.OK and
                not kept_as_read(f, before, target.after)]
            if target.partner is not None and not left:
                uuid, after, project, user = target.partner
                left = [f for f in judge(uuid, after, (project, user),
                                         judge_age=False)
                        if f.verdict != m.OK]
            if left:
                refused.append(why(
                    'cannot.still_wrong', action=action_name(action),
                    verdict=verdict_name(left[0].verdict),
                    reason=left[0].reason))
            else:
                offered.append(action)
        return dataclasses.replace(finding, actions=tuple(offered),
                                   blocked='' if offered else refused[0])

    def _partner_protected(self, consumer_uuid):
        """Why the other consumer a write changes may not be written now
        (one of its rows protected, its age included), or None: a
        protection covers every allocation a write changes."""
        consumer = self.snapshot.consumers.get(consumer_uuid)
        for found in self._judge(
                consumer_uuid, consumer.allocations if consumer else {},
                (consumer.project_id, consumer.user_id) if consumer
                else (None, None)):
            if found.verdict == m.PROTECTED:
                return why('cannot.partner_protected',
                           consumer=consumer_uuid, reason=found.reason)
        return None

    def _as_after(self, consumer_uuid, target):
        """An auditor of this snapshot as ``target``'s write would leave
        it, both its consumers, to judge what the write leaves."""
        consumers = dict(self.snapshot.consumers)
        for uuid, after, project, user in (
                (consumer_uuid, target.after, target.project_id,
                 target.user_id), target.partner):
            now = consumers.get(uuid) or m.Consumer(uuid, None, {})
            consumers[uuid] = dataclasses.replace(
                now, allocations=after, project_id=project, user_id=user)
        return Auditor(dataclasses.replace(self.snapshot, consumers=consumers),
                       self.now, min_age=self.min_age,
                       stuck_after=self.stuck_after)

    def _judge(self, consumer_uuid, held, owner, judge_age=True):
        """The verdicts on ``consumer_uuid`` holding ``held`` in the name of
        ``owner``, before any repair is offered: the stages of
        :data:`.rules.STAGES` in order, each row of a stage decided by the
        first of its rules that holds, against the rows as the stages
        before left them."""
        case = rules.Case(self, consumer_uuid, held, owner, judge_age)
        for stage in rules.STAGES:
            decided = {}
            for provider in stage.rows(case):
                for rule in stage.rules:
                    answer = rule.judge(case, provider)
                    if answer is not None:
                        reason, resources = answer
                        decided[provider] = m.Finding(
                            consumer_uuid, provider, rule.verdict, reason,
                            dict(resources),
                            m.CANDIDATE_ACTIONS[rule.verdict],
                            **case.described)
                        break
            case.judged.update(decided)
        return list(case.judged.values())

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
            return why(rules.UNMAPPED,
                       provider=self.topology.name(root),
                       services=', '.join(self.topology.nodeless_services))
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

    def expected(self, server):
        """Candidate needs from its flavor and image, or None when they
        cannot be known."""
        if server.flavor is None or server.flavor.extra_specs is None:
            return None
        try:
            return server_needs.expected_resources(server)
        except server_needs.CannotHeal:
            return None

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


def audit(snapshot, now=None, *, min_age, known=None,
          stuck_after=m.STUCK_AFTER):
    """Classify every allocation in ``snapshot``; see :class:`Auditor`."""
    return report.report(Auditor(snapshot, now=now, min_age=min_age,
                                 known=known, stuck_after=stuck_after))
