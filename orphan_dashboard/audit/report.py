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

"""The report: every finding of an :class:`~classify.Auditor` gathered by
root provider, with what each provider holds, needs and how its compute
service stands (pure): its shape (:class:`Report`, one
:class:`ProviderReport` per tree) and its assembly.  The verdicts
themselves are :mod:`classify`'s."""

import dataclasses
import datetime
import typing

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import ownership
from orphan_dashboard.audit import ports
from orphan_dashboard.audit import reasons


@dataclasses.dataclass(slots=True)
class ProviderReport:
    """One provider tree: what Placement holds against what is needed."""

    provider: m.Provider
    hypervisor: typing.Optional[m.Hypervisor]
    service_state: str
    servers: int
    consumers: int
    usage: m.Resources
    needed: m.Resources
    findings: list
    sharing: bool = False
    cell_down: bool = False
    """Its compute node could be in a cell Nova cannot reach."""
    owner: typing.Optional[str] = None
    """Who likely made the root provider: ``nova``, another service, or
    None when nobody is proven (:func:`.ownership.likely_owner`)."""
    owner_proof: typing.Optional[str] = None
    """How :attr:`owner` was proven (:data:`.ownership.PROOF_TITLES`);
    None in a report stored before."""
    children: tuple = ()
    """``((child uuid, Ownership), ...)`` of every child of its tree, in
    uuid order: who made each and how it was proven."""
    dead: bool = False
    """Its compute host is dead (service down or forced down) or its
    compute node is gone: what may be decommissioned."""
    foreign_children: tuple = ()
    """Children of its tree not proven Nova's: the tree is not ours to
    delete whole."""
    gone: bool = False
    """Nova itself answered that its compute node is gone
    (:meth:`.Topology.node_gone`): a listing that left it out proves
    nothing."""
    unmapped: bool = False
    """Nova answers 404 for its node while a compute service it lists
    has no node (:meth:`.Topology.unmapped`): maybe that service's, on a
    host not mapped to a cell yet; never deleted."""
    nodeless: tuple = ()
    """The hosts of those services (:attr:`.Topology.nodeless_services`)
    while :attr:`unmapped`."""
    replaced_by: typing.Optional[m.Hypervisor] = None
    """The compute node Nova created anew in its place, whose provider
    nova-compute cannot create while this one keeps the name
    (:meth:`.Topology.replaced_by`)."""

    @property
    def replacement(self):
        """What an operator is told of a replaced provider (a
        :class:`~reasons.Reason`), or None."""
        if self.replaced_by is None:
            return None
        return reasons.replaced(self.provider.name, self.replaced_by)

    @property
    def counts(self):
        counts = {}
        for finding in self.findings:
            counts[finding.verdict] = counts.get(finding.verdict, 0) + 1
        return counts

    @property
    def problems(self):
        return [f for f in self.findings if f.problem]

    @property
    def node_gone(self):
        """A provider of Nova's whose compute node Nova itself says it no
        longer has (not only unlisted)."""
        return (self.gone and self.hypervisor is None and
                not self.sharing and not self.cell_down and
                self.owner == 'nova')

    def not_orphaned(self):
        """Why this tree is no provider left behind to delete, as the
        audit judged it (a :class:`~.reasons.Reason`), or None when it is
        (:attr:`orphaned_provider`): what every delete of a provider
        checks again, on a fresh read, whatever asked for it."""
        name = self.provider.name
        if self.sharing:
            return reasons.reason('provider.sharing', name=name)
        if self.owner != ownership.NOVA:
            return reasons.not_ours(
                '%s (%s)' % (name, self.provider.uuid), self.owner,
                ownership.suspected(ownership.Ownership(self.owner,
                                                        self.owner_proof)))
        if self.hypervisor is not None:
            return reasons.reason('provider.compute_node', name=name)
        if self.unmapped:
            return reasons.reason('provider.unmapped', name=name,
                                  services=', '.join(self.nodeless))
        if not self.node_gone:
            return reasons.reason('provider.unproven', name=name)
        if self.foreign_children:
            return reasons.reason('provider.foreign_children', name=name,
                                  children=', '.join(self.foreign_children))
        return None

    @property
    def compute_node(self):
        """A hypervisor's tree: a compute node Nova lists, or a provider
        proven Nova's whose node is unlisted or gone.  Another service's
        root (a routed network's segment, a Cyborg device) or a sharing
        provider is none."""
        return self.hypervisor is not None or (
            self.owner == 'nova' and not self.sharing)

    @property
    def orphaned_provider(self):
        """:attr:`node_gone`, its tree holding nothing of another service's:
        another service's provider is never ours to delete."""
        return self.node_gone and not self.foreign_children

    @property
    def mismatched(self):
        return bool(self.problems) or self.usage != self.needed

    @property
    def unjudged(self):
        """A tree Nova could not answer for (a compute node of a cell it
        cannot reach, or no compute node confirmed while its listing
        fails) holding something: all of it protected, a partial audit's
        blind spot."""
        return self.cell_down and bool(self.findings)

    @property
    def needs_attention(self):
        """Listed on the index: mismatched, a compute node gone (a tree
        to delete, or to decommission once its blockers are cleared), a
        host to map to a cell, or a tree the audit could not judge."""
        return (self.mismatched or self.node_gone or self.unmapped or
                self.unjudged)

    @property
    def severity(self):
        """Sort key, worst first: findings, then the size of the gap."""
        gap = sum(abs(self.usage.get(rc, 0) - self.needed.get(rc, 0)) /
                  max(self.usage.get(rc, 0), self.needed.get(rc, 0), 1)
                  for rc in set(self.usage) | set(self.needed))
        return (len(self.problems), gap)


