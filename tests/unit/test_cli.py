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

"""``orphan-audit`` and ``manage.py orphan_audit``: one parser, every mode
reaching its own code, the old flags kept as aliases."""

import contextlib
import dataclasses
import datetime
import io
import json
from unittest import mock

from django.core import management
import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.cli import commands as cli
from orphan_dashboard.cli import handlers
from orphan_dashboard.cli import options
from orphan_dashboard.cli import rendering
from orphan_dashboard.management.commands import orphan_audit
from orphan_dashboard.reading import collect
from orphan_dashboard.writing import write
from tests.unit.staged import dead_host1
from tests.unit.staged import H1
from tests.unit.staged import ironic
from tests.unit.staged import leftovers

pytestmark = pytest.mark.horizon


def parse(*argv):
    return options.build_parser().parse_args(options.normalize(argv))


@pytest.mark.parametrize('argv,command,checks', [
    ([], 'report', {'json': False}),
    (['--json'], 'report', {'json': True}),
    (['--os-cloud', 'c', '--apply', '--min-age', '0'], 'apply',
     {'os_cloud': 'c', 'min_age': 0}),
    (['report', '--provider', 'host1', '--json'], 'report',
     {'provider': 'host1', 'json': True}),
    (['--os-cloud', 'c', 'apply'], 'apply', {'os_cloud': 'c'}),
    (['apply', '--os-cloud', 'c'], 'apply', {'os_cloud': 'c'}),
    (['history', '--csv', '--consumer', 'x'], 'history',
     {'csv': True, 'consumer': 'x'}),
    (['restore', '3', '4', '--apply'], 'restore',
     {'entries': [3, 4], 'apply': True}),
    (['restore', '3'], 'restore', {'entries': [3], 'apply': False}),
])
def test_modes(argv, command, checks):
    args = parse(*argv)
    assert args.command == command
    for name, value in checks.items():
        assert getattr(args, name) == value, name


@pytest.mark.parametrize('argv', [
    ['history', '--apply'], ['history', '--json', '--csv'],
    ['report', '--csv'], ['restore'], ['restore', 'x'],
    ['apply', '--restore', '3'], ['--history'], ['--min-age', 'soon'],
    ['report', '--bogus']])
def test_options_that_do_not_go_together_are_refused(argv):
    with pytest.raises(SystemExit) as exit_:
        parse(*argv)
    assert exit_.value.code == options.BAD_ARGUMENTS


def test_an_unknown_provider_is_an_error(capsys):
    report = mock.Mock(providers=[mock.Mock(provider=mock.Mock(
        uuid='u1', name='host1'))], problems=[])
    args = parse('report', '--provider', 'nowhere')
    with mock.patch.object(collect, 'full_snapshot'), \
            mock.patch.object(classify, 'audit', return_value=report), \
            mock.patch.object(cli.client, 'for_cloud'):
        assert cli.execute(args) == options.BAD_ARGUMENTS
    assert capsys.readouterr().err.strip() == \
        'orphan-audit: no resource provider nowhere'


def run_command(*argv):
    """``manage.py orphan_audit ARGV``: the namespace ``cli.execute``
    receives, and what it would exit with."""
    seen = []

    def execute(args, out=None):
        seen.append(args)
        return options.NOTHING

    with mock.patch.object(cli, 'execute', side_effect=execute):
        with pytest.raises(SystemExit) as exit_:
            orphan_audit.Command().run_from_argv(
                ['manage.py', 'orphan_audit', *argv])
    assert exit_.value.code == options.NOTHING
    (args,) = seen
    return args


@pytest.mark.parametrize('argv,command,checks', [
    (['history', '--json'], 'history', {'json': True}),
    (['restore', '7', '--apply'], 'restore', {'entries': [7], 'apply': True}),
    (['restore', '7'], 'restore', {'entries': [7], 'apply': False}),
    (['--json'], 'report', {'json': True}),
    (['--apply'], 'apply', {}),
    (['report', '--provider', 'p', '--os-cloud', 'c'], 'report',
     {'provider': 'p', 'os_cloud': 'c'}),
])
def test_the_management_command_keeps_every_mode(argv, command, checks,
                                                 settings):
    settings.ORPHAN_AUDIT_MIN_AGE = 42
    args = run_command(*argv)
    assert args.command == command
    for name, value in checks.items():
        assert getattr(args, name) == value, name
    if command in ('report', 'apply'):
        # The panel's setting is the default.
        assert args.min_age is None and options.settings(args).min_age == 42


@pytest.mark.django_db(databases=['orphan_journal'])
def test_the_management_command_reaches_the_journal():
    """Not a mock: ``manage.py orphan_audit history`` reads the journal
    (``--all-clouds`` needs no cloud), it does not run an audit."""
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        management.call_command('orphan_audit', 'history', '--all-clouds',
                                '--json', stdout=out)
    assert exit_.value.code == options.NOTHING
    assert json.loads(out.getvalue()) == []


