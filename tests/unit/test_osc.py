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

"""``openstack placement orphan ...``: the cliff commands over mocked use
cases: what they call, what they print, the exit codes of
``orphan-audit``."""

import importlib
import io
import json
import pathlib
import tomllib
from unittest import mock

import pytest

pytest.importorskip('osc_lib')

from orphan_dashboard.audit import model as m  # noqa: E402
from orphan_dashboard.audit import reasons  # noqa: E402
from orphan_dashboard.cli import options  # noqa: E402
from orphan_dashboard.cli import osc  # noqa: E402
from orphan_dashboard.cli import osc_commands  # noqa: E402
from orphan_dashboard.operations import repairs  # noqa: E402
from orphan_dashboard.writing import write  # noqa: E402

pytestmark = pytest.mark.horizon

GHOST = 'aaaaaaaa-0000-0000-0000-000000000001'
MOVED = 'aaaaaaaa-0000-0000-0000-000000000002'
HOST1 = 'bbbbbbbb-0000-0000-0000-000000000001'
HOST2 = 'bbbbbbbb-0000-0000-0000-000000000002'
OWNERS = {'projects': {'p': 'demo'}, 'users': {'u': 'alice'}}


def finding(consumer, provider, verdict, actions=()):
    return m.Finding(consumer, provider, verdict, 'why', {'VCPU': 1},
                     actions=actions, nova='server gone', project_id='p',
                     user_id='u')


def report(*findings, down_cells=False):
    every = list(findings) + [finding('cccccccc-0000-0000-0000-000000000001',
                                      HOST1, m.OK)]
    return mock.Mock(findings=every,
                     consumers=len({f.consumer for f in every}),
                     problems=[f for f in findings if f.problem],
                     names={HOST1: 'host1', HOST2: 'host2'},
                     down_cells=down_cells, providers=[],
                     skipped_hosts=('host9',), down_cell_servers=1,
                     cell_wait=0, unconfirmed=())


def incidents():
    return report(finding(GHOST, HOST2, m.DELETED_INSTANCE,
                          (m.DELETE, m.HEAL)),
                  finding(MOVED, HOST1, m.EVACUATED_SOURCE, (m.TRIM,)))


SWEPT = mock.sentinel.swept
"""The snapshot the mocked audit judged: a repair plans from it."""


def run(command_class, *argv, audited=None):
    """The command run as ``openstack`` runs it: its exit code and what
    it printed on stdout."""
    app = mock.Mock(stdout=io.StringIO())
    app.client_manager.placement_orphan = mock.sentinel.clients
    cmd = command_class(app, None)
    args = cmd.get_parser('openstack placement orphan').parse_args(argv)
    with mock.patch.object(osc_commands.report_ops, 'swept',
                           return_value=osc_commands.report_ops.Swept(
                               SWEPT, audited or incidents())) as audit, \
            mock.patch.object(osc_commands.report_ops, 'owners',
                              return_value=OWNERS):
        code = cmd.run(args)
    assert audit.call_args.args[0] is mock.sentinel.clients
    return code, app.stdout.getvalue()


def test_list_prints_the_problems_and_exits_0_as_openstacks_lists_do():
    """Findings are what a list lists: 0, as every ``openstack ... list``
    (``orphan-audit report`` keeps 3)."""
    code, out = run(osc_commands.ListOrphan, '-f', 'json')
    assert code == options.NOTHING
    rows = json.loads(out)
    assert [(r['Consumer'], r['Provider Name'], r['Verdict'], r['Action'])
            for r in rows] == [
        (GHOST, 'host2', m.DELETED_INSTANCE, m.DELETE),
        (MOVED, 'host1', m.EVACUATED_SOURCE, m.TRIM)]
    # The owner's names beside the ids.
    assert {(r['Project'], r['Project Name'], r['User'], r['User Name'])
            for r in rows} == {('p', 'demo', 'u', 'alice')}


