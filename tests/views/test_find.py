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

"""What an operator finds things with: names next to ids, links to
Horizon's own pages, the filters, and the findings as CSV and JSON."""

import csv
import datetime
import html
import io
import json
import re

from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import filters
from orphan_dashboard.content.orphaned_allocations import service
import pytest
from tests.views.base import AdminViewTests
from tests.views.base import detail
from tests.views.base import H1
from tests.views.base import H2
from tests.views.base import H3
from tests.views.base import helpers
from tests.views.base import INDEX

NAMES = {'projects': {'p': 'web-shop'}, 'users': {'u': 'alice'}}
EXPORT = INDEX + 'findings/export/%s/'


class NamesAndLinksTests(AdminViewTests):
    @helpers.create_mocks({service: ['report', 'names']})
    def test_rows_name_their_project_user_server_and_hypervisor(self):
        incidents = self.reported()
        self.mock_names.return_value = NAMES
        res = self.client.get(detail(H1))
        (row,) = res.context['allocations_table'].get_rows()
        self.assertEqual('web-shop', row.cells['project'].data)
        self.assertEqual('alice', row.cells['user'].data)
        # The consumer is a server: Admin > Instances; its host: Admin >
        # Hypervisors.
        self.assertContains(res, 'href="/admin/instances/%s/detail"'
                            % incidents.vm)
        self.assertContains(res, 'href="/admin/hypervisors/%s_host2/"' % H2)

    @helpers.create_mocks({service: ['report', 'names']})
    def test_a_migration_links_its_server_and_ids_stay_without_names(self):
        incidents = self.reported()
        self.mock_names.return_value = {'projects': {}, 'users': {}}
        res = self.client.get(detail(H2))
        rows = {r.datum.consumer: r
                for r in res.context['allocations_table'].get_rows()}
        stale = rows[incidents.stale]
        self.assertEqual('p', stale.cells['project'].data)
        # A migration's consumer is no server: no link (its server's is
        # "In Nova"'s).
        self.assertNotIn('<a ', str(stale.cells['consumer'].data))
        self.assertIn(incidents.stale, str(stale.cells['consumer'].data))
        self.assertEqual('/admin/instances/%s/detail' % incidents.old,
                         stale.cells['nova'].url)

    @helpers.create_mocks({service: ['report']})
    def test_hypervisor_rows_link_to_admin_hypervisors(self):
        self.reported()
        res = self.client.get(INDEX)
        self.assertContains(res, 'href="/admin/hypervisors/%s_host1/"' % H1)
        # A provider Nova has no compute node for has no such page.
        table = res.context['providers_table']
        gone = [r for r in table.data if r.provider.name == 'gone'][0]
        self.assertNotIn('hypervisor', [
            a.name for a in table.get_row_actions(gone)])


