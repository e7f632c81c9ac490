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

"""``orphan-audit``'s subcommands, one handler each: read through the
application layer, print (:mod:`rendering`), return the exit code
(:mod:`options`)."""

import dataclasses
import functools
import json
import os
import sys
import time
import typing

from orphan_dashboard.api import client
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit import server_needs
from orphan_dashboard.cli.i18n import _
from orphan_dashboard.cli.i18n import text
from orphan_dashboard.cli import options
from orphan_dashboard.cli import progress_bar
from orphan_dashboard.cli import prometheus
from orphan_dashboard.cli import rendering
from orphan_dashboard import conf
from orphan_dashboard.operations import capacity as capacity_ops
from orphan_dashboard.operations import repairs
from orphan_dashboard.operations import report as report_ops
from orphan_dashboard.writing import journal


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


def journal_of(clients):
    """The journal of what the user behind ``clients`` writes (Django set
    up for it first)."""
    setup_django()
    return journal.Journal.for_clients(clients)


def audit(args, clients):
    """The :class:`~.operations.report.Swept` report of the whole cloud,
    or of ``--provider``'s tree."""
    try:
        return report_ops.swept(clients, options.settings(args),
                                progress_bar.for_args(args),
                                provider=args.provider)
    except report_ops.NoSuchProvider:
        raise options.BadArguments(_('no resource provider %s') %
                                   args.provider)


def cmd_report_by_project(args, clients, out):
    """What each project's findings hold: its quota charged by orphans."""
    settings = options.settings(args)
    report, capacity = capacity_ops.audit(clients, settings,
                                          progress_bar.for_args(args))
    if capacity is None:
        raise options.Failure(_('Placement gave no inventories'))
    rows = capacity_ops.projects(clients, capacity, settings)
    names = capacity_ops.project_names(clients)
    if args.json:
        json.dump({'projects': rendering.projects_json(rows, names),
                   'partial': report.down_cells,
                   'skipped_cells': rendering.skipped_cells(report)}, out,
                  indent=2, sort_keys=True)
        out.write('\n')
    else:
        rendering.print_projects(rows, names, out)
    return options.partial(report, options.FOUND if rows else options.NOTHING)


def cmd_report(args, clients, out):
    if getattr(args, 'by', 'provider') == 'project':
        if args.provider:
            raise options.BadArguments(_('--by project covers the whole '
                                         'cloud: without --provider'))
        return cmd_report_by_project(args, clients, out)
    report = audit(args, clients).report
    owners = report_ops.owners(clients, report.problems)
    if args.json:
        json.dump(rendering.report_json(report, owners), out, indent=2,
                  sort_keys=True)
        out.write('\n')
    else:
        rendering.print_text(report, out, owners)
    return options.partial(report, options.FOUND if report.problems
                           else options.NOTHING)


def cmd_apply(args, clients, out):
    """Every recommended repair (of ``--only``'s verdicts), unless the
    run would go past its limits: then none, and exit 6.  ``--dry-run``
    prints the plans and writes nothing."""
    swept = audit(args, clients)
    report = swept.report
    rows, outcomes, decision = repairs.run_recommended(
        clients, swept, options.settings(args), options.limits(args),
        None if args.dry_run else functools.partial(journal_of, clients),
        unknown=args.yes_unknown)
    names = rendering.row_names(rows, report.names)
    if args.json:
        owners = report_ops.owners(clients, report.problems)
        found = dict(rendering.report_json(report, owners),
                     outcomes=rendering.outcomes_json(outcomes, names),
                     held=rendering.held_json(decision))
        if args.dry_run:
            found['plans'] = rendering.plans_json(rows, names)
        json.dump(found, out, indent=2, sort_keys=True)
        out.write('\n')
    else:
        if report.down_cells:
            rendering.print_partial(report, out)
        if decision.held:
            print(rendering.held_line(decision), file=out)
        rendering.print_rows(rows, out, names)
        rendering.print_outcomes(outcomes, out, names)
    if decision.held:
        return options.HELD
    if args.dry_run or not report.problems:
        return options.partial(report, options.FOUND if report.problems
                               else options.NOTHING)
    return options.partial(report, options.outcome_code(outcomes))


def cmd_history(args, clients, out):
    from orphan_dashboard.operations import history as history_ops

    cloud = None if args.all_clouds else client.cloud_for_clients(clients)
    current = history_ops.current_names(clients) if clients else {}
    texts = dict(provider=args.provider, consumer=args.consumer,
                 project=args.project)
    found = journal.all_entries(
        cloud, **texts, named=history_ops.named(lambda: current, **texts))
    names = history_ops.entry_names(cloud, current)
    if args.csv or args.json:
        out.writelines(history_ops.exported(
            found, 'csv' if args.csv else 'json', names))
    else:
        listed = 0
        for e in found:
            listed += 1
            print('%5d %s %s %-8s %-6s %-16s %s' % (
                e.id, e.created.isoformat(timespec='seconds'), e.batch,
                e.status, e.source, text(reasons.action_name(e.action)),
                _('%(subject)s by %(user)s: %(message)s') % {
                    'subject': rendering.subject(e, names),
                    'user': e.user_name,
                    'message': e.message or e.reason}), file=out)
        if not listed:
            print(rendering.no_entries(
                args.all_clouds, any(texts.values())), file=out)
    return options.NOTHING