def test_list_names_the_server_and_an_incomplete_consumers_owner():
    incomplete = m.Finding(
        GHOST, HOST1, m.INCOMPLETE_CONSUMER,
        reasons.reason('incomplete_consumer', project='p', user='u'),
        {'VCPU': 1}, actions=(m.SET_OWNER,),
        nova=reasons.reason('nova.server', name='web-1', status='ACTIVE'),
        project_id=m.INCOMPLETE, user_id=m.INCOMPLETE)
    code, out = run(osc_commands.ListOrphan, '-f', 'json',
                    audited=report(incomplete))
    (row,) = json.loads(out)
    assert row['Server Name'] == 'web-1'
    assert row['Reason'].endswith('belongs to project demo, user alice')


def test_list_filters_verdicts_and_columns():
    code, out = run(osc_commands.ListOrphan, '--verdict',
                    m.EVACUATED_SOURCE, '-f', 'json', '-c', 'Consumer')
    assert code == options.NOTHING
    assert json.loads(out) == [{'Consumer': MOVED}]


@pytest.mark.parametrize('audited,code', [
    (report(), options.NOTHING),
    (report(down_cells=True), options.PARTIAL),
])
def test_list_exits_as_orphan_audit_report(audited, code):
    assert run(osc_commands.ListOrphan, '-f', 'json',
               audited=audited)[0] == code


def test_show_a_consumer_and_an_unknown_name(capsys):
    code, out = run(osc_commands.ShowOrphan, GHOST, '-f', 'json')
    assert code == options.FOUND
    shown = json.loads(out)
    assert shown['consumer'] == GHOST
    assert [(a['provider_name'], a['verdict']) for a in
            shown['allocations']] == [('host2', m.DELETED_INSTANCE)]
    assert run(osc_commands.ShowOrphan, 'nothing')[0] == \
        options.BAD_ARGUMENTS
    assert 'no consumer or provider nothing' in capsys.readouterr().err


def preview_row(selection):
    return repairs.repair.Row(selection, plan=mock.Mock(kept=[]), notes=())


@pytest.fixture
def writes():
    """The use cases that read fresh and write, mocked."""
    with mock.patch.object(osc_commands.repairs, 'preview',
                           side_effect=lambda clients, chosen, *a, **k: [
                               preview_row(s) for s in chosen]) as preview, \
            mock.patch.object(osc_commands.repairs, 'apply_previewed',
                              side_effect=lambda clients, journal, rows,
                              *a, **k: [write.Outcome(
                                  r.selection, repairs.DONE, 'deleted',
                                  entry_id=7) for r in rows]) as apply, \
            mock.patch.object(osc_commands.journal.Journal, 'for_clients',
                              return_value=mock.sentinel.journal), \
            mock.patch.object(osc_commands.handlers, 'setup_django'), \
            mock.patch.object(repairs.repair.Row, 'commands', ['plan']):
        yield preview, apply


def test_repair_without_yes_previews_and_writes_nothing(writes):
    preview, apply = writes
    code, out = run(osc_commands.RepairOrphan, GHOST, '-f', 'json')
    assert code == options.FOUND
    (selection,) = preview.call_args.args[1]
    assert selection == m.Selection(GHOST, HOST2, m.DELETE)
    assert preview.call_args.kwargs == {'swept': SWEPT}
    apply.assert_not_called()
    assert [(r['Action'], r['Status'], r['Journal Entry'])
            for r in json.loads(out)] == [(m.DELETE, 'preview', None)]


def test_repair_with_yes_applies_what_was_previewed(writes, capsys):
    preview, apply = writes
    code, out = run(osc_commands.RepairOrphan, GHOST, '--action', m.HEAL,
                    '--yes', '-f', 'json')
    assert code == options.APPLIED
    (selection,) = preview.call_args.args[1]
    assert selection.action == m.HEAL
    clients, journal, rows = apply.call_args.args[:3]
    assert (clients, journal) == (mock.sentinel.clients,
                                  mock.sentinel.journal)
    assert [r.selection for r in rows] == [selection]
    assert apply.call_args.kwargs == {'swept': SWEPT}
    assert 'plan: plan' in capsys.readouterr().err
    assert [(r['Status'], r['Journal Entry']) for r in json.loads(out)] == \
        [(repairs.DONE, 7)]


