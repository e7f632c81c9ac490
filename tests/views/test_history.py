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

"""The journal: history tabs (filter, pages), export, restore preview and
confirm."""

import csv
import html
import io
import json
import re
from unittest import mock

from django.core.exceptions import ObjectDoesNotExist
from django.test import override_settings
from django.urls import reverse
import pytest

from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.operations import history as history_ops
from orphan_dashboard.writing import journal
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write
from tests.views.base import AdminViewTests
from tests.views.base import assert_named
from tests.views.base import batch_message
from tests.views.base import detail
from tests.views.base import H1
from tests.views.base import H2
from tests.views.base import H3
from tests.views.base import helpers
from tests.views.base import hidden_ids_removed
from tests.views.base import INDEX
from tests.views.base import JournalViewTests
from tests.views.base import RESTORE
from tests.views.base import signed_rows
from tests.views.base import uid
from tests.views.fakes import entry
from tests.views.fakes import HISTORY_TAB


def host_record(uuid, name):
    """A deleted host's provider as the journal records it."""
    return {'uuid': uuid, 'name': name, 'generation': 2,
            'parent_provider_uuid': None, 'root_provider_uuid': uuid,
            'inventories': {'VCPU': {'total': 8}}, 'traits': [],
            'aggregates': []}


class HistoryTests(AdminViewTests):
    @helpers.create_mocks({service: ['report', 'history']})
    def test_history_tab_restores_only_the_latest_change(self):
        self.reported()
        newer, older = entry(8), entry(7)
        self.mock_history.return_value = ([newer, older], False, False,
                                          {newer.subject: {8}})
        res = self.client.get(INDEX, HISTORY_TAB)
        self.assertContains(res, uid('vm'))
        self.assertContains(res, 'Trim to current host')
        self.assertContains(res, RESTORE + '?entry=8')
        self.assertNotContains(res, RESTORE + '?entry=7')
        self.mock_history.assert_called_once_with(
            mock.ANY, marker=None, prev_marker=None, limit=20, provider=None,
            all_clouds=False)

    @helpers.create_mocks({service: ['report', 'history']})
    def test_a_write_of_unknown_outcome_is_labelled_and_restorable(self):
        """Its answer lost, its effect unproven: History says so and
        offers its restore (the preview then reads what it finds)."""
        lost = entry(8, status='unknown',
                     message='Placement gave no clear answer')
        self.reported()
        self.mock_history.return_value = ([lost], False, False,
                                          {lost.subject: {8}})
        res = self.client.get(INDEX, HISTORY_TAB)
        self.assertContains(res, 'Outcome unknown: Placement gave no '
                                 'clear answer')
        self.assertContains(res, RESTORE + '?entry=8')

    @helpers.create_mocks({service: ['report', 'history']})
    def test_a_decommission_in_the_history(self):
        """Its compute service entry: shown, never restorable itself, and
        the way to restore the whole decommission."""
        from orphan_dashboard.models import JournalEntry
        self.reported()
        record = host_record(H1, 'host1')
        gone = entry(9, consumer='', kind=JournalEntry.PROVIDER,
                     action=m.DELETE_PROVIDER, subject=H1, before=record,
                     batch='b' * 32)
        service_entry = entry(
            10, consumer='', kind=JournalEntry.SERVICE,
            action=m.DELETE_SERVICE, subject=uid('service'), batch='b' * 32,
            before={'uuid': uid('service'), 'host': 'host1'})
        self.mock_history.return_value = (
            [service_entry, gone], False, False, {H1: {9}})
        res = self.client.get(INDEX, HISTORY_TAB)
        self.assertEqual(200, res.status_code)
        self.assertContains(res, 'compute service host1 → deleted (not '
                                 'restorable)')
        self.assertContains(res, 'provider host1 (VCPU=8) → deleted')
        self.assertContains(res, RESTORE + '?entry=9')
        self.assertNotContains(res, RESTORE + '?entry=10')
        self.assertContains(res, RESTORE + '?batch=' + 'b' * 32)

    @helpers.create_mocks({service: ['report', 'history', 'names']})
    def test_history_names_the_providers_and_owners_it_knows(self):
        """*Before → after* says host1, not host1's uuid, as the Provider
        column does (the uuid one hover away), and an owner change names
        the projects."""
        self.reported()
        self.mock_names.return_value = {
            'projects': {'p-old': 'legacy-project', 'p': 'web'},
            'users': {}}
        moved = entry(8, before={H1: {'VCPU': 1}, H2: {'VCPU': 1}},
                      after={H2: {'VCPU': 1}}, before_project='p-old',
                      before_user='u-old')
        self.mock_history.return_value = ([moved], False, False, {})
        res = self.client.get(INDEX, HISTORY_TAB)
        shown = hidden_ids_removed(res)
        assert_named(res, H1, H2)
        self.assertIn('host1: VCPU=1; host2: VCPU=1 → host2: VCPU=1', shown)
        self.assertIn('(project legacy-project → web)', shown)
        self.assertContains(res, 'title="%s"' % H1)

    @helpers.create_mocks({service: ['report', 'history', 'names']})
    def test_history_names_its_consumers_as_the_cli_does(self):
        """The Consumer column says the server's name as the last sweep
        read it (``orphan-audit history`` names it), its uuid one hover
        away; a consumer no server names stays its uuid."""
        self.reported()
        self.mock_names.return_value = {
            'projects': {}, 'users': {},
            'servers': {uid('vm'): 'failed-confirm-vm'}}
        named_entry, unnamed = entry(8), entry(7, consumer=uid('stranger'))
        self.mock_history.return_value = ([named_entry, unnamed], False,
                                          False, {})
        res = self.client.get(INDEX, HISTORY_TAB)
        assert_named(res, uid('vm'))
        self.assertContains(res, 'failed-confirm-vm')
        self.assertContains(res, 'title="%s"' % uid('vm'))
        self.assertContains(res, uid('stranger'))

    @helpers.create_mocks({service: ['report', 'history']})
    def test_a_heal_that_wrote_a_binding_shows_it_under_its_change(self):
        self.reported()
        healed = entry(8, action=m.HEAL, verdict=m.MISSING,
                       before={H1: {'VCPU': 1}},
                       after={H1: {'VCPU': 1}, H2: {'VCPU': 1}},
                       ports={uid('port'): {
                           'name': 'web-port', 'revision': 3, 'before': {},
                           'after': {'allocation': {'g': H2}}}})
        self.mock_history.return_value = ([healed], False, False, {})
        res = self.client.get(INDEX, HISTORY_TAB)
        shown = hidden_ids_removed(res)
        self.assertIn('first, in Neutron, the binding of port web-port: no '
                      'provider → host2', shown)
        self.assertContains(res, 'title="%s"' % uid('port'))

    @helpers.create_mocks({service: ['report', 'history']})
    def test_a_decommission_names_its_deleted_host(self):
        """Its host's provider is gone from the audit: every entry of the
        decommission names it as the journaled provider record does."""
        from orphan_dashboard.models import JournalEntry
        self.reported()
        host9 = uid('host9')
        record = host_record(host9, 'host9')
        service_entry = entry(
            10, consumer='', kind=JournalEntry.SERVICE,
            action=m.DELETE_SERVICE, subject=uid('service'), provider=host9,
            batch='b' * 32, before={'uuid': uid('service'), 'host': 'host9'})
        gone = entry(9, consumer='', kind=JournalEntry.PROVIDER,
                     action=m.DELETE_PROVIDER, subject=host9, provider=host9,
                     touched=host9, before=record, after=None,
                     batch='b' * 32)
        trimmed = entry(8, provider=host9, touched=host9,
                        before={host9: {'VCPU': 1}, H2: {'VCPU': 1}},
                        after={H2: {'VCPU': 1}}, batch='b' * 32)
        self.mock_history.return_value = (
            [service_entry, gone, trimmed], False, False, {host9: {9}})
        res = self.client.get(INDEX, HISTORY_TAB)
        self.assertEqual(200, res.status_code)
        assert_named(res, host9, H2)
        self.assertIn('host2: VCPU=1; host9: VCPU=1 → host2: VCPU=1',
                      hidden_ids_removed(res))

    @helpers.create_mocks({service: ['report', 'history']})
    def test_the_filter_is_kept_and_used(self):
        """Horizon keeps a server-side filter only for a DataTableView:
        the tab's filter is posted, stored and read back by our view."""
        self.reported()
        self.mock_history.return_value = ([], False, False, {})
        res = self.client.post(INDEX + '?tab=orphaned_allocations__history', {
            'history__filter__q_field': 'consumer',
            'history__filter__q': uid('vm')})
        self.assertRedirectsNoFollow(
            res, INDEX + '?tab=orphaned_allocations__history')
        self.mock_history.reset_mock()
        res = self.client.get(INDEX, HISTORY_TAB)
        self.mock_history.assert_called_once_with(
            mock.ANY, marker=None, prev_marker=None, limit=20, provider=None,
            consumer=uid('vm'), all_clouds=False)
        # The filter shows what it filters by, and so do the export links.
        self.assertContains(res, 'value="%s"' % uid('vm'))
        self.assertContains(res, 'export/csv/?consumer=%s' % uid('vm'))
        # On a provider's page: its own entries, with the same filter.
        self.mock_history.reset_mock()
        self.client.get(detail(H2), {'tab': 'provider__history'})
        self.mock_history.assert_called_once_with(
            mock.ANY, marker=None, prev_marker=None, limit=20, provider=H2,
            consumer=uid('vm'), all_clouds=False)

    @helpers.create_mocks({service: ['report', 'history']})
    def test_pages(self):
        self.reported()
        page = [entry(i, consumer=uid('vm%d' % i)) for i in (9, 8)]
        self.mock_history.return_value = (page, True, True, {})
        with self.settings(API_RESULT_PAGE_SIZE=2):
            res = self.client.get(INDEX, dict(HISTORY_TAB, marker=10))
        self.mock_history.assert_called_once_with(
            mock.ANY, marker=10, prev_marker=None, limit=2, provider=None,
            all_clouds=False)
        self.assertContains(res, 'marker=8')
        self.assertContains(res, 'prev_marker=9')

    @helpers.create_mocks({service: ['history_export']})
    def test_export_is_everything_asked_for(self):
        many = [entry(i, consumer=uid('vm%d' % i)) for i in range(1200, 0, -1)]
        many[0].reason = '=HYPERLINK("http://evil.example.com")'
        self.mock_history_export.return_value = iter(many)
        res = self.client.get(reverse(
            'horizon:admin:orphaned_allocations:export', args=['csv']),
            {'consumer': uid('vm5')})
        self.mock_history_export.assert_called_once_with(
            mock.ANY, provider=None, consumer=uid('vm5'), batch=None,
            project=None, all_clouds=False)
        self.assertEqual('text/csv', res['Content-Type'])
        rows = list(csv.DictReader(io.StringIO(
            b''.join(res.streaming_content).decode())))
        self.assertEqual(1200, len(rows))
        self.assertEqual("'=HYPERLINK(\"http://evil.example.com\")",
                         rows[0]['reason'])
        self.mock_history_export.return_value = iter(many)
        res = self.client.get(reverse(
            'horizon:admin:orphaned_allocations:export', args=['json']))
        self.assertEqual(1200, len(json.loads(
            b''.join(res.streaming_content))))


