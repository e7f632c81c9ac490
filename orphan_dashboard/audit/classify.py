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
report, the preview, the confirm, the CLI and restore all ask it.
"""

import datetime

from orphan_dashboard.audit import heal
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan as planner
from orphan_dashboard.audit.topology import Topology

DEFAULT_MIN_AGE = 600
MOVE_AWAITING_CONFIRM = 'finished'
"""A resize or cold migration in VERIFY_RESIZE."""


def _age(since, now):
    if since is None or now is None:
        return None
    if isinstance(since, str):
        try:
            since = datetime.datetime.fromisoformat(since.replace('Z', '+00:00'))
        except ValueError:
            return None
    if since.tzinfo is None:
        since = since.replace(tzinfo=datetime.timezone.utc)
    return (now - since).total_seconds()


def _fmt(resources):
    return ', '.join('%s=%s' % (rc, resources[rc]) for rc in sorted(resources))


def _add(totals, resources):
    for rc, amount in resources.items():
        totals[rc] = totals.get(rc, 0) + amount


def _move(migration):
    """A migration in words: "resize 1f0e... host2 → host3"."""
    return '%s %s (%s → %s)' % (
        migration.migration_type or 'migration', migration.uuid,
        migration.source_compute or migration.source_node or '?',
        migration.dest_compute or migration.dest_node or '?')


class Auditor:
    """Classifies every allocation of one snapshot."""

    def __init__(self, snapshot, now=None, min_age=DEFAULT_MIN_AGE):
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
            found = self._findings[consumer_uuid] = [
                self._offer(f) for f in self._judge(consumer_uuid, held,
                                                    owner)]
        return found

    def finding(self, consumer_uuid, provider_uuid):
        """The finding on one (consumer, provider) row: what a preview, a
        confirm or the CLI checks a chosen repair against."""
        for finding in self.consumer_findings(consumer_uuid):
            if finding.provider == provider_uuid:
                return finding
        return m.Finding(consumer_uuid, provider_uuid, m.OK,
                         'no longer holds anything on this provider', {}, (),
                         **self.describe(consumer_uuid))

    def plan(self, consumer_uuid, provider_uuid, action):
        """The :class:`~model.Plan` of ``action`` on one row, or
        :class:`~plan.CannotRepair` saying why not."""
        finding = self.finding(consumer_uuid, provider_uuid)
        if action not in finding.actions:
            raise planner.CannotRepair(planner.refusal(
                finding, action, self.topology.name(provider_uuid)))
        return planner.plan(self.snapshot, finding, action, planner.target(
            self.snapshot, self.topology, consumer_uuid, action))

    def _offer(self, finding):
        candidates = m.CANDIDATE_ACTIONS[finding.verdict]
        if not candidates:
            return finding
        offered, refused = [], []
        for action in candidates:
            try:
                target = planner.target(self.snapshot, self.topology,
                                        finding.consumer, action)
            except planner.CannotRepair as exc:
                refused.append(str(exc))
                continue
            left = [f for f in self._judge(
                finding.consumer, target.after,
                (target.project_id, target.user_id), judge_age=False)
                if f.verdict != m.OK]
            if left:
                refused.append('after %s it would still be %s: %s' % (
                    planner.ACTION_NAMES[action], left[0].verdict,
                    left[0].reason))
            else:
                offered.append(action)
        return m.Finding(**{**finding.__dict__, 'actions': tuple(offered),
                            'blocked': '' if offered else refused[0]})

    def _judge(self, consumer_uuid, held, owner, judge_age=True):
        """The verdicts on ``consumer_uuid`` holding ``held`` in the name of
        ``owner``, before any repair is offered."""
        findings = {p: self._allocation_finding(consumer_uuid, p, r,
                                                judge_age)
                    for p, r in held.items()}
        server = self.snapshot.servers.get(consumer_uuid)
        root = (self.topology.server_root(server) if server is not None
                else None)
        if root is not None:
            extra = self._server_finding(server, root, held, judge_age)
            if extra is not None:
                findings[root] = extra
        if (root is not None and m.INCOMPLETE in owner and
                all(f.verdict == m.OK for f in findings.values())):
            reason = ('written before Placement 1.8: its project and user '
                      'are the incomplete-consumer placeholder, so quota '
                      'counted from Placement charges nobody; its server '
                      'belongs to project %s, user %s' % (
                          server.project_id, server.user_id))
            findings = {p: m.Finding(**{**f.__dict__,
                                        'verdict': m.INCOMPLETE_CONSUMER,
                                        'reason': reason,
                                        'actions': (m.SET_OWNER,)})
                        for p, f in findings.items()}
        return list(findings.values())

    # -- single allocations -------------------------------------------------

    def classify(self, consumer_uuid, provider_uuid, held=None):
        """``(verdict, reason, candidate actions)`` of one allocation."""
        server = self.snapshot.servers.get(consumer_uuid)
        if server is not None:
            return self._classify_server(server, provider_uuid)
        migration = self.snapshot.migrations.get(consumer_uuid)
        if migration is not None:
            return self._classify_migration(migration)
        if consumer_uuid in self.snapshot.known_instances:
            return (m.DELETED_INSTANCE,
                    'server %s is deleted (Nova still has its instance '
                    'actions) but its allocation was left behind' %
                    consumer_uuid, (m.DELETE,))
        if consumer_uuid in self.snapshot.unresolved:
            return (m.PROTECTED,
                    'Nova could not tell what this consumer is (its '
                    'instance actions could not be read)', ())
        if self.down_cells:
            return (m.PROTECTED,
                    'not a server or migration Nova knows, but a cell is '
                    'down and it could live there', ())
        return (m.UNKNOWN_CONSUMER,
                'neither a server nor a migration Nova knows: it may belong '
                'to another service or to an archived instance', (m.DELETE,))

    def _server_protection(self, server):
        if server.down_cell:
            return 'server is in a cell Nova cannot reach right now'
        migration = self.in_progress.get(server.uuid)
        if server.status == 'VERIFY_RESIZE' or (
                migration is not None and
                migration.status == MOVE_AWAITING_CONFIRM):
            return '%s awaiting confirm or revert' % (
                _move(migration) if migration is not None else 'resize')
        if server.task_state:
            return 'task %s in progress' % server.task_state
        if server.status == 'BUILD' or server.vm_state == 'building':
            return 'server is still building'
        if migration is not None:
            return '%s in progress (%s)' % (_move(migration),
                                            migration.status)
        return None

    def _classify_server(self, server, provider_uuid):
        protection = self._server_protection(server)
        if protection:
            return m.PROTECTED, protection, ()
        root = self.topology.server_root(server)
        if self.topology.legitimate(root, provider_uuid):
            return m.OK, 'server %s lives on %s' % (
                server.name or server.uuid, server.node), ()
        if root is None and server.node:
            return (m.PROTECTED,
                    'its compute node %s has no resource provider' %
                    server.node, ())
        if root is None:
            return (m.MOVED,
                    'server has no compute node (status %s) yet holds '
                    'resources here' % server.status,
                    m.CANDIDATE_ACTIONS[m.MOVED])
        here = self.topology.provider(self.topology.root(provider_uuid))
        evacuation = self.evacuations.get((server.uuid, here.name))
        if evacuation is not None:
            return (m.EVACUATED_SOURCE,
                    'evacuated from %s to %s (migration %s, %s); the source '
                    'compute never cleaned up' % (
                        here.name, server.node, evacuation.uuid,
                        evacuation.status),
                    m.CANDIDATE_ACTIONS[m.EVACUATED_SOURCE])
        return (m.MOVED,
                'server lives on %s with no migration in progress' %
                server.node, m.CANDIDATE_ACTIONS[m.MOVED])

    def _classify_migration(self, migration):
        if migration.status in m.MIGRATION_FINAL:
            return (m.STALE_MIGRATION,
                    '%s of server %s ended (%s) but its allocation was '
                    'left behind' % (_move(migration),
                                     migration.instance_uuid,
                                     migration.status), (m.DELETE,))
        if migration.status == MOVE_AWAITING_CONFIRM:
            return (m.PROTECTED,
                    'source side of %s of server %s, awaiting confirm or '
                    'revert' % (_move(migration), migration.instance_uuid),
                    ())
        return (m.PROTECTED,
                '%s of server %s in progress (%s)' % (
                    _move(migration), migration.instance_uuid,
                    migration.status), ())

    def _too_young(self, since):
        age = _age(since, self.now)
        if age is not None and self.min_age and age < self.min_age:
            return 'written %d s ago, younger than the %d s protection' % (
                max(age, 0), self.min_age)
        return None

    def describe(self, consumer_uuid):
        """What Nova says of a consumer, as :class:`~model.Finding` fields."""
        server = self.snapshot.servers.get(consumer_uuid)
        if server is not None:
            return dict(nova='server %s (%s)' % (server.name, server.status),
                        host=server.node, instance=server.uuid,
                        project_id=server.project_id)
        migration = self.snapshot.migrations.get(consumer_uuid)
        if migration is not None:
            return dict(nova='%s %s → %s (%s)' % (
                migration.migration_type, migration.source_node,
                migration.dest_node, migration.status),
                instance=migration.instance_uuid)
        if consumer_uuid in self.snapshot.known_instances:
            return dict(nova='deleted server', instance=consumer_uuid)
        return dict(nova='not known to Nova')

    def _allocation_finding(self, consumer_uuid, provider_uuid, resources,
                            judge_age=True):
        verdict, reason, actions = self.classify(consumer_uuid, provider_uuid)
        if verdict not in (m.OK, m.PROTECTED) and judge_age:
            consumer = self.snapshot.consumers.get(consumer_uuid)
            young = self._too_young(consumer and consumer.modified)
            if young:
                verdict, reason, actions = (
                    m.PROTECTED, '%s (%s)' % (young, reason), ())
        return m.Finding(consumer_uuid, provider_uuid, verdict, reason,
                         dict(resources), tuple(actions),
                         **self.describe(consumer_uuid))

    # -- per server: missing and wrong amounts ------------------------------

    def expected(self, server):
        """Candidate flavor-derived needs, or None when they can't be known."""
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

    def _server_finding(self, server, root, held, judge_age=True):
        """The finding on ``root`` only a server's whole picture shows."""
        in_tree = {p: r for p, r in held.items()
                   if self.topology.legitimate(root, p)}
        candidates = self.expected(server)
        if not in_tree:
            needs = candidates[0] if candidates else {}
            protection = self._server_protection(server) or (
                judge_age and self._too_young(server.created))
            if protection:
                return m.Finding(server.uuid, root, m.PROTECTED,
                                 'holds nothing here, but %s' % protection,
                                 needs, (), **self.describe(server.uuid))
            reason = 'server lives on %s but holds no allocation there' % (
                server.node)
            if held:
                reason += '; its allocation is on %s: see there' % (
                    self._elsewhere(held))
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
        return m.Finding(
            server.uuid, root, m.WRONG_AMOUNT,
            'holds %s here but its flavor %s needs %s' % (
                _fmt(totals), server.flavor.name, _fmt(candidates[0])),
            held.get(root, {}), m.CANDIDATE_ACTIONS[m.WRONG_AMOUNT],
            **self.describe(server.uuid))

    # -- whole report -------------------------------------------------------

    def service_state(self, root):
        hypervisor = self.snapshot.hypervisors.get(root)
        if hypervisor is None:
            if self.topology.is_sharing(root):
                return 'sharing provider'
            return 'no compute node'
        service = self.snapshot.services.get(hypervisor.host)
        if service is None:
            return hypervisor.state or 'unknown'
        if service.forced_down:
            return 'forced down'
        if service.status == 'disabled':
            return '%s (disabled)' % service.state
        return service.state

    def report(self):
        findings_by_root, usage_by_root = {}, {}
        for consumer in self.snapshot.consumers.values():
            for provider_uuid, resources in consumer.allocations.items():
                _add(usage_by_root.setdefault(
                    self.topology.root(provider_uuid), {}), resources)
        servers_by_root = {}
        for server in self.snapshot.servers.values():
            root = self.topology.server_root(server)
            if root is not None:
                servers_by_root.setdefault(root, []).append(server)
        for uuid in set(self.snapshot.consumers) | set(self.snapshot.servers):
            for finding in self.consumer_findings(uuid):
                findings_by_root.setdefault(
                    self.topology.root(finding.provider), []).append(finding)

        roots = set(findings_by_root) | {
            p.root_uuid for p in self.snapshot.providers.values()}
        reports = []
        for root in roots:
            findings = sorted(findings_by_root.get(root, []), key=_row_order)
            reports.append(self._provider_report(
                root, findings, servers_by_root.get(root, []),
                usage_by_root.get(root, {})))
        reports.sort(key=lambda r: r.provider.name)
        reports.sort(key=lambda r: r.severity, reverse=True)
        return m.Report(providers=reports, down_cells=self.down_cells,
                        taken_at=self.snapshot.taken_at,
                        names={u: p.name for u, p in
                               self.snapshot.providers.items()})

    def _provider_report(self, root, findings, servers, usage):
        needed = {}
        tree = self.topology.tree(root)
        for finding in findings:
            if finding.verdict in (m.OK, m.PROTECTED, m.INCOMPLETE_CONSUMER):
                _add(needed, finding.resources)
            elif finding.verdict in (m.MISSING, m.WRONG_AMOUNT):
                server = self.snapshot.servers[finding.consumer]
                candidates = self.expected(server) or [finding.resources]
                _add(needed, candidates[0])
        consumers = {f.consumer for f in findings
                     if f.provider in tree and f.verdict != m.MISSING}
        return m.ProviderReport(
            provider=self.topology.provider(root),
            hypervisor=self.snapshot.hypervisors.get(root),
            service_state=self.service_state(root),
            servers=len(servers), consumers=len(consumers),
            usage=usage, needed=needed, findings=findings,
            sharing=self.topology.is_sharing(root))


def _row_order(finding):
    return (m.VERDICTS.index(finding.verdict), finding.consumer)


def audit(snapshot, now=None, min_age=DEFAULT_MIN_AGE):
    """Classify every allocation in ``snapshot``; see :class:`Auditor`."""
    return Auditor(snapshot, now=now, min_age=min_age).report()
