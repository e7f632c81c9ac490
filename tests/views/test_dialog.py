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

"""What an operator who never saw the panel trips on: the index's status
line, empty tables, a decommission link without a hypervisor, preview
pages, and which repair a row offers first."""

import dataclasses
import datetime
import os
import re
import types
from unittest import mock

from django.urls import reverse
from django.utils import timezone
import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.writing import write
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid
from tests.views.base import AdminViewTests
from tests.views.base import detail
from tests.views.base import H1
from tests.views.base import H3
from tests.views.base import H4
from tests.views.base import helpers
from tests.views.base import Incidents
from tests.views.base import INDEX
from tests.views.base import JournalViewTests
from tests.views.base import plan_row
from tests.views.base import REPAIR

DECOMMISSION = reverse('horizon:admin:orphaned_allocations:decommission')
VERDICTS = os.path.join(os.path.dirname(__file__), '..', '..', 'doc', 'source',
                        'verdicts.md')


def taken(seconds_ago, read_at):
    """The incidents' report, as if swept ``seconds_ago`` before
    ``read_at``."""
    return dataclasses.replace(
        Incidents().report, taken_at=read_at -
        datetime.timedelta(seconds=seconds_ago))


def healthy():
    cloud = Cloud()
    cloud.host('host4')
    cloud.allocate(cloud.server('fine', 'host4'), H4)
    return classify.audit(cloud.snapshot(), min_age=600)


class StatusLineTests(AdminViewTests):
    """The status line reads the clock at ``read_at`` however long the
    request takes: a loaded machine must not turn 12 s into 13 s."""

    def setUp(self):
        super().setUp()
        self.read_at = timezone.now()
        held = types.SimpleNamespace(now=lambda: self.read_at)
        clock = mock.patch.object(labels, 'timezone', held)
        clock.start()
        self.addCleanup(clock.stop)

    @helpers.create_mocks({service: ['report']})
    def test_a_fresh_snapshot_is_just_now(self):
        self.mock_report.return_value = taken(1, self.read_at)
        res = self.client.get(INDEX)
        self.assertContains(res, 'Audit snapshot taken just now.')
        self.assertNotContains(res, '0 minutes ago')

    @helpers.create_mocks({service: ['report']})
    def test_under_a_minute_counts_seconds(self):
        self.mock_report.return_value = taken(12, self.read_at)
        self.assertContains(self.client.get(INDEX),
                            'Audit snapshot taken 12 s ago.')

    @helpers.create_mocks({service: ['report']})
    def test_counts_hypervisors_and_reads_as_text(self):
        """Six provider trees, five needing attention; the line is not
        Horizon's pale ``text-muted``."""
        self.mock_report.return_value = taken(120, self.read_at)
        res = self.client.get(INDEX)
        self.assertContains(res, '5 of 6 hypervisors need attention.')
        self.assertNotContains(res, 'resource providers need attention')
        self.assertNotContains(res, 'text-muted orphan-snapshot')


class EmptyTableTests(AdminViewTests):
    @helpers.create_mocks({service: ['report']})
    def test_no_batch_buttons_over_an_empty_table(self):
        self.mock_report.return_value = healthy()
        res = self.client.get(INDEX)
        self.assertEqual([], res.context['providers_table'].data)
        self.assertNotContains(res, 'providers__fix_recommended')
        res = self.client.get(detail(H4))
        self.assertNotContains(res, 'allocations__delete')
        self.assertNotContains(res, 'data-batch-action')

    @helpers.create_mocks({service: ['report']})
    def test_batch_buttons_stay_on_a_table_with_rows(self):
        self.reported()
        self.assertContains(self.client.get(INDEX),
                            'providers__fix_recommended')


class DecommissionLinkTests(AdminViewTests):
    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview_decommission']})
    def test_no_hypervisor_chosen_is_said_so(self):
        self.reported()
        res = self.client.get(DECOMMISSION)
        self.assertRedirectsNoFollow(res, INDEX)
        (said,) = self.messages_seen.texts('error')
        self.assertNotIn('is not a UUID', said)
        self.assertIn('No hypervisor chosen', said)
        self.mock_preview_decommission.assert_not_called()


class PreviewPageTests(AdminViewTests):
    @helpers.create_mocks({service: ['report', 'preview']})
    def test_a_batch_preview_page_has_its_title_once(self):
        """A batch action leads to the preview as a page, not a modal:
        Horizon's page header has the title, the modal's is left out."""
        incidents = self.reported()
        self.mock_preview.return_value = [plan_row(incidents.vm)]
        res = self.client.get(REPAIR, {'provider': H1})
        self.assertEqual(200, res.status_code)
        page = res.content.decode()
        self.assertEqual(['<h1>Review the allocation changes'], re.findall(
            r'<h\d[^>]*>\s*Review the allocation changes', page))
        res = self.client.get(REPAIR, {'provider': H1},
                              HTTP_X_REQUESTED_WITH='XMLHttpRequest')
        self.assertContains(res, 'class="modal-title"')