@dataclasses.dataclass(slots=True)
class Report:
    providers: list
    down_cells: bool = False
    taken_at: typing.Optional[datetime.datetime] = None
    names: dict = dataclasses.field(default_factory=dict)
    """``{provider uuid: name}`` of every provider, children included."""
    child_owners: typing.Optional[dict] = None
    """``{child uuid: likely owner or None}`` of the child providers not
    proven Nova's (:func:`ownership.child_owners`); None in a report
    stored before."""
    skipped_hosts: tuple = ()
    """Compute hosts of the cells Nova could not reach."""
    down_cell_servers: int = 0
    """Servers Nova returned as partial records from those cells."""
    cell_wait: int = 0
    """Seconds Nova listed its compute services in without those cells
    (:attr:`~model.Snapshot.services_wait`)."""
    cell_slow: bool = False
    """Those cells are slow, not down: Nova waited its cell timer out for
    them (:attr:`~model.Snapshot.services_timed_out`)."""
    unconfirmed: tuple = ()
    """Names of root providers whose compute node Nova could not confirm
    (its hypervisor listing failed): they could be in a down cell.  Only
    those holding something (which is protected) or likely Nova's (never
    offered for deletion): another service's provider holding nothing (a
    routed network's segment) has nothing to protect, and naming it among
    possible compute nodes would mislead."""
    neutron: typing.Optional[str] = None
    """Whether Neutron's ports were read (:attr:`~model.Snapshot.neutron`)."""
    ports_unjudged: int = 0
    """Port allocations protected because Neutron could not be read: the
    pages and the CLI say so only then."""
    consumers: int = 0
    """Every consumer holding allocations the audit saw: what a run's
    share of writes is of (:func:`.limits.decide`)."""
    hidden: tuple = ()
    """``((policy rule, servers), ...)``: the rules the user lacks that
    hid where these servers live (:attr:`~model.Server.hidden`); their
    allocations are protected."""

    @property
    def findings(self):
        return [f for p in self.providers for f in p.findings]

    @property
    def problems(self):
        return [f for p in self.providers for f in p.problems]

    def provider(self, uuid):
        for report in self.providers:
            if report.provider.uuid == uuid:
                return report
        return None

    def tree_of(self, uuid):
        """The report of the tree that holds provider ``uuid``, as its
        root or as one of its children; None for a provider it lacks."""
        for report in self.providers:
            if report.provider.uuid == uuid or any(
                    child == uuid for child, _owner in report.children):
                return report
        return None

    def summary(self):
        """This report without its ``ok`` findings: all the index, its
        filters and the batch actions read, and a small part of a whole
        cloud's findings to store and load (a provider tree's own page
        reads the tree whole)."""
        return dataclasses.replace(self, providers=[
            dataclasses.replace(p, findings=[
                f for f in p.findings if f.verdict != m.OK])
            for p in self.providers])

    def hypervisors(self):
        """``{hypervisor hostname: Hypervisor}`` (a server's ``host``)."""
        return {p.hypervisor.hostname: p.hypervisor for p in self.providers
                if p.hypervisor is not None}


def _add(totals, resources):
    for rc, amount in resources.items():
        totals[rc] = totals.get(rc, 0) + amount


def _row_order(finding):
    return (m.VERDICTS.index(finding.verdict), finding.consumer)


def _service(snapshot, topology, root):
    """``(state in words, whether the host is dead)``: both read from
    the same fields, so the words never decide what is dead."""
    host, unconfirmed = topology.cut_off(root)
    if host or unconfirmed and not snapshot.hypervisors_listed:
        return 'cell down', False
    if unconfirmed:
        return 'unconfirmed', False
    hypervisor = snapshot.hypervisors.get(root)
    if hypervisor is None:
        if topology.is_sharing(root):
            return 'sharing provider', False
        if topology.replaced_by(root):
            return 'replaced', True
        if topology.owner(root) != ownership.NOVA:
            # A suspect Nova answered 404 for may be decommissioned, by a
            # tick (:func:`.decommission.plan`).
            return 'not a compute node', topology.node_gone(root) and \
                ownership.suspected(topology.ownership(root))
        if topology.unmapped(root):
            return 'not mapped to a cell', False
        return 'no compute node', True
    service = snapshot.services.get(hypervisor.host)
    if service is None:
        return hypervisor.state or 'unknown', hypervisor.down
    if service.forced_down:
        return 'forced down', True
    if service.status == 'disabled':
        return '%s (disabled)' % service.state, service.down
    return service.state, service.down