@pytest.mark.parametrize('argv', [
    (GHOST, '--action', m.TRIM), ('dddddddd-0000-0000-0000-000000000009',)])
def test_repair_refuses_what_the_consumer_does_not_offer(writes, argv):
    preview, apply = writes
    assert run(osc_commands.RepairOrphan, *argv)[0] == \
        options.BAD_ARGUMENTS
    preview.assert_not_called()
    apply.assert_not_called()


def test_restore_without_yes_writes_nothing(writes):
    from orphan_dashboard.operations import history
    from orphan_dashboard.operations import restore

    entry = mock.Mock(id=3)
    row = preview_row(m.Selection(GHOST, HOST2, m.RESTORE))
    with mock.patch.object(osc_commands.client, 'cloud_for_clients'), \
            mock.patch.object(history, 'entries_by_id',
                              return_value=[entry]), \
            mock.patch.object(restore, 'restorable'), \
            mock.patch.object(restore, 'preview',
                              return_value=[(entry, row)]), \
            mock.patch.object(restore, 'restore') as restored, \
            mock.patch.object(history, 'provider_names', return_value={}), \
            mock.patch.object(history.journal, 'provider_names',
                              return_value={HOST2: 'host2'}):
        code, out = run_without_audit(osc_commands.RestoreOrphan, '3',
                                      '-f', 'json')
        assert code == options.FOUND
        restored.assert_not_called()
        assert [r['Status'] for r in json.loads(out)] == ['preview']
        # A deleted host by the name its journaled record keeps.
        assert [r['Provider Name'] for r in json.loads(out)] == ['host2']


def test_a_replayed_restore_with_yes_exits_0_saying_nothing_was_left(
        writes, capsys):
    """``--yes`` again on restored entries skips each: nothing is left to
    restore, so no "something to restore" (3)."""
    from orphan_dashboard.operations import history
    from orphan_dashboard.operations import restore

    entry = mock.Mock(id=3)
    row = repairs.repair.Row(m.Selection(GHOST, HOST2, m.RESTORE),
                             error='already restored')
    skipped = write.Outcome(row.selection, repairs.SKIPPED,
                            'already restored')
    with mock.patch.object(osc_commands.client, 'cloud_for_clients'), \
            mock.patch.object(osc_commands.journal.Journal, 'for_clients'), \
            mock.patch.object(osc_commands.handlers, 'setup_django'), \
            mock.patch.object(history, 'entries_by_id',
                              return_value=[entry]), \
            mock.patch.object(restore, 'restorable'), \
            mock.patch.object(restore, 'preview',
                              return_value=[(entry, row)]), \
            mock.patch.object(restore, 'restore', return_value=[skipped]), \
            mock.patch.object(history, 'provider_names', return_value={}), \
            mock.patch.object(history.journal, 'provider_names',
                              return_value={}):
        code, _out = run_without_audit(osc_commands.RestoreOrphan, '3',
                                       '--yes', '-f', 'json')
    assert code == options.NOTHING
    assert capsys.readouterr().err.splitlines()[-1] == \
        'nothing was left to restore'


def run_without_audit(command_class, *argv):
    app = mock.Mock(stdout=io.StringIO())
    app.client_manager.placement_orphan = mock.sentinel.clients
    cmd = command_class(app, None)
    args = cmd.get_parser('openstack placement orphan').parse_args(argv)
    return cmd.run(args), app.stdout.getvalue()


