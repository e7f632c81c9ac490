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

"""``openstack placement orphan ...``: cliff commands over the use cases
``orphan-audit`` runs (:mod:`commands`), with OSC's formatters.

The verdicts, previews, confirmation and journal are ``orphan-audit``'s:
a repair, restore or decommission is previewed from a fresh read, written
only with ``--yes``, and then re-read and generation-checked before each
write.  The exit codes are ``orphan-audit``'s too: 3 where there is
something to do and nothing was written, 4 when repairs were applied, 5
for a partial audit (a cell was down), 6 for a ``repair --all`` held by
its limits, 1 on errors, 2 on bad arguments; but ``list`` exits 0 with
findings, as OpenStackClient's list commands do.
The commands' docstrings are their help, which cliff prints as it is:
plain text, no markup.
"""

import argparse
import functools
import sys
import textwrap

from cliff import columns
from osc_lib.cli import format_columns
from osc_lib.command import command
from osc_lib import exceptions

from orphan_dashboard.api import client
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons
from orphan_dashboard.cli import handlers
from orphan_dashboard.cli.i18n import _
from orphan_dashboard.cli.i18n import text
from orphan_dashboard.cli import options
from orphan_dashboard.cli import progress_bar
from orphan_dashboard.cli import rendering
from orphan_dashboard.operations import repairs
from orphan_dashboard.operations import report as report_ops
from orphan_dashboard.writing import journal

FINDING_COLUMNS = ('Consumer', 'Server Name', 'Provider', 'Provider Name',
                   'Verdict', 'Reason', 'Action', 'Actions', 'Resources',
                   'Nova', 'Host', 'Project', 'Project Name', 'User',
                   'User Name', 'Blocked')
ROW_COLUMNS = ('Consumer', 'Server Name', 'Provider', 'Provider Name',
               'Action', 'Status', 'Plan', 'Message', 'Journal Entry')
FIT_COLUMNS = ('Hypervisor', 'Provider', 'State', 'Why', 'Repairs')
CLASS_COLUMNS = ('Hypervisor', 'Provider', 'Resource Class', 'Capacity',
                 'Used', 'Needed', 'Held', 'Free', 'Free After Repair')


class Lines(columns.FormattableColumn):
    """Commands one per line in a table, a list in JSON and YAML."""

    def human_readable(self):
        return '\n'.join(self._value)

    def machine_readable(self):
        return list(self._value)


class Repairs(columns.FormattableColumn):
    """The repairs that make room: a line each in a table, as
    ``orphan-audit capacity`` prints them; their dicts in JSON and YAML,
    as its ``--json`` has them."""

    def human_readable(self):
        return '\n'.join(rendering.repair_line(r) for r in self._value)

    def machine_readable(self):
        return list(self._value)


class Records(columns.FormattableColumn):
    """Findings in a table a ``field: value`` line each, long values
    wrapped and the findings a blank line apart, so that ``show``'s table
    stays as narrow as a terminal; their dicts in JSON and YAML."""

    WIDTH = 72

    def human_readable(self):
        return '\n\n'.join(
            '\n'.join(textwrap.fill('%s: %s' % (key, _field(value)),
                                    self.WIDTH, subsequent_indent='  ')
                      for key, value in sorted(record.items()))
            for record in self._value)

    def machine_readable(self):
        return [dict(record) for record in self._value]


def _field(value):
    """One field of a finding as an operator reads it."""
    if isinstance(value, dict):
        return _resources(value)
    if isinstance(value, (list, tuple)):
        return ', '.join(map(str, value))
    return '' if value is None else value


def _yes_option(parser, what):
    parser.add_argument('--yes', action='store_true',
                        help='%s (default: print the preview, write '
                             'nothing and exit with 3 when there is '
                             'something to do)' % what)


