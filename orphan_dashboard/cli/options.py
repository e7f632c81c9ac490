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

"""``orphan-audit``'s command line: its options, shared with the
``openstack`` plugin where both take one, and its exit codes.

The codes follow ``nova-manage placement audit``: 0 nothing found, 3
findings (or something to restore), 4 repairs applied; 1 on errors (one
line, no traceback; a write failed, or of unknown outcome), 2 on bad
arguments; 5 when ``report`` or ``apply`` ran partially because Nova
could not reach a cell (what it could see was audited and repaired;
the JSON's ``skipped_cells`` says what was not); 6 when ``apply`` was
held: it would have written more than its limits allow
(:mod:`~orphan_dashboard.audit.limits`), so it wrote nothing; 141,
silently, when its reader closed the pipe (``| head``).  An option
left out takes its setting (:mod:`conf`) here, at the entry point.
"""

import argparse
import math
import os
import signal

from orphan_dashboard.api import client
from orphan_dashboard.audit import limits as bounds
from orphan_dashboard.audit import model as m
from orphan_dashboard.cli.i18n import _
from orphan_dashboard import conf
from orphan_dashboard.operations import repairs


NOTHING, ERROR, BAD_ARGUMENTS, FOUND, APPLIED, PARTIAL = 0, 1, 2, 3, 4, 5
HELD = 6
READER_GONE = 128 + signal.SIGPIPE
"""The status a shell shows for ``git log | head``: the tool ended by
SIGPIPE when its reader left, its output cut short (``pipefail`` sees it,
a plain pipeline takes ``head``'s)."""
EPILOG = ('exit codes: 0 nothing found, 3 findings, 4 repairs applied, '
          '5 partial run (a cell is down: report and apply audited and '
          'repaired only what Nova could see, see "skipped_cells"), '
          '6 held (apply would have written more than --max-writes or '
          '--max-share allow: nothing written), 1 error, 2 bad arguments, '
          '141 output cut short (its reader closed the pipe)')


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
                             client.DEFAULT_TIMEOUT)
    parser.add_argument('--debug', action='store_true',
                        default=argparse.SUPPRESS if suppress else False,
                        help='log HTTP requests and library warnings')


def _subcommand(commands, name, summary):
    """The subcommand ``name``, which takes the options every one takes
    after its name too; given before it, their value is kept."""
    command = commands.add_parser(name, help=summary)
    _common(command, suppress=True)
    return command


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
    parser.add_argument('--min-age', type=_count, metavar=metavar,
                        help='protect allocations younger than this '
                             '(default %s: %d)' % (conf.MIN_AGE.name,
                                                   conf.MIN_AGE.default))


def concurrency_option(parser, metavar=None):
    """``--concurrency``, as ``orphan-audit`` and the ``openstack`` plugin
    take it."""
    parser.add_argument('--concurrency', type=_positive, metavar=metavar,
                        help='Placement requests in flight (default %s: %d)'
                        % (conf.CONCURRENCY.name, conf.CONCURRENCY.default))


def flavor_option(parser, metavar='NAME_OR_ID'):
    """``capacity``'s ``--flavor``, in both command lines."""
    parser.add_argument('--flavor', metavar=metavar,
                        help='say per hypervisor whether this flavor fits '
                             'now, only after the recommended repairs, or '
                             'not (traits and aggregates are not '
                             'considered)')


def _verdicts(value):
    """``--only``'s value: names of verdicts a recommended repair puts
    right, comma-separated."""
    names = [name.strip() for name in value.split(',') if name.strip()]
    unknown = [name for name in names if name not in ONLY]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            _('no verdict a recommended repair puts right: %(names)s '
              '(choose from %(verdicts)s)') % {
                'names': ', '.join(unknown) or repr(value),
                'verdicts': ', '.join(ONLY)})
    return names


ONLY = tuple(m.RECOMMENDED) + (m.UNKNOWN_CONSUMER,)
"""What ``--only`` names: the verdicts a recommended repair puts right,
and unknown consumers, deleted only with ``--yes-unknown``."""


def _count(value):
    return _whole(value, 0, _('%s: give a whole number, 0 or more'))


def _positive(value):
    return _whole(value, 1, _('%s: give a whole number, 1 or more'))


def _whole(value, least, refusal):
    """``value`` as a whole number of at least ``least``, else
    ``refusal`` (naming the value) as argparse reports it."""
    try:
        count = int(value)
    except ValueError:
        count = least - 1
    if count < least:
        raise argparse.ArgumentTypeError(refusal % value)
    return count


def _percent(value):
    try:
        percent = float(value)
    except ValueError:
        percent = math.nan
    if not 0 <= percent <= 100:
        raise argparse.ArgumentTypeError(
            _('%s: give a percentage from 0 to 100') % value)
    return percent