def test_the_plugin_is_registered_as_openstack_loads_plugins():
    """The entry points name what exists, in a command group of its own
    that ``openstack`` derives from the plugin's API name and version."""
    pyproject = pathlib.Path(__file__).resolve().parents[2] / \
        'pyproject.toml'
    groups = tomllib.loads(pyproject.read_text())['project']['entry-points']
    assert groups['openstack.cli.extension'] == {
        'placement_orphan': 'orphan_dashboard.cli.osc'}
    group = 'openstack.%s.v%s' % (osc.API_NAME, osc.DEFAULT_API_VERSION)
    words = set()
    for name, target in groups[group].items():
        module, attr = target.split(':')
        assert getattr(importlib.import_module(module), attr)
        words.add(name.replace('_', ' '))
    assert words == {'placement orphan %s' % c for c in (
        'list', 'show', 'repair', 'restore', 'decommission', 'capacity')}
    assert osc.build_option_parser(mock.sentinel.parser) is \
        mock.sentinel.parser


def test_the_client_is_orphan_audits_on_openstacks_session():
    instance = mock.Mock(region_name='RegionOne', interface='public')
    instance.session.timeout = None
    instance.auth.auth_url = 'http://keystone/v3'
    with mock.patch.object(osc.client, 'for_session') as for_session:
        assert osc.make_client(instance) is for_session.return_value
    for_session.assert_called_once_with(
        instance.session, 'RegionOne', 'public', 'http://keystone/v3',
        timeout=None, listing_timeout=osc.conf.NOVA_LISTING_TIMEOUT.default,
        cell_timeout=osc.conf.NOVA_CELL_TIMEOUT.default)


def decommission_plan(**fields):
    step = mock.Mock(consumer=GHOST, error=None, optional=False,
                     finding=finding(GHOST, HOST2, m.DELETED_INSTANCE),
                     plan=None, notes=())
    values = dict(gone=False, foreign={}, servers=[], steps=[step],
                  deletes_service=False, providers=[HOST2], service=None,
                  keeps_service=False, name='host2',
                  names={HOST2: 'host2'}, optional=[])
    values.update(fields)
    plan = mock.Mock(**values)
    plan.blockers.return_value = []
    plan.refusals.return_value = []
    plan.pick_children.return_value = (set(), set())
    return plan


@pytest.mark.parametrize('argv,code,applied', [
    ((), options.FOUND, False),
    (('--yes',), options.APPLIED, True),
])
def test_decommission_writes_only_with_yes(argv, code, applied):
    from orphan_dashboard.operations import decommission

    plan = decommission_plan()
    done = [write.Outcome(m.Selection(GHOST, HOST2, m.DELETE),
                          repairs.DONE, 'deleted', entry_id=8)]
    with mock.patch.object(decommission, 'preview',
                           return_value=plan) as preview, \
            mock.patch.object(decommission, 'apply',
                              return_value=done) as apply, \
            mock.patch.object(osc_commands.journal.Journal, 'for_clients',
                              return_value=mock.sentinel.journal), \
            mock.patch.object(osc_commands.handlers, 'setup_django'), \
            mock.patch.object(osc_commands.rendering,
                              'print_decommission') as printed:
        result, out = run_without_audit(osc_commands.DecommissionOrphan,
                                        'host2', '-f', 'json', *argv)
    assert result == code
    assert printed.called == applied
    assert preview.call_args.args[:2] == (mock.sentinel.clients, 'host2')
    assert apply.called == applied
    rows = json.loads(out)
    if applied:
        assert apply.call_args.args[1] is mock.sentinel.journal
        assert apply.call_args.kwargs['bound'] is plan.binding.return_value
        assert [(r['Status'], r['Journal Entry']) for r in rows] == [
            (repairs.DONE, 8)]
    else:
        assert [(r['Consumer'], r['Status']) for r in rows] == [
            (GHOST, 'preview'), (None, 'preview')]
        assert rows[1]['Provider Name'] == 'host2'
        assert rows[1]['Message'] == (
            'delete what Nova leaves of provider host2 (%s)' % HOST2)


