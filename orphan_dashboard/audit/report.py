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
service stands (pure).  The verdicts themselves are :mod:`classify`'s."""

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import ownership
from orphan_dashboard.audit import ports


def _add(totals, resources):
    for rc, amount in resources.items():
        totals[rc] = totals.get(rc, 0) + amount


def _row_order(finding):
    return (m.VERDICTS.index(finding.verdict), finding.consumer)


def _service(snapshot, topology, root):
    """``(state in words, whether the host is dead)``: both read from
    the same fields, so the words never decide what is dead."""
    if any(topology.cut_off(root)):
        return 'cell down', False
    hypervisor = snapshot.hypervisors.get(root)
    if hypervisor is None:
        if topology.is_sharing(root):
            return 'sharing provider', False
        if ownership.root_owner(snapshot, root) != ownership.NOVA:
            return 'not a compute node', False
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
    """The :class:`~model.Report` of every allocation ``auditor`` (a
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
    child_owners = ownership.child_owners(snapshot, topology.held)
    reports = []
    for root in roots:
        findings = sorted(findings_by_root.get(root, []), key=_row_order)
        reports.append(_provider_report(
            auditor, root, findings, servers_by_root.get(root, []),
            usage_by_root.get(root, {}), child_owners))
    reports.sort(key=lambda r: r.provider.name)
    reports.sort(key=lambda r: r.severity, reverse=True)
    return m.Report(providers=reports, down_cells=auditor.down_cells,
                    taken_at=snapshot.taken_at,
                    names={u: p.name for u, p in
                           snapshot.providers.items()},
                    child_owners=child_owners,
                    skipped_hosts=tuple(sorted(snapshot.down_hosts)),
                    down_cell_servers=sum(
                        s.down_cell
                        for s in snapshot.servers.values()),
                    unconfirmed=tuple(sorted(
                        r.provider.name for r in reports
                        if topology.cut_off(r.provider.uuid)[1])),
                    neutron=snapshot.neutron,
                    ports_unjudged=_ports_unjudged(
                        snapshot, topology, findings_by_root))


def _ports_unjudged(snapshot, topology, findings_by_root):
    """How many port allocations are protected because Neutron could
    not be read."""
    if ports.unreadable(snapshot) is None:
        return 0
    return sum(1 for found in findings_by_root.values() for f in found
               if f.verdict == m.PROTECTED and
               ports.is_port_provider(topology, f.provider))


def _provider_report(auditor, root, findings, servers, usage,
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
    return m.ProviderReport(
        provider=topology.provider(root),
        hypervisor=snapshot.hypervisors.get(root),
        service_state=service_state, dead=dead,
        servers=len(servers), consumers=len(consumers),
        usage=usage, needed=needed, findings=findings,
        sharing=topology.is_sharing(root),
        cell_down=any(topology.cut_off(root)),
        owner=ownership.root_owner(snapshot, root),
        foreign_children=tuple(sorted(
            c for c in tree if c in child_owners)))