@pytest.mark.django_db(databases=['orphan_journal'])
def test_history_finds_entries_by_the_names_it_prints():
    """``--consumer``, ``--provider`` and ``--project`` take (a part of)
    the names the lines print, any case, as they take parts of ids: the
    cloud's names are read once, the journal filtered by them."""
    from orphan_dashboard.api import client
    from orphan_dashboard.models import JournalEntry
    from orphan_dashboard.operations import history
    from tests.unit.cloud import uid

    cloud = client.Cloud('http://keystone.test/v3', 'RegionOne',
                         'http://placement.test', 'placement-id')
    for consumer, host, project in (('wrong', 'host3', 'p'),
                                    ('other', 'host2', 'q')):
        JournalEntry.objects.create(
            cloud=cloud.key, batch='a' * 32, subject=uid(consumer),
            consumer=uid(consumer), provider=uid(host), touched=uid(host),
            action='trim', verdict='moved', reason='', before={}, after={},
            status=JournalEntry.APPLIED, source='test', user_name='admin',
            consumer_project=project, consumer_user='u')
    names = {'servers': {uid('wrong'): 'wrong-amount-vm',
                         uid('other'): 'web-1'},
             'providers': {uid('host3'): 'host3', uid('host2'): 'host2'},
             'projects': {'p': 'Shop', 'q': 'batch-jobs'}, 'users': {}}

    def consumers(*argv):
        out = io.StringIO()
        with mock.patch.object(history, 'current_names',
                               return_value=names) as read, \
                mock.patch.object(handlers, 'setup_django'), \
                mock.patch.object(cli.client, 'cloud_for_clients',
                                  return_value=cloud), \
                mock.patch.object(cli.client, 'for_cloud'):
            assert cli.execute(parse('history', '--json', *argv),
                               out) == options.NOTHING
        read.assert_called_once()
        return [e['consumer'] for e in json.loads(out.getvalue())]

    assert consumers('--consumer', 'wrong-amount-vm') == [uid('wrong')]
    assert consumers('--consumer', 'WRONG-AMOUNT') == [uid('wrong')]
    assert consumers('--consumer', uid('wrong')[:8]) == [uid('wrong')]
    assert consumers('--provider', 'host2') == [uid('other')]
    assert consumers('--project', 'batch') == [uid('other')]
    assert consumers('--project', 'p', '--consumer', 'web') == []


def test_parsers_are_the_same():
    """The management command adds exactly the CLI's subcommands."""
    command = orphan_audit.Command().create_parser('manage.py',
                                                   'orphan_audit')
    assert sorted(options.subcommands(command)) == sorted(
        options.subcommands())


def _down_cell_snapshot():
    """host5's cell is down: os-services lists it UNKNOWN, the hypervisor
    listing failed, one server comes back as a partial record; a stranger
    holds host1."""
    from orphan_dashboard.audit import model as m
    from tests.unit.cloud import Cloud
    from tests.unit.cloud import uid

    cloud = Cloud()
    down = uid('host5')
    cloud.providers[down] = m.Provider(down, 'host5', 1, down)
    cloud.services['host5'] = m.Service('host5', '', status='UNKNOWN')
    cloud.servers[uid('lost')] = m.Server(uid('lost'), status='UNKNOWN')
    cloud.allocate(uid('lost'), down)
    cloud.allocate(uid('stranger'), uid('host1'))
    snapshot = cloud.snapshot()
    snapshot.hypervisors_listed = False
    snapshot.services_wait = 60.4
    return snapshot


@pytest.mark.parametrize('command', ['report', 'apply'])
def test_a_down_cell_makes_a_partial_run(command):
    """Neither a full run (0, 3, 4) nor an error (1): the partial code, and
    the JSON names what was skipped."""
    args = parse(command, '--json', '--min-age', '0')
    out = io.StringIO()
    with mock.patch.object(collect, 'full_snapshot',
                           return_value=_down_cell_snapshot()), \
            mock.patch.object(cli.client, 'for_cloud'), \
            mock.patch.object(cli.client, 'validate_token'):
        assert cli.execute(args, out) == options.PARTIAL == 5
    out = json.loads(out.getvalue())
    assert out['partial'] is True
    assert out['skipped_cells'] == {
        'hosts': ['host5'], 'down_cell_servers': 1,
        'unconfirmed_providers': [], 'waited_seconds': 60, 'slow': False}
    assert {f['verdict'] for f in out['findings']} == {'protected'}


def test_a_down_cell_is_named_in_the_text_report():
    args = parse('report', '--min-age', '0')
    out = io.StringIO()
    with mock.patch.object(collect, 'full_snapshot',
                           return_value=_down_cell_snapshot()), \
            mock.patch.object(cli.client, 'for_cloud'), \
            mock.patch.object(cli.client, 'validate_token'):
        assert cli.execute(args, out) == options.PARTIAL
    first = out.getvalue().splitlines()[0]
    assert first.startswith('PARTIAL: ')
    assert 'host5' in first
    assert 'partial records: 1' in first
    assert 'Nova answered without it after 60 s' in first
    assert first.startswith('PARTIAL: A cell is down')


def test_a_slow_cell_is_called_slow_with_the_seconds_it_cost():
    """Slow or down as measured: a compute service listing that ran
    Nova's cell timer out was waiting for a slow cell; the JSON says it
    too."""
    snapshot = _down_cell_snapshot()
    snapshot.services_timed_out = True
    for flag in ((), ('--json',)):
        out = io.StringIO()
        with mock.patch.object(collect, 'full_snapshot',
                               return_value=snapshot), \
                mock.patch.object(cli.client, 'for_cloud'), \
                mock.patch.object(cli.client, 'validate_token'):
            assert cli.execute(parse('report', '--min-age', '0', *flag),
                               out) == options.PARTIAL
        said = out.getvalue()
        if flag:
            assert json.loads(said)['skipped_cells']['slow'] is True
        else:
            assert said.startswith('PARTIAL: A cell is slow: Nova waited '
                                   'its whole cell timeout for it and '
                                   'answered without it after 60 s'), said
            assert 'compute hosts of the slow cells: host5' in said