@pytest.mark.parametrize('text', ['=1+1', '+1', '-1', '@SUM(A1)', '\tx',
                                  '\rx'])
def test_csv_cells_a_spreadsheet_would_run_are_neutralized(text):
    (header, row) = csv.reader(io.StringIO(''.join(history_ops.exported(
        [entry(reason=text)], 'csv'))))
    assert row[header.index('reason')] == "'" + text


def test_csv_keeps_plain_cells():
    (header, row) = csv.reader(io.StringIO(''.join(history_ops.exported(
        [entry(reason='server moved; 1 = 1')], 'csv'))))
    assert row[header.index('reason')] == 'server moved; 1 = 1'


class RestoreTests(AdminViewTests):
    @helpers.create_mocks({service: ['journal_entries', 'preview_restore',
                                     'restore', 'report']})
    def test_preview_and_confirm(self):
        self.reported()
        journaled = entry()
        self.mock_journal_entries.return_value = [journaled]
        plan = m.Plan(m.RESTORE, journaled.consumer, H1, m.MOVED, '', None,
                      'p', 'u', {}, {H1: {'VCPU': 1}})
        row = repair.Row(m.Selection(journaled.consumer, H1, m.RESTORE),
                         plan=plan, notes=('it would be a stale migration',),
                         server='web-1')
        self.mock_preview_restore.return_value = [(journaled, row)]
        res = self.client.get(RESTORE, {'entry': 7})
        self.assertContains(res, 'VCPU=1')
        self.assertContains(res, 'host1')
        self.assertContains(res, 'stale migration')
        # The consumer column leads with its server's name, its uuid small
        # beside it.
        assert_named(res, journaled.consumer, H1)
        self.assertIn('web-1', hidden_ids_removed(res))
        self.mock_restore.return_value = [write.Outcome(
            m.Selection(journaled.consumer, H1, m.RESTORE), write.DONE,
            'done')]
        res = self.client.post(RESTORE, {'rows': signed_rows(res)})
        self.assertRedirectsNoFollow(res, INDEX)
        self.mock_journal_entries.assert_called_with(mock.ANY, [7])
        self.mock_restore.assert_called_once_with(
            mock.ANY, [journaled], {7: plan})
        self.assertEqual(['1 restore done.',
                          'Restore of server web-1 on host1: done.'],
                         batch_message(self.messages_seen)[1])

    @helpers.create_mocks({service: ['batch_entries', 'journal_entries',
                                     'preview_restore', 'restore',
                                     'report']})
    def test_a_decommission_restore_names_the_deleted_host(self):
        """The host's provider is gone from the audit: the restore preview
        and its messages name it as its journaled record does."""
        from orphan_dashboard.models import JournalEntry
        self.reported()
        host9 = uid('host9')
        record = host_record(host9, 'host9')
        gone = entry(9, consumer='', kind=JournalEntry.PROVIDER,
                     action=m.DELETE_PROVIDER, subject=host9, provider=host9,
                     touched=host9, before=record, after=None,
                     batch='b' * 32)
        trimmed = entry(8, provider=host9, touched=host9,
                        before={host9: {'VCPU': 1}}, batch='b' * 32)
        self.mock_batch_entries.return_value = [gone, trimmed]
        self.mock_journal_entries.return_value = [gone, trimmed]
        provider_row = repair.Row(
            m.Selection('', host9, m.RESTORE),
            plan=repair.ProviderPlan(m.RESTORE, host9, 'host9', None,
                                     record))
        plan = m.Plan(m.RESTORE, trimmed.consumer, host9, m.MOVED, '', None,
                      'p', 'u', {}, {host9: {'VCPU': 1}})
        consumer_row = repair.Row(
            m.Selection(trimmed.consumer, host9, m.RESTORE), plan=plan)
        self.mock_preview_restore.return_value = [(gone, provider_row),
                                                  (trimmed, consumer_row)]
        res = self.client.get(RESTORE, {'batch': 'b' * 32})
        self.assertEqual(200, res.status_code)
        assert_named(res, host9)
        self.mock_restore.return_value = [
            write.Outcome(provider_row.selection, write.DONE, 'done'),
            write.Outcome(consumer_row.selection, write.DONE, 'done')]
        res = self.client.post(RESTORE, {'rows': signed_rows(res)})
        self.assertRedirectsNoFollow(res, INDEX)
        self.assertEqual(
            ('success', ['2 restores done.', 'Restore host9: done.',
                         'Restore of consumer %s on host9: done.'
                         % trimmed.consumer]),
            batch_message(self.messages_seen)[:2])

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['journal_entries', 'preview_restore',
                                     'restore']})
    def test_bad_entries_are_refused(self):
        self.mock_journal_entries.side_effect = ObjectDoesNotExist
        for query in ({'entry': 'x'}, {}, {'entry': 99}):
            res = self.client.get(RESTORE, query)
            self.assertRedirectsNoFollow(res, INDEX)
        for rows in ('not json', json.dumps([[7, 'nope']]), ''):
            res = self.client.post(RESTORE, {'rows': rows})
            self.assertEqual(200, res.status_code)
            self.assertTrue(res.context['form'].non_field_errors())
        self.mock_preview_restore.assert_not_called()
        self.mock_restore.assert_not_called()


