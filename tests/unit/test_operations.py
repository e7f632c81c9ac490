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

"""The application layer both front ends call: what it decides itself
(the engine, the journal and the services are mocked or in memory)."""

import types
from unittest import mock

import pytest

from orphan_dashboard.api import client
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard import conf
from orphan_dashboard.operations import decommission
from orphan_dashboard.operations import history
from orphan_dashboard.operations import repairs
from orphan_dashboard.operations import report
from orphan_dashboard.operations import restore
from orphan_dashboard.reading import collect
from orphan_dashboard import sweep
from orphan_dashboard.sweep import status
from orphan_dashboard.sweep import store as stores
from orphan_dashboard.writing import journal
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid

pytestmark = pytest.mark.horizon

CLIENTS = client.Clients('placement', 'nova')
UNPROTECTED = conf.RunSettings(min_age=0, concurrency=1)
"""Every allocation judged, one request at a time."""


def leaky_cloud():
    """host2 holds a deleted server's allocation and one of a consumer
    Nova never knew."""
    cloud = Cloud()
    cloud.server('vm', 'host1')
    cloud.allocate(uid('vm'), uid('host1'))
    cloud.allocate(uid('stranger'), uid('host2'))
    cloud.deleted('gone', uid('host2'))
    return cloud


def audited(cloud):
    with mock.patch.object(client, 'validate_token'), \
            mock.patch.object(collect, 'full_snapshot',
                              return_value=cloud.snapshot()):
        return report.swept(CLIENTS, UNPROTECTED).report


def test_the_audit_reads_now_and_closes_its_progress():
    progress = mock.Mock()
    with mock.patch.object(client, 'validate_token') as validate, \
            mock.patch.object(collect, 'full_snapshot',
                              return_value=leaky_cloud().snapshot()) as read:
        found = report.swept(CLIENTS, conf.RunSettings(
            min_age=0, concurrency=3), progress)
    validate.assert_called_once_with(CLIENTS)
    assert read.call_args.kwargs == {'concurrency': 3, 'progress': progress,
                                     'network_client': None}
    progress.close.assert_called_once_with()
    # The snapshot it judged comes with it: a repair plans from it.
    assert found.snapshot is read.return_value
    assert {p.provider.name for p in found.report.providers} == {
        'host1', 'host2', 'host3'}


@pytest.mark.parametrize('wanted', ['HOST2', uid('host2')])
def test_the_audit_keeps_one_tree_by_name_or_uuid(wanted):
    with mock.patch.object(client, 'validate_token'), \
            mock.patch.object(collect, 'full_snapshot',
                              return_value=leaky_cloud().snapshot()):
        found = report.swept(CLIENTS, UNPROTECTED, provider=wanted)
    assert [p.provider.name for p in found.report.providers] == ['host2']


def test_an_unknown_provider_is_its_own_lookup_error():
    with mock.patch.object(client, 'validate_token'), \
            mock.patch.object(collect, 'full_snapshot',
                              return_value=leaky_cloud().snapshot()), \
            pytest.raises(report.NoSuchProvider):
        report.swept(CLIENTS, UNPROTECTED, provider='nowhere')


def test_a_failed_read_still_closes_the_progress():
    progress = mock.Mock()
    with mock.patch.object(client, 'validate_token'), \
            mock.patch.object(collect, 'full_snapshot',
                              side_effect=RuntimeError), \
            pytest.raises(RuntimeError):
        report.swept(CLIENTS, UNPROTECTED, progress)
    progress.close.assert_called_once_with()


def test_finding_rows_carry_the_names_of_providers_and_owners():
    summary = classify.audit(leaky_cloud().snapshot(), min_age=0).summary()
    owners = {'projects': {'p': 'demo'}, 'users': {'u': 'alice'}}
    rows = report.finding_rows(summary, owners)
    assert rows and all(r['verdict'] != m.OK for r in rows)
    assert all(set(r) >= set(report.FINDING_FIELDS) for r in rows)
    (row,) = [r for r in rows if r['consumer'] == uid('stranger')]
    assert row['provider_name'] == 'host2'
    tree = classify.audit(leaky_cloud().snapshot(),
                          min_age=0).provider(uid('host1'))
    rows = report.finding_rows(summary, owners, tree)
    (row,) = [r for r in rows if r['consumer'] == uid('vm')]
    assert row['verdict'] == m.OK
    assert (row['project_name'], row['user_name']) == ('demo', 'alice')