def test_a_whole_run_says_nothing_was_skipped():
    from tests.unit.cloud import Cloud

    args = parse('report', '--json')
    out = io.StringIO()
    with mock.patch.object(collect, 'full_snapshot',
                           return_value=Cloud().snapshot()), \
            mock.patch.object(cli.client, 'for_cloud'), \
            mock.patch.object(cli.client, 'validate_token'):
        assert cli.execute(args, out) == options.NOTHING
    out = json.loads(out.getvalue())
    assert out['partial'] is False and out['skipped_cells'] is None


def test_a_report_of_protected_rows_only_says_so_in_one_line():
    """Nothing to repair is not nothing found: the panel lists them."""
    from tests.unit.cloud import Cloud
    from tests.unit.cloud import uid

    cloud = Cloud()
    for name in ('resizing', 'resizing-too'):
        server = cloud.server(name, 'host1', task_state='resize_migrating')
        cloud.allocate(server, uid('host1'))
        cloud.allocate(server, uid('host2'))
    out = io.StringIO()
    with mock.patch.object(collect, 'full_snapshot',
                           return_value=cloud.snapshot()), \
            mock.patch.object(cli.client, 'for_cloud'), \
            mock.patch.object(cli.client, 'validate_token'):
        assert cli.execute(parse('report'), out) == options.NOTHING
    # A row per server and provider, as the panel lists them.
    assert out.getvalue() == 'no findings to repair; 4 protected\n'


@contextlib.contextmanager
def decommission_of(snapshot):
    """``decommission`` run over ``snapshot``: its preview is the
    engine's plan of it; the apply (yielded) writes nothing."""
    from orphan_dashboard.audit import decommission
    from orphan_dashboard.operations import decommission as decommission_ops

    def preview(clients, name, settings, whole_service=False,
                instance_hints=()):
        return decommission.plan(snapshot, name, settings.min_age,
                                 whole_service)

    with mock.patch.object(decommission_ops, 'preview',
                           side_effect=preview), \
            mock.patch.object(decommission_ops, 'apply',
                              return_value=[]) as apply, \
            mock.patch.object(handlers, 'setup_django'), \
            mock.patch.object(handlers.journal.Journal, 'for_clients'), \
            mock.patch.object(cli.client, 'for_cloud'):
        yield apply


def test_decommission_of_one_node_keeps_its_service_unless_asked():
    """A node of an Ironic conductor: the preview names the other nodes
    and keeps the service; --whole-service takes it all, and --apply hands
    the decommission what the preview printed."""

    cloud, (a, b, c) = ironic()
    snapshot = cloud.snapshot()
    with decommission_of(snapshot) as apply:
        printed = io.StringIO()
        assert cli.execute(parse('decommission', b), printed) == options.FOUND
        out = printed.getvalue()
        assert 'compute service conductor also serves %s (%s), %s (%s): ' \
            'kept' % tuple(x for n in sorted([a, c]) for x in (n, n)) in out
        assert 'then: delete compute service' not in out
        assert 'Nova still has compute node %s' % b in out
        cli.execute(parse('decommission', b, '--whole-service', '--apply'),
                    io.StringIO())
    (call,) = apply.call_args_list
    assert call.kwargs['bound'] == {
        'service': snapshot.services['conductor'].uuid,
        'providers': sorted([a, b, c]), 'whole_service': True}


def test_decommission_deletes_a_foreign_child_only_when_named(capsys):
    """``--delete-foreign-child`` (repeatable, name or uuid) is the CLI's
    tick; without it the preview names the blocker and --apply writes
    nothing; a name that is no such child is refused."""
    from tests.unit.cloud import Cloud
    from tests.unit.cloud import uid

    cloud = Cloud()
    cloud.host('host1', state='down', forced_down=True)
    agent = cloud.child(uid('host1'), 'host1:Open vSwitch agent')
    blazar = cloud.child(uid('host1'), 'blazar_host1')
    snapshot = cloud.snapshot()
    with decommission_of(snapshot) as apply:
        printed = io.StringIO()
        assert cli.execute(parse('decommission', 'host1'),
                           printed) == options.FOUND
        out = printed.getvalue()
        assert ('foreign  blazar_host1 (%s): deleted only with '
                '--delete-foreign-child blazar_host1' % blazar) in out
        assert 'openstack reservation host delete host1' in out
        assert 'openstack network agent delete <agent ID>' in out
        printed = io.StringIO()
        cli.execute(parse('decommission', 'host1', '--json',
                          '--delete-foreign-child', 'blazar_host1'), printed)
        listed = json.loads(printed.getvalue())
        assert {(c['name'], c['owner'], c['deleted'])
                for c in listed['foreign_children']} == {
            ('host1:Open vSwitch agent', 'neutron', False),
            ('blazar_host1', 'blazar', True)}
        assert [b for b in listed['blockers'] if "Neutron's" in b]
        assert not [b for b in listed['blockers'] if "Blazar's" in b]
        assert cli.execute(parse('decommission', 'host1', '--apply',
                                 '--delete-foreign-child', 'blazar_host2'),
                           io.StringIO()) == options.BAD_ARGUMENTS
        assert 'blazar_host2: not a child of host1' in capsys.readouterr().err
        apply.assert_not_called()
        cli.execute(parse('decommission', 'host1', '--apply',
                          '--delete-foreign-child', 'BLAZAR_HOST1',
                          '--delete-foreign-child', agent), io.StringIO())
    (call,) = apply.call_args_list
    assert call.kwargs['children'] == {agent, blazar}


