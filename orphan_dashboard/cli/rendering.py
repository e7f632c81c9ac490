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

"""``orphan-audit``'s output: the text an operator reads and the JSON a
script reads, each id with its name beside it."""

import dataclasses

from orphan_dashboard.audit import capacity
from orphan_dashboard.audit import limits
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons
from orphan_dashboard.cli.i18n import _
from orphan_dashboard.cli.i18n import N_
from orphan_dashboard.cli.i18n import ngettext
from orphan_dashboard.cli.i18n import text
from orphan_dashboard.cli.i18n import worded
from orphan_dashboard.operations import capacity as capacity_ops
from orphan_dashboard.operations import repairs
from orphan_dashboard.operations import report as report_ops


def report_json(report, owners=None):
    """The report with ids and, beside them, the names of the providers,
    servers, projects and users (``owners`` as
    :func:`report_ops.owners` reads them)."""
    owners = owners or {'projects': {}, 'users': {}}
    servers = report_ops.server_names(report.findings)
    providers = [{
        'uuid': p.provider.uuid, 'name': p.provider.name,
        'service_state': p.service_state, 'servers': p.servers,
        'consumers': p.consumers, 'usage': p.usage, 'needed': p.needed,
        'mismatched': p.mismatched, 'orphaned_provider': p.orphaned_provider,
        'owner': p.owner, 'owner_proof': p.owner_proof,
        'replaced_by': p.replaced_by and p.replaced_by.uuid,
        'children': [{'uuid': c, 'name': report.names.get(c, c),
                      'owner': found.owner, 'owner_proof': found.proof}
                     for c, found in p.children],
        'findings': p.counts,
    } for p in report.providers]
    findings = [dict(row, server_name=servers.get(row['consumer']))
                for row in report_ops.finding_rows(report, owners)]
    return {'providers': providers, 'findings': findings,
            'down_cells': report.down_cells, 'partial': report.down_cells,
            'skipped_cells': skipped_cells(report),
            'neutron': report.neutron}


def skipped_cells(report):
    """What a down cell hid from the run, or None for a whole run: Nova
    names no cell to its API users, only the compute hosts of the cells
    it could not reach."""
    if not report.down_cells:
        return None
    return {'hosts': list(report.skipped_hosts),
            'down_cell_servers': report.down_cell_servers,
            'waited_seconds': report.cell_wait,
            'slow': report.cell_slow,
            'unconfirmed_providers': list(report.unconfirmed)}


def print_text(report, out, owners=None):
    """The providers that need attention and their findings, each verdict
    by its name, an incomplete consumer's owner by Keystone's names."""
    owners = owners or {'projects': {}, 'users': {}}
    if report.down_cells:
        print_partial(report, out)
    for note in reasons.report_notes(report):
        print(_('NOTE: %s') % text(note), file=out)
    protected = sum(f.verdict == m.PROTECTED for f in report.findings)
    if protected and not any(p.needs_attention for p in report.providers):
        # Nothing listed is not nothing found: the panel shows these.
        print(ngettext('no findings to repair; %(count)d protected',
                       'no findings to repair; %(count)d protected',
                       protected) % {'count': protected}, file=out)
    for p in report.providers:
        if not p.needs_attention:
            continue
        print('%s %s (%s)%s' % (p.provider.name, p.provider.uuid,
                                p.service_state,
                                ' ' + _('orphaned provider')
                                if p.orphaned_provider else ''), file=out)
        if p.replacement:
            print('  ' + _('NOTE: %s') % text(p.replacement), file=out)
        for rc in sorted(set(p.usage) | set(p.needed)):
            print('  ' + _('%(class)-10s usage %(usage)-8s needed '
                           '%(needed)s') % {
                'class': rc, 'usage': p.usage.get(rc, 0),
                'needed': p.needed.get(rc, 0)}, file=out)
        for f in p.findings:
            if f.verdict == m.OK:
                continue
            where = '' if f.provider == p.provider.uuid else ' ' + _(
                'on %s') % report.names.get(f.provider, f.provider)
            print('  %-19s %s %s%s: %s%s' % (
                text(reasons.verdict_name(f.verdict)), f.consumer,
                text(f.nova), where,
                text(reasons.owner_named(f.reason, owners)),
                ' -> %s' % text(reasons.action_name(f.action)) if f.action
                else ''), file=out)
            if f.blocked:
                print('  %-19s %s' % ('', _('no repair: %s') %
                                      text(f.blocked)), file=out)