def test_an_incomplete_consumers_exported_reason_names_its_owner():
    """The export's reason says the server's project and user as Keystone
    names them, not their ids; the ids stay in their own fields."""
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    cloud.allocate(vm, uid('host1'), owner=(m.INCOMPLETE, m.INCOMPLETE))
    summary = classify.audit(cloud.snapshot(), min_age=0).summary()
    owners = {'projects': {'p': 'demo'}, 'users': {'u': 'alice'}}
    (row,) = [r for r in report.finding_rows(summary, owners)
              if r['consumer'] == vm]
    assert row['verdict'] == m.INCOMPLETE_CONSUMER
    assert row['reason'].endswith('belongs to project demo, user alice')
    assert row['reason_code'] == 'incomplete_consumer'


def test_selections_add_the_recommended_repairs_of_whole_providers():
    found = audited(leaky_cloud())
    chosen = [m.Selection('c', uid('host3'), 'delete')]
    picked, hints = repairs.selections(found, chosen, [uid('host2')])
    assert picked[0] == chosen[0]
    assert [s.consumer for s in picked[1:]] == [uid('gone')]
    assert picked[1:] == repairs.recommended(found)[0]
    with pytest.raises(LookupError):
        repairs.selections(found, [], ['nowhere'])
    with pytest.raises(LookupError):
        repairs.selections(None, [], [uid('host2')])
    assert repairs.selections(None, chosen, []) == (chosen, [])


def test_a_row_chosen_twice_is_previewed_once():
    """A row ticked and its hypervisor too: one selection."""
    found = audited(leaky_cloud())
    (recommended,) = repairs.recommended(found)[0]
    picked, _hints = repairs.selections(found, [recommended],
                                        [recommended.provider])
    assert picked == [recommended]


def test_a_consumer_chosen_on_two_providers_is_one_row():
    """bandwidth-vm ticked on host3 and on host3's NIC for *Trim to
    current host*: every repair writes the whole consumer, so it is one
    row where it first stood, the row with a plan kept over the one
    without; another repair of it stays a row of its own."""
    def row(consumer, provider, action, plan=None):
        return repair.Row(m.Selection(consumer, provider, action),
                          plan=plan, error=None if plan else 'no plan')
    refused = row('vm', 'host3', m.TRIM)
    other = row('other', 'host3', m.DELETE, 'p1')
    on_nic = row('vm', 'host3-nic', m.TRIM, 'p2')
    healed = row('vm', 'host3-nic', m.DELETE_AND_HEAL, 'p3')
    twice = row('other', 'host3-nic', m.DELETE, 'p4')
    with mock.patch.object(repairs, '_fresh'), \
            mock.patch.object(repairs, 'note_capacity'), \
            mock.patch.object(repairs, 'note_accelerators'), \
            mock.patch.object(repairs, '_plan_rows', return_value=[
                refused, other, on_nic, healed, twice]) as planned:
        rows = repairs.preview(CLIENTS, ['chosen'], UNPROTECTED, ['vm'])
    assert planned.call_args.args[1:] == (['chosen'], UNPROTECTED)
    assert rows == [on_nic, other, healed]
    assert repairs.once([refused, row('vm', 'host2', m.TRIM)]) == [refused]


def test_applying_a_preview_skips_the_rows_it_could_not_plan():
    planned = repair.Row(m.Selection('a', 'rp', 'delete'), plan='plan')
    refused = repair.Row(m.Selection('b', 'rp', 'delete'),
                         error='gone')
    done = write.Outcome(planned.selection, write.DONE, 'ok')
    settings = conf.RunSettings(min_age=60)
    with mock.patch.object(repairs, 'apply', return_value=[done]) as apply:
        outcomes = repairs.apply_previewed(CLIENTS, 'journal',
                                           [planned, refused], settings,
                                           ['vm'])
    apply.assert_called_once_with(CLIENTS, 'journal', ['plan'], settings,
                                  ['vm'], None)
    assert outcomes == [done, write.Outcome(refused.selection,
                                            write.SKIPPED, 'gone')]


def _plan(consumer, before, after, action=m.DELETE_AND_HEAL):
    return m.Plan(action, consumer, 'rp-old', m.MOVED, '', 1, 'p', 'u',
                  before, after)