class _Orphan:
    """What every command shares: the clients, the audit, and the exit
    code a Lister or ShowOne cannot return by itself."""

    code = options.NOTHING

    def run(self, parsed_args):
        self.code = options.NOTHING
        try:
            return super().run(parsed_args) or self.code
        except options.BadArguments as exc:
            print('openstack placement orphan: %s' % exc, file=sys.stderr)
            return options.BAD_ARGUMENTS
        except options.Failure as exc:
            raise exceptions.CommandError(str(exc))

    @property
    def clients(self):
        return self.app.client_manager.placement_orphan

    def progress(self, parsed_args):
        """A bar on a terminal's stderr while the cloud is read, for a
        table only."""
        table = getattr(parsed_args, 'formatter', 'table') == 'table'
        return progress_bar.for_args(argparse.Namespace(json=not table))

    def audit(self, parsed_args, provider=None):
        """The :class:`~.operations.report.Swept` report of the whole
        cloud read now (of ``provider``'s tree if given), as
        ``orphan-audit report`` reads it."""
        try:
            return report_ops.swept(self.clients,
                                    options.settings(parsed_args),
                                    self.progress(parsed_args),
                                    provider=provider)
        except report_ops.NoSuchProvider:
            raise options.BadArguments(_('no resource provider %s') %
                                       provider)


def _resources(resources):
    return ', '.join('%s=%s' % item for item in sorted(resources.items()))


def finding_row(finding, names, owners):
    """A finding with the names of its server, provider, project and user
    beside their ids (``owners`` as :func:`report_ops.owners`)."""
    return (finding.consumer, report_ops.server_name(finding),
            finding.provider, names.get(finding.provider), finding.verdict,
            text(reasons.owner_named(finding.reason, owners)), finding.action,
            ', '.join(finding.actions), _resources(finding.resources),
            text(finding.nova), finding.host, finding.project_id,
            owners['projects'].get(finding.project_id), finding.user_id,
            owners['users'].get(finding.user_id), text(finding.blocked))


class ListOrphan(_Orphan, command.Lister):
    """List the findings: allocations that need a repair, or are
    protected from one.  Exits 0 with findings, as OpenStackClient's list
    commands do (orphan-audit report exits 3); 5 on a partial audit."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        options.provider_option(parser, metavar='<uuid-or-name>')
        parser.add_argument('--verdict', metavar='<verdict>',
                            action='append', choices=m.VERDICTS,
                            help='only this verdict (repeat for several): '
                                 '%s' % ', '.join(m.VERDICTS))
        options.min_age_option(parser, metavar='<seconds>')
        return parser

    def take_action(self, parsed_args):
        report = self.audit(parsed_args, parsed_args.provider).report
        verdicts = set(parsed_args.verdict or ()) or (
            set(m.VERDICTS) - {m.OK})
        found = [f for f in report.findings if f.verdict in verdicts]
        if report.down_cells:
            rendering.print_partial(report, sys.stderr)
        self.code = options.partial(report, options.NOTHING)
        owners = report_ops.owners(self.clients, found)
        return FINDING_COLUMNS, [finding_row(f, report.names, owners)
                                 for f in found]


class ShowOrphan(_Orphan, command.ShowOne):
    """Show one provider tree (usage against need, its findings) or one
    consumer (its findings on every provider)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('subject', metavar='<consumer-or-provider>',
                            help='consumer uuid, or provider uuid or name')
        options.min_age_option(parser, metavar='<seconds>')
        return parser

    def take_action(self, parsed_args):
        report = self.audit(parsed_args).report
        wanted = parsed_args.subject.lower()
        for tree in report.providers:
            if wanted in (tree.provider.uuid, tree.provider.name.lower()):
                return self.provider(report, tree)
        findings = [f for f in report.findings if f.consumer == wanted]
        if not findings:
            raise options.BadArguments(
                _('no consumer or provider %s') % parsed_args.subject)
        self.code = options.partial(report, options.FOUND if any(
            f.problem for f in findings) else options.NOTHING)
        first = findings[0]
        return (('consumer', 'server_name', 'nova', 'instance',
                 'project_id', 'user_id', 'allocations'),
                (first.consumer, report_ops.server_name(first),
                 str(first.nova), first.instance,
                 first.project_id, first.user_id,
                 Records([dict(f.as_dict(), provider_name=report.names.get(
                     f.provider)) for f in findings])))

    def provider(self, report, tree):
        self.code = options.partial(report, options.FOUND if
                                    tree.needs_attention else options.NOTHING)
        names = report.names
        return (('uuid', 'name', 'service_state', 'owner', 'owner_proof',
                 'servers', 'consumers', 'usage', 'needed', 'mismatched',
                 'orphaned_provider', 'counts', 'findings'),
                (tree.provider.uuid, tree.provider.name, tree.service_state,
                 tree.owner, tree.owner_proof, tree.servers, tree.consumers,
                 format_columns.DictColumn(tree.usage),
                 format_columns.DictColumn(tree.needed), tree.mismatched,
                 tree.orphaned_provider, format_columns.DictColumn(
                     tree.counts),
                 Records([
                     dict(f.as_dict(), provider_name=names.get(f.provider))
                     for f in tree.findings if f.verdict != m.OK])))


