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

"""What the panel's rows and previews show of the engine's findings and
plans: names next to the ids, translated labels, sides of a change."""

from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import service


class ShownFinding:
    """A finding with what its row shows next to the ids: Keystone's
    project and user names, the hypervisor of the server's host."""

    def __init__(self, finding, names, hypervisors, providers=None):
        self.finding = finding
        self.provider_name = (providers or {}).get(finding.provider,
                                                   finding.provider)
        self.project_name = names['projects'].get(finding.project_id)
        self.user_name = names['users'].get(finding.user_id)
        self.hypervisor = hypervisors.get(finding.host)
        self.reason = labels.owner_named(finding.reason, names)

    def __getattr__(self, name):
        return getattr(self.finding, name)


def shown_findings(findings, report, names):
    hypervisors = report.hypervisors()
    return [ShownFinding(f, names, hypervisors, report.names)
            for f in findings]


def server_names(rows):
    """``{consumer uuid: server name}`` of the rows whose finding (or a
    restore's read), as just re-read, names the consumer's server."""
    found = {}
    for row in rows:
        name = getattr(row, 'server', None) or service.server_name(
            getattr(row, 'finding', None))
        if name:
            found[row.selection.consumer] = name
    return found


def side(allocations, names):
    """One side of a change: ``[(provider name, uuid, resources)]``."""
    return [(names.get(rp), rp, service.format_resources(res))
            for rp, res in sorted(allocations.items())]


def repair_previews(rows, names, owner_names, owners):
    """Each repair row with its server's and its providers' names;
    ``owners(plan)`` gives the owner before and after a plan."""
    servers = server_names(rows)
    return [dict(
        row=row, action=labels.action(row.selection.action),
        server=servers.get(row.selection.consumer),
        reason=row.finding and labels.owner_named(row.finding.reason,
                                                  owner_names),
        provider=names.get(row.selection.provider),
        before=side(row.plan.before, names) if row.plan else [],
        after=side(row.plan.after, names) if row.plan else [],
        owners=owners(row.plan))
        for row in rows]


def restore_previews(rows, names, owners):
    """Each ``(entry, row)`` of a restore; a provider's has no sides."""
    return [dict(
        entry=entry, row=row, action=labels.action(entry.action),
        server=getattr(row, 'server', None),
        provider=names.get(entry.provider),
        before=side(row.plan.before, names)
        if row.plan and entry.kind != entry.PROVIDER else [],
        after=side(row.plan.after, names)
        if row.plan and entry.kind != entry.PROVIDER else [],
        owners=owners(row.plan))
        for entry, row in rows]


def decommission_preview(plan, names):
    """A decommission's steps, providers and other nodes, named."""
    return {
        'steps': [dict(
            step=step, action=labels.action(step.plan.action)
            if step.plan else '',
            verdict=labels.verdict(step.finding.verdict),
            before=side(step.plan.before, names) if step.plan else [],
            after=side(step.plan.after, names) if step.plan else [],
            commands=service.osc_commands(step.plan) if step.plan else [])
            for step in (plan.steps if plan else [])],
        'providers': [(names.get(p, p), p)
                      for p in (plan.providers if plan else [])],
        'other_nodes': [(plan.names.get(n, n), n)
                        for n in (plan.other_nodes if plan else [])],
    }