def test_decommission_of_a_host_with_servers_is_an_error():
    from osc_lib import exceptions

    from orphan_dashboard.operations import decommission

    plan = decommission_plan(servers=[mock.Mock(uuid='s1')])
    with mock.patch.object(decommission, 'preview', return_value=plan), \
            mock.patch.object(decommission, 'apply') as apply:
        with pytest.raises(exceptions.CommandError, match='s1'):
            run_without_audit(osc_commands.DecommissionOrphan, 'host2',
                              '--yes')
    apply.assert_not_called()


def test_a_consumer_with_no_recommended_repair_asks_for_one(writes, capsys):
    preview, apply = writes
    unknown = finding(GHOST, HOST2, m.UNKNOWN_CONSUMER, (m.DELETE,))
    code, out = run(osc_commands.RepairOrphan, GHOST, '-f', 'json',
                    audited=report(unknown))
    assert code == options.FOUND
    assert json.loads(out) == []
    assert 'name one with --action (offered: delete)' in \
        capsys.readouterr().err
    preview.assert_not_called()
    apply.assert_not_called()


@pytest.mark.parametrize('down_cells,code', [
    (False, options.NOTHING), (True, options.PARTIAL)])
def test_repairing_a_protected_consumer_says_why_nothing_is_done(
        writes, capsys, down_cells, code):
    preview, apply = writes
    kept = m.Finding(GHOST, HOST2, m.PROTECTED,
                     reasons.reason('protected.task', task='migrating'),
                     {'VCPU': 1})
    found, _out = run(osc_commands.RepairOrphan, GHOST, '-f', 'json',
                      audited=report(kept, down_cells=down_cells))
    assert found == code
    assert 'consumer %s has nothing to repair: host2 protected: task ' \
        'migrating in progress' % GHOST in capsys.readouterr().err
    preview.assert_not_called()
    apply.assert_not_called()


def test_show_exits_partial_when_a_cell_was_down():
    ok = 'cccccccc-0000-0000-0000-000000000001'
    assert run(osc_commands.ShowOrphan, ok, '-f', 'json',
               audited=report())[0] == options.NOTHING
    assert run(osc_commands.ShowOrphan, ok, '-f', 'json',
               audited=report(down_cells=True))[0] == options.PARTIAL
    assert run(osc_commands.ShowOrphan, GHOST, '-f', 'json',
               audited=incidents())[0] == options.FOUND


def test_tables_print_the_plan_one_command_a_line(writes):
    with mock.patch.object(repairs.repair.Row, 'commands',
                           ['openstack one', 'openstack two']):
        code, out = run(osc_commands.RepairOrphan, GHOST, '-f', 'table',
                        '-c', 'Plan')
    assert code == options.FOUND
    assert [line.strip('| ') for line in out.splitlines()
            if 'openstack' in line] == ['openstack one', 'openstack two']


def test_decommission_hands_the_named_foreign_children_to_the_writes(
        capsys):
    from orphan_dashboard.operations import decommission

    plan = decommission_plan()
    plan.pick_children.return_value = ({'nic-uuid'}, set())
    with mock.patch.object(decommission, 'preview', return_value=plan), \
            mock.patch.object(decommission, 'apply',
                              return_value=[]) as apply, \
            mock.patch.object(osc_commands.journal.Journal, 'for_clients'), \
            mock.patch.object(osc_commands.handlers, 'setup_django'), \
            mock.patch.object(osc_commands.rendering, 'print_decommission'):
        run_without_audit(osc_commands.DecommissionOrphan, 'host2', '--yes',
                          '--delete-foreign-child', 'host2:br-phys')
    plan.pick_children.assert_called_once_with(['host2:br-phys'])
    assert apply.call_args.kwargs['children'] == {'nic-uuid'}
    # A name that is no foreign child of the host: refused, nothing run.
    plan.pick_children.return_value = (set(), {'typo'})
    plan.foreign_children, plan.names = {}, {}
    plan.configure_mock(name='host2')
    with mock.patch.object(decommission, 'preview', return_value=plan), \
            mock.patch.object(decommission, 'apply') as apply:
        result, _ = run_without_audit(osc_commands.DecommissionOrphan,
                                      'host2', '--yes',
                                      '--delete-foreign-child', 'typo')
    assert result == options.BAD_ARGUMENTS
    assert "typo: not a child of host2 that is not Nova's" in \
        capsys.readouterr().err
    apply.assert_not_called()


