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

"""One provider: its findings with only the repairs they allow, and its
inventory against what its servers need."""

import html
import os
import re
import tempfile
import time
from unittest import mock
from urllib import parse

from babel.messages import catalog
from babel.messages import mofile
from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import messages
from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import service
from tests.unit.staged import reinstalled
from tests.views.base import AdminViewTests
from tests.views.base import detail
from tests.views.base import encoded
from tests.views.base import EVIL
from tests.views.base import H1
from tests.views.base import H2
from tests.views.base import H3
from tests.views.base import helpers
from tests.views.base import Incidents
from tests.views.base import INDEX
from tests.views.base import preview_link
from tests.views.base import REPAIR


def sel_link(consumer, provider, action):
    """A row action's link, on the provider's page, back to it after."""
    return 'href="%s?%s"' % (REPAIR, html.escape(parse.urlencode(
        {'sel': encoded(consumer, provider, action),
         'next': detail(provider)})))


def ticked(res):
    """Consumers whose row has a batch checkbox."""
    return [v.split(':')[0] for v in re.findall(
        r'name="object_ids"[^>]*value="([^"]+)"', res.content.decode())]


class DetailTests(AdminViewTests):
    @helpers.create_mocks({service: ['report']})
    def test_verdict_reason_and_only_allowed_actions(self):
        incidents = self.reported()
        res = self.client.get(detail(H1))
        self.assertTemplateUsed(res, 'orphaned_allocations/detail.html')
        self.assertContains(res, 'data-verdict="evacuated_source"')
        self.assertContains(res, 'Evacuated source')
        self.assertContains(res, 'evacuated from host1 to host2')
        (row,) = res.context['allocations_table'].get_rows()
        self.assertEqual('host2', row.cells['host'].data)  # current host
        self.assertContains(res, sel_link(incidents.vm, H1, 'trim'))
        self.assertContains(res, sel_link(incidents.vm, H1,
                                          'delete_and_heal'))
        self.assertNotContains(res, sel_link(incidents.vm, H1, 'delete'))
        self.assertNotContains(res, sel_link(incidents.vm, H1, 'heal'))
        # A server name is data: escaped, never markup.
        self.assertNotContains(res, EVIL)
        self.assertContains(res, '&lt;script&gt;alert(1)&lt;/script&gt;')
        self.assertEqual([], self.messages_seen)

    @helpers.create_mocks({service: ['report', 'sweep_state']})
    def test_the_page_says_why_the_last_sweep_failed(self):
        self.reported()
        self.mock_sweep_state.return_value = {
            'version': 'v', 'age': 300, 'sweeping': False,
            'progress': None, 'failure': {
                'at': time.time() - 120, 'owner': 'o', 'kind': 'answered',
                'url': 'http://placement/resource_providers',
                'status': 503, 'timeout': 60.0, 'detail': 'busy'}}
        res = self.client.get(detail(H1))
        self.assertIn('The last audit failed 2 minutes ago: '
                      'http://placement/resource_providers answered 503: '
                      'busy', ' '.join(res.content.decode().split()))
        self.assertContains(res, 'orphan-sweep-failed alert alert-warning"')
        self.mock_sweep_state.return_value = dict(
            self.mock_sweep_state.return_value, failure=None)
        self.assertNotContains(self.client.get(detail(H1)),
                               'orphan-sweep-failed')
        self.mock_sweep_state.side_effect = RuntimeError('cache down')
        res = self.client.get(detail(H1))
        self.assertEqual(200, res.status_code)
        self.assertNotContains(res, 'orphan-sweep-failed')

    @helpers.create_mocks({service: ['report']})
    def test_a_replaced_providers_page_says_what_nova_compute_does_next(self):
        """A host reinstalled under its old name: its old provider's page
        says it is replaced, by which node, and what happens once it is
        deleted; a live node's page says nothing of it."""
        cloud, old, new, _ghost = reinstalled()
        self.mock_report.return_value = classify.audit(cloud.snapshot(),
                                                       min_age=0)
        res = self.client.get(detail(old))
        self.assertContains(res, 'Replaced by a new compute node')
        self.assertContains(res, 'orphan-replaced alert alert-info')
        self.assertIn('Nova has a new compute node %s named '
                      'host6.example.com on host host6' % new,
                      ' '.join(res.content.decode().split()))
        self.assertContains(res, 'on its next periodic update')
        self.assertNotContains(self.client.get(detail(H1)),
                               'orphan-replaced')

    @helpers.create_mocks({service: ['report']})
    def test_reasons_are_shown_in_the_users_language(self):
        """A German catalog translates the engine's reason and what Nova
        says, both built from codes; the rest falls back to English."""
        german = catalog.Catalog(locale='de', domain='django')
        german.add(messages.MESSAGES['evacuated_source'],
                   'evakuiert von %(source)s nach %(host)s (Migration '
                   '%(migration)s, %(status)s); der alte Host hat nie '
                   'aufgeräumt')
        german.add(messages.MESSAGES['nova.server'],
                   'Server %(name)s (Status %(status)s)')
        locale = tempfile.mkdtemp()
        os.makedirs(os.path.join(locale, 'de', 'LC_MESSAGES'))
        with open(os.path.join(locale, 'de', 'LC_MESSAGES', 'django.mo'),
                  'wb') as f:
            mofile.write_mo(f, german)
        self.reported()
        with self.settings(LOCALE_PATHS=[locale]):
            res = self.client.get(detail(H1), HTTP_ACCEPT_LANGUAGE='de')
            english = self.client.get(detail(H1), HTTP_ACCEPT_LANGUAGE='en')
        self.assertContains(res, 'evakuiert von host1 nach host2')
        self.assertContains(res, 'Status ACTIVE')
        self.assertNotContains(res, 'evacuated from host1')
        self.assertContains(english, 'evacuated from host1 to host2')

    @helpers.create_mocks({service: ['report']})
    def test_protected_rows_have_no_action(self):
        incidents = self.reported()
        res = self.client.get(detail(H2))
        table = res.context['allocations_table']
        protected = [r for r in table.get_rows()
                     if r.datum.consumer == incidents.resize]
        self.assertEqual(1, len(protected))
        self.assertEqual([], table.get_row_actions(protected[0].datum))
        self.assertContains(res, 'data-verdict="protected"')
        self.assertNotContains(res, 'sel=%s' % incidents.resize)
        # Ids only: what the consumer is, the engine asks Nova.
        self.assertContains(res, sel_link(incidents.stale, H2, 'delete'))
        # Only rows with a repair can be ticked for the batch actions.
        self.assertEqual(
            {r.datum.consumer for r in table.get_rows() if r.datum.actions},
            set(ticked(res)))
        self.assertNotIn(incidents.resize, ticked(res))
        self.assertIn(incidents.stale, ticked(res))
        self.assertNotContains(res, 'hidden multi_select_column')

    @helpers.create_mocks({service: ['report']})
    def test_missing_allocation_offers_heal_unknown_offers_delete(self):
        incidents = self.reported()
        res = self.client.get(detail(H3))
        self.assertContains(res, sel_link(incidents.bare, H3, 'heal'))
        self.assertContains(res, sel_link(incidents.stranger, H3, 'delete'))
        self.assertNotContains(res, sel_link(incidents.ok, H3, 'delete'))

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_batch_action_goes_to_the_preview(self):
        incidents = self.reported()
        self.mock_preview.return_value = []
        res = self.client.post(detail(H3), {
            'action': 'allocations__delete_selected',
            'object_ids': ['%s:%s' % (incidents.stranger, H3)]})
        # The preview (and its confirm) come back to this page.
        self.assertEqual((REPAIR, detail(H3)), preview_link(res))
        self.client.get(res['location'])
        self.mock_preview.assert_called_once_with(
            mock.ANY, [m.Selection(incidents.stranger, H3, 'delete')],
            [])

    @helpers.create_mocks({service: ['report'],
                           placement: ['provider_inventories']})
    def test_overview_tab(self):
        self.reported()
        self.mock_provider_inventories.return_value = {
            'VCPU': {'total': 8, 'reserved': 0, 'allocation_ratio': 4.0},
            'MEMORY_MB': {'total': 4096, 'reserved': 512,
                          'allocation_ratio': 1.0}}
        res = self.client.get(detail(H2), {'tab': 'provider__overview'})
        self.assertTemplateUsed(
            res, 'orphaned_allocations/_overview.html')
        self.mock_provider_inventories.assert_called_once_with(
            mock.ANY, H2)
        self.assertContains(res, '<td>4,096</td>', html=False)
        self.assertContains(res, '<td>3</td><td>2</td>')  # VCPU used/needed
        self.assertContains(res, 'Up')
        self.assertEqual([], self.messages_seen)

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report'],
                           placement: ['provider_inventories']})
    def test_overview_without_inventory(self):
        self.reported()
        self.mock_provider_inventories.side_effect = ks_exc.ConnectFailure(
            'down')
        res = self.client.get(detail(H2), {'tab': 'provider__overview'})
        self.assertEqual(200, res.status_code)
        self.assertEqual(['Unable to retrieve the inventory.'],
                         [t.split('…')[0]
                          for t in self.messages_seen.texts('error')])

    @helpers.create_mocks({service: ['report']})
    def test_a_child_providers_page_is_its_trees(self):
        """A NIC (a Blazar or PCI child alike) has no tree of its own:
        its page is its root's, saying so."""
        incidents = Incidents(bandwidth_left=True)
        self.mock_report.return_value = incidents.report
        nic = next(uuid for uuid, name in incidents.report.names.items()
                   if name == 'host1-nic')
        res = self.client.get(detail(nic))
        self.assertRedirectsNoFollow(res, detail(H1))
        self.assertEqual(['host1-nic is a child provider of host1: this is '
                          'its tree.'], self.messages_seen.texts('info'))

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report']})
    def test_unknown_provider_redirects_with_error(self):
        self.reported()
        res = self.client.get(detail('00000000-0000-0000-0000-000000000000'))
        self.assertRedirectsNoFollow(res, INDEX)
        self.assertEqual(['No such resource provider.'],
                         self.messages_seen.texts('error'))

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report']})
    def test_unreachable_cloud_redirects_with_error(self):
        self.mock_report.side_effect = ks_exc.ConnectFailure('down')
        res = self.client.get(detail(H1))
        self.assertRedirectsNoFollow(res, INDEX)
        self.assertEqual(1, len(self.messages_seen.texts('error')))

    @helpers.create_mocks({service: ['report']})
    def test_upper_case_uuid_in_the_url(self):
        self.reported()
        res = self.client.get(detail(H1.upper()))
        self.assertEqual(200, res.status_code)
        self.assertContains(res, 'data-verdict="evacuated_source"')

    @helpers.create_mocks({service: ['report']})
    def test_a_blocked_row_says_why_and_offers_nothing(self):
        """Bandwidth left on a NIC of the old host: no flavor rebuilds it,
        so neither trim nor delete and heal is offered, and the row says
        which command heals it."""
        incidents = Incidents(bandwidth_left=True)
        self.mock_report.return_value = incidents.report
        res = self.client.get(detail(H1))
        table = res.context['allocations_table']
        blocked = [r for r in table.get_rows()
                   if r.datum.consumer == incidents.vm]
        self.assertTrue(blocked)
        for row in blocked:
            self.assertEqual([], table.get_row_actions(row.datum))
        self.assertContains(res, 'No repair here: it holds '
                                 'NET_BW_EGR_KILOBIT_PER_SEC=1000 on '
                                 'host1-nic')
        self.assertContains(res, 'nova-manage placement heal_allocations '
                                 '--instance %s' % incidents.vm)
        self.assertNotContains(res, sel_link(incidents.vm, H1, 'trim'))

    @helpers.create_mocks({service: ['report']})
    def test_incomplete_consumer_offers_set_owner(self):
        incidents = self.reported()
        res = self.client.get(detail(H3))
        self.assertContains(res, 'data-verdict="incomplete_consumer"')
        self.assertContains(res, sel_link(incidents.legacy, H3, 'set_owner'))
        self.assertContains(res, 'Set project and user')

    @helpers.create_mocks({service: ['report', 'names']})
    def test_incomplete_consumer_names_its_servers_owner(self):
        """The reason names the project and user Keystone knows, not
        their ids."""
        self.reported()
        self.mock_names.return_value = {'projects': {'p': 'web'},
                                        'users': {'u': 'alice'}}
        res = self.client.get(detail(H3))
        self.assertContains(res, 'its server belongs to project web, user '
                                 'alice')

    @helpers.create_mocks({service: ['report']})
    def test_malformed_provider_is_404(self):
        for bad in ('not-a-uuid', H1[:-1], H1 + 'a', '..%2F'):
            res = self.client.get(INDEX + bad + '/')
            self.assertEqual(404, res.status_code, bad)
        self.mock_report.assert_not_called()