def test_a_batch_frees_before_it_adds():
    """Placement before 14.0.0 refuses a write onto a provider over its
    capacity: the writes that only free go first, each group as given."""
    from orphan_dashboard.audit import plan as planning

    heal = _plan('heal', {}, {'rp': {'VCPU': 1}}, m.HEAL)
    move = _plan('move', {'rp-old': {'VCPU': 1}}, {'rp': {'VCPU': 1}})
    delete = _plan('delete', {'rp': {'VCPU': 1}}, {}, m.DELETE)
    trim = _plan('trim', {'rp': {'VCPU': 1}, 'rp-old': {'VCPU': 1}},
                 {'rp': {'VCPU': 1}}, m.TRIM)
    grown = _plan('grown', {'rp': {'VCPU': 1}}, {'rp': {'VCPU': 2}})
    assert [p.consumer for p in planning.frees_first(
        [heal, move, delete, grown, trim])] == [
        'delete', 'trim', 'heal', 'move', 'grown']


def test_applying_writes_the_frees_first():
    heal = _plan('heal', {}, {'rp': {'VCPU': 1}}, m.HEAL)
    delete = _plan('delete', {'rp': {'VCPU': 1}}, {}, m.DELETE)
    rows = {p.consumer: repair.Row(p.selection, plan=p)
            for p in (heal, delete)}
    written = []

    def allocations(placement, journal, plan, selection, **kwargs):
        written.append(plan.consumer)
        return write.Outcome(selection, write.DONE, 'ok', plan)

    with mock.patch.object(repairs, '_fresh'), \
            mock.patch.object(repairs, '_plan_rows', side_effect=lambda
                              snapshot, selections, settings: [
                                  rows[s.consumer] for s in selections]), \
            mock.patch.object(repairs.write, 'allocations',
                              side_effect=allocations):
        outcomes = repairs.apply(CLIENTS, 'journal', [heal, delete],
                                 conf.RunSettings(min_age=0))
    assert written == ['delete', 'heal']
    assert [o.selection.consumer for o in outcomes] == ['delete', 'heal']


def test_a_restore_preview_carries_what_nova_says_now():
    entries = [mock.Mock(id=1, consumer='c1'), mock.Mock(id=2,
                                                         consumer='c2')]
    rows = [(e, repair.Row(m.Selection(e.consumer, 'rp', 'restore')))
            for e in entries]
    with mock.patch.object(restore, 'fresh_plans',
                           return_value=rows) as preview, \
            mock.patch.object(restore, 'restore_notes',
                              return_value=({2: ('deleted server',)},
                                            {'c1': 'web-1'})):
        assert restore.preview(CLIENTS, entries, {'x': 1}) is rows
    preview.assert_called_once_with(CLIENTS, entries, {'x': 1})
    assert [row.notes for _e, row in rows] == [(), ('deleted server',)]
    # The consumer's server by name, where Nova still has it.
    assert [row.server for _e, row in rows] == ['web-1', None]


def test_restoring_providers_or_services_changes_providers():
    allocations = mock.Mock(kind='allocations', ALLOCATIONS='allocations')
    provider = mock.Mock(kind='provider', ALLOCATIONS='allocations')
    assert not restore.changes_providers([allocations])
    assert restore.changes_providers([allocations, provider])


class _Journaled(types.SimpleNamespace):
    PROVIDER, ALLOCATIONS = 'provider', 'allocations'


def _provider_entry(entry_id, uuid, parent):
    return _Journaled(id=entry_id, kind='provider', provider=uuid,
                      before={'parent_provider_uuid': parent})


def test_a_restore_recreates_a_deep_chain_of_providers_parents_first():
    # Journaled deepest first, as a tree is deleted; one consumer among them.
    chain = ['rp%d' % level for level in range(5000)]
    providers = [_provider_entry(i, uuid, chain[i - 1] if i else None)
                 for i, uuid in enumerate(chain)]
    consumer = _Journaled(id=-1, kind='allocations', provider=chain[-1],
                          before={chain[-1]: {'VCPU': 1}})
    entries = providers[::-1][:10] + [consumer] + providers[::-1][10:]
    ordered = restore._parents_first(entries)
    assert [e.provider for e in ordered[:-1]] == chain
    assert ordered[-1] is consumer