def test_the_plugin_speaks_the_language_the_environment_asks_for(
        monkeypatch):
    from orphan_dashboard.operations import decommission

    monkeypatch.setenv('LANGUAGE', 'ru')
    with mock.patch.object(decommission, 'preview',
                           return_value=decommission_plan()):
        result, out = run_without_audit(osc_commands.DecommissionOrphan,
                                        'host2', '-f', 'json')
    assert result == options.FOUND
    rows = json.loads(out)
    assert rows[1]['Message'] == (
        'удалить то, что Nova оставит от провайдера host2 (%s)' % HOST2)


def run_capacity(*argv):
    """``capacity`` on the cloud of ``orphan-audit capacity``'s unit tests
    (host1 full of an evacuated server's leftover), only the services
    mocked: ``(exit code, stdout, vm)``."""
    from orphan_dashboard.api import nova
    from orphan_dashboard.reading import collect
    from tests.unit import capacity_cli as cli_capacity

    found, vm = cli_capacity.snapshot()
    app = mock.Mock(stdout=io.StringIO())
    clients = app.client_manager.placement_orphan
    cmd = osc_commands.CapacityOrphan(app, None)
    args = cmd.get_parser('openstack placement orphan').parse_args(argv)
    with mock.patch.object(collect, 'full_snapshot',
                           return_value=found) as read, \
            mock.patch.object(nova, 'flavor_list', return_value=[
                cli_capacity.SMALL, cli_capacity.VGPU]):
        code = cmd.run(args)
    if read.called:
        # The cloud read is the plugin's, on openstack's session.
        assert read.call_args.args[:2] == (clients.placement, clients.nova)
    return code, app.stdout.getvalue(), vm


def test_capacity_rows_are_orphan_audit_capacitys():
    """One row per hypervisor with its state and the repairs that make
    room, exactly as ``orphan-audit capacity --json`` has them."""
    from tests.unit import capacity_cli as cli_capacity

    code, out, vm = run_capacity('--flavor', 'm1.small', '--min-age', '0',
                                 '-f', 'json')
    assert code == options.NOTHING
    rows = json.loads(out)
    assert [(r['Hypervisor'], r['State']) for r in rows] == [
        ('host1', 'fits_after_repair'), ('host3', 'fits_now'),
        ('host2', 'does_not_fit')]
    assert [(r['consumer'], r['server_name'], r['action'])
            for r in rows[0]['Repairs']] == [(vm, 'vm1', m.TRIM)]
    expected = json.loads(cli_capacity.run(
        '--flavor', 'm1.small', '--min-age', '0', '--json')[1])
    assert [(r['Hypervisor'], r['Provider'], r['State'], r['Repairs'])
            for r in rows] == [
        (h['hypervisor'], h['provider'], h['state'], h['repairs'])
        for h in expected['hypervisors']]


def test_capacity_as_a_table_names_the_repairs_servers():
    code, out, vm = run_capacity('--flavor', 'm1.small', '--min-age', '0',
                                 '-f', 'table', '-c', 'Repairs')
    assert code == options.NOTHING
    assert 'trim to current host server vm1 (%s) frees' % vm in out