def test_a_decommission_past_max_writes_exits_6_and_says_why(capsys):
    """``--max-writes`` (else ORPHAN_AUDIT_MAX_WRITES) bounds the repairs
    a decommission writes: held, it exits 6 with the reason on stderr."""
    from orphan_dashboard.audit import limits
    from orphan_dashboard.operations import repairs
    from tests.unit.cloud import Cloud

    cloud = Cloud()
    cloud.host('host4', state='down', forced_down=True)
    decision = limits.Decision({m.DELETED_INSTANCE: 2}, 9, limits.MAX_WRITES,
                               1)
    with decommission_of(cloud.snapshot()) as apply:
        apply.side_effect = repairs.Held(decision)
        assert cli.execute(parse('decommission', 'host4', '--apply',
                                 '--max-writes', '1'),
                           io.StringIO()) == options.HELD
    assert apply.call_args.kwargs['bounds'].max_writes == 1
    err = capsys.readouterr().err
    assert 'held, nothing written: it would write 2 consumers ' \
        '(deleted_instance 2), more than the limit of 1' in err, err


def test_a_foreign_child_refusal_names_the_option_not_a_tick():
    """The panel's "tick it" is a checkbox; on the command line the
    refusal names ``--delete-foreign-child``, in text and in JSON."""
    from tests.unit.cloud import Cloud
    from tests.unit.cloud import uid

    cloud = Cloud()
    cloud.host('host1', state='down', forced_down=True)
    cloud.child(uid('host1'), 'blazar_host1')
    with decommission_of(cloud.snapshot()):
        printed, exported = io.StringIO(), io.StringIO()
        cli.execute(parse('decommission', 'host1'), printed)
        cli.execute(parse('decommission', 'host1', '--json'), exported)
    refusals = [line for line in printed.getvalue().splitlines()
                if line.startswith('cannot be carried out now')] + \
        json.loads(exported.getvalue())['blockers']
    assert len(refusals) == 2
    for refusal in refusals:
        assert 'tick' not in refusal
        assert 'delete it here with --delete-foreign-child' in refusal


@contextlib.contextmanager
def journal_of(found, names):
    """``history`` run over a journal streaming ``found`` (afresh at each
    read, as the journal does) and the current ``names``."""
    from orphan_dashboard.operations import history

    with mock.patch.object(history.journal, 'all_entries',
                           side_effect=lambda *a, **k: iter(found)), \
            mock.patch.object(history, 'current_names',
                              return_value=names), \
            mock.patch.object(history.journal, 'provider_names',
                              return_value={}), \
            mock.patch.object(handlers, 'setup_django'), \
            mock.patch.object(cli.client, 'cloud_for_clients'), \
            mock.patch.object(cli.client, 'for_cloud'):
        yield


def test_history_of_a_cloud_with_no_entries_says_so():
    """An empty journal is one line, not silence a script cannot tell
    from a broken pipe."""
    with journal_of((), {}):
        printed = io.StringIO()
        assert cli.execute(parse('history'), printed) == options.NOTHING
    assert printed.getvalue() == \
        'the journal holds no entries for this cloud\n'


def test_the_decommission_preview_names_servers_and_providers():
    """Its steps lead with the verdict's name and the evacuated server's
    name, its providers with the hypervisor's: each uuid beside it."""
    from orphan_dashboard.audit import decommission
    from orphan_dashboard.operations import decommission as decommission_ops

    cloud, who = dead_host1()
    snapshot = cloud.snapshot()
    name = snapshot.servers[who['evacuated']].name
    with mock.patch.object(decommission_ops, 'preview', return_value=(
            decommission.plan(snapshot, 'host1', 0))), \
            mock.patch.object(cli.client, 'for_cloud'):
        printed = io.StringIO()
        assert cli.execute(parse('decommission', 'host1'),
                           printed) == options.FOUND
    out = printed.getvalue()
    assert 'evacuated source    %s (%s): ' % (name, who['evacuated']) in out
    assert ', host1 (%s)' % H1 in out
    assert 'then: delete what Nova leaves of providers ' in out


def test_the_decommission_preview_says_what_the_panels_says():
    """The unknown consumer's owner (Keystone's names where it has them,
    else the ids) and the service and provider deletes' commands, in text
    and in JSON, as the panel's preview shows them."""
    import dataclasses

    from orphan_dashboard.audit import decommission
    from orphan_dashboard.operations import decommission as decommission_ops
    from orphan_dashboard.operations import report as report_ops
    from tests.unit.cloud import uid

    cloud, who = dead_host1()
    service = uid('host1-service')
    cloud.services['host1'] = dataclasses.replace(cloud.services['host1'],
                                                  uuid=service)
    plan = decommission.plan(cloud.snapshot(), 'host1', 0)
    owners = {'projects': {'p': 'web'}, 'users': {}}
    with mock.patch.object(decommission_ops, 'preview',
                           return_value=plan), \
            mock.patch.object(report_ops, 'owners',
                              return_value=owners), \
            mock.patch.object(cli.client, 'for_cloud'):
        printed, exported = io.StringIO(), io.StringIO()
        cli.execute(parse('decommission', 'host1'), printed)
        cli.execute(parse('decommission', 'host1', '--json'), exported)
    out = printed.getvalue()
    delete_service = ('openstack --os-compute-api-version 2.53 compute '
                      'service delete %s' % service)
    delete_providers = ['openstack resource provider delete %s' % p
                        for p in (who['nic'], H1)]
    assert 'project web (p), user u' in out
    for command in [delete_service] + delete_providers:
        assert 'plan: %s\n' % command in out
    listed = json.loads(exported.getvalue())
    steps = {s['consumer']: s for s in listed['steps']}
    assert steps[who['stranger']]['owner'] == {
        'project_id': 'p', 'project_name': 'web', 'user_id': 'u',
        'user_name': None}
    assert steps[who['ghost']]['owner'] is None
    assert listed['service_commands'] == [delete_service]
    assert listed['provider_commands'] == delete_providers