def report(auditor):
    """The :class:`Report` of every allocation ``auditor`` (a
    :class:`~classify.Auditor`) classifies."""
    snapshot, topology = auditor.snapshot, auditor.topology
    findings_by_root, usage_by_root = {}, {}
    for consumer in snapshot.consumers.values():
        for provider_uuid, resources in consumer.allocations.items():
            _add(usage_by_root.setdefault(
                topology.root(provider_uuid), {}), resources)
    servers_by_root = {}
    for server in snapshot.servers.values():
        root = topology.server_root(server)
        if root is not None:
            servers_by_root.setdefault(root, []).append(server)
    for uuid in set(snapshot.consumers) | set(snapshot.servers):
        for finding in auditor.consumer_findings(uuid):
            findings_by_root.setdefault(
                topology.root(finding.provider), []).append(finding)

    roots = set(findings_by_root) | {
        p.root_uuid for p in snapshot.providers.values()}
    children = ownership.child_ownerships(snapshot, topology.held)
    child_owners = ownership.not_novas(children)
    reports = []
    for root in roots:
        findings = sorted(findings_by_root.get(root, []), key=_row_order)
        reports.append(_provider_report(
            auditor, root, findings, servers_by_root.get(root, []),
            usage_by_root.get(root, {}), children, child_owners))
    reports.sort(key=lambda r: r.provider.name)
    reports.sort(key=lambda r: r.severity, reverse=True)
    return Report(providers=reports, down_cells=auditor.down_cells,
                  taken_at=snapshot.taken_at,
                  names={u: p.name for u, p in
                         snapshot.providers.items()},
                  consumers=sum(1 for c in snapshot.consumers.values()
                                if c.allocations),
                  child_owners=child_owners,
                  skipped_hosts=tuple(sorted(snapshot.down_hosts)),
                  cell_wait=round(snapshot.services_wait)
                  if snapshot.down_hosts else 0,
                  cell_slow=bool(snapshot.down_hosts) and
                  snapshot.services_timed_out,
                  down_cell_servers=sum(
                      s.down_cell
                      for s in snapshot.servers.values()),
                  unconfirmed=tuple(sorted(
                      r.provider.name for r in reports
                      if (r.findings or r.owner == ownership.NOVA) and
                      topology.cut_off(r.provider.uuid)[1])),
                  neutron=snapshot.neutron,
                  hidden=_hidden(snapshot),
                  ports_unjudged=_ports_unjudged(
                      snapshot, topology, findings_by_root))


def _hidden(snapshot):
    """:attr:`Report.hidden` of ``snapshot``."""
    counts = {}
    for server in snapshot.servers.values():
        for rule in server.hidden:
            counts[rule] = counts.get(rule, 0) + 1
    return tuple(sorted(counts.items()))


def _ports_unjudged(snapshot, topology, findings_by_root):
    """How many port allocations are protected because Neutron could
    not be read."""
    if ports.unreadable(snapshot) is None:
        return 0
    return sum(1 for found in findings_by_root.values() for f in found
               if f.verdict == m.PROTECTED and
               ports.is_port_provider(topology, f.provider))


def _provider_report(auditor, root, findings, servers, usage, children,
                     child_owners):
    snapshot, topology = auditor.snapshot, auditor.topology
    needed = {}
    tree = topology.tree(root)
    for finding in findings:
        if finding.verdict in m.NEEDED_AS_HELD:
            _add(needed, finding.resources)
        elif finding.verdict in m.NEEDED_FROM_FLAVOR:
            _add(needed, auditor.needs(finding))
    consumers = {f.consumer for f in findings
                 if f.provider in tree and
                 f.verdict not in m.HOLDS_NOTHING}
    service_state, dead = _service(snapshot, topology, root)
    return ProviderReport(
        provider=topology.provider(root),
        hypervisor=snapshot.hypervisors.get(root),
        service_state=service_state, dead=dead,
        servers=len(servers), consumers=len(consumers),
        usage=usage, needed=needed, findings=findings,
        sharing=topology.is_sharing(root),
        cell_down=any(topology.cut_off(root)),
        owner=topology.owner(root),
        owner_proof=topology.ownership(root).proof,
        children=tuple(sorted((c, children[c]) for c in tree
                              if c in children)),
        foreign_children=tuple(sorted(
            c for c in tree if c in child_owners)),
        gone=topology.node_gone(root), unmapped=topology.unmapped(root),
        nodeless=topology.nodeless_services if topology.unmapped(root)
        else (), replaced_by=topology.replaced_by(root))