def limit_options(parser, held='write nothing and exit 6',
                  metavars=('VERDICT[,VERDICT...]', 'N', 'PERCENT')):
    """``--only``, ``--max-writes`` and ``--max-share``: what a run of
    every recommended repair may write (:mod:`~.audit.limits`), in both
    command lines; ``held`` says what a run past them does."""
    only, count, percent = metavars
    parser.add_argument('--only', metavar=only, type=_verdicts,
                        action='append',
                        help='only the findings of these verdicts are '
                             'repaired (comma-separated, or repeat): %s; a '
                             'consumer with a finding of another verdict '
                             'too is left whole' % ', '.join(ONLY))
    parser.add_argument('--max-writes', metavar=count, type=_count,
                        help='%s when the run would write more consumers '
                             'than this (default %s, unset: no limit)' % (
                                 held, conf.MAX_WRITES.name))
    parser.add_argument('--max-share', metavar=percent, type=_percent,
                        help='%s when the consumers the run would write '
                             'are more than this percentage of every '
                             'consumer the audit saw (default %s, unset: '
                             '%g; 100: no limit)' % (
                                 held, conf.MAX_SHARE.name,
                                 conf.UNATTENDED_MAX_SHARE))


def decommission_arguments(parser, host='HOST', consumer='CONSUMER',
                           count='N'):
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
    parser.add_argument('--max-writes', metavar=count, type=_count,
                        help='write nothing and exit 6 when its repairs '
                             'would write more consumers than this '
                             '(default %s, unset: no limit)'
                             % conf.MAX_WRITES.name)


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

    report = _subcommand(commands, 'report', 'audit and print the '
                         'findings (the default command)')
    _audit_options(report)
    report.add_argument('--by', choices=('provider', 'project'),
                        default='provider',
                        help='per provider tree (the default), or per '
                             'project: what its findings hold against its '
                             'Placement usage, its servers\' needs and its '
                             'Keystone limits, worst first')

    apply = _subcommand(commands, 'apply', 'audit, then perform the '
                        'recommended repairs, each re-read and '
                        'generation-checked (at once: see --dry-run)')
    _audit_options(apply)
    limit_options(apply)
    apply.add_argument('--yes-unknown', action='store_true',
                       help='also delete every consumer Nova does not know '
                            '(unknown_consumer: the leftovers of servers '
                            'archive_deleted_rows purged, but also Zun\'s '
                            'containers, Blazar\'s reservations or a '
                            'consumer written by hand), within --only and '
                            'the limits; never without this')
    apply.add_argument('--dry-run', action='store_true',
                       help='read and plan, print the writes as the '
                            'openstack commands that make them, and '
                            'write nothing.  Without it apply writes at '
                            'once, as it always has from cron, which '
                            'runs it unattended and bounded by '
                            '--max-writes and --max-share; restore and '
                            'decommission, run by hand on a subject an '
                            'operator names, preview unless given --apply '
                            '(the openstack plugin unless given --yes)')

    history = _subcommand(commands, 'history', "this cloud's journal, "
                          'newest first')
    output = history.add_mutually_exclusive_group()
    output.add_argument('--json', action='store_true', help='export as JSON')
    output.add_argument('--csv', action='store_true', help='export as CSV')
    history.add_argument('--provider', metavar='UUID_OR_NAME',
                         help='only entries touching a provider whose id '
                              'or name holds this (any case)')
    history.add_argument('--consumer', metavar='UUID_OR_NAME',
                         help="only consumers whose id or server's name "
                              'holds this (any case)')
    history.add_argument('--project', metavar='ID_OR_NAME',
                         help="only consumers whose project's id or name "
                              'holds this (any case), before or after')
    history.add_argument('--all-clouds', action='store_true',
                         help='entries of every cloud (no login needed)')

    restore = _subcommand(commands, 'restore', 'put journaled changes '
                          'back (previewed; --apply writes)')
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
    restore.add_argument('--min-age', type=_count, metavar='SECONDS',
                         help=argparse.SUPPRESS)

    decommission = _subcommand(
        commands, 'decommission', 'delete a dead hypervisor: its leftover '
        'allocations, its compute service and its providers (previewed; '
        '--apply carries it out)')
    decommission_arguments(decommission)
    decommission.add_argument('--apply', action='store_true',
                              help='carry it out (default: preview only)')
    decommission.add_argument('--json', action='store_true',
                              help='print the plan and outcomes as JSON')
    min_age_option(decommission)

    refresh = _subcommand(
        commands, 'refresh', "renew the panel's cached snapshot (from cron: "
        'run with Horizon\'s settings, e.g. "manage.py orphan_audit '
        'refresh"), incremental unless a full sweep is due or --full')
    refresh.add_argument('--full', action='store_true',
                         help='a full sweep even if one is not due')
    min_age_option(refresh)
    concurrency_option(refresh)

    metrics = _subcommand(
        commands, 'metrics', 'audit and print (or with --textfile, write '
        'atomically for node_exporter) Prometheus metrics, with what apply '
        'would write and whether its limits would hold it')
    _audit_options(metrics, json=False)
    limit_options(metrics, held='count apply as held '
                  '(orphan_audit_apply_held 1)')
    metrics.add_argument('--textfile', metavar='PATH',
                         help='write here (a .prom file of node_exporter\'s '
                              'textfile collector) instead of stdout')
    capacity = _subcommand(
        commands, 'capacity', 'per hypervisor and resource class: capacity, '
        'what servers need, what findings hold, what is free now and after '
        'the recommended repairs; with --flavor, whether it fits')
    _audit_options(capacity)
    flavor_option(capacity)
    return parser