def test_capacity_takes_the_audit_options():
    """--min-age protects host1's leftover: no repair makes room."""
    code, out, vm = run_capacity('--flavor', 'm1.small', '--min-age',
                                 '999999999', '--concurrency', '2',
                                 '--provider', 'host1', '-f', 'json')
    assert json.loads(out) == [{'Hypervisor': 'host1',
                                'Provider': mock.ANY,
                                'State': 'does_not_fit', 'Why': mock.ANY,
                                'Repairs': []}]
    # What is short, by how much: host1 has nothing free.
    assert json.loads(out)[0]['Why'].startswith(
        'VCPU 1 short (it needs 1; at most 0 free on one provider')


def test_capacity_without_a_flavor_the_numbers_per_class():
    code, out, vm = run_capacity('--provider', 'host1', '--min-age', '0',
                                 '-f', 'json')
    assert code == options.NOTHING
    assert [(r['Resource Class'], r['Capacity'], r['Used'], r['Held'],
             r['Free'], r['Free After Repair']) for r in json.loads(out)] == [
        ('VCPU', 1, 1, 1, 0, 1), ('MEMORY_MB', 512, 512, 512, 0, 512),
        ('DISK_GB', 1, 1, 1, 0, 1)]


@pytest.mark.parametrize('argv, message', [
    (('--flavor', 'nope'), 'no flavor nope'),
    (('--flavor', 'vgpu'), 'flavor vgpu: '),
    (('--provider', 'host9'), 'no resource provider host9'),
])
def test_capacity_refuses_what_it_cannot_judge(capsys, argv, message):
    code, out, _ = run_capacity(*argv)
    assert code == options.BAD_ARGUMENTS
    assert 'openstack placement orphan: %s' % message in \
        capsys.readouterr().err
    assert out == ''


@pytest.mark.parametrize('command_class', [
    osc_commands.ListOrphan, osc_commands.ShowOrphan,
    osc_commands.RepairOrphan, osc_commands.RestoreOrphan,
    osc_commands.DecommissionOrphan, osc_commands.CapacityOrphan])
def test_the_help_is_plain_text(command_class):
    """cliff prints a command's docstring as it is: no reStructuredText."""
    cmd = command_class(mock.Mock(), None)
    shown = cmd.get_parser('openstack placement orphan').format_help()
    assert '``' not in shown and ':class:' not in shown


def test_show_wraps_the_allocations_into_readable_rows():
    code, out = run(osc_commands.ShowOrphan, GHOST, '-f', 'table')
    assert max(len(line) for line in out.splitlines()) <= 100
    assert 'provider_name: host2' in out
    assert 'verdict: %s' % m.DELETED_INSTANCE in out


def test_decommission_previews_the_commands_of_its_deletes():
    """The service's and each provider's delete, as the panel shows them
    (``operations.decommission``'s commands)."""
    from orphan_dashboard.operations import decommission

    service = m.Service('host2', 'down', uuid='cccccccc-0000-0000-0000-'
                                              '000000000009')
    plan = decommission_plan(deletes_service=True, service=service)
    with mock.patch.object(decommission, 'preview', return_value=plan):
        _code, out = run_without_audit(osc_commands.DecommissionOrphan,
                                       'host2', '-f', 'json')
    commands_of = {r['Action']: r['Plan'] for r in json.loads(out)}
    assert commands_of[m.DELETE_SERVICE] == [
        'openstack --os-compute-api-version 2.53 compute service delete '
        'cccccccc-0000-0000-0000-000000000009']
    assert commands_of[m.DELETE_PROVIDER] == [
        'openstack resource provider delete %s' % HOST2]


def test_decommission_names_the_unknown_consumers_owner():
    """The unknown consumer's project and user by Keystone's names, all an
    operator can go on before deleting it, as the panel shows them."""
    from orphan_dashboard.operations import decommission
    from orphan_dashboard.operations import report as report_ops

    step = mock.Mock(consumer=GHOST, error=None, optional=True,
                     finding=finding(GHOST, HOST2, m.UNKNOWN_CONSUMER),
                     plan=None, notes=())
    plan = decommission_plan(steps=[step], optional=[GHOST])
    owners = {'projects': {'p': 'web'}, 'users': {'u': 'alice'}}
    with mock.patch.object(decommission, 'preview', return_value=plan), \
            mock.patch.object(report_ops, 'owners',
                              return_value=owners):
        _code, out = run_without_audit(osc_commands.DecommissionOrphan,
                                       'host2', '-f', 'json')
    (row,) = [r for r in json.loads(out) if r['Consumer'] == GHOST]
    assert 'project web (p), user alice (u)' in row['Message']