def readme_repair(verdict):
    """The repair column of the documented verdict table for ``verdict``."""
    with open(VERDICTS) as readme:
        for line in readme:
            if line.startswith('| `%s` |' % verdict):
                return line.split('|')[3].strip()
    raise AssertionError('no documented row for %s' % verdict)


class RecommendedFirstTests(AdminViewTests):
    @helpers.create_mocks({service: ['report']})
    def test_a_missing_row_offers_the_readme_repair_first(self):
        incidents = self.reported()
        res = self.client.get(detail(H3))
        page = res.content.decode()
        row = page[page.index('id="allocations__row__%s:%s"' %
                              (incidents.bare, H3)):]
        row = row[:row.index('</tr>')]
        actions = re.findall(r'__action_(\w+)"', row)
        self.assertEqual(['heal', 'delete_and_heal'], actions)
        self.assertTrue(readme_repair('missing').startswith('heal'),
                        readme_repair('missing'))
        self.assertIn('Heal is recommended', row)


class TreeRowTests(AdminViewTests):
    @helpers.create_mocks({service: ['report']})
    def test_each_row_names_its_provider_on_a_tree(self):
        """host1 and its NIC hold the same consumer: two rows that differ
        only by their provider, which is shown, the NIC (bandwidth held
        there) with its owner."""
        incidents = Incidents(bandwidth_left=True)
        self.mock_report.return_value = incidents.report
        res = self.client.get(detail(H1))
        table = res.context['allocations_table']
        self.assertIn('provider', [c.name for c in table.get_columns()])
        shown = sorted(row.cells['provider'].data for row in table.get_rows()
                       if row.datum.consumer == incidents.vm)
        self.assertEqual(['host1', 'host1-nic (Neutron)'], shown)

    @helpers.create_mocks({service: ['report']})
    def test_no_provider_column_for_a_single_provider(self):
        self.reported()
        res = self.client.get(detail(H3))
        self.assertNotIn('provider', [
            c.name for c in res.context['allocations_table'].get_columns()])

    @helpers.create_mocks({service: ['report']})
    def test_a_long_reason_keeps_its_details_folded(self):
        """The row says what happened in a sentence; why nothing is
        offered (a paragraph, with the command) opens on demand."""
        incidents = Incidents(bandwidth_left=True)
        self.mock_report.return_value = incidents.report
        page = self.client.get(detail(H1)).content.decode()
        at = page.index('No repair here')
        cell = page[page.rindex('<td', 0, at):page.index('</td>', at)]
        # The reason is the summary (one line, the panel's SCSS), the rest
        # under it.
        self.assertIn('<details class="orphan-reason">', cell)
        summary, folded = cell.split('</summary>', 1)
        self.assertIn('<summary title=', summary)
        self.assertIn('evacuated from host1 to host2', summary)
        self.assertNotIn('heal_allocations', summary)
        self.assertIn('No repair here: it holds NET_BW_EGR_KILOBIT_PER_SEC'
                      '=1000 on host1-nic', folded)
        self.assertIn('heal_allocations --instance %s' % incidents.vm,
                      folded)


class HistoryBatchLinkTests(JournalViewTests):
    """The link of a decommission's summary over the real journal: the
    batch of its outcomes, and History showing that batch only."""

    def add(self, consumer, provider, batch):
        return self.journaled(consumer, provider, batch, m.DELETE,
                              m.UNKNOWN_CONSUMER)

    def test_the_link_opens_the_batch_of_the_outcomes(self):
        ours = self.add(uid('ours'), H1, 'c' * 32)
        self.add(uid('other'), H3, 'd' * 32)
        request = mock.Mock()
        outcomes = [
            write.Outcome(m.Selection('', H1, m.DELETE_SERVICE),
                          write.SKIPPED, 'not attempted'),
            write.Outcome(m.Selection(uid('ours'), H1, m.DELETE),
                          write.DONE, 'done', entry_id=ours.id)]
        batch = service.batch_of(request, outcomes)
        self.assertEqual('c' * 32, batch)
        self.assertIsNone(service.batch_of(request, outcomes[:1]))
        self.client.get(INDEX, {'batch': batch})
        res = self.client.get(INDEX, {'tab': 'orphaned_allocations__history'})
        self.assertEqual([uid('ours')], [
            e.consumer for e in res.context['history_table'].data])