def test_history_finds_by_the_names_it_shows():
    names = {'providers': {'a': 'Host-One', 'b': 'host-two', 'c': None},
             'servers': {'s': 'wrong-amount-vm', 't': 'web-1'},
             'projects': {'p': 'Web-Shop'}}
    assert history.named(lambda: names, provider='HOST') == {
        'provider': ['a', 'b']}
    assert history.named(lambda: names, provider='one') == {
        'provider': ['a']}
    assert history.named(lambda: names, consumer='AMOUNT',
                         project='web') == {'consumer': ['s'],
                                            'project': ['p']}


def test_history_reads_no_names_without_a_text():
    def unread():
        raise AssertionError('names read for no filter')

    assert history.named(unread, provider=None, consumer='') == {}


def test_history_filters_by_uuid_when_names_are_unavailable():
    def broken():
        raise RuntimeError('cache down')

    assert history.named(broken, provider='host') == {}


def test_the_batch_of_outcomes_is_that_of_the_first_journaled():
    outcomes = [mock.Mock(entry_id=None), mock.Mock(entry_id=7)]
    with mock.patch.object(journal, 'get',
                           return_value=mock.Mock(batch='b7')) as get:
        assert history.batch_of('cloud', outcomes) == 'b7'
    get.assert_called_once_with('cloud', 7)
    assert history.batch_of('cloud', outcomes[:1]) is None


def test_a_typo_is_answered_with_the_names_that_come_close():
    cloud = leaky_cloud()
    topology = {'services': cloud.services, 'hypervisors': cloud.hypervisors,
                'providers': cloud.providers}
    with mock.patch.object(journal, 'deleted_names',
                           return_value={'host9'}), \
            mock.patch('orphan_dashboard.api.nova.migration_list',
                       return_value=[]), \
            mock.patch.object(collect, 'read_topology',
                              return_value=topology):
        assert decommission.close_names(CLIENTS, 'cloud', 'host9') is None
        assert decommission.close_names(CLIENTS, 'cloud', 'hots1')[0] == \
            'host1'
        assert decommission.close_names(CLIENTS, 'cloud', 'zzzzzz') == []


def test_a_host_nova_migrated_from_is_known():
    with mock.patch.object(journal, 'deleted_names', return_value=set()), \
            mock.patch('orphan_dashboard.api.nova.migration_list',
                       return_value=['m']), \
            mock.patch.object(collect, 'read_topology') as topology:
        assert decommission.close_names(CLIENTS, 'cloud', 'old') is None
    assert not topology.called


def test_the_store_keeps_a_snapshot_for_two_full_sweep_intervals():
    assert stores.for_cloud(
        'cloud', conf.RunSettings(full_sweep_interval=900)).timeout == 1800
    assert stores.Store('cloud').timeout == \
        stores.lifetime(conf.FULL_SWEEP.default)


SETTINGS = conf.RunSettings(min_age=60, concurrency=4)


def test_written_consumers_are_left_touched_when_rereading_fails():
    store = mock.Mock(**{'state.return_value': {'version': 'v1',
                                                'min_age': 60},
                         'load_snapshot.return_value': mock.Mock(
                             consumers={'c': 'held'})})
    with mock.patch.object(sweep.rereading, 'reread_consumers',
                           side_effect=RuntimeError) as reread:
        sweep.note_written(store, CLIENTS, {'c', None}, True, SETTINGS)
    store.load_snapshot.assert_called_once_with('v1')
    reread.assert_called_once_with('placement',
                                   store.load_snapshot.return_value, {'c'},
                                   4)
    store.want.assert_called_once_with()
    store.touch.assert_called_once_with({'c'})
    assert not store.save.called


def test_nothing_written_reads_nothing():
    store = mock.Mock()
    with mock.patch.object(sweep.rereading, 'reread_consumers') as reread:
        sweep.note_written(store, CLIENTS, {None}, False, SETTINGS)
    assert not reread.called and not store.want.called
    assert not store.touch.called


def test_the_bar_is_filled_to_what_its_text_says():
    """The page draws the bar at ``percent`` and writes ``done`` of
    ``total`` and each kind's counts: one set of numbers.  A listing
    longer than the last snapshot's estimate raises its total rather than
    overfilling the bar; an unknown total leaves the bar unmeasured."""
    bar = status.bar({'providers': (0, 12), 'servers': (70, 60),
                      'migrations': (5, 5)})
    assert bar['read'] == {'providers': [0, 12], 'servers': [70, 70],
                           'migrations': [5, 5]}
    assert (bar['done'], bar['total']) == (75, 87)
    assert bar['percent'] == 86 == int(100 * bar['done'] / bar['total'])
    assert sum(d for d, _t in bar['read'].values()) == bar['done']
    unknown = status.bar({'providers': (3, None), 'servers': (1, 2)})
    assert (unknown['total'], unknown['percent']) == (None, None)
    assert status.bar({'providers': (0, 0)})['percent'] is None


