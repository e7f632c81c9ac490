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

"""``orphan-audit``: the panel's engine for cron, monitoring and scripts.

Subcommands: ``report`` (the default), ``apply``, ``history``,
``restore``, ``decommission``, ``refresh`` (the panel's cached snapshot,
from cron), ``metrics`` (Prometheus) and ``capacity`` (what findings
hold, and whether a flavor fits).  ``manage.py orphan_audit`` is the
same parser and the same code (``management/commands/orphan_audit.py``).
Exit codes follow ``nova-manage placement audit``: 0 nothing found, 3
findings (or something to restore), 4 repairs applied; 1 on errors (one
line, no traceback), 2 on bad arguments; 5 when ``report`` or ``apply``
ran partially because Nova could not reach a cell (what it could see was
audited and repaired; the JSON's ``skipped_cells`` says what was not);
141, silently, when its reader closed the pipe (``| head``).
"""

import argparse
import dataclasses
import json
import logging
import math
import os
import signal
import sys
import time

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.audit import heal
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit.plan import osc_commands
from orphan_dashboard.audit import reasons
from orphan_dashboard.cli.i18n import _
from orphan_dashboard.cli.i18n import N_
from orphan_dashboard.cli.i18n import ngettext
from orphan_dashboard.cli.i18n import text
from orphan_dashboard.cli import progress_bar
from orphan_dashboard.cli import prometheus
from orphan_dashboard import conf
from orphan_dashboard.operations import capacity as capacity_ops
from orphan_dashboard.operations import connect
from orphan_dashboard.operations import repairs
from orphan_dashboard.operations import report as report_ops

NOTHING, ERROR, BAD_ARGUMENTS, FOUND, APPLIED, PARTIAL = 0, 1, 2, 3, 4, 5
READER_GONE = 128 + signal.SIGPIPE
"""The status a shell shows for ``git log | head``: the tool ended by
SIGPIPE when its reader left, its output cut short (``pipefail`` sees it,
a plain pipeline takes ``head``'s)."""
EPILOG = ('exit codes: 0 nothing found, 3 findings, 4 repairs applied, '
          '5 partial run (a cell is down: report and apply audited and '
          'repaired only what Nova could see, see "skipped_cells"), '
          '1 error, 2 bad arguments, 141 output cut short (its reader '
          'closed the pipe)')
COMMANDS = ('report', 'apply', 'history', 'restore', 'decommission',
            'refresh', 'metrics', 'capacity')


class Failure(Exception):
    """An error worth one line to the operator."""


class BadArguments(Failure):
    """Arguments that parse but name nothing that exists."""


def _common(parser, suppress=False):
    """Options every subcommand takes, before or after its name."""
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument('--os-cloud', default=default,
                        help='cloud in clouds.yaml (default: OS_CLOUD or the '
                             'OS_* variables)')
    parser.add_argument('--timeout', type=float, default=default,
                        metavar='SECONDS',
                        help='seconds one API request may take (default: '
                             'api_timeout of the cloud, else %d)' %
                             connect.DEFAULT_TIMEOUT)
    parser.add_argument('--debug', action='store_true',
                        default=argparse.SUPPRESS if suppress else False,
                        help='log HTTP requests and library warnings')


def _audit_options(parser, json=True):
    if json:
        parser.add_argument('--json', action='store_true',
                            help='print the report as JSON')
    provider_option(parser)
    min_age_option(parser)
    concurrency_option(parser)


def provider_option(parser, metavar='UUID_OR_NAME'):
    """``--provider``, as ``orphan-audit`` and the ``openstack`` plugin
    take it (``metavar`` in each one's style)."""
    parser.add_argument('--provider', metavar=metavar,
                        help='only this provider tree (an unknown one is an '
                             'error)')


def min_age_option(parser, metavar='SECONDS'):
    """``--min-age``, as ``orphan-audit`` and the ``openstack`` plugin
    take it (``metavar`` in each one's style)."""
    parser.add_argument('--min-age', type=int, metavar=metavar,
                        help='protect allocations younger than this '
                             '(default %s: %d)' % (conf.MIN_AGE.name,
                                                   conf.MIN_AGE.default))