def print_partial(report, out):
    """What a down cell hid from the run, as its first line."""
    print(_('PARTIAL: %s') % text(reasons.down_cells(report)), file=out)


def row_names(rows, names):
    """``{uuid: name}`` of the providers (``names``) and the servers the
    previewed ``rows`` read, for the lines that follow them."""
    servers = {row.selection.consumer: row.server or
               report_ops.server_name(row.finding) for row in rows}
    return dict(names, **{u: n for u, n in servers.items() if n})


def subject(selection, names, kind=None):
    """What a row is about, by name with its uuid beside it: ``server
    web-1 (uuid) on host1 (uuid)``, ``consumer uuid on host1 (uuid)``, or
    with what Nova says the consumer is (``kind``, where it names no
    server) ``consumer uuid (deleted server) on host1 (uuid)``."""
    provider = reasons.named(selection.provider, names)
    if not selection.consumer:
        return _('provider %s') % provider
    values = {'consumer': reasons.named(selection.consumer, names),
              'provider': provider}
    if names.get(selection.consumer):
        return _('server %(consumer)s on %(provider)s') % values
    if kind is not None:
        values['kind'] = text(kind)
        return _('consumer %(consumer)s (%(kind)s) on %(provider)s') % values
    return _('consumer %(consumer)s on %(provider)s') % values


def heading(row, names):
    """The line that names a planned row before its commands: its
    action, what it acts on by name, and its verdict where it has one
    (``delete_and_heal server web-1 (uuid) on host3 (uuid): wrong
    amount``)."""
    finding = row.finding
    said = {'action': text(reasons.action_name(row.selection.action)),
            'subject': subject(row.selection, names,
                               finding.nova if finding else None)}
    if finding is None:
        return _('%(action)s %(subject)s') % said
    said['verdict'] = text(reasons.verdict_name(finding.verdict))
    return _('%(action)s %(subject)s: %(verdict)s') % said


def no_entries(all_clouds, filtered):
    """The one line of a history with no entry to list."""
    if all_clouds:
        return _('the journal holds no entries')
    if filtered:
        return _('the journal holds no entries for this cloud that match')
    return _('the journal holds no entries for this cloud')


def print_rows(rows, out, names=None):
    names = names or {}
    for row in rows:
        if row.plan is not None:
            print(_('repair: %s') % heading(row, names), file=out)
        for note in row.notes:
            print(_('note: %s') % text(note), file=out)
        if row.plan is None:
            print(_('not possible: %(action)s %(subject)s: %(error)s') % {
                'action': text(reasons.action_name(row.selection.action)),
                'subject': subject(row.selection, names),
                'error': text(row.error)}, file=out)
        for command in row.commands:
            print(_('plan: %s') % command, file=out)
        kept = getattr(row.plan, 'kept', ())
        if kept:
            print(_('kept as read, its row is protected: %s') % ', '.join(
                names.get(p) or p for p in kept), file=out)


def _selection_json(selection, names):
    """A row's consumer, provider and action, the names beside the ids."""
    return {'consumer': selection.consumer,
            'consumer_name': names.get(selection.consumer),
            'provider': selection.provider,
            'provider_name': names.get(selection.provider),
            'action': selection.action}


def outcomes_json(outcomes, names=None):
    names = names or {}
    return [dict(_selection_json(o.selection, names), status=o.status,
                 message=str(o.message), journal_entry=o.entry_id)
            for o in outcomes]


def plans_json(rows, names=None):
    """The previewed ``rows``: the commands of each plan, or why it has
    none, and its notes."""
    names = names or {}
    return [dict(_selection_json(r.selection, names), commands=r.commands,
                 error=reasons.render(r.error),
                 notes=[str(note) for note in r.notes])
            for r in rows]


def held_json(decision):
    """What a held run would have written (None: it was not held)."""
    if not decision.held:
        return None
    return {'exceeded': decision.exceeded, 'limit': decision.limit,
            'writes': decision.total, 'verdicts': decision.writes,
            'consumers': decision.consumers,
            'share': round(decision.share, 2)}


