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

"""Only admins: the panel's permissions and compute policy, server-side."""

from django.test.utils import override_settings

import horizon
from openstack_auth import utils as auth_utils

from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import service
from tests.views.base import AdminViewTests
from tests.views.base import DELETE_PROVIDER
from tests.views.base import detail
from tests.views.base import encoded
from tests.views.base import H1
from tests.views.base import H2
from tests.views.base import helpers
from tests.views.base import Incidents
from tests.views.base import INDEX
from tests.views.base import MemberViewTests
from tests.views.base import REPAIR
from tests.views.base import RESTORE

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
                                     'preview_provider_delete',
                                     'delete_providers', 'restore']})
    def test_member_is_refused(self):
        sel = encoded(H1, H2, m.TRIM)
        for res in (self.client.get(INDEX),
                    self.client.get(detail(H1)),
                    self.client.get(REPAIR, {'sel': sel}),
                    self.client.post(REPAIR, {'rows': 'x'}),
                    self.client.post(RESTORE, {'rows': 'x'}),
                    self.client.get(DELETE_PROVIDER, {'provider': H1}),
                    self.client.post(DELETE_PROVIDER, {'rows': 'x'})):
            self.assertEqual(403, res.status_code)
        self.mock_report.assert_not_called()
        self.mock_preview.assert_not_called()
        self.mock_apply.assert_not_called()
        self.mock_preview_provider_delete.assert_not_called()
        self.mock_delete_providers.assert_not_called()
        self.mock_restore.assert_not_called()

    @override_settings(POLICY_CHECK_FUNCTION=POLICY)
    def test_hidden_from_member_with_policy(self):
        self.request.user = auth_utils.get_user(self.request)
        self.assertFalse(panel().can_access({'request': self.request}))


class PlacementPolicyTests(AdminViewTests):
    """The write actions declare Placement's rules too; with a placement
    policy file registered they are enforced like Nova's."""

    def policy(self, rules):
        import os
        import tempfile

        from openstack_auth import policy
        path = os.path.join(tempfile.mkdtemp(), 'placement_policy.yaml')
        with open(path, 'w') as f:
            f.write(rules)
        files = dict(self._settings_policy_files(), placement=path)
        policy.reset()
        self.addCleanup(policy.reset)
        return override_settings(POLICY_CHECK_FUNCTION=POLICY,
                                 POLICY_FILES=files)

    def _settings_policy_files(self):
        from django.conf import settings
        return settings.POLICY_FILES

    @helpers.create_mocks({service: ['report']})
    def test_repairs_follow_placements_rules(self):
        import os

        import orphan_dashboard
        self.mock_report.return_value = Incidents().report
        shipped = open(os.path.join(os.path.dirname(
            orphan_dashboard.__file__), 'conf',
            'placement_policy.yaml')).read()
        with self.policy(shipped):
            res = self.client.get(detail(H1))
        self.assertContains(res, 'allocations__row_')
        self.assertContains(res, REPAIR + '?sel=')
        with self.policy('"placement:allocations:update": "!"\n'):
            res = self.client.get(detail(H1))
        self.assertEqual(200, res.status_code)
        self.assertNotContains(res, REPAIR + '?sel=')
