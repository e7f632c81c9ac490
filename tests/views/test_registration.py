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

"""Horizon drops a panel that fails to import with only a log warning."""

import importlib
import os

from django.urls import reverse

import horizon

import orphan_dashboard
from orphan_dashboard import conf
from orphan_dashboard.content.orphaned_allocations import panel as panel_mod
from tests.views.base import AdminViewTests
from tests.views.base import detail
from tests.views.base import H1
from tests.views.base import INDEX


class RegistrationTests(AdminViewTests):
    def test_enabled_file(self):
        enabled = importlib.import_module(
            'orphan_dashboard.enabled.'
            '_2170_admin_orphaned_allocations_panel')
        self.assertEqual('admin', enabled.PANEL_DASHBOARD)
        self.assertEqual('compute', enabled.PANEL_GROUP)
        self.assertEqual('orphaned_allocations', enabled.PANEL)
        self.assertIn('orphan_dashboard', enabled.ADD_INSTALLED_APPS)

    def test_enabled_and_snippet_folders_sit_at_the_package_top(self):
        """As heat-dashboard ships them, and as the design card names
        ``orphan_dashboard/enabled/``."""
        top = os.path.dirname(orphan_dashboard.__file__)
        self.assertTrue(os.path.isfile(os.path.join(
            top, 'enabled', '_2170_admin_orphaned_allocations_panel.py')))
        self.assertEqual(os.path.join(top, 'local_settings.d',
                                      '_90_orphan_dashboard.py'),
                         conf.SNIPPET)

    def test_panel_is_registered_in_admin_compute(self):
        dashboard = horizon.get_dashboard('admin')
        panel = dashboard.get_panel('orphaned_allocations')
        self.assertIsInstance(panel, panel_mod.OrphanedAllocations)
        self.assertIn(panel, list(dashboard.get_panel_group('compute')))
        self.assertEqual('Orphaned Allocations', str(panel.name))

    def test_urls_reverse(self):
        self.assertEqual('/admin/orphaned_allocations/', INDEX)
        self.assertEqual('/admin/orphaned_allocations/%s/' % H1, detail(H1))
        for name in ('repair', 'restore'):
            self.assertTrue(reverse(
                'horizon:admin:orphaned_allocations:%s' % name).startswith(
                    INDEX))

    def test_panel_needs_compute_and_placement_and_an_admin_rule(self):
        panel = panel_mod.OrphanedAllocations
        self.assertEqual({'openstack.services.compute',
                          'openstack.services.placement'},
                         set(panel.permissions))
        self.assertTrue(all(scope == 'compute'
                            for scope, _rule in panel.policy_rules))