def held_line(decision):
    """Why a held run wrote nothing: what it would have written, of
    which verdicts, and the limit it went past."""
    values = {'writes': decision.total, 'consumers': decision.consumers,
              'share': decision.share, 'limit': decision.limit,
              'verdicts': ', '.join('%s %d' % item
                                    for item in decision.writes.items())}
    if decision.exceeded == limits.MAX_WRITES:
        return ngettext(
            'held, nothing written: the run would write %(writes)d of '
            '%(consumers)d consumer (%(verdicts)s), more than --max-writes '
            '%(limit)d',
            'held, nothing written: the run would write %(writes)d of '
            '%(consumers)d consumers (%(verdicts)s), more than --max-writes '
            '%(limit)d', decision.consumers) % values
    return ngettext(
        'held, nothing written: the run would write %(writes)d of '
        '%(consumers)d consumer, %(share).1f %% (%(verdicts)s), more than '
        '--max-share %(limit)g %%',
        'held, nothing written: the run would write %(writes)d of '
        '%(consumers)d consumers, %(share).1f %% (%(verdicts)s), more than '
        '--max-share %(limit)g %%', decision.consumers) % values


def print_outcomes(outcomes, out, names=None):
    names = names or {}
    for o in outcomes:
        print('%-8s %-16s %s: %s' % (
            _(STATUSES.get(o.status, o.status)),
            text(reasons.action_name(o.selection.action)),
            subject(o.selection, names), text(o.message)), file=out)


STATUSES = {repairs.DONE: N_('done'), repairs.SKIPPED: N_('skipped'),
            repairs.FAILED: N_('failed'), repairs.UNKNOWN: N_('unknown')}
"""An outcome's status, as a line shows it."""


def projects_json(rows, names):
    return [{'project_id': r.project, 'project_name': names.get(r.project),
             'held': r.held, 'usage': r.usage, 'needed': r.needed,
             'freed': r.freed, 'limits': r.limits,
             'headroom': {rc: r.headroom(rc) for rc in r.limits},
             'headroom_after': {rc: r.headroom_after(rc) for rc in r.limits}}
            for r in rows]


def print_projects(rows, names, out):
    for row in rows:
        print('%s %s' % (names.get(row.project) or '-', row.project),
              file=out)
        for rc in sorted(set(row.held) | set(row.usage) | set(row.needed) |
                         set(row.freed), key=capacity.class_order):
            line = _('%(class)-14s held by findings %(held)-8s '
                     'usage %(usage)-8s needed %(needed)-8s limit '
                     '%(limit)s') % {
                'class': rc, 'held': row.held.get(rc, 0),
                'usage': row.usage.get(rc, 0),
                'needed': row.needed.get(rc, 0),
                'limit': row.limits.get(rc, '-')}
            line += '  ' + _('freed by the repairs %(freed)s') % {
                'freed': row.freed.get(rc, 0)}
            if row.headroom(rc) is not None:
                line += '  ' + _('headroom %(now)s now, %(after)s after') % {
                    'now': row.headroom(rc), 'after': row.headroom_after(rc)}
            print('  ' + line, file=out)


def decommission_json(plan, chosen, children=(), owners=None):
    """A decommission's preview as JSON: an unknown consumer's owner
    (``owners`` as :func:`report_ops.owners` reads them) and the
    deletes' commands with it, as the panel previews them."""
    service_commands, provider_commands = _delete_commands(plan)
    return {
        'name': plan.name, 'host': plan.host, 'gone': plan.gone,
        'service': plan.service and {
            'uuid': plan.service.uuid, 'host': plan.service.host,
            'state': plan.service.state,
            'forced_down': plan.service.forced_down},
        'providers': plan.providers,
        'deletes_service': plan.deletes_service,
        'whole_service': plan.whole_service,
        'other_nodes': plan.other_nodes,
        'replaced': [{'provider': r, 'node': node.uuid, 'host': node.host}
                     for r, node in sorted(plan.replaced.items())],
        'provider_names': {p: plan.names.get(p) for p in plan.providers},
        'servers': [{'uuid': s.uuid, 'name': s.name, 'status': s.status}
                    for s in plan.servers],
        'steps': [{'consumer': s.consumer,
                   'server_name': report_ops.server_name(s.finding),
                   'verdict': s.finding.verdict,
                   'reason': str(s.finding.reason), 'optional': s.optional,
                   'owner': owner_json(s.finding, owners)
                   if s.optional else None,
                   'action': s.plan.action if s.plan else None,
                   'commands': repairs.commands(s.plan),
                   'notes': [str(note) for note in s.notes],
                   'error': str(s.error)} for s in plan.steps],
        'foreign_children': [
            {'uuid': c, 'name': plan.names.get(c, c),
             'owner': plan.foreign_children[c], 'deleted': c in children,
             'blocker': str(worded(plan.child_blocker(c)))}
            for c in sorted(plan.foreign_children)],
        'service_commands': service_commands,
        'provider_commands': provider_commands,
        'blockers': [str(worded(b))
                     for b in plan.blockers(chosen, children)]}