def concurrency_option(parser, metavar=None):
    """``--concurrency``, as ``orphan-audit`` and the ``openstack`` plugin
    take it."""
    parser.add_argument('--concurrency', type=int, metavar=metavar,
                        help='Placement requests in flight (default %s: %d)'
                        % (conf.CONCURRENCY.name, conf.CONCURRENCY.default))


def flavor_option(parser, metavar='NAME_OR_ID'):
    """``capacity``'s ``--flavor``, in both command lines."""
    parser.add_argument('--flavor', metavar=metavar,
                        help='say per hypervisor whether this flavor fits '
                             'now, only after the recommended repairs, or '
                             'not (traits and aggregates are not '
                             'considered)')


def decommission_arguments(parser, host='HOST', consumer='CONSUMER'):
    """What a decommission is asked with, in both command lines."""
    parser.add_argument('host', metavar=host,
                        help='compute host or hypervisor name (or '
                             'provider uuid)')
    parser.add_argument('--delete-unknown', metavar=consumer,
                        action='append', default=[],
                        help='delete this consumer Nova does not know '
                             '(an explicit choice; repeat as needed)')
    parser.add_argument('--delete-foreign-child', metavar='PROVIDER',
                        action='append', default=[],
                        help="delete this child provider of the host's "
                             "tree that is not Nova's (another service's, "
                             'or of no proven owner), by name or uuid, '
                             'rather than through its owner (an explicit '
                             'choice; repeat as needed)')
    parser.add_argument('--whole-service', action='store_true',
                        help='delete the compute service with every '
                             'node it serves (needed when it serves '
                             'several, e.g. an Ironic conductor)')


def build_parser(parser=None):
    """The one parser of ``orphan-audit`` and ``manage.py orphan_audit``
    (whose defaults come from Horizon's settings: :mod:`conf`)."""
    parser = parser or argparse.ArgumentParser(prog='orphan-audit')
    parser.description = ('Find (and with "apply", repair) orphaned '
                          'allocations in Placement, using only the Nova and '
                          'Placement APIs.  Every write is journaled first.')
    parser.epilog = EPILOG
    _common(parser)
    commands = parser.add_subparsers(dest='command', metavar='COMMAND')

    report = commands.add_parser('report', help='audit and print the '
                                 'findings (the default command)')
    _common(report, suppress=True)
    _audit_options(report)
    report.add_argument('--by', choices=('provider', 'project'),
                        default='provider',
                        help='per provider tree (the default), or per '
                             'project: what its findings hold against its '
                             'Placement usage, its servers\' needs and its '
                             'Keystone limits, worst first')

    apply = commands.add_parser('apply', help='audit, then perform the '
                                'recommended repairs, each re-read and '
                                'generation-checked')
    _common(apply, suppress=True)
    _audit_options(apply)

    history = commands.add_parser('history', help="this cloud's journal, "
                                  'newest first')
    _common(history, suppress=True)
    output = history.add_mutually_exclusive_group()
    output.add_argument('--json', action='store_true', help='export as JSON')
    output.add_argument('--csv', action='store_true', help='export as CSV')
    history.add_argument('--provider', metavar='UUID',
                         help='only entries touching this provider')
    history.add_argument('--consumer', metavar='UUID',
                         help='only this consumer')
    history.add_argument('--all-clouds', action='store_true',
                         help='entries of every cloud (no login needed)')

    restore = commands.add_parser('restore', help='put journaled changes '
                                  'back (previewed; --apply writes)')
    _common(restore, suppress=True)
    chosen = restore.add_mutually_exclusive_group(required=True)
    chosen.add_argument('entries', metavar='ENTRY', type=int, nargs='*',
                        default=[], help='journal entry ids (the latest '
                        'change in effect of each consumer or provider)')
    chosen.add_argument('--batch', help='every entry of one confirm or '
                        'decommission (the whole batch id, as history '
                        'prints it)')
    restore.add_argument('--apply', action='store_true',
                         help='write the restore (default: preview only)')
    restore.add_argument('--json', action='store_true',
                         help='print the plans and outcomes as JSON')
    restore.add_argument('--min-age', type=int, metavar='SECONDS',
                         help=argparse.SUPPRESS)

    decommission = commands.add_parser(
        'decommission', help='delete a dead hypervisor: its leftover '
        'allocations, its compute service and its providers (previewed; '
        '--apply carries it out)')
    _common(decommission, suppress=True)
    decommission_arguments(decommission)
    decommission.add_argument('--apply', action='store_true',
                              help='carry it out (default: preview only)')
    decommission.add_argument('--json', action='store_true',
                              help='print the plan and outcomes as JSON')
    min_age_option(decommission)

    refresh = commands.add_parser(
        'refresh', help="renew the panel's cached snapshot (from cron: "
        'run with Horizon\'s settings, e.g. "manage.py orphan_audit '
        'refresh"), incremental unless a full sweep is due or --full')
    _common(refresh, suppress=True)
    refresh.add_argument('--full', action='store_true',
                         help='a full sweep even if one is not due')
    min_age_option(refresh)
    concurrency_option(refresh)

    metrics = commands.add_parser(
        'metrics', help='audit and print (or with --textfile, write '
        'atomically for node_exporter) Prometheus metrics')
    _common(metrics, suppress=True)
    _audit_options(metrics, json=False)
    metrics.add_argument('--textfile', metavar='PATH',
                         help='write here (a .prom file of node_exporter\'s '
                              'textfile collector) instead of stdout')
    capacity = commands.add_parser(
        'capacity', help='per hypervisor and resource class: capacity, '
        'what servers need, what findings hold, what is free now and after '
        'the recommended repairs; with --flavor, whether it fits')
    _common(capacity, suppress=True)
    _audit_options(capacity)
    flavor_option(capacity)
    return parser