def test_history_names_servers_and_providers_beside_their_ids():
    """A line says which server on which hypervisor, as the panel's
    History does; --json keeps the ids and adds the names."""
    from orphan_dashboard.models import JournalEntry
    vm, rp = 'a' * 8 + '-vm', 'b' * 8 + '-rp'
    found = [JournalEntry(
        id=7, created=datetime.datetime(2026, 11, 25, tzinfo=datetime.
                                        timezone.utc),
        batch='c' * 32, status='done', source='cli', action='trim',
        consumer=vm, provider=rp, user_name='admin', message='done',
        before={rp: {'VCPU': 1}}, after={}, kind=JournalEntry.ALLOCATIONS)]
    names = {'providers': {rp: 'host1'}, 'servers': {vm: 'web-1'},
             'projects': {}, 'users': {}}
    # The journal streams its entries: they are read once.
    with journal_of(found, names):
        printed = io.StringIO()
        assert cli.execute(parse('history'), printed) == options.NOTHING
        exported = io.StringIO()
        cli.execute(parse('history', '--json'), exported)
    line = printed.getvalue()
    assert 'trim to current host server web-1 (%s) on host1 (%s) by ' \
        'admin: done' % (vm, rp) in line
    (row,) = json.loads(exported.getvalue())
    assert (row['consumer'], row['consumer_name']) == (vm, 'web-1')
    assert (row['provider'], row['provider_name']) == (rp, 'host1')


def test_outcomes_name_the_server_a_preview_read():
    from orphan_dashboard.writing import repair

    selection = m.Selection('vm-uuid', 'rp-uuid', 'delete')
    row = repair.Row(selection, server='web-1')
    names = rendering.row_names([row], {'rp-uuid': 'host2'})
    printed = io.StringIO()
    rendering.print_outcomes([write.Outcome(selection, 'skipped', 'gone')],
                             printed, names)
    assert printed.getvalue() == (
        'skipped  delete           server web-1 (vm-uuid) on host2 '
        '(rp-uuid): gone\n')
    (outcome,) = rendering.outcomes_json(
        [write.Outcome(selection, 'done', 'ok')], names)
    assert (outcome['consumer_name'], outcome['provider_name']) == (
        'web-1', 'host2')


def test_a_command_speaks_the_language_the_environment_asks_for(
        monkeypatch):
    """LANGUAGE (or LC_ALL, LC_MESSAGES, LANG) chooses the catalog, the
    panel's own: the command's words and the engine's reasons in Russian,
    the ids and names as they are."""
    from orphan_dashboard.audit import decommission
    from orphan_dashboard.operations import decommission as decommission_ops

    cloud, who = dead_host1()
    plan = decommission.plan(cloud.snapshot(), 'host1', 0)
    monkeypatch.setenv('LANGUAGE', 'ru')
    with mock.patch.object(decommission_ops, 'preview',
                           return_value=plan), \
            mock.patch.object(cli.client, 'for_cloud'):
        printed = io.StringIO()
        assert cli.execute(parse('decommission', 'host1'),
                           printed) == options.FOUND
    out = printed.getvalue()
    assert 'затем: удалить вычислительную службу host1 (Nova удалит её ' \
        'провайдеров; откат не создаёт службу заново)' in out
    assert ', host1 (%s), начиная с дочерних' % H1 in out
    assert 'удаляется только с --delete-unknown %s' % who['stranger'] in out
    assert 'then:' not in out and 'evacuated from' not in out
    monkeypatch.setenv('LANGUAGE', 'en')
    with mock.patch.object(decommission_ops, 'preview',
                           return_value=plan), \
            mock.patch.object(cli.client, 'for_cloud'):
        printed = io.StringIO()
        cli.execute(parse('decommission', 'host1'), printed)
    assert 'then: delete compute service host1' in printed.getvalue()


def test_a_plan_that_keeps_a_protected_row_says_so():
    """``apply`` names the providers a repair holds as read because their
    rows are protected (a host of a down cell), under its command."""
    from orphan_dashboard.audit import model as m
    from orphan_dashboard.writing import repair

    plan = m.Plan(action=m.DELETE_AND_HEAL, consumer='vm', provider='h2',
                  verdict=m.WRONG_AMOUNT, reason='', generation=3,
                  project_id='p', user_id='u',
                  before={'h2': {'VCPU': 2}, 'h5': {'VCPU': 1}},
                  after={'h2': {'VCPU': 1}, 'h5': {'VCPU': 1}}, kept=['h5'])
    out = io.StringIO()
    rendering.print_rows([repair.Row(m.Selection('vm', 'h2', plan.action),
                                     plan)], out, {'h5': 'host5'})
    lines = out.getvalue().splitlines()
    assert lines[0] == 'repair: delete and heal consumer vm on h2'
    assert lines[1].startswith('plan: openstack ')
    assert lines[2] == 'kept as read, its row is protected: host5'