def owner_json(finding, owners):
    """A consumer's project and user, with Keystone's names (None where
    ``owners`` has none)."""
    owners = owners or {}
    return {'project_id': finding.project_id,
            'project_name': owners.get('projects', {}).get(
                finding.project_id),
            'user_id': finding.user_id,
            'user_name': owners.get('users', {}).get(finding.user_id)}


def consumer_owner(finding, owners):
    """A consumer's project and user by Keystone's names, each id beside
    (``owners`` as :func:`report_ops.owners` reads them), as the
    panel names them; an incomplete consumer has neither."""
    if finding.project_id == m.INCOMPLETE:
        return _('no project, no user')
    owners = owners or {}
    return _('project %(project)s, user %(user)s') % {
        'project': reasons.named(finding.project_id,
                                 owners.get('projects', {})),
        'user': reasons.named(finding.user_id, owners.get('users', {}))}


def print_decommission(plan, chosen, out, children=(), owners=None):
    """A decommission's preview as text: each step (an unknown consumer's
    with its owner), then the deletes with their commands."""
    service_commands, provider_commands = _delete_commands(plan)
    service = plan.service
    if service:
        state = (_('%s, forced down') % service.state if service.forced_down
                 else service.state)
        shown = '%s (%s)' % (service.host, state)
    print(_('decommission %(name)s: compute service %(service)s, providers '
            '%(providers)s') % {
        'name': plan.name, 'service': shown if service else _('none'),
        'providers': providers_named(plan) or _('none')}, file=out)
    for note in plan.replacements():
        print(_('NOTE: %s') % text(note), file=out)
    if plan.keeps_service and not plan.replaced:
        nodes = ', '.join(reasons.named(n, plan.names)
                          for n in plan.other_nodes)
        print(_('compute service %(host)s also serves %(nodes)s: kept '
                '(--whole-service deletes it with every node)') % {
            'host': service.host, 'nodes': nodes}, file=out)
    for step in plan.steps:
        head = '%-19s %s: %s' % (
            text(reasons.verdict_name(step.finding.verdict)), reasons.named(
                step.consumer, {step.consumer: report_ops.server_name(
                    step.finding)}), text(step.finding.reason))
        unchosen = step.optional and step.consumer not in chosen
        if step.error:
            print('%-8s %s (%s)' % (_('blocked'), head, text(step.error)),
                  file=out)
        elif unchosen:
            print('%-8s %s (%s)' % (
                _('unknown'), head, _('deleted only with --delete-unknown '
                                      '%s') % step.consumer), file=out)
        else:
            print('%-8s %s' % (_('repair'), head), file=out)
        if step.optional:
            print('%-8s %s' % ('', consumer_owner(step.finding, owners)),
                  file=out)
        if step.error or unchosen:
            continue
        for note in step.notes:
            print(_('note: %s') % text(note), file=out)
        for command in repairs.commands(step.plan):
            print(_('plan: %s') % command, file=out)
    for child in sorted(plan.foreign_children):
        name = plan.names.get(child, child)
        fate = (_('deleted with the tree (--delete-foreign-child)')
                if child in children else
                _('deleted only with --delete-foreign-child %s') % name)
        print('%-8s %s: %s' % (_('foreign'), reasons.named(child, plan.names),
                               fate), file=out)
    if plan.deletes_service:
        print(_('then: delete compute service %s (Nova deletes its '
                'providers; a restore does not re-create the service)') %
              service.host, file=out)
        for command in service_commands:
            print(_('plan: %s') % command, file=out)
    if plan.providers:
        print(_('then: delete what Nova leaves of providers %s, children '
                'first') % providers_named(plan), file=out)
        for command in provider_commands:
            print(_('plan: %s') % command, file=out)
    for blocker in plan.blockers(chosen, children):
        print(_('cannot be carried out now: %s') % text(blocker), file=out)