def _subject(selection, names):
    """Consumer and provider, each with its name (``{uuid: name}``)."""
    return (selection.consumer, names.get(selection.consumer),
            selection.provider, names.get(selection.provider))


def preview_rows(rows, names):
    """The previewed rows, nothing written."""
    return [_subject(r.selection, names) + (
        r.selection.action, 'preview' if r.plan else 'not possible',
        Lines(r.commands), '; '.join(
            [text(n) for n in r.notes] +
            ([text(r.error)] if r.error else [])), None)
            for r in rows]


def outcome_rows(outcomes, names):
    """What was written (or skipped, or failed), and its journal entry."""
    return [_subject(o.selection, names) + (
        o.selection.action, o.status, Lines([]), text(o.message), o.entry_id)
        for o in outcomes]


def _print_preview(rows, names):
    """The preview, on stderr before anything is written: stdout keeps
    the one document the formatter prints."""
    rendering.print_rows(rows, sys.stderr, names)


class RepairOrphan(_Orphan, command.Lister):
    """Repair one consumer: its recommended repair (or --action); or with
    --all every recommended repair (of the --only verdicts), as
    orphan-audit apply does, held (exit 6, nothing written) when it would
    write more than --max-writes or --max-share allow.  Previewed from a
    fresh read; written only with --yes."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        chosen = parser.add_mutually_exclusive_group(required=True)
        chosen.add_argument('consumer', metavar='<consumer>', nargs='?',
                            help='consumer uuid (a server or a migration)')
        chosen.add_argument('--all', action='store_true',
                            help='every recommended repair, as '
                                 'orphan-audit apply')
        parser.add_argument('--action', metavar='<action>',
                            choices=m.ACTIONS,
                            help="this repair of the consumer's instead "
                                 'of the recommended one: %s' %
                                 ', '.join(m.ACTIONS))
        options.limit_options(
            parser, held='with --all: write nothing and exit 6',
            metavars=('<verdict>[,<verdict>...]', '<count>', '<percent>'))
        _yes_option(parser, 'write the repair')
        options.min_age_option(parser, metavar='<seconds>')
        return parser

    def selections(self, report, consumer, action):
        problems = [f for f in report.problems if f.consumer == consumer]
        if not problems:
            found = [f for f in report.findings if f.consumer == consumer]
            if not found:
                raise options.BadArguments(_('no consumer %s in '
                                             'Placement') % consumer)
            print(_('consumer %(consumer)s has nothing to repair: '
                    '%(why)s') % {'consumer': consumer, 'why': '; '.join(
                        '%s %s: %s' % (
                            report.names.get(f.provider, f.provider),
                            text(reasons.verdict_name(f.verdict)),
                            text(f.reason)) for f in found)},
                  file=sys.stderr)
            self.code = options.partial(report, options.NOTHING)
            return [], ()
        if action is None:
            chosen = [s for s in repairs.recommended(report)[0]
                      if s.consumer == consumer]
            if not chosen:
                print(_('consumer %(consumer)s has no recommended repair '
                        '(%(verdicts)s): name one with --action (offered: '
                        '%(actions)s)') % {
                    'consumer': consumer,
                    'verdicts': ', '.join(f.verdict for f in problems),
                    'actions': ', '.join(sorted(
                        {a for f in problems for a in f.actions})) or
                    _('none')}, file=sys.stderr)
                self.code = options.partial(report, options.FOUND)
        else:
            chosen = [m.Selection(f.consumer, f.provider, action)
                      for f in problems if action in f.actions]
            if not chosen:
                raise options.BadArguments(
                    _('consumer %(consumer)s offers no %(action)s repair '
                      '(offered: %(actions)s)') % {
                        'consumer': consumer, 'action': action,
                        'actions': ', '.join(sorted(
                            {a for f in problems for a in f.actions})) or
                        _('none')})
        return repairs.selections(report, chosen, ())

    def take_action(self, parsed_args):
        if parsed_args.all and parsed_args.action:
            raise options.BadArguments(_('--action names the repair of '
                                         'one consumer: not with --all'))
        if not parsed_args.all and any(
                getattr(parsed_args, name) is not None
                for name in ('only', 'max_writes', 'max_share')):
            raise options.BadArguments(_('--only, --max-writes and '
                                         '--max-share bound --all: one '
                                         "consumer's repair is one write"))
        swept = self.audit(parsed_args)
        report = swept.report
        settings = options.settings(parsed_args)
        journal_of = (functools.partial(handlers.journal_of, self.clients)
                      if parsed_args.yes else None)

        def before_write(rows):
            _print_preview(rows, rendering.row_names(rows, report.names))
        if parsed_args.all:
            done = repairs.run_recommended(
                self.clients, swept, settings, options.limits(parsed_args),
                journal_of, before_write=before_write)
            if done.decision.held:
                print(rendering.held_line(done.decision), file=sys.stderr)
                self.code = options.HELD
                return ROW_COLUMNS, []
            self.code = options.partial(report, options.FOUND if
                                        report.problems else options.NOTHING)
        else:
            chosen, hints = self.selections(
                report, parsed_args.consumer.lower(), parsed_args.action)
            done = repairs.run(self.clients, swept, chosen, hints, settings,
                               journal_of, before_write)
        if not done.rows:
            return ROW_COLUMNS, []
        names = rendering.row_names(done.rows, report.names)
        if not parsed_args.yes:
            self.code = options.partial(report, options.FOUND if any(
                r.plan for r in done.rows) else options.NOTHING)
            return ROW_COLUMNS, preview_rows(done.rows, names)
        self.code = options.partial(report,
                                    options.outcome_code(done.outcomes))
        return ROW_COLUMNS, outcome_rows(done.outcomes, names)


class RestoreOrphan(_Orphan, command.Lister):
    """Put journaled changes back, previewed from a fresh read; written
    only with --yes."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('entries', metavar='<entry>', type=int,
                            nargs='+', help='journal entry ids (the latest '
                            'change in effect of each consumer or provider)')
        _yes_option(parser, 'write the restore')
        return parser

    def take_action(self, parsed_args):
        from orphan_dashboard.operations import history as history_ops
        from orphan_dashboard.operations import restore as restore_ops

        handlers.setup_django()
        cloud = client.cloud_for_clients(self.clients)
        entries = handlers.journal_entries(cloud, parsed_args.entries)
        restorable = restore_ops.restorable(cloud, entries)
        pairs = restore_ops.preview(self.clients, entries, restorable)
        rows = [row for _entry, row in pairs]
        names = rendering.row_names(rows, history_ops.entry_names(
            cloud, {'providers': history_ops.provider_names(
                self.clients)}))
        if not parsed_args.yes:
            self.code = (options.FOUND if any(r.plan for r in rows)
                         else options.NOTHING)
            return ROW_COLUMNS, preview_rows(rows, names)
        _print_preview(rows, names)
        outcomes = restore_ops.restore(
            self.clients, journal.Journal.for_clients(self.clients),
            entries, {entry.id: row.plan for entry, row in pairs
                      if row.plan}, restorable)
        if options.left_nothing(outcomes):
            print(_('nothing was left to restore'), file=sys.stderr)
        self.code = options.restore_code(outcomes)
        return ROW_COLUMNS, outcome_rows(outcomes, names)