def test_the_json_report_says_how_each_owner_was_proven():
    """Beside each provider's owner, how it was proven, and each child of
    its tree with its own: an untagged compute node of an older Nova is
    Nova's by Nova's listing, its device by its name's shape."""
    from orphan_dashboard.audit import ownership
    from tests.unit.cloud import Cloud
    from tests.unit.cloud import uid
    cloud = Cloud()
    device = cloud.device('host2')
    segment = cloud.foreign('router-net', ['IPV4_ADDRESS'])
    listed = {p['uuid']: p for p in rendering.report_json(
        classify.audit(cloud.snapshot(), min_age=600))['providers']}
    host2 = listed[uid('host2')]
    assert (host2['owner'], host2['owner_proof']) == (
        'nova', ownership.COMPUTE_NODE)
    assert host2['children'] == [{
        'uuid': device, 'name': 'host2_0000:81:00.0', 'owner': 'nova',
        'owner_proof': ownership.SHAPE}]
    assert (listed[segment]['owner'], listed[segment]['owner_proof']) == (
        'neutron', ownership.CLASS)


def test_a_write_of_unknown_outcome_is_an_error_to_a_script():
    """Exit 1, never 4 ("applied") nor 0: a script must not carry on as
    if the write had gone through, or as if nothing had been written."""
    selection = m.Selection('vm-uuid', 'rp-uuid', 'delete')
    outcomes = [write.Outcome(selection, write.DONE, 'done'),
                write.Outcome(selection, 'unknown', 'no clear answer')]
    assert options.outcome_code(outcomes) == options.ERROR
    assert options.restore_code(outcomes[1:]) == options.ERROR


def a_plan(selection):
    """What the preview of ``selection`` finds: emptying its consumer."""
    from orphan_dashboard.audit import model as m
    from orphan_dashboard.writing import repair

    plan = m.Plan(action=selection.action, consumer=selection.consumer,
                  provider=selection.provider, verdict='', reason='',
                  generation=1, project_id='p', user_id='u',
                  before={selection.provider: {'VCPU': 1}}, after={})
    return repair.Row(selection, plan)


@contextlib.contextmanager
def applying(snapshot):
    """``apply`` on ``snapshot`` with the writes mocked: yields the
    preview and the write mocks (each selection previewed as emptied,
    each write done)."""
    from orphan_dashboard.operations import repairs
    from orphan_dashboard.writing import write as written

    def apply_previewed(clients, journal, rows, *args, **kwargs):
        return [written.Outcome(r.selection, written.DONE, 'ok')
                for r in rows]

    with mock.patch.object(collect, 'full_snapshot',
                           return_value=snapshot), \
            mock.patch.object(cli.client, 'for_cloud'), \
            mock.patch.object(cli.client, 'validate_token'), \
            mock.patch.object(handlers.report_ops, 'owners',
                              return_value={'projects': {}, 'users': {}}), \
            mock.patch.object(handlers, 'setup_django'), \
            mock.patch.object(handlers.journal.Journal,
                              'for_clients') as journal, \
            mock.patch.object(repairs, 'preview', side_effect=lambda c, s,
                              *a, **k: [a_plan(x) for x in s]) as preview, \
            mock.patch.object(repairs, 'apply_previewed',
                              side_effect=apply_previewed) as write:
        yield preview, write, journal


def run_apply(*argv):
    """``orphan-audit apply --min-age 0 ARGV`` on :func:`leftovers`: its
    exit code, what it printed, and the preview, write and journal
    mocks."""
    out = io.StringIO()
    with applying(leftovers()) as mocks:
        code = cli.execute(parse('apply', '--min-age', '0', *argv), out)
    return code, out.getvalue(), mocks


@pytest.mark.parametrize('argv,line', [
    (('--max-writes', '3'),
     'held, nothing written: the run would write 4 of 5 consumers (moved '
     '1, deleted_instance 3), more than --max-writes 3'),
    (('--max-share', '50'),
     'held, nothing written: the run would write 4 of 5 consumers, 80.0 % '
     '(moved 1, deleted_instance 3), more than --max-share 50 %'),
])
def test_apply_past_its_limits_writes_nothing_and_exits_6(argv, line):
    code, out, (preview, write, journal) = run_apply(*argv)
    assert code == options.HELD == 6
    assert out.splitlines() == [line]
    preview.assert_not_called()
    write.assert_not_called()
    journal.assert_not_called()


def test_a_held_apply_says_so_in_its_json():
    code, out, (preview, write, journal) = run_apply('--json',
                                                     '--max-writes', '0')
    assert code == options.HELD
    found = json.loads(out)
    assert found['held'] == {
        'exceeded': 'max_writes', 'limit': 0, 'writes': 4,
        'verdicts': {'moved': 1, 'deleted_instance': 3}, 'consumers': 5,
        'share': 80.0}
    assert found['outcomes'] == []
    write.assert_not_called()


def test_apply_within_its_limits_writes_as_before():
    code, out, (preview, write, journal) = run_apply(
        '--json', '--max-writes', '4', '--max-share', '80')
    assert code == options.APPLIED
    found = json.loads(out)
    assert found['held'] is None
    assert len(found['outcomes']) == 4
    assert len(write.call_args.args[2]) == 4
    # Planned from the run's own sweep, re-read only where written.
    assert preview.call_args.kwargs['swept'] is \
        write.call_args.kwargs['swept'] is not None


