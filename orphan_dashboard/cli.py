"""``orphan-audit``: the panel's engine for cron, monitoring and scripts.

Exit codes follow ``nova-manage placement audit``: 0 nothing found, 3
findings, 4 repairs applied; 1 on errors (one line, no traceback), 2 on bad
arguments.
"""

import argparse
import getpass
import json
import logging
import os
import sys

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import client
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan as planner
from orphan_dashboard import collect
from orphan_dashboard import repair

NOTHING, ERROR, FOUND, APPLIED = 0, 1, 3, 4


class Failure(Exception):
    """An error worth one line to the operator."""


def build_parser(parser=None):
    parser = parser or argparse.ArgumentParser(
        prog='orphan-audit',
        description='Find (and with --apply, repair) orphaned allocations '
                    'in Placement, using only the Nova and Placement APIs.')
    parser.add_argument('--os-cloud', help='cloud in clouds.yaml '
                        '(default: OS_CLOUD or the OS_* variables)')
    parser.add_argument('--json', action='store_true',
                        help='print the report as JSON')
    parser.add_argument('--provider', metavar='UUID',
                        help='only this provider tree')
    parser.add_argument('--min-age', type=int, metavar='SECONDS',
                        help='protect allocations younger than this '
                             '(default %d)' % classify.DEFAULT_MIN_AGE)
    parser.add_argument('--apply', action='store_true',
                        help='perform the recommended repairs, re-verified '
                             'consumer by consumer (default: report only)')
    parser.add_argument('--concurrency', type=int,
                        default=collect.DEFAULT_CONCURRENCY,
                        help='Placement requests in flight (default %(default)s)')
    parser.add_argument('--debug', action='store_true',
                        help='log HTTP requests and library warnings')
    journal = parser.add_argument_group(
        'journal', 'every write is journaled before it is sent '
        '(ORPHAN_JOURNAL_DIR)')
    journal.add_argument('--history', action='store_true',
                         help='list journal entries, newest first '
                              '(--json or --csv to export)')
    journal.add_argument('--csv', action='store_true',
                         help='with --history: export as CSV')
    journal.add_argument('--consumer', metavar='UUID',
                         help='with --history: only this consumer')
    journal.add_argument('--restore', metavar='ENTRY', type=int, nargs='+',
                         help='put these entries\' consumers back as they '
                              'were before (refused if changed since)')
    return parser


def report_json(report):
    providers = [{
        'uuid': p.provider.uuid, 'name': p.provider.name,
        'service_state': p.service_state, 'servers': p.servers,
        'consumers': p.consumers, 'usage': p.usage, 'needed': p.needed,
        'mismatched': p.mismatched, 'orphaned_provider': p.orphaned_provider,
        'findings': p.counts,
    } for p in report.providers]
    findings = [{
        'consumer': f.consumer, 'provider': f.provider, 'verdict': f.verdict,
        'reason': f.reason, 'action': f.action, 'resources': f.resources,
    } for f in report.findings if f.verdict != m.OK]
    return {'providers': providers, 'findings': findings,
            'down_cells': report.down_cells}


def print_text(report, out):
    if report.down_cells:
        print('WARNING: a cell is down; consumers that could live there are '
              'protected', file=out)
    for p in report.providers:
        if not p.needs_attention:
            continue
        print('%s %s (%s)%s' % (p.provider.name, p.provider.uuid,
                                p.service_state,
                                ' orphaned provider' if p.orphaned_provider
                                else ''), file=out)
        for rc in sorted(set(p.usage) | set(p.needed)):
            print('  %-10s usage %-8s needed %s' % (
                rc, p.usage.get(rc, 0), p.needed.get(rc, 0)), file=out)
        for f in p.findings:
            if f.verdict != m.OK:
                print('  %-16s %s %s: %s%s' % (
                    f.verdict, f.consumer, f.nova, f.reason,
                    ' -> %s' % f.action if f.action else ''), file=out)


def setup_django():
    """Django just for the journal when no Horizon settings are around."""
    import django
    from django.conf import settings

    if not settings.configured and 'DJANGO_SETTINGS_MODULE' not in os.environ:
        settings.configure(INSTALLED_APPS=['orphan_dashboard'], USE_TZ=True,
                           DATABASES={})
    django.setup()


def cli_journal(clients):
    from orphan_dashboard import journal

    adapter = clients.placement
    try:
        access = adapter.session.auth.get_access(adapter.session)
        user_name, project_name = access.username, access.project_name
    except Exception:  # token-only auth knows no names
        user_name = project_name = None
    return journal.Journal(
        'cli', user_id=adapter.get_user_id(),
        user_name=user_name or getpass.getuser(),
        project_id=adapter.get_project_id(),
        project_name=project_name or '')