class HistoryFilterTests(JournalViewTests):
    """The History filter and its export over the real journal: what the
    tab shows (provider names, consumer ids) is what the filter finds."""

    def setUp(self):
        super().setUp()
        self.on_host1 = self.add(uid('first'), H1, 'a' * 32)
        self.on_host3 = self.add(uid('second'), H3, 'b' * 32)

    def add(self, consumer, provider, batch):
        self.journaled(consumer, provider, batch, m.TRIM, m.MOVED)
        return consumer

    def shown(self, field, text):
        """The consumers the History tab lists once filtered, and its
        page."""
        res = self.client.post(INDEX + '?tab=orphaned_allocations__history', {
            'history__filter__q_field': field, 'history__filter__q': text})
        self.assertEqual(302, res.status_code)
        res = self.client.get(INDEX, HISTORY_TAB)
        content = res.content.decode()
        return {c for c in (self.on_host1, self.on_host3)
                if c in content}, res

    def test_a_provider_by_the_name_history_shows(self):
        self.assertEqual({self.on_host3}, self.shown('provider', 'host3')[0])
        self.assertEqual({self.on_host1},
                         self.shown('provider', 'HOST1')[0])
        self.assertEqual({self.on_host3},
                         self.shown('provider', H3[:8])[0])
        # A deleted provider, named by the record its entry keeps.
        from orphan_dashboard.models import JournalEntry
        gone = uid('retired-9')
        JournalEntry.objects.create(
            cloud=self.cloud.key, batch='c' * 32, kind=JournalEntry.PROVIDER,
            subject=gone, consumer='', provider=gone, touched=gone,
            action=m.DELETE_PROVIDER, verdict='', reason='',
            before={'uuid': gone, 'name': 'retired-9', 'inventories': {}},
            after={}, generation=1, status=JournalEntry.APPLIED,
            source='test', user_name='admin')
        res = self.shown('provider', 'retired')[1]
        self.assertContains(res, 'retired-9')
        self.assertContains(res, gone)
        self.assertNotContains(res, self.on_host1)

    def test_a_consumer_by_a_prefix_of_its_id(self):
        self.assertEqual({self.on_host1},
                         self.shown('consumer', self.on_host1[:8])[0])

    def named(self):
        """History names the first consumer's server and both projects,
        as the last sweep read them (no Nova call on a page)."""
        from orphan_dashboard.models import JournalEntry
        JournalEntry.objects.filter(consumer=self.on_host3).update(
            consumer_project='q', before_project='p')
        return mock.patch.object(service, 'names', return_value={
            'projects': {'p': 'Web-Shop', 'q': 'batch-jobs'}, 'users': {},
            'servers': {self.on_host1: 'wrong-amount-vm',
                        uid('elsewhere'): 'wrong-amount-vm-2'}})

    def test_a_consumer_by_the_server_name_history_shows(self):
        """The Consumer column says wrong-amount-vm: typing (a part of)
        it, in any case, finds its entries, as a uuid fragment does."""
        with self.named():
            found, res = self.shown('consumer', 'AMOUNT-vm')
            self.assertEqual({self.on_host1}, found)
            self.assertContains(res, 'wrong-amount-vm')
            self.assertEqual({self.on_host3},
                             self.shown('consumer', self.on_host3[:8])[0])
            self.assertEqual(set(), self.shown('consumer', 'web-shop')[0])

    def test_a_project_by_its_name_or_id_before_or_after(self):
        """Project = finds the consumers a project had or was given, by
        Keystone's name or a part of the id."""
        with self.named():
            self.assertEqual({self.on_host3},
                             self.shown('project', 'BATCH-jo')[0])
            self.assertEqual({self.on_host1, self.on_host3},
                             self.shown('project', 'shop')[0])
            self.assertEqual({self.on_host3}, self.shown('project', 'q')[0])

    def test_the_export_finds_by_name_what_the_tab_shows(self):
        with self.named():
            res = self.shown('consumer', 'wrong-amount')[1]
            link = reverse('horizon:admin:orphaned_allocations:export',
                           args=['csv']) + '?consumer=wrong-amount'
            self.assertContains(res, 'href="%s"' % link)
            rows = list(csv.DictReader(io.StringIO(b''.join(
                self.client.get(link).streaming_content).decode())))
        self.assertEqual([self.on_host1], [r['consumer'] for r in rows])

    def test_a_name_matching_more_servers_than_an_in_list_takes(self):
        """A short text can name every server of a large cloud: the
        journal is asked only for those it holds."""
        many = {uid('vm%d' % i): 'vm-%d' % i for i in range(260000)}
        many[self.on_host1] = 'vm-first'
        found, _prev, _more = journal.entries(
            self.cloud, consumer='vm-', named={'consumer': list(many)})
        self.assertEqual([self.on_host1], [e.consumer for e in found])

    def test_a_filter_matching_nothing_is_cleared_when_asked(self):
        self.assertEqual(set(), self.shown('consumer', 'nothing-like-it')[0])
        self.assertEqual({self.on_host1, self.on_host3},
                         self.shown('consumer', '')[0])

    @pytest.mark.error_messages
    def test_a_batch_restore_takes_the_exact_batch_only(self):
        """The panel's ``?batch=`` (Restore decommission) used to take in
        every batch starting with what it was given."""
        self.add(uid('third'), H1, 'b' * 31 + 'c')
        with mock.patch.object(service, 'preview_restore',
                               return_value=[]) as preview:
            res = self.client.get(RESTORE, {'batch': 'b' * 8})
            self.assertRedirectsNoFollow(res, INDEX)
            self.assertEqual(['No such batch.'],
                             self.messages_seen.texts('error'))
            preview.assert_not_called()
            self.client.get(RESTORE, {'batch': 'b' * 32})
        (_request, entries), _ = preview.call_args
        self.assertEqual([self.on_host3], [e.consumer for e in entries])

    def test_the_export_link_keeps_the_batch_filter(self):
        found, res = self.shown('batch', 'b' * 32)
        self.assertEqual({self.on_host3}, found)
        link = reverse('horizon:admin:orphaned_allocations:export',
                       args=['csv']) + '?batch=' + 'b' * 32
        self.assertContains(res, 'href="%s"' % link)
        rows = list(csv.DictReader(io.StringIO(b''.join(
            self.client.get(link).streaming_content).decode())))
        self.assertEqual([self.on_host3], [r['consumer'] for r in rows])