def journal_entries(cloud, ids):
    """The journal entries ``ids`` of ``cloud`` (both command lines'
    restore); :class:`options.BadArguments` when one is not this cloud's."""
    from django.core.exceptions import ObjectDoesNotExist

    from orphan_dashboard.operations import history as history_ops

    try:
        return history_ops.entries_by_id(cloud, ids)
    except ObjectDoesNotExist:
        raise options.BadArguments(
            _('no journal entry of this cloud among %s') %
            ' '.join(map(str, ids)))


def cmd_restore(args, clients, out):
    from orphan_dashboard.operations import history as history_ops
    from orphan_dashboard.operations import restore as restore_ops

    cloud = client.cloud_for_clients(clients)
    entries = journal_entries(cloud, args.entries)
    if args.batch:
        entries = journal.batch_entries(cloud, args.batch)
        if not entries:
            raise options.BadArguments(
                _("no batch %s in this cloud's journal") % args.batch)
    restorable = restore_ops.restorable(cloud, entries)
    pairs = restore_ops.preview(clients, entries, restorable)
    rows = [row for _entry, row in pairs]
    names = rendering.row_names(rows, history_ops.entry_names(
        cloud, {'providers': history_ops.provider_names(clients)}))
    outcomes = []
    if args.apply:
        outcomes = restore_ops.restore(
            clients, journal.Journal.for_clients(clients), entries,
            {entry.id: row.plan for entry, row in pairs if row.plan},
            restorable)
    if args.json:
        json.dump({'plans': [{'entry': entry.id, 'commands': row.commands,
                              'error': reasons.render(row.error),
                              'notes': [str(note) for note in row.notes]}
                             for entry, row in pairs],
                   'outcomes': rendering.outcomes_json(outcomes, names)},
                  out, indent=2, sort_keys=True)
        out.write('\n')
    else:
        rendering.print_rows(rows, out, names)
        rendering.print_outcomes(outcomes, out, names)
    if args.apply:
        if options.left_nothing(outcomes):
            print(_('nothing was left to restore'), file=out)
        return options.restore_code(outcomes)
    return options.FOUND if any(row.plan for row in rows) else options.NOTHING


def foreign_children(plan, wanted):
    """The foreign children ``wanted`` names (``--delete-foreign-child``);
    a name that is none of them is refused: a typo deletes nothing."""
    picked, unmatched = plan.pick_children(wanted)
    if unmatched:
        raise options.BadArguments(
            '%s: not a child of %s that is not Nova\'s (%s)' % (
                ', '.join(sorted(unmatched)), plan.name, ', '.join(
                    '%s (%s)' % (plan.names.get(c, c), c)
                    for c in sorted(plan.foreign_children)) or 'none'))
    return picked


def known_or_close(name, clients):
    """Return if Nova (a migration to or from the host) or this cloud's
    journal knew ``name``, a host found nowhere now; else raise
    BadArguments naming what comes close: "already gone" would pass a typo
    off as success."""
    from orphan_dashboard.operations import decommission as decommission_ops

    setup_django()
    close = decommission_ops.close_names(
        clients, client.cloud_for_clients(clients), name)
    if close is None:
        return
    if close:
        raise options.BadArguments(
            _('no compute host, hypervisor or provider %(name)s, now or in '
              'the journal (did you mean %(close)s?)') % {
                'name': name, 'close': ', '.join(close)})
    raise options.BadArguments(_('no compute host, hypervisor or provider '
                                 '%s, now or in the journal') % name)


def cmd_decommission(args, clients, out):
    from orphan_dashboard.operations import decommission as decommission_ops

    chosen = {u.lower() for u in args.delete_unknown}
    plan = decommission_ops.preview(clients, args.host, options.settings(args),
                                    whole_service=args.whole_service)
    if plan.gone:
        known_or_close(args.host, clients)
    children = foreign_children(plan, args.delete_foreign_child)
    outcomes = []
    code = options.FOUND
    if plan.gone:
        code = options.NOTHING
    elif plan.refusals():
        print('orphan-audit: %s' % '; '.join(
            text(b) for b in plan.refusals()), file=sys.stderr)
        code = options.ERROR
    elif plan.servers:
        print('orphan-audit: %s' % rendering.still_runs(args.host,
                                                        plan.servers),
              file=sys.stderr)
        code = options.ERROR
    elif args.apply:
        try:
            outcomes = decommission_ops.apply(
                clients, journal_of(clients), args.host,
                plan.plans(chosen), chosen, options.settings(args),
                bound=plan.binding(), children=children,
                bounds=options.limits(args))
        except repairs.Held as exc:
            print('orphan-audit: %s' % text(exc.reason), file=sys.stderr)
            code = options.HELD
        else:
            code = (options.APPLIED if outcomes and all(
                o.status == repairs.DONE for o in outcomes)
                else options.ERROR)
    names = rendering.decommission_names(plan)
    owners = report_ops.owners(clients, plan.optional)
    if args.json:
        json.dump(dict(rendering.decommission_json(plan, chosen, children,
                                                   owners),
                       outcomes=rendering.outcomes_json(outcomes, names)), out,
                  indent=2, sort_keys=True)
        out.write('\n')
    else:
        if plan.gone:
            print(rendering.already_gone(args.host), file=out)
        else:
            rendering.print_decommission(plan, chosen, out, children, owners)
        rendering.print_outcomes(outcomes, out, names)
    return code


