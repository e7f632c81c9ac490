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

import os
import tempfile
from unittest import mock

from django.conf import settings
from django.test.utils import override_settings
from django.urls import reverse
import pytest

import horizon
from openstack_auth import policy as auth_policy
from openstack_auth import utils as auth_utils

import orphan_dashboard
from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.models import JournalEntry
from orphan_dashboard.writing import journal
from orphan_dashboard.writing import repair
from tests.views.base import AdminViewTests
from tests.views.base import DELETE_PROVIDER
from tests.views.base import detail
from tests.views.base import encoded
from tests.views.base import GONE
from tests.views.base import H1
from tests.views.base import H2
from tests.views.base import helpers
from tests.views.base import INDEX
from tests.views.base import MemberViewTests
from tests.views.base import REPAIR
from tests.views.base import RESTORE
from tests.views.base import signed_rows
from tests.views.base import uid
from tests.views.fakes import dead_host1
from tests.views.fakes import entry
from tests.views.fakes import FakeCloud
from tests.views.fakes import HISTORY_TAB
from tests.views.fakes import one_of_each
from tests.views.fakes import provider_plan
from tests.views.fakes import STRANGER

POLICY = 'openstack_auth.policy.check'
REFUSED = ('You are not allowed to change allocations in Placement: '
           'nothing was written.')
REFUSED_DELETE = ('You are not allowed to delete resource providers: '
                  'nothing was deleted.')
REFUSED_DECOMMISSION = ('You are not allowed to decommission hypervisors '
                        '(it changes allocations, deletes resource '
                        'providers and compute services): nothing was '
                        'written.')


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
        self.reported()
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
        self.reported()
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


DECOMMISSION = reverse('horizon:admin:orphaned_allocations:decommission')
ADMIN_ONLY = open(os.path.join(os.path.dirname(orphan_dashboard.__file__),
                               'conf', 'placement_policy.yaml')).read()
NO_ALLOCATIONS = ADMIN_ONLY + '"placement:allocations:update": "!"\n'
NO_PROVIDER_DELETE = (ADMIN_ONLY +
                      '"placement:resource_providers:delete": "!"\n')
NO_SERVICE_DELETE = '"os_compute_api:os-services:delete": "!"\n'
NO_PROVIDER_CREATE = (ADMIN_ONLY +
                      '"placement:resource_providers:create": "!"\n')
REFUSED_RESTORE_PROVIDERS = (
    'You are not allowed to re-create resource providers (a restore '
    'creates the provider and writes its inventories, traits and '
    'aggregates): nothing was written.')


def provider_and_consumer_entries():
    """A decommission's journal: host9's provider deleted (entry 9) and
    a consumer trimmed off it (entry 8)."""
    host9 = uid('host9')
    record = {'uuid': host9, 'name': 'host9', 'generation': 2,
              'parent_provider_uuid': None, 'root_provider_uuid': host9,
              'inventories': {'VCPU': {'total': 8}}, 'traits': [],
              'aggregates': []}
    gone = entry(
        9, consumer='', kind=JournalEntry.PROVIDER, action=m.DELETE_PROVIDER,
        subject=host9, provider=host9, touched=host9, before=record,
        after=None)
    trimmed = entry(8, provider=host9, touched=host9,
                    before={host9: {'VCPU': 1}})
    return gone, trimmed


def restore_rows(gone, trimmed):
    """``{entry id: preview row}`` of those two entries."""
    host9 = gone.provider
    plan = m.Plan(m.RESTORE, trimmed.consumer, host9, m.MOVED, '', None,
                  'p', 'u', {}, {host9: {'VCPU': 1}})
    return {
        gone.id: repair.Row(m.Selection('', host9, m.RESTORE),
                            plan=repair.ProviderPlan(
                                m.RESTORE, host9, 'host9', None,
                                gone.before)),
        trimmed.id: repair.Row(m.Selection(trimmed.consumer, host9,
                                           m.RESTORE), plan=plan)}


def with_policy(test, placement=ADMIN_ONLY, compute=None):
    """The policy engine on, Placement's rules (and compute overrides)
    from these texts."""
    files = dict(settings.POLICY_FILES)
    for scope, rules in (('placement', placement), ('compute', compute)):
        if rules is not None:
            path = os.path.join(tempfile.mkdtemp(), scope + '_policy.yaml')
            with open(path, 'w') as f:
                f.write(rules)
            files[scope] = path
    auth_policy.reset()
    test.addCleanup(auth_policy.reset)
    return override_settings(POLICY_CHECK_FUNCTION=POLICY,
                             POLICY_FILES=files)