class _TwoClouds(JournalViewTests):
    """This cloud's entry, and two of a cloud whose Keystone was rebuilt
    (a new cloud to the journal): a trim and a decommission's service."""

    def setUp(self):
        super().setUp()
        from orphan_dashboard.models import JournalEntry
        self.ours = uid('ours')
        self.journaled(self.ours, H1, 'a' * 32, m.TRIM, m.MOVED)
        entry = self.journaled(uid('before-rebuild'), H3, 'b' * 32, m.TRIM,
                               m.MOVED)
        JournalEntry.objects.filter(id=entry.id).update(
            cloud='http://old-keystone.test|RegionOne|old-placement-id',
            auth_url='http://old-keystone.test/v3', region='RegionOne')
        self.service_entry = JournalEntry.objects.create(
            cloud='http://old-keystone.test|RegionOne|old-placement-id',
            auth_url='http://old-keystone.test/v3', region='RegionOne',
            batch='c' * 32, kind=JournalEntry.SERVICE,
            subject=uid('old-service'), consumer='', provider=H3,
            touched=H3, action=m.DELETE_SERVICE, verdict='', reason='',
            before={'uuid': uid('old-service'), 'host': 'host3'}, after={},
            status=JournalEntry.APPLIED, source='test', user_name='admin')
        self.theirs = entry


