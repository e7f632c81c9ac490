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

"""Every unknown consumer at once (the leftovers of archived instances):
counted, what they hold summed, who else could own them said, deleted only
once the count is typed back."""

from django.urls import reverse
import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import service
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid
from tests.views.base import AdminViewTests
from tests.views.base import detail
from tests.views.base import H2
from tests.views.base import H3
from tests.views.base import helpers
from tests.views.base import INDEX
from tests.views.base import MemberViewTests
from tests.views.base import plan_row
from tests.views.base import signed_rows

UNKNOWN = reverse('horizon:admin:orphaned_allocations:delete_unknown')


def archived():
    """Three consumers Nova answers 404 for on host2, one on host3, and a
    server deleted behind Nova's back on host3 (recommended, not unknown)."""
    cloud = Cloud()
    unknown = {H2: [uid('archived-%d' % i) for i in range(3)],
               H3: [uid('archived-3')]}
    for provider, consumers in unknown.items():
        for consumer in consumers:
            cloud.allocate(consumer, provider,
                           {'VCPU': 2, 'MEMORY_MB': 1024})
    cloud.deleted('ghost', H3)
    return classify.audit(cloud.snapshot(), min_age=0), unknown


def deleting(request, chosen, hints=()):
    return [plan_row(s.consumer, s.provider, m.DELETE,
                     before={s.provider: {'VCPU': 2, 'MEMORY_MB': 1024}},
                     after={}) for s in chosen]


class DeleteUnknownTests(AdminViewTests):
    def audited(self):
        report, unknown = archived()
        self.mock_report.return_value = report
        self.mock_preview.side_effect = deleting
        return unknown

    @helpers.create_mocks({service: ['report', 'preview', 'apply']})
    def test_a_providers_unknown_consumers_are_counted_summed_and_typed(
            self):
        unknown = self.audited()
        page = self.client.get(detail(H2))
        self.assertContains(page, 'Delete unknown consumers')
        preview = self.client.get(UNKNOWN, {'provider': H2})
        self.assertEqual(200, preview.status_code)
        chosen = self.mock_preview.call_args.args[1]
        self.assertEqual(sorted(unknown[H2]),
                         sorted(s.consumer for s in chosen))
        self.assertEqual({m.DELETE}, {s.action for s in chosen})
        text = ' '.join(preview.content.decode().split())
        self.assertIn('3 unknown consumers are deleted, freeing '
                      'MEMORY_MB=3072, VCPU=6.', text)
        self.assertIn("Zun's containers, Blazar's reservations and "
                      'consumers written by hand', text)
        self.mock_apply.return_value = []
        wrong = self.client.post(UNKNOWN + '?provider=' + H2, {
            'rows': signed_rows(preview), 'count': '2'})
        self.assertContains(wrong, 'Type 3, the number of unknown consumers '
                                   'shown, to confirm: nothing was written.')
        self.mock_apply.assert_not_called()
        empty = self.client.post(UNKNOWN + '?provider=' + H2, {
            'rows': signed_rows(preview)})
        self.assertEqual(200, empty.status_code)
        self.mock_apply.assert_not_called()
        done = self.client.post(UNKNOWN + '?provider=' + H2, {
            'rows': signed_rows(preview), 'count': '3'})
        self.assertNoFormErrors(done)
        self.assertEqual(3, len(self.mock_apply.call_args.args[1]))

    @helpers.create_mocks({service: ['report', 'preview', 'apply']})
    def test_the_index_takes_every_unknown_consumer_and_nothing_else(self):
        unknown = self.audited()
        index = self.client.get(INDEX)
        self.assertContains(index, UNKNOWN)
        preview = self.client.get(UNKNOWN)
        chosen = {s.consumer for s in self.mock_preview.call_args.args[1]}
        self.assertEqual(set(unknown[H2] + unknown[H3]), chosen)
        self.assertNotIn(uid('ghost'), chosen)
        self.assertContains(preview, '4 unknown consumers are deleted')

    @helpers.create_mocks({service: ['report', 'preview', 'apply']})
    def test_more_than_one_confirm_carries_are_taken_a_confirm_at_a_time(
            self):
        """Hundreds of them: the first ``ORPHAN_AUDIT_MAX_ROWS``, saying
        how many are left for the next confirm."""
        unknown = self.audited()
        with self.settings(ORPHAN_AUDIT_MAX_ROWS=2):
            preview = self.client.get(UNKNOWN, {'provider': H2})
            self.assertEqual(2, len(self.mock_preview.call_args.args[1]))
            text = ' '.join(preview.content.decode().split())
            self.assertIn('The first of 3 unknown consumers', text)
            self.assertIn('open this again for the other 1 once these are '
                          'deleted', text)
            self.assertIn('2 unknown consumers are deleted', text)
            self.mock_apply.return_value = []
            done = self.client.post(UNKNOWN + '?provider=' + H2, {
                'rows': signed_rows(preview), 'count': '2'})
            self.assertNoFormErrors(done)
        self.assertEqual(2, len(self.mock_apply.call_args.args[1]))
        self.assertEqual(3, len(unknown[H2]))
        everything = self.client.get(UNKNOWN, {'provider': H2})
        self.assertNotContains(everything, 'The first of')

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview']})
    def test_nothing_unknown_or_a_forged_provider_previews_nothing(self):
        self.audited()
        for query in ({'provider': uid('nowhere')}, {'provider': 'x'}):
            res = self.client.get(UNKNOWN, query)
            self.assertEqual(302, res.status_code, query)
        self.mock_preview.assert_not_called()
        cloud = Cloud()
        cloud.deleted('ghost', H3)
        self.mock_report.return_value = classify.audit(cloud.snapshot(),
                                                       min_age=0)
        self.assertEqual(302, self.client.get(UNKNOWN).status_code)
        self.assertNotContains(self.client.get(INDEX), UNKNOWN)
        self.mock_preview.assert_not_called()
        self.assertEqual(['No such resource provider in the last audit.',
                          '"x" is not a UUID.',
                          'No unknown consumer to delete.'],
                         self.messages_seen.texts('error'))


class MemberTests(MemberViewTests):
    @helpers.create_mocks({service: ['report', 'preview', 'apply']})
    def test_a_member_can_neither_preview_nor_delete(self):
        self.mock_report.return_value = archived()[0]
        self.assertNotEqual(200, self.client.get(UNKNOWN).status_code)
        self.client.post(UNKNOWN, {'rows': 'x', 'count': '1'})
        self.mock_preview.assert_not_called()
        self.mock_apply.assert_not_called()