def test_a_decommission_reads_and_writes_ports_as_every_repair_does():
    """Its trims rebuild a QoS server's NIC share and rebind its ports
    like any repair's: Neutron is read with the host's consumers, and its
    repairs are a batch of every repair's writes."""
    clients = client.Clients('placement', 'nova', None, 'network')
    with mock.patch.object(collect, 'read_topology', return_value=dict(
            providers={}, hypervisors={}, services={})), \
            mock.patch('orphan_dashboard.api.nova.server_list',
                       return_value=[]), \
            mock.patch.object(decommission.refresh,
                              'consumer_snapshot') as read:
        decommission.read(clients, 'host1')
    assert read.call_args.args[0].network == 'network'
    shown = mock.Mock(gone=False, roots=['rp'], changed_since=lambda b: None,
                      blockers=lambda *a: [], steps=[], plans=lambda c: [
                          mock.Mock(consumer='vm')])
    plan = mock.Mock(consumer='vm')
    with mock.patch.object(decommission, 'preview', return_value=shown), \
            mock.patch.object(repairs, 'apply', return_value=[]) as apply, \
            mock.patch.object(decommission, 'delete_all'):
        decommission.apply(clients, 'journal', 'host1', [plan], (),
                           UNPROTECTED)
    apply.assert_called_once_with(clients, 'journal', [plan], UNPROTECTED,
                                  ())


def test_a_decommission_past_its_writes_limit_writes_nothing():
    """More repairs than ``max_writes``: held before anything is written
    (the share is a whole cloud's, which a decommission does not read)."""
    from orphan_dashboard.audit import limits

    finding = m.Finding('vm', 'rp', m.DELETED_INSTANCE, 'gone', {})
    plans = [mock.Mock(consumer='vm', provider='rp')]
    shown = mock.Mock(gone=False, roots=['rp'], changed_since=lambda b: None,
                      blockers=lambda *a: [], steps=[mock.Mock(
                          finding=finding)], plans=lambda c: plans)
    clients = client.Clients('placement', 'nova', None, 'network')
    with mock.patch.object(decommission, 'preview', return_value=shown), \
            mock.patch.object(repairs, 'apply') as apply, \
            mock.patch.object(decommission, 'delete_all') as delete:
        with pytest.raises(repairs.Held) as held:
            decommission.apply(clients, 'journal', 'host1', plans, (),
                               UNPROTECTED, bounds=limits.Limits(
                                   max_writes=0, max_share=1))
        apply.assert_not_called()
        decommission.apply(clients, 'journal', 'host1', plans, (),
                           UNPROTECTED, bounds=limits.Limits(
                               max_writes=1, max_share=1))
    assert held.value.decision.exceeded == limits.MAX_WRITES
    assert 'more than the limit of 0' in str(held.value)
    apply.assert_called_once()
    delete.assert_called_once()


@pytest.fixture
def swept_leaks():
    """The :class:`report.Swept` of :func:`leaky_cloud`, with the preview
    and the write mocked: yields it and the calls made, in their order."""
    with mock.patch.object(client, 'validate_token'), \
            mock.patch.object(collect, 'full_snapshot',
                              return_value=leaky_cloud().snapshot()):
        swept = report.swept(CLIENTS, UNPROTECTED)
    calls = []

    def preview(clients, chosen, settings, hints, swept):
        calls.append(('preview', [s.consumer for s in chosen], swept))
        return [repair.Row(s, plan=s) for s in chosen]

    def apply_previewed(clients, journal, rows, settings, hints, swept):
        calls.append(('write', journal, [r.selection.consumer for r in rows],
                      swept))
        return [write.Outcome(r.selection, write.DONE, 'ok') for r in rows]

    with mock.patch.object(repairs, 'preview', side_effect=preview), \
            mock.patch.object(repairs, 'apply_previewed',
                              side_effect=apply_previewed):
        yield swept, calls