class FilterTests(AdminViewTests):
    def filter_providers(self, field, text):
        res = self.client.post(INDEX, {'providers__filter__q_field': field,
                                       'providers__filter__q': text})
        self.assertEqual(302, res.status_code)
        res = self.client.get(INDEX)
        return [r.provider.name for r in res.context['providers_table'].data]

    @helpers.create_mocks({service: ['report', 'names']})
    def test_the_hypervisor_filter_searches_every_hypervisor(self):
        self.reported()
        self.mock_names.return_value = NAMES
        # A healthy hypervisor is found by name too.
        self.assertEqual(['host4'], self.filter_providers('name', 'HOST4'))
        self.assertEqual(['host2'], self.filter_providers('verdict',
                                                          'stale'))
        self.assertEqual(['host3'], self.filter_providers('verdict',
                                                          'unknown_consumer'))
        self.assertEqual(['host3', 'gone-busy', 'host1', 'host2'],
                         self.filter_providers('project', 'web-'))
        self.assertEqual([], self.filter_providers('project', 'nobody'))
        # Cleared: the mismatched ones again.
        self.assertEqual(['host3', 'gone-busy', 'host1', 'host2', 'gone'],
                         self.filter_providers('name', ''))

    @helpers.create_mocks({service: ['report', 'names']})
    def test_the_allocation_filter_matches_what_a_row_shows(self):
        incidents = self.reported()
        self.mock_names.return_value = NAMES
        res = self.client.get(detail(H3))
        rows = res.context['allocations_table'].get_rows()
        shown = {r.datum.consumer: r.datum for r in rows}
        self.assertNotContains(res, 'table_search client')

        def matching(text):
            return {c for c, row in shown.items()
                    if filters.finding_matches(row, text)}
        self.assertEqual({incidents.stranger}, matching('UNKNOWN CONSUMER'))
        self.assertEqual({incidents.bare}, matching('holds no allocation'))
        self.assertEqual(set(shown), matching('web-shop'))
        self.assertEqual(set(), matching('no-such-project'))
        # The table filters on the server, every row of the tree: with one
        # row a page, the stranger is on the third, and found from the
        # first; the filter is kept for the next page.
        with self.settings(API_RESULT_PAGE_SIZE=1):
            res = self.client.get(detail(H3))
            self.assertNotIn(incidents.stranger, [
                r.datum.consumer
                for r in res.context['allocations_table'].get_rows()])
            res = self.client.post(detail(H3), {
                'allocations__filter__q_field': 'any',
                'allocations__filter__q': 'unknown consumer'})
            self.assertRedirects(
                res, detail(H3) + '?tab=provider__allocations',
                fetch_redirect_response=False)
            res = self.client.get(res.url)
        self.assertEqual([incidents.stranger], [
            r.datum.consumer
            for r in res.context['allocations_table'].get_rows()])

    @helpers.create_mocks({service: ['report', 'names']})
    def test_a_trees_allocations_a_page_at_a_time_problems_first(self):
        incidents = self.reported()
        self.mock_names.return_value = NAMES
        findings = incidents.report.provider(H3).findings
        self.assertGreater(len(findings), 2)
        seen, url = [], detail(H3)
        with self.settings(API_RESULT_PAGE_SIZE=2):
            while url:
                res = self.client.get(url)
                rows = [r.datum.consumer for r in
                        res.context['allocations_table'].get_rows()]
                self.assertLessEqual(len(rows), 2)
                seen.extend(rows)
                more = re.search(r'href="(\?marker=[^"]*)"',
                                 res.content.decode())
                url = more and detail(H3) + html.unescape(more.group(1))
        self.assertEqual([f.consumer for f in findings], seen)
        self.assertNotEqual(m.OK, findings[0].verdict)
        self.assertEqual(m.OK, findings[-1].verdict)


class ExportTests(AdminViewTests):
    @helpers.create_mocks({service: ['report', 'names']})
    def test_the_clouds_problems_as_csv_and_json(self):
        incidents = self.reported()
        self.mock_names.return_value = NAMES
        res = self.client.get(EXPORT % 'csv')
        self.assertEqual('text/csv', res['Content-Type'])
        # Named by what it holds and its audit's time (one hypervisor's by
        # its name): two downloads never share a name.
        taken = incidents.report.taken_at.astimezone(
            datetime.timezone.utc).strftime('%Y%m%dT%H%M%SZ')
        self.assertEqual('attachment; filename="orphan-findings-%s.csv"'
                         % taken, res['Content-Disposition'])
        rows = list(csv.DictReader(io.StringIO(
            b''.join(res.streaming_content).decode())))
        problems = [f for f in incidents.report.findings
                    if f.verdict != 'ok']
        self.assertEqual(sorted((f.consumer, f.provider) for f in problems),
                         sorted((r['consumer'], r['provider'])
                                for r in rows))
        stale = [r for r in rows if r['consumer'] == incidents.stale][0]
        self.assertEqual(('host2', 'stale_migration', 'delete', 'web-shop',
                          'alice'),
                         (stale['provider_name'], stale['verdict'],
                          stale['action'], stale['project_name'],
                          stale['user_name']))
        self.assertEqual('stale_migration', stale['reason_code'])
        self.assertIn('ended (confirmed)', stale['reason'])
        # One provider: every row the table shows, ok ones included.
        res = self.client.get(EXPORT % 'json', {'provider': H3.upper()})
        self.assertEqual(
            'attachment; filename="orphan-allocations-host3-%s.json"'
            % taken, res['Content-Disposition'])
        found = json.loads(b''.join(res.streaming_content))
        self.assertEqual(
            sorted(f.consumer for f in incidents.report.provider(H3).findings),
            sorted(f['consumer'] for f in found))
        self.assertIn('ok', {f['verdict'] for f in found})

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report']})
    def test_the_export_links_and_what_cannot_be_exported(self):
        self.reported()
        res = self.client.get(INDEX)
        self.assertContains(res, 'href="%s"' % (EXPORT % 'csv'))
        res = self.client.get(detail(H1))
        self.assertContains(
            res, 'href="%s?provider=%s"' % (EXPORT % 'json', H1))
        res = self.client.get(EXPORT % 'csv', {'provider': 'nope'})
        self.assertRedirectsNoFollow(res, INDEX)
        self.assertEqual(['No such resource provider.'],
                         self.messages_seen.texts('error'))
        self.mock_report.return_value = None
        res = self.client.get(EXPORT % 'csv')
        self.assertRedirectsNoFollow(res, INDEX)
