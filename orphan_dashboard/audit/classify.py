"""Verdicts: why each allocation exists, and whether it should.

Pure functions over a :class:`~orphan_dashboard.audit.model.Snapshot`.  The
rules follow ``nova-manage placement audit`` and ``heal_allocations``
(``nova/cmd/manage.py``) but only from what the public APIs show, and err on
the side of :data:`~model.PROTECTED`: a wrong "orphaned" costs a running
server its resources, a missed one only costs capacity.
"""

import datetime

from orphan_dashboard.audit import heal
from orphan_dashboard.audit import model as m

DEFAULT_MIN_AGE = 600


class Topology:
    """Provider trees and the compute nodes they stand for."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self.providers = dict(snapshot.providers)
        self.trees = {}
        for provider in self.providers.values():
            self.trees.setdefault(provider.root_uuid, set()).add(provider.uuid)
        self.node_roots = {}
        for provider in self.providers.values():
            if provider.uuid == provider.root_uuid:
                self.node_roots.setdefault(provider.name, provider.uuid)
        for hypervisor in snapshot.hypervisors.values():
            root = self.root(hypervisor.uuid)
            self.node_roots[hypervisor.hostname] = root

    def provider(self, uuid):
        """The provider, or a stand-in for one that vanished since listing."""
        return self.providers.get(uuid) or m.Provider(
            uuid=uuid, name=uuid, generation=-1, root_uuid=uuid)

    def root(self, uuid):
        return self.provider(uuid).root_uuid

    def tree(self, root_uuid):
        return self.trees.get(root_uuid, {root_uuid})

    def server_root(self, server):
        """Root provider of the compute node ``server`` lives on, or None."""
        if not server.node:
            return None
        return self.node_roots.get(server.node)

    def is_sharing(self, uuid):
        return uuid in self.snapshot.sharing_providers

    def legitimate(self, server_root, uuid):
        """May a server living under ``server_root`` hold ``uuid``?"""
        return self.is_sharing(uuid) or (
            server_root is not None and self.root(uuid) == server_root)


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

    # -- single allocations -------------------------------------------------

    def classify(self, consumer_uuid, provider_uuid):
        """Return ``(verdict, reason, actions)`` for one allocation."""
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
        if server.task_state:
            return 'task %s in progress' % server.task_state
        if server.status == 'BUILD' or server.vm_state == 'building':
            return 'server is still building'
        migration = self.in_progress.get(server.uuid)
        if migration is not None:
            return '%s %s in progress (status %s)' % (
                migration.migration_type, migration.uuid, migration.status)
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
                    'resources here' % server.status, (m.DELETE_AND_HEAL,))
        here = self.topology.provider(self.topology.root(provider_uuid))
        consumer = self.snapshot.consumers.get(server.uuid)
        holds_current = consumer is not None and any(
            self.topology.legitimate(root, p) and not self.topology.is_sharing(p)
            for p in consumer.allocations)
        actions = ((m.TRIM, m.DELETE_AND_HEAL) if holds_current
                   else (m.DELETE_AND_HEAL,))
        evacuation = self.evacuations.get((server.uuid, here.name))
        if evacuation is not None:
            return (m.EVACUATED_SOURCE,
                    'evacuated from %s to %s (migration %s, %s); the source '
                    'compute never cleaned up' % (
                        here.name, server.node, evacuation.uuid,
                        evacuation.status), actions)
        return (m.MOVED,
                'server lives on %s with no migration in progress' %
                server.node, actions)

    def _classify_migration(self, migration):
        if migration.status in m.MIGRATION_FINAL:
            return (m.STALE_MIGRATION,
                    '%s %s of server %s ended (%s) but its allocation was '
                    'left behind' % (migration.migration_type, migration.uuid,
                                     migration.instance_uuid,
                                     migration.status), (m.DELETE,))
        return (m.PROTECTED,
                '%s %s of server %s in progress (status %s)' % (
                    migration.migration_type, migration.uuid,
                    migration.instance_uuid, migration.status), ())

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

    def finding(self, consumer_uuid, provider_uuid, resources):
        verdict, reason, actions = self.classify(consumer_uuid, provider_uuid)
        if verdict not in (m.OK, m.PROTECTED):
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

    def server_findings(self, server, root):
        """Findings on ``root`` that only a server's whole picture shows."""
        consumer = self.snapshot.consumers.get(server.uuid)
        held = consumer.allocations if consumer else {}
        in_tree = {p: r for p, r in held.items()
                   if self.topology.legitimate(root, p)}
        candidates = self.expected(server)
        if not in_tree:
            needs = candidates[0] if candidates else {}
            protection = (self._server_protection(server) or
                          self._too_young(server.created))
            if protection:
                return m.Finding(server.uuid, root, m.PROTECTED,
                                 'holds nothing here, but %s' % protection,
                                 needs, (), **self.describe(server.uuid))
            return m.Finding(server.uuid, root, m.MISSING,
                             'server lives on %s but holds no allocation '
                             'there' % server.node, needs, (m.HEAL,),
                             **self.describe(server.uuid))
        if candidates is None or self._server_protection(server):
            return None
        totals = {}
        for resources in in_tree.values():
            for rc, amount in resources.items():
                totals[rc] = totals.get(rc, 0) + amount
        for needs in candidates:
            judged = set(needs) | set(held.get(root, {}))
            if all(totals.get(rc, 0) == needs.get(rc, 0) for rc in judged):
                return None
        return m.Finding(
            server.uuid, root, m.WRONG_AMOUNT,
            'holds %s here but its flavor %s needs %s' % (
                _fmt(totals), server.flavor.name, _fmt(candidates[0])),
            held.get(root, {}), (m.DELETE_AND_HEAL,),
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
                root = self.topology.root(provider_uuid)
                findings_by_root.setdefault(root, []).append(
                    self.finding(consumer.uuid, provider_uuid, resources))
                _add(usage_by_root.setdefault(root, {}), resources)

        servers_by_root = {}
        for server in self.snapshot.servers.values():
            root = self.topology.server_root(server)
            if root is None:
                continue
            servers_by_root.setdefault(root, []).append(server)
            extra = self.server_findings(server, root)
            if extra is None:
                continue
            rows = findings_by_root.setdefault(root, [])
            rows[:] = [f for f in rows if not (
                f.consumer == extra.consumer and f.provider == extra.provider)]
            rows.append(extra)

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
                        taken_at=self.snapshot.taken_at)

    def _provider_report(self, root, findings, servers, usage):
        needed = {}
        tree = self.topology.tree(root)
        for finding in findings:
            if finding.verdict in (m.OK, m.PROTECTED):
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


def _add(totals, resources):
    for rc, amount in resources.items():
        totals[rc] = totals.get(rc, 0) + amount


def _fmt(resources):
    return ', '.join('%s=%s' % (rc, resources[rc]) for rc in sorted(resources))


def _row_order(finding):
    return (m.VERDICTS.index(finding.verdict), finding.consumer)


def audit(snapshot, now=None, min_age=DEFAULT_MIN_AGE):
    """Classify every allocation in ``snapshot``; see :class:`Auditor`."""
    return Auditor(snapshot, now=now, min_age=min_age).report()