def test_a_run_past_its_limits_previews_nothing(swept_leaks):
    from orphan_dashboard.audit import limits

    swept, calls = swept_leaks
    journal_of = mock.Mock()
    done = repairs.run_recommended(CLIENTS, swept, UNPROTECTED,
                                   limits.Limits(max_writes=0), journal_of)
    assert done.decision.held
    assert (done.rows, done.outcomes, calls) == ([], [], [])
    journal_of.assert_not_called()


def test_a_dry_run_previews_from_its_sweep_and_asks_for_no_journal(
        swept_leaks):
    from orphan_dashboard.audit import limits

    swept, calls = swept_leaks
    done = repairs.run_recommended(CLIENTS, swept, UNPROTECTED,
                                   limits.NO_LIMITS)
    assert not done.decision.held
    assert calls == [('preview', [uid('gone')], swept.snapshot)]
    assert [r.selection.consumer for r in done.rows] == [uid('gone')]
    assert done.outcomes == []


def test_a_run_shows_its_rows_then_writes_them_in_one_journal(swept_leaks):
    """The unknown consumer only with ``unknown``; the rows handed to
    ``before_write`` before the journal is asked for, and written as
    previewed, from the same sweep."""
    from orphan_dashboard.audit import limits

    swept, calls = swept_leaks

    def journal_of():
        calls.append('journal')
        return 'journal'
    done = repairs.run_recommended(
        CLIENTS, swept, UNPROTECTED, limits.NO_LIMITS, journal_of,
        unknown=True, before_write=lambda rows: calls.append(
            ('shown', sorted(r.selection.consumer for r in rows))))
    wanted = sorted([uid('gone'), uid('stranger')])
    kind, consumers, snapshot = calls[0]
    assert (kind, sorted(consumers), snapshot) == ('preview', wanted,
                                                   swept.snapshot)
    assert calls[1:3] == [('shown', wanted), 'journal']
    assert calls[3][:2] == ('write', 'journal')
    assert sorted(calls[3][2]) == wanted and calls[3][3] is swept.snapshot
    assert [o.status for o in done.outcomes] == [write.DONE, write.DONE]


def test_chosen_rows_run_through_the_same_sequence(swept_leaks):
    swept, calls = swept_leaks
    assert repairs.run(CLIENTS, swept, [], (), UNPROTECTED,
                       lambda: 'journal') == repairs.Run([], [])
    assert calls == []
    chosen = [m.Selection(uid('stranger'), uid('host2'), m.DELETE)]
    done = repairs.run(CLIENTS, swept, chosen, ('vm',), UNPROTECTED,
                       lambda: 'journal')
    assert [c[0] for c in calls] == ['preview', 'write']
    assert done.decision is None
    assert [o.selection for o in done.outcomes] == chosen


def test_our_writes_are_judged_alone_and_the_rest_keeps_its_findings():
    """After a confirm the stored snapshot re-reads the written consumers
    and its report judges only what that may change: the others' findings
    are the last report's, and the report equals a whole audit's."""
    from django.core.cache.backends import locmem

    from orphan_dashboard.sweep import worker

    snapshot = leaky_cloud().snapshot()
    store = stores.Store('cloud', cache=locmem.LocMemCache(
        'written', {'OPTIONS': {'MAX_ENTRIES': 1000}}))
    store.save(snapshot, classify.audit(snapshot, min_age=0), 0)
    emptied = {'allocations': {}, 'consumer_generation': None,
               'project_id': None, 'user_id': None}
    with mock.patch.object(sweep.rereading.placement, 'consumer_allocations',
                           return_value=emptied) as reread, \
            mock.patch.object(worker.classify, 'audit',
                              wraps=classify.audit) as audit:
        sweep.note_written(store, CLIENTS, {uid('gone')}, False, UNPROTECTED)
    reread.assert_called_once_with('placement', uid('gone'))
    known = audit.call_args.kwargs['known']
    assert uid('vm') in known and uid('gone') not in known
    assert set(known) <= set(snapshot.consumers) - {uid('gone')}
    state = store.state()
    assert state['touched'] == {uid('gone')}
    stored = store.load_snapshot(state['version'])
    assert uid('gone') not in stored.consumers

    def rows(findings):
        return sorted((f.consumer, f.provider, f.verdict) for f in findings)
    assert rows(store.load_findings(state['version'])) == rows(
        classify.audit(stored, min_age=0).findings)
    assert uid('gone') not in {f.consumer for f in
                               store.load_findings(state['version'])}
