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

from django.utils.translation import gettext_lazy as _

from orphan_dashboard.audit import capacity
from orphan_dashboard.audit import ownership
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.operations import decommission as decommission_ops
from orphan_dashboard.operations import repairs
from orphan_dashboard.operations import report as report_ops


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


class ShownProvider:
    """A hypervisor's row with its capacity bars (none without
    inventories)."""

    def __init__(self, report, tree):
        self.report = report
        self.bars = capacity_bars(tree.classes) if tree is not None else []

    def __getattr__(self, name):
        return getattr(self.report, name)


def shown_providers(rows, capacity):
    """The hypervisor rows of one page, each with its tree's bars."""
    trees = capacity.trees if capacity is not None else {}
    return [ShownProvider(r, trees.get(r.provider.uuid)) for r in rows]


def shown_findings(findings, report, names):
    hypervisors = report.hypervisors()
    return [ShownFinding(f, names, hypervisors, owned_names(report))
            for f in findings]


def owned_names(report):
    """``{provider uuid: name}`` of ``report``, each provider not Nova's
    named with its likely owner ("host1:Open vSwitch agent:br-phys
    (Neutron)")."""
    owners = dict(report.child_owners or {})
    owners.update((p.provider.uuid, p.owner) for p in report.providers
                  if p.hypervisor is None and not p.sharing and
                  p.owner != ownership.NOVA)
    names = dict(report.names)
    for uuid, owner in owners.items():
        names[uuid] = _('%(name)s (%(owner)s)') % {
            'name': names.get(uuid, uuid), 'owner': labels.owner(owner)}
    return names


def child_owners(tree, names):
    """Each child of a provider's tree (a ``ProviderReport``) with its
    owner and how it was proven, as the Overview lists them (``names``:
    the report's ``{uuid: name}``)."""
    return [dict(uuid=uuid, name=names.get(uuid, uuid),
                 owner=labels.owner(found.owner),
                 proof=labels.owner_proof(found.proof))
            for uuid, found in tree.children]


def server_names(rows):
    """``{consumer uuid: server name}`` of the rows whose finding (or a
    restore's read), as just re-read, names the consumer's server."""
    found = {}
    for row in rows:
        name = getattr(row, 'server', None) or report_ops.server_name(
            getattr(row, 'finding', None))
        if name:
            found[row.selection.consumer] = name
    return found


def side(allocations, names):
    """One side of a change: ``[(provider name, uuid, {class: amount})]``
    (its template groups the amounts)."""
    return [(names.get(rp), rp, res)
            for rp, res in sorted(allocations.items())]


def kept(plan, names):
    """The providers a plan holds exactly as read because their rows are
    protected, by name."""
    return ', '.join(names.get(p) or p for p in plan.kept) if plan else ''


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
        kept=kept(row.plan, names),
        partner=partner(row.plan, names),
        bindings=labels.bindings(row.plan, names),
        owners=owners(row.plan))
        for row in rows]


def partner(plan, names):
    """The other consumer a plan's one write changes, with its sides, or
    None."""
    other = getattr(plan, 'partner', None)
    if not other:
        return None
    return dict(consumer=other['consumer'],
                before=side(other['before'], names),
                after=side(other['after'], names))


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
        bindings=labels.bindings(row.plan, names),
        owners=owners(row.plan))
        for entry, row in rows]


def provider_delete_previews(rows, names):
    """Each provider of a delete by its name: the one just read, else the
    last audit's (``names``) for a row refused before it was read."""
    return [dict(row=row, name=getattr(row.plan, 'name', None) or
                 names.get(row.selection.provider)) for row in rows]


def freed(rows):
    """``{resource class: amount}`` the plans of ``rows`` take off their
    providers (:func:`~.audit.capacity.freed`), summed."""
    total = {}
    for row in rows:
        for resources in capacity.freed(row.plan.before,
                                        row.plan.after).values():
            for resource_class, amount in resources.items():
                total[resource_class] = total.get(resource_class,
                                                  0) + amount
    return total


def decommission_preview(plan, names, owner_names):
    """A decommission's steps (an unknown consumer's with its owner,
    ``owner_names`` as ``service.names`` gives them), providers and other
    nodes, named, with the equivalent commands of each delete."""
    service_commands, provider_commands = (
        decommission_ops.delete_commands(plan) if plan else ([], []))
    return {
        'steps': [dict(
            step=step, action=labels.action(step.plan.action)
            if step.plan else '',
            verdict=labels.verdict(step.finding.verdict),
            owner=labels.consumer_owner(
                step.finding.project_id, step.finding.user_id, owner_names)
            if step.optional else None,
            before=side(step.plan.before, names) if step.plan else [],
            after=side(step.plan.after, names) if step.plan else [],
            kept=kept(step.plan, names),
            bindings=labels.bindings(step.plan, names),
            commands=repairs.commands(step.plan))
            for step in (plan.steps if plan else [])],
        'providers': [(names.get(p) or plan.names.get(p, p), p)
                      for p in (plan.providers if plan else [])],
        'service_commands': service_commands,
        'provider_commands': provider_commands,
        'other_nodes': [(plan.names.get(n, n), n)
                        for n in (plan.other_nodes if plan else [])],
        'replacements': plan.replacements() if plan else [],
        'foreign_children': foreign_children(plan),
    }


