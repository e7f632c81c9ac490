"""Only admins: the panel's permissions and compute policy, server-side."""

import json

from django.test.utils import override_settings

import horizon
from openstack_auth import utils as auth_utils

from orphan_dashboard.audit import model as m
from orphan_dashboard import service
from tests.views.base import (AdminViewTests, FP1, H1, H2, INDEX,
                              MemberViewTests, REPAIR, Incidents, detail,
                              encoded, helpers)

POLICY = 'openstack_auth.policy.check'


def panel():
    return horizon.get_dashboard('admin').get_panel('orphaned_allocations')


class AdminPolicyTests(AdminViewTests):
    @override_settings(POLICY_CHECK_FUNCTION=POLICY)
    def test_visible_to_admin_with_policy(self):
        self.request.user = auth_utils.get_user(self.request)
        self.assertTrue(panel().can_access({'request': self.request}))

    @override_settings(POLICY_CHECK_FUNCTION=POLICY)
    @helpers.create_mocks({service: ['report']})
    def test_admin_gets_the_page_and_its_actions_with_policy(self):
        self.mock_report.return_value = Incidents().report
        res = self.client.get(INDEX)
        self.assertEqual(200, res.status_code)
        self.assertContains(res, 'providers__fix_recommended')
        self.assertContains(res, 'View allocations')


class NoPlacementTests(helpers.BaseAdminViewTests):
    """Horizon's own catalog, which has no placement: no panel."""

    @helpers.create_mocks({service: ['report']})
    def test_hidden_without_placement_in_the_catalog(self):
        # The panel's permissions guard its URLs (can_access is policy).
        res = self.client.get(INDEX)
        self.assertEqual(403, res.status_code)
        self.mock_report.assert_not_called()


class MemberTests(MemberViewTests):
    """A project member can neither see the panel nor use it."""

    @helpers.create_mocks({service: ['report', 'preview', 'apply',
                                     'delete_provider']})
    def test_member_is_refused(self):
        sel = encoded(H1, H2, m.TRIM)
        for res in (self.client.get(INDEX),
                    self.client.get(detail(H1)),
                    self.client.get(REPAIR, {'sel': sel}),
                    self.client.post(REPAIR, {'rows': json.dumps(
                        [[sel, FP1]])}),
                    self.client.post(INDEX, {
                        'action': 'providers__delete__%s' % H1})):
            self.assertEqual(403, res.status_code)
        self.mock_report.assert_not_called()
        self.mock_preview.assert_not_called()
        self.mock_apply.assert_not_called()
        self.mock_delete_provider.assert_not_called()

    @override_settings(POLICY_CHECK_FUNCTION=POLICY)
    def test_hidden_from_member_with_policy(self):
        self.request.user = auth_utils.get_user(self.request)
        self.assertFalse(panel().can_access({'request': self.request}))