class DecommissionOrphan(_Orphan, command.Lister):
    """Delete a dead hypervisor: its leftover allocations, its compute
    service and its providers; previewed, carried out only with --yes."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        options.decommission_arguments(parser, host='<host>',
                                       consumer='<consumer>', count='<n>')
        _yes_option(parser, 'carry it out')
        options.min_age_option(parser, metavar='<seconds>')
        return parser

    def take_action(self, parsed_args):
        from orphan_dashboard.operations import decommission as ops

        chosen = {u.lower() for u in parsed_args.delete_unknown}
        settings = options.settings(parsed_args)
        plan = ops.preview(self.clients, parsed_args.host, settings,
                           whole_service=parsed_args.whole_service)
        if plan.gone:
            handlers.known_or_close(parsed_args.host, self.clients)
            print(rendering.already_gone(parsed_args.host), file=sys.stderr)
            return ROW_COLUMNS, []
        children = handlers.foreign_children(
            plan, parsed_args.delete_foreign_child)
        if plan.refusals():
            raise options.Failure('; '.join(text(b)
                                            for b in plan.refusals()))
        if plan.servers:
            raise options.Failure(rendering.still_runs(parsed_args.host,
                                                       plan.servers))
        if not parsed_args.yes:
            self.code = options.FOUND
            return ROW_COLUMNS, self.steps(plan, chosen, children)
        rendering.print_decommission(
            plan, chosen, sys.stderr, children,
            report_ops.owners(self.clients, plan.optional))
        try:
            outcomes = ops.apply(
                self.clients, handlers.journal_of(self.clients),
                parsed_args.host, plan.plans(chosen), chosen, settings,
                bound=plan.binding(), children=children,
                bounds=options.limits(parsed_args))
        except repairs.Held as exc:
            print(text(exc.reason), file=sys.stderr)
            self.code = options.HELD
            return ROW_COLUMNS, []
        self.code = (options.APPLIED if outcomes and all(
            o.status == repairs.DONE for o in outcomes) else options.ERROR)
        return ROW_COLUMNS, outcome_rows(outcomes,
                                         rendering.decommission_names(plan))

    def steps(self, plan, chosen, children=()):
        """The preview: each step (an unknown consumer's with its owner),
        then the service and providers."""
        from orphan_dashboard.operations import decommission as ops

        names = rendering.decommission_names(plan)
        owners = report_ops.owners(self.clients, plan.optional)
        rows = []
        for step in plan.steps:
            if step.error:
                status, message = 'blocked', text(step.error)
            elif step.optional and step.consumer not in chosen:
                status, message = 'unknown', (
                    _('deleted only with --delete-unknown %s') %
                    step.consumer)
            else:
                status, message = 'preview', '; '.join(
                    [text(step.finding.reason)] +
                    [text(n) for n in step.notes])
            if step.optional:
                message = '%s; %s' % (message, rendering.consumer_owner(
                    step.finding, owners))
            rows.append((step.consumer, names.get(step.consumer),
                         step.finding.provider,
                         names.get(step.finding.provider),
                         step.plan.action if step.plan else None, status,
                         Lines(repairs.commands(step.plan)),
                         message, None))
        if plan.deletes_service:
            rows.append((None, None, None, None, m.DELETE_SERVICE, 'preview',
                         Lines(ops.service_commands(plan)),
                         _('delete compute service %s') % plan.service.host,
                         None))
        provider_commands = ops.provider_commands(plan)
        for provider in plan.providers:
            rows.append((None, None, provider, names.get(provider),
                         m.DELETE_PROVIDER, 'preview',
                         Lines(provider_commands[provider]),
                         _('delete what Nova leaves of provider %s') %
                         reasons.named(provider, names), None))
        rows.extend((None, None, None, None, None, 'blocked', Lines([]),
                     text(blocker), None)
                    for blocker in plan.blockers(chosen, children))
        return rows


class CapacityOrphan(_Orphan, command.Lister):
    """Say per hypervisor whether a flavor fits now, only after the
    recommended repairs (naming them), or not; without --flavor, each
    hypervisor's capacity per resource class.  The answer of orphan-audit
    capacity, from the same call."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        options.flavor_option(parser, metavar='<flavor>')
        options.provider_option(parser, metavar='<uuid-or-name>')
        options.min_age_option(parser, metavar='<seconds>')
        options.concurrency_option(parser, metavar='<count>')
        return parser

    def take_action(self, parsed_args):
        found = handlers.capacity_answer(parsed_args, self.clients,
                                         self.progress(parsed_args))
        if found.report.down_cells:
            rendering.print_partial(found.report, sys.stderr)
        self.code = options.partial(found.report, options.NOTHING)
        if found.flavor is None:
            return CLASS_COLUMNS, [
                (t.name, t.root, c.resource_class, c.capacity, c.used,
                 c.needed, c.held, c.free, c.free_after)
                for t in found.trees for c in t.classes]
        return FIT_COLUMNS, [(r['hypervisor'], r['provider'], r['state'],
                              r['why'] and text(r['why']),
                              Repairs(r['repairs'])) for r in found.rows]