@override_settings(ORPHAN_AUDIT_HISTORY_ALL_CLOUDS=True)
class OtherCloudsTests(_TwoClouds):
    """Where the setting allows it, the old cloud's entries are shown on
    asking, read-only."""

    @pytest.mark.error_messages
    def test_every_clouds_entries_on_asking_none_restorable(self):
        res = self.client.get(INDEX, HISTORY_TAB)
        self.assertContains(res, self.ours)
        self.assertNotContains(res, uid('before-rebuild'))
        self.assertContains(res, 'All clouds')
        res = self.client.get(INDEX, dict(HISTORY_TAB, clouds='all'))
        self.assertContains(res, self.ours)
        self.assertContains(res, uid('before-rebuild'))
        self.assertContains(res, 'This cloud only')
        self.assertNotContains(res, RESTORE + '?entry=')
        self.assertNotContains(res, RESTORE + '?batch=')
        # The restore itself stays this cloud's only.
        res = self.client.get(RESTORE, {'entry': self.theirs.id})
        self.assertEqual(302, res.status_code)
        self.assertEqual(['No such journal entry.'],
                         self.messages_seen.texts('error'))

    def test_pages_keep_every_cloud_and_the_filter(self):
        """The next and previous page links of every cloud's History stay
        on every cloud's History, under the same filter (provider host3:
        the old cloud's two entries, none of ours)."""
        self.client.post(INDEX + '?tab=orphaned_allocations__history', {
            'history__filter__q_field': 'provider', 'history__filter__q': H3})
        with self.settings(API_RESULT_PAGE_SIZE=1):
            first = self.client.get(INDEX, dict(HISTORY_TAB, clouds='all'))
            self.assertContains(first, 'host3')
            second = self.client.get(INDEX + history_page_link(first, 'next'))
            self.assertContains(second, uid('before-rebuild'))
            self.assertNotContains(second, self.ours)
            back = self.client.get(INDEX + history_page_link(second, 'prev'))
        self.assertContains(back, 'deleted (not restorable)')
        self.assertNotContains(back, uid('before-rebuild'))

    def test_a_cloud_column_when_every_cloud_is_shown(self):
        """Which cloud wrote each entry, once History shows every cloud's:
        this one, or another by its Keystone, region and Placement
        service; no such column for this cloud's History alone."""
        res = self.client.get(INDEX, HISTORY_TAB)
        self.assertNotIn('Cloud', history_headers(res))
        res = self.client.get(INDEX, dict(HISTORY_TAB, clouds='all'))
        self.assertIn('Cloud', history_headers(res))
        cells = history_cells(res, 'orphan-cloud')
        self.assertEqual(3, len(cells))
        self.assertEqual(1, sum('this cloud' in c for c in cells))
        old = ('http://old-keystone.test/v3, RegionOne', 'old-placement-id')
        self.assertEqual(2, sum(all(part in c for part in old)
                                for c in cells))