def test_the_limits_come_from_the_settings_unless_given(monkeypatch):
    """ORPHAN_AUDIT_MAX_WRITES holds a run from cron; --max-writes given
    on the command line wins; unset, a command line, unattended, writes
    at most half of every consumer (this cloud's leftovers are 80 % of
    them: held), and a share of 100 turns that off."""
    monkeypatch.setenv('ORPHAN_AUDIT_MAX_WRITES', '2')
    code, _out, (preview, write, journal) = run_apply()
    assert code == options.HELD
    write.assert_not_called()
    assert run_apply('--max-writes', '10', *ALL_OF_THEM)[0] == \
        options.APPLIED
    monkeypatch.setenv('ORPHAN_AUDIT_MAX_SHARE', '79.5')
    monkeypatch.delenv('ORPHAN_AUDIT_MAX_WRITES')
    assert run_apply()[0] == options.HELD
    monkeypatch.delenv('ORPHAN_AUDIT_MAX_SHARE')
    code, out, _mocks = run_apply()
    assert code == options.HELD
    assert 'more than --max-share 50 %' in out
    assert run_apply('--max-share', '100')[0] == options.APPLIED
    monkeypatch.setenv('ORPHAN_AUDIT_MAX_SHARE', '100')
    assert run_apply()[0] == options.APPLIED


@pytest.mark.parametrize('value,message', [
    ('-1', 'ORPHAN_AUDIT_MAX_WRITES: -1: give a whole number, 0 or more'),
    ('many', 'ORPHAN_AUDIT_MAX_WRITES=many: not a whole number'),
])
def test_a_limit_setting_no_limit_could_be_is_refused(
        monkeypatch, capsys, value, message):
    monkeypatch.setenv('ORPHAN_AUDIT_MAX_WRITES', value)
    code, _out, (preview, write, journal) = run_apply()
    assert code == options.BAD_ARGUMENTS
    assert message in capsys.readouterr().err
    preview.assert_not_called()
    write.assert_not_called()


def test_apply_only_repairs_those_verdicts():
    from orphan_dashboard.audit import model as m

    code, _out, (preview, write, journal) = run_apply(
        '--only', m.MOVED, '--max-writes', '1')
    assert code == options.APPLIED
    (selection,) = preview.call_args.args[1]
    assert selection.action == m.TRIM
    assert [r.selection for r in write.call_args.args[2]] == [selection]


@pytest.mark.parametrize('argv', [
    ('--only', 'bogus'), ('--only', ','),
    ('--max-writes', '-1'), ('--max-writes', 'x'), ('--max-share', '101'),
    ('--max-share', 'nan')])