def normalize(argv):
    """Scripts written for the flag-only interface keep working:
    ``orphan-audit [--json]`` is ``report``, ``orphan-audit --apply`` is
    ``apply``."""
    argv = list(argv)
    if any(arg in COMMANDS for arg in argv) or any(
            arg in ('-h', '--help') for arg in argv):
        return argv
    if '--apply' in argv:
        argv.remove('--apply')
        return ['apply'] + argv
    return ['report'] + argv


# -- output ------------------------------------------------------------------

def report_json(report, owners=None):
    """The report with ids and, beside them, the names of the providers,
    servers, projects and users (``owners`` as
    :func:`report_ops.owner_names` reads them)."""
    owners = owners or {'projects': {}, 'users': {}}
    servers = report_ops.server_names(report.findings)
    providers = [{
        'uuid': p.provider.uuid, 'name': p.provider.name,
        'service_state': p.service_state, 'servers': p.servers,
        'consumers': p.consumers, 'usage': p.usage, 'needed': p.needed,
        'mismatched': p.mismatched, 'orphaned_provider': p.orphaned_provider,
        'owner': p.owner,
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
            'unconfirmed_providers': list(report.unconfirmed)}


def print_text(report, out, owners=None):
    """The providers that need attention and their findings, each verdict
    by its name, an incomplete consumer's owner by Keystone's names."""
    owners = owners or {'projects': {}, 'users': {}}
    if report.down_cells:
        print_partial(report, out)
    if reasons.neutron_unread(report):
        print(_('NOTE: %s') % text(reasons.neutron_unread(report)), file=out)
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
        for rc in sorted(set(p.usage) | set(p.needed)):
            print('  ' + _('%(class)-10s usage %(usage)-8s needed '
                           '%(needed)s') % {
                'class': rc, 'usage': p.usage.get(rc, 0),
                'needed': p.needed.get(rc, 0)}, file=out)
        for f in p.findings:
            if f.verdict == m.OK:
                continue
            print('  %-19s %s %s: %s%s' % (
                text(reasons.verdict_name(f.verdict)), f.consumer,
                text(f.nova), text(reasons.owner_named(f.reason, owners)),
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


def subject(selection, names):
    """What a row is about, by name with its uuid beside it: ``server
    web-1 (uuid) on host1 (uuid)``, ``consumer uuid on host1 (uuid)``."""
    provider = reasons.named(selection.provider, names)
    if not selection.consumer:
        return _('provider %s') % provider
    values = {'consumer': reasons.named(selection.consumer, names),
              'provider': provider}
    if names.get(selection.consumer):
        return _('server %(consumer)s on %(provider)s') % values
    return _('consumer %(consumer)s on %(provider)s') % values


def print_rows(rows, out, names=None):
    names = names or {}
    for row in rows:
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


def outcomes_json(outcomes, names=None):
    names = names or {}
    return [{'consumer': o.selection.consumer,
             'consumer_name': names.get(o.selection.consumer),
             'provider': o.selection.provider,
             'provider_name': names.get(o.selection.provider),
             'action': o.selection.action, 'status': o.status,
             'message': str(o.message), 'journal_entry': o.entry_id}
            for o in outcomes]


def print_outcomes(outcomes, out, names=None):
    names = names or {}
    for o in outcomes:
        print('%-8s %-16s %s: %s' % (
            _(STATUSES.get(o.status, o.status)),
            text(reasons.action_name(o.selection.action)),
            subject(o.selection, names), text(o.message)), file=out)


STATUSES = {repairs.DONE: N_('done'), repairs.SKIPPED: N_('skipped'),
            repairs.FAILED: N_('failed')}
"""An outcome's status, as a line shows it."""


def outcome_code(outcomes):
    if any(o.status == repairs.FAILED for o in outcomes):
        return ERROR
    if any(o.status == repairs.DONE for o in outcomes):
        return APPLIED
    return FOUND


# -- commands ----------------------------------------------------------------

def setup_django():
    """Django just for the journal when no Horizon settings are around."""
    import django
    from django.conf import settings

    if not settings.configured and 'DJANGO_SETTINGS_MODULE' not in os.environ:
        journal = {}
        conf.add_journal(journal)
        settings.configure(INSTALLED_APPS=['orphan_dashboard'], USE_TZ=True,
                           **journal)
    django.setup()


def _min_age(args):
    return conf.MIN_AGE.get() if args.min_age is None else args.min_age


def _concurrency(args):
    return args.concurrency or conf.CONCURRENCY.get()


def audit(args, clients):
    """The report of the whole cloud, or of ``--provider``'s tree."""
    try:
        return report_ops.audit(clients, _min_age(args), _concurrency(args),
                                progress_bar.for_args(args),
                                provider=args.provider)
    except report_ops.NoSuchProvider:
        raise BadArguments(_('no resource provider %s') % args.provider)


def projects_json(rows, names):
    return [{'project_id': r.project, 'project_name': names.get(r.project),
             'held': r.held, 'usage': r.usage, 'needed': r.needed,
             'limits': r.limits} for r in rows]


def print_projects(rows, names, out):
    for row in rows:
        print('%s %s' % (names.get(row.project) or '-', row.project),
              file=out)
        for rc in sorted(set(row.held) | set(row.usage) | set(row.needed),
                         key=capacity_ops.class_order):
            print('  ' + _('%(class)-14s held by findings %(held)-8s '
                           'usage %(usage)-8s needed %(needed)-8s limit '
                           '%(limit)s') % {
                'class': rc, 'held': row.held.get(rc, 0),
                'usage': row.usage.get(rc, 0),
                'needed': row.needed.get(rc, 0),
                'limit': row.limits.get(rc, '-')}, file=out)


def cmd_report_by_project(args, clients, out):
    """What each project's findings hold: its quota charged by orphans."""
    report, capacity = capacity_ops.audit(
        clients, _min_age(args), _concurrency(args),
        progress_bar.for_args(args))
    if capacity is None:
        raise Failure(_('Placement gave no inventories'))
    rows = capacity_ops.projects(clients, capacity, _concurrency(args))
    names = capacity_ops.project_names(clients)
    if args.json:
        json.dump({'projects': projects_json(rows, names),
                   'partial': report.down_cells,
                   'skipped_cells': skipped_cells(report)}, out, indent=2,
                  sort_keys=True)
        out.write('\n')
    else:
        print_projects(rows, names, out)
    return partial(report, FOUND if rows else NOTHING)


def cmd_report(args, clients, out):
    if getattr(args, 'by', 'provider') == 'project':
        if args.provider:
            raise BadArguments(_('--by project covers the whole cloud: '
                                 'without --provider'))
        return cmd_report_by_project(args, clients, out)
    report = audit(args, clients)
    owners = report_ops.owner_names(clients)
    if args.json:
        json.dump(report_json(report, owners), out, indent=2,
                  sort_keys=True)
        out.write('\n')
    else:
        print_text(report, out, owners)
    return partial(report, FOUND if report.problems else NOTHING)


def partial(report, code):
    """``code``, or :data:`PARTIAL` when a cell was down (errors stay
    errors)."""
    return PARTIAL if report.down_cells and code != ERROR else code


def cmd_apply(args, clients, out):
    report = audit(args, clients)
    if not report.problems:
        if args.json:
            json.dump(dict(report_json(report), outcomes=[]), out, indent=2,
                      sort_keys=True)
            out.write('\n')
        elif report.down_cells:
            print_partial(report, out)
        return partial(report, NOTHING)
    selections, hints = repairs.recommended(report)
    rows = repairs.preview(clients, selections, _min_age(args), hints)
    setup_django()
    journal = connect.journal_for_clients(clients)
    outcomes = repairs.apply_previewed(clients, journal, rows,
                                       _min_age(args), hints)
    names = row_names(rows, report.names)
    if args.json:
        json.dump(dict(report_json(report, report_ops.owner_names(clients)),
                       outcomes=outcomes_json(outcomes, names)),
                  out, indent=2, sort_keys=True)
        out.write('\n')
    else:
        if report.down_cells:
            print_partial(report, out)
        print_rows(rows, out, names)
        print_outcomes(outcomes, out, names)
    return partial(report, outcome_code(outcomes))


def cmd_history(args, clients, out):
    from orphan_dashboard.operations import history as history_ops

    cloud = None if args.all_clouds else connect.cloud_for_clients(clients)
    found = history_ops.every_entry(cloud, provider=args.provider,
                                    consumer=args.consumer)
    names = history_ops.entry_names(
        cloud, history_ops.current_names(clients) if clients else {})
    if args.csv:
        out.writelines(history_ops.history_csv(found, names))
    elif args.json:
        out.writelines(history_ops.history_json(found, names))
    else:
        for e in found:
            print('%5d %s %s %-8s %-6s %-16s %s' % (
                e.id, e.created.isoformat(timespec='seconds'), e.batch,
                e.status, e.source, text(reasons.action_name(e.action)),
                _('%(subject)s by %(user)s: %(message)s') % {
                    'subject': subject(e, names), 'user': e.user_name,
                    'message': e.message or e.reason}), file=out)
    return NOTHING


def cmd_restore(args, clients, out):
    from django.core.exceptions import ObjectDoesNotExist

    from orphan_dashboard.operations import history as history_ops
    from orphan_dashboard.operations import restore as restore_ops

    cloud = connect.cloud_for_clients(clients)
    try:
        entries = history_ops.entries_by_id(cloud, args.entries)
    except ObjectDoesNotExist:
        raise BadArguments(_('no journal entry of this cloud among %s') %
                           ' '.join(map(str, args.entries)))
    if args.batch:
        entries = history_ops.batch_entries(cloud, args.batch)
        if not entries:
            raise BadArguments(_("no batch %s in this cloud's journal") %
                               args.batch)
    restorable = restore_ops.restorable(cloud, entries)
    pairs = restore_ops.preview(clients, entries, restorable)
    rows = [row for _entry, row in pairs]
    names = row_names(rows, history_ops.entry_names(
        cloud, {'providers': history_ops.provider_names(clients)}))
    outcomes = []
    if args.apply:
        outcomes = restore_ops.restore(
            clients, connect.journal_for_clients(clients), entries,
            {entry.id: row.plan for entry, row in pairs if row.plan},
            restorable)
    if args.json:
        json.dump({'plans': [{'entry': entry.id, 'commands': row.commands,
                              'error': reasons.render(row.error),
                              'notes': [str(note) for note in row.notes]}
                             for entry, row in pairs],
                   'outcomes': outcomes_json(outcomes, names)},
                  out, indent=2, sort_keys=True)
        out.write('\n')
    else:
        print_rows(rows, out, names)
        print_outcomes(outcomes, out, names)
    if args.apply:
        return outcome_code(outcomes)
    return FOUND if any(row.plan for row in rows) else NOTHING


def foreign_children(plan, wanted):
    """The foreign children ``wanted`` names (``--delete-foreign-child``);
    a name that is none of them is refused: a typo deletes nothing."""
    picked, unmatched = plan.pick_children(wanted)
    if unmatched:
        raise BadArguments('%s: not a child of %s that is not Nova\'s (%s)' % (
            ', '.join(sorted(unmatched)), plan.name, ', '.join(
                '%s (%s)' % (plan.names.get(c, c), c)
                for c in sorted(plan.foreign_children)) or 'none'))
    return picked


def decommission_json(plan, chosen, children=()):
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
        'provider_names': {p: plan.names.get(p) for p in plan.providers},
        'servers': [{'uuid': s.uuid, 'name': s.name, 'status': s.status}
                    for s in plan.servers],
        'steps': [{'consumer': s.consumer,
                   'server_name': report_ops.server_name(s.finding),
                   'verdict': s.finding.verdict,
                   'reason': str(s.finding.reason), 'optional': s.optional,
                   'action': s.plan.action if s.plan else None,
                   'commands': osc_commands(s.plan) if s.plan
                   else [], 'error': str(s.error)} for s in plan.steps],
        'foreign_children': [
            {'uuid': c, 'name': plan.names.get(c, c),
             'owner': plan.foreign_children[c], 'deleted': c in children,
             'blocker': str(plan.child_blocker(c))}
            for c in sorted(plan.foreign_children)],
        'blockers': [str(b) for b in plan.blockers(chosen, children)]}


def print_decommission(plan, chosen, out, children=()):
    service = plan.service
    if service:
        state = (_('%s, forced down') % service.state if service.forced_down
                 else service.state)
        shown = '%s (%s)' % (service.host, state)
    print(_('decommission %(name)s: compute service %(service)s, providers '
            '%(providers)s') % {
        'name': plan.name, 'service': shown if service else _('none'),
        'providers': providers_named(plan) or _('none')}, file=out)
    if plan.keeps_service:
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
        if step.error:
            print('%-8s %s (%s)' % (_('blocked'), head, text(step.error)),
                  file=out)
            continue
        if step.optional and step.consumer not in chosen:
            print('%-8s %s (%s)' % (
                _('unknown'), head, _('deleted only with --delete-unknown '
                                      '%s') % step.consumer), file=out)
            continue
        print('%-8s %s' % (_('repair'), head), file=out)
        for command in osc_commands(step.plan):
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
    if plan.providers:
        print(_('then: delete what Nova leaves of providers %s, children '
                'first') % providers_named(plan), file=out)
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


def known_or_close(name, clients):
    """Return if Nova (a migration to or from the host) or this cloud's
    journal knew ``name``, a host found nowhere now; else raise
    BadArguments naming what comes close: "already gone" would pass a typo
    off as success."""
    from orphan_dashboard.operations import decommission as decommission_ops

    setup_django()
    close = decommission_ops.close_names(
        clients, connect.cloud_for_clients(clients), name)
    if close is None:
        return
    if close:
        raise BadArguments(
            _('no compute host, hypervisor or provider %(name)s, now or in '
              'the journal (did you mean %(close)s?)') % {
                'name': name, 'close': ', '.join(close)})
    raise BadArguments(_('no compute host, hypervisor or provider %s, now '
                         'or in the journal') % name)


def decommission_names(plan):
    """``{uuid: name}`` of a decommission's providers and of the servers
    its steps name."""
    servers = {s.consumer: report_ops.server_name(s.finding)
               for s in plan.steps}
    return dict(plan.names, **{u: n for u, n in servers.items() if n})


def cmd_decommission(args, clients, out):
    from orphan_dashboard.operations import decommission as decommission_ops

    chosen = {u.lower() for u in args.delete_unknown}
    plan = decommission_ops.preview(clients, args.host, _min_age(args),
                                    whole_service=args.whole_service)
    if plan.gone:
        known_or_close(args.host, clients)
    children = foreign_children(plan, args.delete_foreign_child)
    outcomes = []
    code = FOUND
    if plan.gone:
        code = NOTHING
    elif plan.refusals():
        print('orphan-audit: %s' % '; '.join(
            text(b) for b in plan.refusals()), file=sys.stderr)
        code = ERROR
    elif plan.servers:
        print('orphan-audit: %s' % still_runs(args.host, plan.servers),
              file=sys.stderr)
        code = ERROR
    elif args.apply:
        setup_django()
        outcomes = decommission_ops.apply(
            clients, connect.journal_for_clients(clients), args.host,
            plan.plans(chosen), chosen, _min_age(args),
            bound=plan.binding(), children=children)
        code = (APPLIED if outcomes and all(o.status == repairs.DONE
                                            for o in outcomes) else ERROR)
    names = decommission_names(plan)
    if args.json:
        json.dump(dict(decommission_json(plan, chosen, children),
                       outcomes=outcomes_json(outcomes, names)), out,
                  indent=2, sort_keys=True)
        out.write('\n')
    else:
        if plan.gone:
            print(already_gone(args.host), file=out)
        else:
            print_decommission(plan, chosen, out, children)
        print_outcomes(outcomes, out, names)
    return code


def cmd_refresh(args, clients, out):
    """Renew the snapshot the panel's pages show, in the panel's cache."""
    from orphan_dashboard.operations import snapshot as snapshot_ops

    if 'DJANGO_SETTINGS_MODULE' not in os.environ:
        raise BadArguments(_(
            "refresh stores the snapshot in the panel's cache: run it with "
            "Horizon's settings (manage.py orphan_audit refresh, or "
            'DJANGO_SETTINGS_MODULE set)'))
    store = snapshot_ops.store(connect.cloud_for_clients(clients).key,
                               conf.FULL_SWEEP.get())
    connect.validate_token(clients)
    progress = progress_bar.for_args(args)
    started = time.monotonic()
    snapshot = snapshot_ops.refresh(
        store, clients, args.full, _min_age(args), conf.FULL_SWEEP.get(),
        _concurrency(args), progress)
    if snapshot is None:
        print(_('a sweep is already running (%s): nothing to do') %
              store.sweeper(), file=out)
        return NOTHING
    state = store.state()
    full = snapshot.full_sweep_at == snapshot.taken_at
    print((_('snapshot %(version)s stored: %(servers)d servers, '
             '%(providers)d providers, full sweep in %(seconds).1f s')
           if full else
           _('snapshot %(version)s stored: %(servers)d servers, '
             '%(providers)d providers, incremental sweep in %(seconds).1f s'))
          % {'version': state['version'], 'servers': len(snapshot.servers),
             'providers': len(snapshot.providers),
             'seconds': time.monotonic() - started}, file=out)
    return NOTHING


def cmd_metrics(args, clients, out):
    """Prometheus metrics of an audit; on failure only ``up`` 0."""
    started = time.monotonic()
    report, capacity, flavor_counts, failure = None, None, None, None
    try:
        report, capacity = capacity_ops.audit(
            clients, _min_age(args), _concurrency(args),
            progress_bar.for_args(args), provider=args.provider)
        flavor_counts = capacity_ops.flavor_counts(
            clients, capacity, conf.names(conf.METRIC_FLAVORS.get()))
    except report_ops.NoSuchProvider:
        raise BadArguments('no resource provider %s' % args.provider)
    except Exception as exc:
        failure = exc
    now = time.time()
    previous = prometheus.last_success(args.textfile) if args.textfile \
        else None
    registry = prometheus.metrics_registry(
        report, time.monotonic() - started, report is not None,
        now if report is not None else previous, capacity, flavor_counts)
    if args.textfile:
        from prometheus_client import write_to_textfile
        try:
            write_to_textfile(args.textfile, registry)
        except OSError as exc:
            raise Failure(_('cannot write %(path)s: %(error)s') % {
                'path': args.textfile, 'error': exc.strerror or exc})
    else:
        from prometheus_client import generate_latest
        out.write(generate_latest(registry).decode())
    if failure is not None:
        raise failure
    return NOTHING


def capacity_json(found):
    """``orphan-audit capacity``'s :class:`~operations.capacity.Answer` as
    JSON: every id, the names beside them."""
    capacity = found.capacity
    document = {'held': capacity.held(), 'affected': capacity.affected(),
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
    return _(capacity_ops.FIT_NAMES[state])


def repair_line(repair):
    """A repair that makes room, its server by name."""
    return _('%(action)s %(subject)s frees %(resources)s (%(verdict)s)') % {
        'action': text(reasons.action_name(repair['action'])),
        'subject': text(capacity_ops.repair_subject(repair)),
        'resources': reasons.format_resources(repair['frees']),
        'verdict': text(reasons.verdict_name(repair['verdict']))}


def print_capacity(found, out):
    capacity = found.capacity
    print(ngettext('held by findings: %(held)s on %(count)d hypervisor',
                   'held by findings: %(held)s on %(count)d hypervisors',
                   capacity.affected()) % {
        'held': reasons.format_resources(capacity.held()) or _('nothing'),
        'count': capacity.affected()}, file=out)
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


def capacity_answer(args, clients, progress):
    """The :class:`~operations.capacity.Answer` both command lines print,
    its refusals as theirs: ``--flavor``, ``--provider`` and the audit
    options of ``args``."""
    try:
        return capacity_ops.answer(
            clients, _min_age(args), _concurrency(args), progress,
            provider=args.provider, flavor=args.flavor)
    except capacity_ops.NoSuchFlavor:
        raise BadArguments(_('no flavor %s') % args.flavor)
    except heal.CannotHeal as exc:
        raise BadArguments(_('flavor %(flavor)s: %(reason)s') % {
            'flavor': args.flavor, 'reason': text(exc.reason)})
    except report_ops.NoSuchProvider:
        raise BadArguments(_('no resource provider %s') % args.provider)
    except capacity_ops.NoInventories:
        raise Failure(_('Placement gave no inventories'))


def cmd_capacity(args, clients, out):
    """Capacity per hypervisor and class, or whether ``--flavor`` fits."""
    found = capacity_answer(args, clients, progress_bar.for_args(args))
    if args.json:
        json.dump(capacity_json(found), out, indent=2, sort_keys=True)
        out.write('\n')
    else:
        print_capacity(found, out)
    return partial(found.report, NOTHING)


HANDLERS = {'report': cmd_report, 'apply': cmd_apply,
            'history': cmd_history, 'restore': cmd_restore,
            'decommission': cmd_decommission, 'refresh': cmd_refresh,
            'metrics': cmd_metrics, 'capacity': cmd_capacity}


def check_arguments(args):
    """Values the parser takes that nothing could use, refused before
    anything is read."""
    timeout = getattr(args, 'timeout', None)
    if timeout is not None and not 0 < timeout < math.inf:
        raise BadArguments(_('--timeout %g: give a positive number of '
                             'seconds') % timeout)
    textfile = getattr(args, 'textfile', None)
    if textfile:
        directory = os.path.dirname(os.path.abspath(textfile))
        if not os.path.isdir(directory):
            raise BadArguments(_('--textfile %(path)s: there is no '
                                 'directory %(directory)s') % {
                'path': textfile, 'directory': directory})


def execute(args, out=sys.stdout):
    """Run parsed ``args``; the exit code, errors as one line on stderr."""
    logging.basicConfig(level=logging.DEBUG if args.debug
                        else logging.CRITICAL)
    command = args.command or 'report'
    try:
        check_arguments(args)
        if command in ('history', 'restore', 'refresh'):
            setup_django()
        clients = None
        if not (command == 'history' and args.all_clouds):
            clients = connect.for_cloud(args.os_cloud, timeout=args.timeout)
        return HANDLERS[command](args, clients, out)
    except BadArguments as exc:
        print('orphan-audit: %s' % exc, file=sys.stderr)
        return BAD_ARGUMENTS
    except Failure as exc:
        print('orphan-audit: %s' % exc, file=sys.stderr)
    except ks_exc.Unauthorized:
        print('orphan-audit: %s' % _('authentication failed: check the '
                                     'credentials'), file=sys.stderr)
    except ks_exc.Forbidden:
        print('orphan-audit: %s' % _('forbidden: an admin role is needed'),
              file=sys.stderr)
    except ks_exc.EndpointNotFound as exc:
        print('orphan-audit: %s' % _('service missing from the catalog: '
                                     '%s') % exc, file=sys.stderr)
    except (ks_exc.ConnectFailure, ks_exc.ConnectTimeout,
            ks_exc.DiscoveryFailure) as exc:
        print('orphan-audit: %s' % _('cannot reach the cloud: %s') % exc,
              file=sys.stderr)
    except ks_exc.ClientException as exc:
        print('orphan-audit: %s' % exc, file=sys.stderr)
    except Exception as exc:
        if type(exc).__module__.startswith(('openstack', 'orphan_dashboard')):
            print('orphan-audit: %s' % exc, file=sys.stderr)
        else:
            raise
    return ERROR


def main(argv=None):
    argv = normalize(sys.argv[1:] if argv is None else argv)
    try:
        code = execute(build_parser().parse_args(argv))
        sys.stdout.flush()
    except BrokenPipeError:
        return reader_gone()
    return code


def reader_gone():
    """End quietly when stdout's reader left (``| head``): what is still
    buffered goes nowhere, so Python's own flush at exit cannot fail."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return READER_GONE