def subcommands(parser=None):
    """The subcommands of ``parser`` (``orphan-audit``'s by default), by
    name: declared once, in :func:`build_parser`."""
    parser = parser or build_parser()
    return next(action for action in parser._actions if isinstance(
        action, argparse._SubParsersAction)).choices


def normalize(argv):
    """Scripts written for the flag-only interface keep working:
    ``orphan-audit [--json]`` is ``report``, ``orphan-audit --apply`` is
    ``apply``."""
    argv = list(argv)
    names = subcommands()
    if any(arg in names for arg in argv) or any(
            arg in ('-h', '--help') for arg in argv):
        return argv
    if '--apply' in argv:
        argv.remove('--apply')
        return ['apply'] + argv
    return ['report'] + argv


def outcome_code(outcomes):
    """An error when a write failed or its outcome is unknown."""
    if any(o.status in (repairs.FAILED, repairs.UNKNOWN) for o in outcomes):
        return ERROR
    if any(o.status == repairs.DONE for o in outcomes):
        return APPLIED
    return FOUND


def left_nothing(outcomes):
    """Whether a restore skipped every entry (a replay: each already
    restored, or no longer restorable), so it had nothing to do."""
    return all(o.status == repairs.SKIPPED for o in outcomes)


def restore_code(outcomes):
    """A written restore's exit code: a replay that found nothing left to
    restore did nothing wrong and leaves nothing to do."""
    return NOTHING if left_nothing(outcomes) else outcome_code(outcomes)


def settings(args):
    """The run's :class:`conf.RunSettings`: the settings, but for what
    ``args`` name (``--min-age``, ``--concurrency``; ``--timeout``, whose
    absence leaves the cloud's ``api_timeout``)."""
    chosen = {'api_timeout': getattr(args, 'timeout', None)}
    if getattr(args, 'min_age', None) is not None:
        chosen['min_age'] = args.min_age
    if getattr(args, 'concurrency', None):
        chosen['concurrency'] = args.concurrency
    return conf.run_settings(**chosen)


def limits(args):
    """The run's :class:`~.audit.limits.Limits`: ``--only``,
    ``--max-writes`` and ``--max-share`` where ``args`` name them, else
    the settings (:class:`BadArguments` for one no limit could be); a
    command line runs unattended, so its share is
    :data:`conf.UNATTENDED_MAX_SHARE` where nothing sets one."""
    only = getattr(args, 'only', None)
    max_writes = getattr(args, 'max_writes', None)
    max_share = getattr(args, 'max_share', None)
    if max_share is None:
        max_share = _setting(conf.MAX_SHARE, _percent)
    return bounds.Limits(
        frozenset(name for names in only for name in names) if only
        else None,
        _setting(conf.MAX_WRITES, _count) if max_writes is None
        else max_writes,
        conf.UNATTENDED_MAX_SHARE if max_share is None else max_share)


def _setting(setting, check):
    """``setting``'s value as ``check`` reads an option's, or None."""
    try:
        value = setting.get()
        return None if value is None else check(str(value))
    except (conf.BadSetting, argparse.ArgumentTypeError) as exc:
        raise BadArguments('%s: %s' % (setting.name, exc))


def partial(report, code):
    """``code``, or :data:`PARTIAL` when a cell was down (errors stay
    errors)."""
    return PARTIAL if report.down_cells and code != ERROR else code


def check_arguments(args):
    """Values the parser takes that nothing could use, refused before
    anything is read."""
    only = {name for names in getattr(args, 'only', None) or ()
            for name in names}
    if m.UNKNOWN_CONSUMER in only and not getattr(args, 'yes_unknown',
                                                  False):
        raise BadArguments(_('--only %s: unknown consumers are deleted only '
                             'with --yes-unknown') % m.UNKNOWN_CONSUMER)
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