def history(args, out):
    from orphan_dashboard import journal

    found = journal.entries(provider=args.provider, consumer=args.consumer)
    if args.csv:
        out.write(journal.export_csv(found))
    elif args.json:
        out.write(journal.export_json(found) + '\n')
    else:
        for e in found:
            print('%5d %s %-8s %-10s %-16s %s on %s by %s: %s' % (
                e.id, e.created.isoformat(timespec='seconds'), e.status,
                e.source, e.action, e.consumer, e.provider, e.user_name,
                e.message or e.reason), file=out)
    return NOTHING


def restore(args, clients, out):
    from orphan_dashboard import journal

    from django.core.exceptions import ObjectDoesNotExist

    try:
        entries = [journal.get(entry_id) for entry_id in args.restore]
    except ObjectDoesNotExist:
        raise Failure('no such journal entry among %s' % ' '.join(
            map(str, args.restore)))
    rows = repair.preview_restore(clients.placement, entries)
    for row in rows:
        for command in row.commands:
            print('plan: %s' % command, file=out)
    outcomes = repair.restore(clients.placement, cli_journal(clients),
                              entries, {r.selection.consumer: r.fingerprint
                                        for r in rows})
    return report_outcomes(args, outcomes, out)


def report_outcomes(args, outcomes, out, report=None):
    if args.json:
        json.dump({**(report_json(report) if report else {}), 'outcomes': [{
            'consumer': o.selection.consumer,
            'provider': o.selection.provider,
            'action': o.selection.action, 'status': o.status,
            'message': o.message} for o in outcomes]},
            out, indent=2, sort_keys=True)
        out.write('\n')
    else:
        for o in outcomes:
            print('%-8s %-16s %s on %s: %s' % (
                o.status, o.selection.action, o.selection.consumer,
                o.selection.provider, o.message), file=out)
    if any(o.status == repair.FAILED for o in outcomes):
        return ERROR
    if any(o.status == repair.DONE for o in outcomes):
        return APPLIED
    return FOUND


def run(args, clients, out=sys.stdout):
    """Audit (and with ``--apply`` repair); or ``--restore``."""
    if args.restore:
        setup_django()
        return restore(args, clients, out)
    min_age = (classify.DEFAULT_MIN_AGE if args.min_age is None
               else args.min_age)
    snapshot = collect.full_snapshot(clients.placement, clients.nova,
                                     concurrency=args.concurrency)
    report = classify.audit(snapshot, min_age=min_age)
    if args.provider:
        report.providers = [p for p in report.providers
                            if p.provider.uuid == args.provider]
    if args.json and not args.apply:
        json.dump(report_json(report), out, indent=2, sort_keys=True)
        out.write('\n')
    elif not args.apply:
        print_text(report, out)
    if not report.problems:
        return NOTHING
    if not args.apply:
        return FOUND
    selections = [repair.Selection(f.consumer, f.provider, action,
                                   f.instance if f.instance != f.consumer
                                   else None)
                  for f, action in planner.recommended(report.problems)]
    rows = repair.preview(clients.placement, clients.nova, selections,
                          min_age=min_age)
    setup_django()
    outcomes = repair.apply(clients.placement, clients.nova,
                            cli_journal(clients), selections,
                            {r.selection.consumer: r.fingerprint
                             for r in rows}, min_age=min_age)
    return report_outcomes(args, outcomes, out, report)


def main(argv=None):
    args = build_parser().parse_args(argv)
    # Library warnings (keystoneauth's discovery fallback...) would break
    # the promise of one line per error.
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.CRITICAL)
    if args.history:
        setup_django()
        return history(args, sys.stdout)
    try:
        clients = client.for_cloud(args.os_cloud)
        return run(args, clients)
    except Failure as exc:
        print('orphan-audit: %s' % exc, file=sys.stderr)
    except ks_exc.Unauthorized:
        print('orphan-audit: authentication failed: check the credentials',
              file=sys.stderr)
    except ks_exc.Forbidden:
        print('orphan-audit: forbidden: an admin role is needed',
              file=sys.stderr)
    except ks_exc.EndpointNotFound as exc:
        print('orphan-audit: service missing from the catalog: %s' % exc,
              file=sys.stderr)
    except (ks_exc.ConnectFailure, ks_exc.ConnectTimeout,
            ks_exc.DiscoveryFailure) as exc:
        print('orphan-audit: cannot reach the cloud: %s' % exc,
              file=sys.stderr)
    except ks_exc.ClientException as exc:
        print('orphan-audit: %s' % exc, file=sys.stderr)
    except Exception as exc:
        if type(exc).__module__.startswith('openstack'):
            print('orphan-audit: %s' % exc, file=sys.stderr)
        else:
            raise
    return ERROR


if __name__ == '__main__':
    sys.exit(main())