def cmd_refresh(args, clients, out):
    """Renew the snapshot the panel's pages show, in the panel's cache."""
    from orphan_dashboard import sweep
    from orphan_dashboard.sweep import lock
    from orphan_dashboard.sweep import store as stores

    if 'DJANGO_SETTINGS_MODULE' not in os.environ:
        raise options.BadArguments(_(
            "refresh stores the snapshot in the panel's cache: run it with "
            "Horizon's settings (manage.py orphan_audit refresh, or "
            'DJANGO_SETTINGS_MODULE set)'))
    settings = options.settings(args)
    store = stores.for_cloud(client.cloud_for_clients(clients).key,
                             settings)
    client.validate_token(clients)
    progress = progress_bar.for_args(args)
    started = time.monotonic()
    snapshot = sweep.refresh(store, clients, args.full, settings, progress)
    if snapshot is None:
        print(_('a sweep is already running (%s): nothing to do') %
              lock.holder(store), file=out)
        return options.NOTHING
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
    return options.NOTHING


def cmd_metrics(args, clients, out):
    """Prometheus metrics of an audit, with what ``apply`` under the
    same limits would write and whether it would be held; on failure
    only ``up`` 0."""
    bounds = options.limits(args)
    started = time.monotonic()
    report, capacity, flavor_counts, failure = None, None, None, None
    decision = None
    try:
        report, capacity = capacity_ops.audit(
            clients, options.settings(args), progress_bar.for_args(args),
            provider=args.provider)
        flavor_counts = capacity_ops.flavor_counts(
            clients, capacity, conf.names(conf.METRIC_FLAVORS.get()))
        decision = repairs.bounded(report, bounds)[2]
    except report_ops.NoSuchProvider:
        raise options.BadArguments('no resource provider %s' % args.provider)
    except Exception as exc:
        failure = exc
    now = time.time()
    previous = prometheus.last_success(args.textfile) if args.textfile \
        else None
    registry = prometheus.metrics_registry(
        report, time.monotonic() - started, report is not None,
        now if report is not None else previous, capacity, flavor_counts,
        decision)
    if args.textfile:
        from prometheus_client import write_to_textfile
        try:
            write_to_textfile(args.textfile, registry)
        except OSError as exc:
            raise options.Failure(_('cannot write %(path)s: %(error)s') % {
                'path': args.textfile, 'error': exc.strerror or exc})
    else:
        from prometheus_client import generate_latest
        out.write(generate_latest(registry).decode())
    if failure is not None:
        raise failure
    return options.NOTHING


def capacity_answer(args, clients, progress):
    """The :class:`~operations.capacity.Answer` both command lines print,
    its refusals as theirs: ``--flavor``, ``--provider`` and the audit
    options of ``args``."""
    try:
        return capacity_ops.answer(
            clients, options.settings(args), progress,
            provider=args.provider, flavor=args.flavor)
    except capacity_ops.NoSuchFlavor:
        raise options.BadArguments(_('no flavor %s') % args.flavor)
    except server_needs.CannotHeal as exc:
        raise options.BadArguments(_('flavor %(flavor)s: %(reason)s') % {
            'flavor': args.flavor, 'reason': text(exc.reason)})
    except report_ops.NoSuchProvider:
        raise options.BadArguments(_('no resource provider %s') %
                                   args.provider)
    except capacity_ops.NoInventories:
        raise options.Failure(_('Placement gave no inventories'))


def cmd_capacity(args, clients, out):
    """Capacity per hypervisor and class, or whether ``--flavor`` fits."""
    found = capacity_answer(args, clients, progress_bar.for_args(args))
    if args.json:
        json.dump(rendering.capacity_json(found), out, indent=2,
                  sort_keys=True)
        out.write('\n')
    else:
        rendering.print_capacity(found, out)
    return options.partial(found.report, options.NOTHING)


@dataclasses.dataclass(frozen=True)
class Command:
    """A subcommand's handler, and whether it reads the panel's journal
    or cache (Django set up first)."""

    handler: typing.Callable
    needs_django: bool = False


COMMANDS = {'report': Command(cmd_report), 'apply': Command(cmd_apply),
            'history': Command(cmd_history, needs_django=True),
            'restore': Command(cmd_restore, needs_django=True),
            'decommission': Command(cmd_decommission),
            'refresh': Command(cmd_refresh, needs_django=True),
            'metrics': Command(cmd_metrics),
            'capacity': Command(cmd_capacity)}