def providers_named(plan):
    """A decommission's providers, each by name with its uuid beside."""
    return ', '.join(reasons.named(p, plan.names) for p in plan.providers)


def still_runs(host, servers):
    """Why a host with servers is not decommissioned, naming them, each
    with its uuid beside."""
    return _('%(host)s still runs servers: %(servers)s') % {
        'host': host, 'servers': ', '.join(
            reasons.named(s.uuid, {s.uuid: s.name}) for s in servers)}


def already_gone(host):
    return _('%s is already gone: no compute service, no provider') % host


def decommission_names(plan):
    """``{uuid: name}`` of a decommission's providers and of the servers
    its steps name."""
    servers = {s.consumer: report_ops.server_name(s.finding)
               for s in plan.steps}
    return dict(plan.names, **{u: n for u, n in servers.items() if n})


def capacity_json(found):
    """``orphan-audit capacity``'s :class:`~operations.capacity.Answer` as
    JSON: every id, the names beside them."""
    assessed = found.capacity
    document = {'held': assessed.held(), 'affected': assessed.affected(),
                'hypervisors': [{
                    'hypervisor': t.name, 'provider': t.root,
                    'classes': [dict(dataclasses.asdict(c), free=c.free)
                                for c in t.classes]} for t in found.trees]}
    if found.flavor is not None:
        document.update(flavor={'id': found.flavor.id,
                                'name': found.flavor.name,
                                'resources': found.resources},
                        counts=found.counts, hypervisors=[
                            dict(row, why=row['why'] and text(row['why']))
                            for row in found.rows])
    return document


def fit_name(state):
    """A "would it fit?" answer inside a line."""
    return _(capacity.FIT_KINDS[state].name)


def repair_line(repair):
    """A repair that makes room, its server by name."""
    return _('%(action)s %(subject)s frees %(resources)s (%(verdict)s)') % {
        'action': text(reasons.action_name(repair['action'])),
        'subject': text(capacity_ops.repair_subject(repair)),
        'resources': reasons.format_resources(repair['frees']),
        'verdict': text(reasons.verdict_name(repair['verdict']))}


def print_capacity(found, out):
    assessed = found.capacity
    print(ngettext('held by findings: %(held)s on %(count)d hypervisor',
                   'held by findings: %(held)s on %(count)d hypervisors',
                   assessed.affected()) % {
        'held': reasons.format_resources(assessed.held()) or _('nothing'),
        'count': assessed.affected()}, file=out)
    if found.flavor is not None:
        print(_('flavor %(flavor)s: %(resources)s') % {
            'flavor': found.flavor.name,
            'resources': reasons.format_resources(found.resources)},
            file=out)
        print(', '.join('%s: %d' % (fit_name(state), n)
                        for state, n in found.counts.items()), file=out)
        for row in found.rows:
            state = fit_name(row['state'])
            if row['why']:
                state = '%s: %s' % (state, text(row['why']))
            print('%-24s %s' % (row['hypervisor'], state), file=out)
            for repair in row['repairs']:
                print('  ' + repair_line(repair), file=out)
        return
    for tree in found.trees:
        print(tree.name, file=out)
        for c in tree.classes:
            print('  ' + _('%(class)-14s capacity %(capacity)-8s used '
                           '%(used)-8s needed %(needed)-8s held %(held)-8s '
                           'free %(free)-8s free after repair '
                           '%(free_after)s') % {
                'class': c.resource_class, 'capacity': c.capacity,
                'used': c.used, 'needed': c.needed, 'held': c.held,
                'free': c.free, 'free_after': c.free_after}, file=out)


def _delete_commands(plan):
    """:func:`operations.decommission.delete_commands`, imported when a
    decommission is rendered (it brings the journal's Django models)."""
    from orphan_dashboard.operations import decommission as decommission_ops

    return decommission_ops.delete_commands(plan)