def foreign_children(plan):
    """``(name, uuid, "name (owner)", blocker)`` of each child of the
    trees that is not Nova's, by name."""
    if plan is None:
        return []
    children = sorted(plan.foreign_children,
                      key=lambda c: (plan.names.get(c, c), c))
    return [(plan.names.get(c, c), c, _('%(name)s (%(owner)s)') % {
        'name': plan.names.get(c, c),
        'owner': labels.owner(plan.foreign_children[c])},
        plan.child_blocker(c)) for c in children]


def _percent(part, whole):
    return round(100 * max(part, 0) / whole, 1) if whole > 0 else 0


MIN_HELD_PERCENT = 5.0
"""The narrowest a non-zero part held by findings is drawn, in percent of
its bar (see :func:`capacity_bars`)."""


def _bar_widths(needed, held, other, free, whole):
    """The widths of a bar's parts, in percent of ``whole``; a non-zero
    held part at least :data:`MIN_HELD_PERCENT`, the difference taken from
    the widest other part so that the parts still fill the bar once."""
    widths = {'needed': _percent(needed, whole),
              'held': _percent(held, whole),
              'other': _percent(other, whole),
              'free': _percent(free, whole)}
    if held > 0 and widths['held'] < MIN_HELD_PERCENT:
        widest = max(('needed', 'other', 'free'), key=widths.get)
        widths[widest] = round(max(
            widths[widest] - (MIN_HELD_PERCENT - widths['held']), 0), 1)
        widths['held'] = MIN_HELD_PERCENT
    return widths


def capacity_bars(classes):
    """One row per :class:`~audit.capacity.ClassCapacity`: its numbers
    and the widths of its bar's parts (needed by the servers, held by
    findings, used otherwise, free), in percent of the larger of capacity
    and use, so an over-committed class shows as a full bar.

    What findings hold is part of the use, so it is drawn whole; the
    servers' need only up to the rest of the use: they may need more than
    they hold (a heal to come), which no part of the bar draws.

    The bars are looked at before they are read, and what they are looked
    at for is the findings: a few units held on a large hypervisor would be
    a sliver too thin to see, so a held part is drawn no narrower than
    :data:`MIN_HELD_PERCENT`. The bar is then not to scale there; its
    parts' titles and the hypervisor's Overview give the exact numbers."""
    rows = []
    for c in classes:
        held = min(c.held, c.used)
        needed = min(c.needed, c.used - held)
        other = c.used - needed - held
        widths = _bar_widths(needed, held, other, c.free,
                             max(c.capacity, c.used))
        rows.append({
            'resource_class': c.resource_class,
            'label': labels.short_class(c.resource_class),
            'capacity': c.capacity,
            'used': c.used, 'needed': c.needed, 'held': c.held,
            'other': other, 'free': c.free, 'free_after': c.free_after,
            'needed_width': widths['needed'], 'held_width': widths['held'],
            'other_width': widths['other'], 'free_width': widths['free']})
    return rows


def project_bars(row, names):
    """A :class:`~audit.capacity.ProjectRow` as the Projects tab shows it:
    its name, and per class its numbers, its headroom under its limit now
    and after the recommended repairs, and the widths of its bar (held by
    findings and the rest of its usage, against its limit where it has
    one, else against its usage)."""
    classes = []
    for rc in sorted(set(row.held) | set(row.usage) | set(row.needed) |
                     set(row.freed), key=capacity.class_order):
        held, usage = row.held.get(rc, 0), row.usage.get(rc, 0)
        limit = row.limits.get(rc)
        whole = max(limit or 0, usage, held)
        classes.append({
            'resource_class': rc, 'held': held, 'usage': usage,
            'needed': row.needed.get(rc, 0), 'limit': limit,
            'freed': row.freed.get(rc, 0), 'headroom': row.headroom(rc),
            'headroom_after': row.headroom_after(rc),
            'held_width': _percent(held, whole),
            'rest_width': _percent(usage - held, whole)})
    return {'project': row.project,
            'name': names['projects'].get(row.project), 'classes': classes}