class WritePolicyTests(AdminViewTests):
    """The write views check the rules the tables' buttons declare, for
    a preview and for its confirm: a direct URL or a replayed confirm of a
    user the policy refuses writes nothing and journals nothing."""

    databases = {'default', 'orphan_journal'}

    def journaled(self):
        return JournalEntry.objects.using(journal.DATABASE).count()

    def assert_refused(self, res, text):
        self.assertRedirectsNoFollow(res, INDEX)
        self.assertEqual([text], self.messages_seen.texts('error'))
        self.messages_seen.clear()

    @pytest.mark.error_messages
    def test_repair_preview_and_confirm(self):
        snapshot, rows = one_of_each()
        cloud = FakeCloud(snapshot)
        self.patched(*cloud.patches())
        vm, provider = rows[m.EVACUATED_SOURCE]
        query = {'sel': encoded(vm, provider, m.TRIM)}
        signed = signed_rows(self.client.get(REPAIR, query))
        before = cloud.snapshot
        with mock.patch.object(service, 'preview') as preview, \
                with_policy(self, NO_ALLOCATIONS):
            self.assert_refused(self.client.get(REPAIR, query), REFUSED)
            preview.assert_not_called()
            self.assert_refused(self.client.post(REPAIR, {'rows': signed}),
                                REFUSED)
        self.assertIs(before, cloud.snapshot)
        self.assertEqual(0, self.journaled())
        # Placement's rule is the one refused: with it, the admin writes.
        with with_policy(self):
            res = self.client.post(REPAIR, {'rows': signed})
        self.assertRedirectsNoFollow(res, INDEX)
        self.assertEqual([], self.messages_seen.texts('error'))
        self.assertLessEqual(cloud.verdicts(vm), {m.OK})
        self.assertEqual(1, self.journaled())

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'journal_entries',
                                     'preview_restore', 'restore']})
    def test_restore_preview_and_confirm(self):
        self.reported()
        journaled = entry()
        self.mock_journal_entries.return_value = [journaled]
        plan = m.Plan(m.RESTORE, journaled.consumer, H1, m.MOVED, '', None,
                      'p', 'u', {}, {H1: {'VCPU': 1}})
        self.mock_preview_restore.return_value = [(journaled, repair.Row(
            m.Selection(journaled.consumer, H1, m.RESTORE), plan=plan))]
        signed = signed_rows(self.client.get(RESTORE, {'entry': 7}))
        self.mock_preview_restore.reset_mock()
        self.mock_journal_entries.reset_mock()
        with with_policy(self, NO_ALLOCATIONS):
            self.assert_refused(self.client.get(RESTORE, {'entry': 7}),
                                REFUSED)
            self.assert_refused(self.client.post(RESTORE, {'rows': signed}),
                                REFUSED)
        self.mock_preview_restore.assert_not_called()
        self.mock_journal_entries.assert_not_called()
        self.mock_restore.assert_not_called()
        self.assertEqual(0, self.journaled())
        self.mock_restore.return_value = []
        with with_policy(self):
            self.assertEqual(200, self.client.get(
                RESTORE, {'entry': 7}).status_code)
            self.assertRedirectsNoFollow(
                self.client.post(RESTORE, {'rows': signed}), INDEX)
        self.mock_restore.assert_called_once_with(mock.ANY, [journaled],
                                                  {7: plan})

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'journal_entries',
                                     'preview_restore', 'restore']})
    def test_restoring_a_provider_needs_the_provider_rules(self):
        """Restoring a provider entry creates the provider and writes its
        inventories, traits and aggregates: a user allowed allocations
        only is refused it, on the confirm too, and still restores
        allocations."""
        self.reported()
        gone, trimmed = provider_and_consumer_entries()
        journaled = {e.id: e for e in (gone, trimmed)}
        self.mock_journal_entries.side_effect = (
            lambda request, ids: [journaled[i] for i in ids])
        rows = restore_rows(gone, trimmed)
        self.mock_preview_restore.side_effect = (
            lambda request, entries: [(e, rows[e.id]) for e in entries])
        with with_policy(self):
            signed = signed_rows(self.client.get(RESTORE, {'entry': [9, 8]}))
        self.mock_preview_restore.reset_mock()
        with with_policy(self, NO_PROVIDER_CREATE):
            self.assert_refused(self.client.get(RESTORE, {'entry': [9, 8]}),
                                REFUSED_RESTORE_PROVIDERS)
            self.assert_refused(self.client.post(RESTORE, {'rows': signed}),
                                REFUSED_RESTORE_PROVIDERS)
            self.mock_preview_restore.assert_not_called()
            self.mock_restore.assert_not_called()
            self.assertEqual(0, self.journaled())
            self.mock_restore.return_value = []
            only_allocations = signed_rows(self.client.get(
                RESTORE, {'entry': 8}))
            self.assertRedirectsNoFollow(self.client.post(
                RESTORE, {'rows': only_allocations}), INDEX)
        self.assertEqual([], self.messages_seen.texts('error'))
        self.mock_restore.assert_called_once_with(
            mock.ANY, [trimmed], {8: rows[8].plan})

    @helpers.create_mocks({service: ['report', 'history']})
    def test_a_provider_restore_button_follows_the_provider_rules(self):
        self.reported()
        gone, trimmed = provider_and_consumer_entries()
        self.mock_history.return_value = ([gone, trimmed], False, False, {
            gone.subject: {9}, trimmed.subject: {8}})
        with with_policy(self):
            res = self.client.get(INDEX, HISTORY_TAB)
        self.assertContains(res, RESTORE + '?entry=9')
        self.assertContains(res, RESTORE + '?entry=8')
        with with_policy(self, NO_PROVIDER_CREATE):
            res = self.client.get(INDEX, HISTORY_TAB)
        self.assertNotContains(res, RESTORE + '?entry=9')
        self.assertContains(res, RESTORE + '?entry=8')

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview_provider_delete',
                                     'delete_providers']})
    def test_delete_provider_preview_and_confirm(self):
        self.reported()
        plan = provider_plan()
        self.mock_preview_provider_delete.return_value = [repair.Row(
            m.Selection('', GONE, m.DELETE_PROVIDER), plan=plan)]
        query = {'provider': GONE}
        signed = signed_rows(self.client.get(DELETE_PROVIDER, query))
        self.mock_preview_provider_delete.reset_mock()
        with with_policy(self, NO_PROVIDER_DELETE):
            self.assert_refused(self.client.get(DELETE_PROVIDER, query),
                                REFUSED_DELETE)
            self.assert_refused(self.client.post(
                DELETE_PROVIDER, {'rows': signed}), REFUSED_DELETE)
        self.mock_preview_provider_delete.assert_not_called()
        self.mock_delete_providers.assert_not_called()
        self.assertEqual(0, self.journaled())
        # Changing allocations is not needed to delete an empty provider.
        self.mock_delete_providers.return_value = []
        with with_policy(self, NO_ALLOCATIONS):
            self.assertEqual(200, self.client.get(
                DELETE_PROVIDER, query).status_code)
            self.assertRedirectsNoFollow(self.client.post(
                DELETE_PROVIDER, {'rows': signed}), INDEX)
        self.mock_delete_providers.assert_called_once_with(mock.ANY, [plan])

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview_decommission',
                                     'decommission_apply']})
    def test_decommission_needs_all_three_rules(self):
        incidents, plan = dead_host1()
        self.mock_report.return_value = incidents.report
        self.mock_preview_decommission.return_value = plan
        query = {'provider': H1}
        signed = signed_rows(self.client.get(DECOMMISSION, query))
        self.mock_preview_decommission.reset_mock()
        for placement_rules, compute_rules in (
                (NO_ALLOCATIONS, None), (NO_PROVIDER_DELETE, None),
                (ADMIN_ONLY, NO_SERVICE_DELETE)):
            with with_policy(self, placement_rules, compute_rules):
                self.assert_refused(self.client.get(DECOMMISSION, query),
                                    REFUSED_DECOMMISSION)
                self.assert_refused(self.client.post(
                    DECOMMISSION, {'rows': signed}), REFUSED_DECOMMISSION)
        self.mock_preview_decommission.assert_not_called()
        self.mock_decommission_apply.assert_not_called()
        self.assertEqual(0, self.journaled())
        self.mock_decommission_apply.return_value = []
        with with_policy(self):
            self.assertEqual(200, self.client.get(
                DECOMMISSION, query).status_code)
            # The unknown consumer ticked, as the form requires.
            self.assertRedirectsNoFollow(self.client.post(
                DECOMMISSION, {'rows': signed, 'delete_unknown': [
                    STRANGER]}), INDEX)
        self.mock_decommission_apply.assert_called_once_with(
            mock.ANY, H1, mock.ANY, {STRANGER},
            bound=plan.binding(), children=set())

    @helpers.create_mocks({service: ['report']})
    def test_the_buttons_follow_the_same_rules(self):
        """*Fix recommended* leads to a repair: hidden when allocations
        cannot be changed, like the other repair buttons."""
        self.reported()
        with with_policy(self):
            res = self.client.get(INDEX)
        self.assertContains(res, 'providers__fix_recommended')
        self.assertContains(res, 'href="%s?provider=%s"' % (DELETE_PROVIDER,
                                                            GONE))
        self.assertContains(res, 'href="%s?provider=%s"' % (DECOMMISSION,
                                                            H1))
        with with_policy(self, NO_ALLOCATIONS):
            res = self.client.get(INDEX)
        self.assertNotContains(res, 'providers__fix_recommended')
        self.assertNotContains(res, DECOMMISSION)
        self.assertContains(res, 'href="%s?provider=%s"' % (DELETE_PROVIDER,
                                                            GONE))
        with with_policy(self, ADMIN_ONLY, NO_SERVICE_DELETE):
            res = self.client.get(INDEX)
        self.assertContains(res, 'providers__fix_recommended')
        self.assertNotContains(res, DECOMMISSION)