def test_show_a_provider_says_how_its_owner_was_proven():
    from orphan_dashboard.audit import classify
    from orphan_dashboard.audit import ownership
    from tests.unit.cloud import Cloud
    from tests.unit.cloud import uid
    audited = classify.audit(Cloud().snapshot(), min_age=600)
    code, out = run(osc_commands.ShowOrphan, uid('host2'), '-f', 'json',
                    audited=audited)
    shown = json.loads(out)
    assert (shown['owner'], shown['owner_proof']) == (
        'nova', ownership.COMPUTE_NODE)


def test_repair_all_previews_every_recommended_repair(writes):
    preview, apply = writes
    # Two of three consumers: past the unattended share of half.
    code, out = run(osc_commands.RepairOrphan, '--all', '--max-share', '100',
                    '-f', 'json')
    assert code == options.FOUND
    assert preview.call_args.args[1] == [
        m.Selection(GHOST, HOST2, m.DELETE),
        m.Selection(MOVED, HOST1, m.TRIM)]
    apply.assert_not_called()
    assert [(r['Consumer'], r['Status']) for r in json.loads(out)] == [
        (GHOST, 'preview'), (MOVED, 'preview')]


def test_repair_all_of_only_one_verdict_with_yes_writes_those(writes):
    preview, apply = writes
    code, out = run(osc_commands.RepairOrphan, '--all', '--only',
                    m.EVACUATED_SOURCE, '--max-writes', '1', '--yes',
                    '-f', 'json')
    assert code == options.APPLIED
    assert [r.selection for r in apply.call_args.args[2]] == [
        m.Selection(MOVED, HOST1, m.TRIM)]


@pytest.mark.parametrize('argv', [
    ('--max-writes', '1'), ('--max-share', '50'), ('--max-writes', '1',
                                                   '--yes')])
def test_repair_all_past_its_limits_is_held(writes, capsys, argv):
    """Two of three consumers to write: past one write, past half of
    them; held, with or without --yes: nothing previewed or written."""
    preview, apply = writes
    code, out = run(osc_commands.RepairOrphan, '--all', *argv,
                    '-f', 'json')
    assert code == options.HELD
    assert json.loads(out) == []
    preview.assert_not_called()
    apply.assert_not_called()
    assert 'held, nothing written: the run would write 2 of 3 consumers' \
        in capsys.readouterr().err


@pytest.mark.parametrize('argv', [
    (GHOST, '--max-writes', '1'), (GHOST, '--only', m.MOVED),
    ('--all', '--action', m.DELETE)])
def test_repair_refuses_limits_of_one_consumer(writes, capsys, argv):
    """Refused before anything is read."""
    preview, apply = writes
    with mock.patch.object(osc_commands.report_ops, 'swept') as audit:
        assert run_without_audit(osc_commands.RepairOrphan, *argv)[0] == \
            options.BAD_ARGUMENTS
    audit.assert_not_called()
    preview.assert_not_called()
    assert 'openstack placement orphan: ' in capsys.readouterr().err


def test_repair_takes_a_consumer_or_all():
    cmd = osc_commands.RepairOrphan(mock.Mock(), None)
    parser = cmd.get_parser('openstack placement orphan')
    assert parser.parse_args(['--all']).all is True
    assert parser.parse_args([GHOST]).consumer == GHOST
    for argv in ((), (GHOST, '--all')):
        with pytest.raises(SystemExit) as exit_:
            parser.parse_args(argv)
        assert exit_.value.code == options.BAD_ARGUMENTS