class OtherCloudsHiddenTests(_TwoClouds):
    """By default no page shows, exports or restores another cloud's
    entry, whatever its query asks: a user this cloud's policy lets in
    is no one the other cloud let in."""

    OFF = ("Only this cloud's History can be shown: this dashboard keeps "
           "other clouds' journals hidden "
           "(ORPHAN_AUDIT_HISTORY_ALL_CLOUDS).")

    def theirs_absent(self, res):
        self.assertEqual(200, res.status_code)
        self.assertContains(res, self.ours)
        for text in (uid('before-rebuild'), uid('old-service'),
                     'old-keystone'):
            self.assertNotContains(res, text)

    @pytest.mark.error_messages
    def test_history_asked_for_every_cloud_shows_this_ones(self):
        res = self.client.get(INDEX, HISTORY_TAB)
        self.theirs_absent(res)
        self.assertNotContains(res, 'All clouds')
        self.assertEqual([], self.messages_seen.texts('error'))
        res = self.client.get(INDEX, dict(HISTORY_TAB, clouds='all'))
        self.theirs_absent(res)
        self.assertNotIn('Cloud', history_headers(res))
        self.assertNotContains(res, 'This cloud only')
        self.assertEqual([self.OFF], self.messages_seen.texts('error'))
        # Nor by their provider, nor on a page that starts past theirs.
        self.client.post(INDEX + '?tab=orphaned_allocations__history', {
            'history__filter__q_field': 'provider', 'history__filter__q': H3})
        for query in ({'clouds': 'all'},
                      {'clouds': 'all', 'marker': self.service_entry.id + 1},
                      {'prev_marker': self.theirs.id - 1}):
            res = self.client.get(INDEX, dict(HISTORY_TAB, **query))
            self.assertEqual(200, res.status_code)
            self.assertNotContains(res, uid('before-rebuild'))
            self.assertNotContains(res, uid('old-service'))

    @pytest.mark.error_messages
    def test_the_export_of_every_cloud_is_refused(self):
        for fmt in ('csv', 'json'):
            url = reverse('horizon:admin:orphaned_allocations:export',
                          args=[fmt])
            res = self.client.get(url, {'clouds': 'all'})
            self.assertRedirectsNoFollow(
                res, INDEX + '?tab=orphaned_allocations__history')
            self.assertNotIn(uid('before-rebuild').encode(), res.content)
            exported = b''.join(self.client.get(url).streaming_content)
            self.assertIn(self.ours.encode(), exported)
            self.assertNotIn(uid('before-rebuild').encode(), exported)
        self.assertEqual([self.OFF] * 2, self.messages_seen.texts('error'))

    @pytest.mark.error_messages
    def test_a_restore_of_their_entries_or_batches_is_refused(self):
        """A forged id gets a clear error, and nothing of theirs is read
        for a preview."""
        with mock.patch.object(service, 'preview_restore',
                               return_value=[]) as preview:
            for query in ({'entry': self.theirs.id},
                          {'entry': self.service_entry.id},
                          {'batch': 'b' * 32}, {'batch': 'c' * 32}):
                res = self.client.get(RESTORE, query)
                self.assertRedirectsNoFollow(res, INDEX)
            preview.assert_not_called()
        self.assertEqual(['No such journal entry.'] * 2 +
                         ['No such batch.'] * 2,
                         self.messages_seen.texts('error'))


def history_page_link(res, which):
    """The History table's ``next`` or ``prev`` page link, as a browser
    follows it (relative: a query string)."""
    table = res.content.decode().split('id="history"', 1)[1]
    links = [html.unescape(link) for link in re.findall(
        r'href="(\?[^"]*marker=[^"]*)"', table)]
    prev = [link for link in links if 'prev_marker=' in link]
    return (prev if which == 'prev' else
            [link for link in links if link not in prev])[0]


def history_headers(res):
    """The History table's column headers, as text."""
    table = res.content.decode().split('id="history"', 1)[1]
    return [re.sub(r'<[^>]+>', '', header).strip() for header in re.findall(
        r'<th[^>]*>(.*?)</th>', table.split('</thead>', 1)[0], re.S)]


def history_cells(res, css_class):
    """The text of each History row's cell of the column ``css_class``
    marks."""
    table = res.content.decode().split('id="history"', 1)[1]
    return [re.sub(r'<[^>]+>', ' ', cell) for cell in re.findall(
        r'<td class="[^"]*\b%s\b[^"]*">(.*?)</td>' % css_class, table,
        re.S)]