def test_limits_no_run_could_have_are_bad_arguments(capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        parse('apply', *argv)
    assert exit_.value.code == options.BAD_ARGUMENTS
    if argv[0] == '--only':
        err = capsys.readouterr().err
        assert "argument --only: no verdict a recommended repair puts " \
            "right" in err
        assert 'choose from evacuated_source, moved, deleted_instance' in err


def archived(count=3):
    """:func:`leftovers` and ``count`` consumers Nova answers 404 for, as
    the leftovers of servers ``archive_deleted_rows --purge`` removed."""
    from tests.unit.cloud import uid

    snapshot = leftovers()
    host1 = sorted(snapshot.providers)[0]
    consumers = dict(snapshot.consumers)
    for i in range(count):
        uuid = uid('archived-%d' % i)
        consumers[uuid] = dataclasses.replace(
            next(iter(snapshot.consumers.values())), uuid=uuid,
            allocations={host1: {'VCPU': 1, 'MEMORY_MB': 512}})
    return dataclasses.replace(snapshot, consumers=consumers)


def run_apply_on(snapshot, *argv):
    out = io.StringIO()
    with applying(snapshot) as mocks:
        code = cli.execute(parse('apply', '--min-age', '0', *argv), out)
    return code, out.getvalue(), mocks


def test_yes_unknown_deletes_every_unknown_consumer_within_the_limits():
    """Never without it; with it and ``--only unknown_consumer``, the
    delete of each unknown consumer, and nothing else; the limits hold."""
    from orphan_dashboard.audit import model as m

    snapshot = archived()
    code, _out, (preview, write, journal) = run_apply_on(snapshot,
                                                         *ALL_OF_THEM)
    assert code == options.APPLIED
    unknown = {c for c in snapshot.consumers
               if c not in snapshot.known_instances | set(snapshot.servers)}
    assert len(unknown) == 3
    assert {s.consumer for s in preview.call_args.args[1]}.isdisjoint(
        unknown)
    code, _out, (preview, write, journal) = run_apply_on(
        snapshot, '--only', m.UNKNOWN_CONSUMER, '--yes-unknown',
        *ALL_OF_THEM)
    assert code == options.APPLIED
    chosen = preview.call_args.args[1]
    assert len(chosen) == 3 and {s.action for s in chosen} == {m.DELETE}
    assert len(write.call_args.args[2]) == 3
    code, out, (preview, write, journal) = run_apply_on(
        snapshot, '--only', m.UNKNOWN_CONSUMER, '--yes-unknown',
        '--max-writes', '2', *ALL_OF_THEM)
    assert code == options.HELD and 'unknown_consumer 3' in out, out
    write.assert_not_called()


def test_only_unknown_consumers_without_yes_unknown_is_refused(capsys):
    from orphan_dashboard.audit import model as m

    code, _out, (preview, write, journal) = run_apply_on(
        archived(), '--only', m.UNKNOWN_CONSUMER)
    assert code == options.BAD_ARGUMENTS
    assert 'unknown consumers are deleted only with --yes-unknown' in \
        capsys.readouterr().err
    preview.assert_not_called()
    write.assert_not_called()


@pytest.mark.parametrize('argv', [
    ('report', '--min-age', '-5'), ('apply', '--min-age', 'soon'),
    ('restore', '1', '--min-age', '-1'), ('refresh', '--concurrency', '0'),
    ('report', '--concurrency', '-3')])
def test_an_option_out_of_range_is_refused(capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        parse(*argv)
    assert exit_.value.code == options.BAD_ARGUMENTS
    assert 'give a whole number' in capsys.readouterr().err


def test_only_takes_several_verdicts_at_once_or_repeated():
    from orphan_dashboard.audit import model as m

    args = parse('apply', '--only', 'moved,deleted_instance', '--only',
                 'missing')
    assert options.limits(args).only == {m.MOVED, m.DELETED_INSTANCE,
                                         m.MISSING}
    assert options.limits(parse('apply')).only is None


ALL_OF_THEM = ('--max-share', '100')
"""Past the unattended share: :func:`leftovers` is mostly leftovers."""


def test_dry_run_prints_the_commands_and_writes_nothing():
    code, out, (preview, write, journal) = run_apply('--dry-run',
                                                     *ALL_OF_THEM)
    assert code == options.FOUND
    assert len(preview.call_args.args[1]) == 4
    write.assert_not_called()
    journal.assert_not_called()
    lines = out.splitlines()
    assert len(lines) == 8
    # Each plan named first, by the provider's name as report does.
    assert all(line.startswith('repair: ') and ' on host' in line
               for line in lines[::2]), lines
    assert all(line.startswith(
        'plan: openstack --os-placement-api-version 1.28 resource provider '
        'allocation unset ') for line in lines[1::2])


def test_dry_run_json_has_the_plans_and_no_outcomes():
    code, out, (preview, write, journal) = run_apply('--dry-run', '--json',
                                                     *ALL_OF_THEM)
    assert code == options.FOUND
    found = json.loads(out)
    assert found['outcomes'] == [] and found['held'] is None
    assert len(found['plans']) == 4
    assert {p['action'] for p in found['plans']} == {'delete', 'trim'}
    assert all(p['commands'][0].startswith('openstack ')
               for p in found['plans'])
    write.assert_not_called()


def test_a_held_dry_run_exits_6_as_the_run_would():
    code, out, (preview, write, journal) = run_apply('--dry-run',
                                                     '--max-writes', '1')
    assert code == options.HELD
    assert out.startswith('held, nothing written: ')
    preview.assert_not_called()


def test_the_help_says_why_apply_writes_without_dry_run(capsys):
    with pytest.raises(SystemExit):
        parse('apply', '--help')
    shown = ' '.join(capsys.readouterr().out.split())
    assert 'Without it apply writes at once, as it always has from cron' \
        in shown
    assert 'preview unless given --apply' in shown
    assert '6 held' in options.EPILOG


def test_each_subcommand_has_one_entry_in_the_command_table():
    """The parser's subcommands are the table's, in its order, and the
    table alone says which set up Django (the journal and the cache)."""
    assert tuple(handlers.COMMANDS) == tuple(options.subcommands())
    assert {name for name, command in handlers.COMMANDS.items()
            if command.needs_django} == {'history', 'restore', 'refresh'}


def test_a_planned_row_is_named_by_its_server_or_what_nova_says_it_is():
    """``apply --dry-run``'s line before each plan: the action, the
    server's name (else what Nova says the consumer is), the provider's
    name and the verdict, as ``report`` names them."""
    from orphan_dashboard.audit import model as m
    from orphan_dashboard.audit import reasons
    from orphan_dashboard.writing import repair

    def row(consumer, verdict, nova):
        selection = m.Selection(consumer, 'h3', m.DELETE)
        finding = m.Finding(consumer, 'h3', verdict, '', {'VCPU': 1},
                            (m.DELETE,), nova=nova)
        return repair.Row(selection, plan='a plan', finding=finding)

    names = {'h3': 'host3', 'vm': 'web-1'}
    assert rendering.heading(row('vm', m.MOVED, reasons.reason(
        'nova.server', name='web-1', status='ACTIVE')), names) == (
        'delete server web-1 (vm) on host3 (h3): moved')
    assert rendering.heading(row('ghost', m.DELETED_INSTANCE, reasons.reason(
        'nova.deleted_server')), names) == (
        'delete consumer ghost (deleted server) on host3 (h3): deleted '
        'instance')


def test_the_text_report_says_which_provider_of_a_tree_a_row_is_on():
    """A server moved off host3 leaves a row on host3 and one on its NIC:
    each line says where (the NIC's row names the NIC), not the same line
    twice."""
    from orphan_dashboard.audit import classify
    from tests.unit.cloud import Cloud
    from tests.unit.cloud import uid

    cloud = Cloud()
    nic = cloud.nic('host3')
    vm = cloud.server('bandwidth-vm', 'host2')
    cloud.allocate(vm, uid('host2'))
    cloud.allocate(vm, uid('host3'))
    cloud.allocate(vm, nic, {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
    out = io.StringIO()
    rendering.print_text(classify.audit(cloud.snapshot(), min_age=0), out)
    rows = [line for line in out.getvalue().splitlines()
            if line.split()[:2] == ['moved', vm]]
    assert len(rows) == 2 and len(set(rows)) == 2, rows
    assert [r for r in rows if ' on host3:Open vSwitch agent:br-phys: '
            in r], rows
