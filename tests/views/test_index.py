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

"""The hypervisor list: mismatched providers, worst first."""

import time
from unittest import mock

from horizon import exceptions as horizon_exc
from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard import sweep
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write
from tests.views.base import AdminViewTests
from tests.views.base import alerts
from tests.views.base import assert_named
from tests.views.base import batch_message
from tests.views.base import DELETE_PROVIDER
from tests.views.base import detail
from tests.views.base import flat
from tests.views.base import GONE
from tests.views.base import GONE_BUSY
from tests.views.base import H1
from tests.views.base import H2
from tests.views.base import H3
from tests.views.base import H4
from tests.views.base import helpers
from tests.views.base import Incidents
from tests.views.base import INDEX
from tests.views.base import preview_link
from tests.views.base import provider_row
from tests.views.base import REPAIR
from tests.views.base import signed_rows
from tests.views.base import uid
from tests.views.fakes import provider_plan


class IndexTests(AdminViewTests):
    @helpers.create_mocks({service: ['report']})
    def test_lists_mismatched_providers_worst_first(self):
        incidents = self.reported()
        res = self.client.get(INDEX)
        self.assertTemplateUsed(res, 'orphaned_allocations/index.html')
        rows = res.context['providers_table'].data
        # The engine's order, healthy host4 left out, empty orphan kept.
        self.assertEqual(
            [p.provider.name for p in incidents.report.providers
             if p.provider.uuid != H4],
            [r.provider.name for r in rows])
        self.assertEqual(['host3', 'gone-busy', 'host1', 'host2', 'gone'],
                         [r.provider.name for r in rows])
        self.assertContains(res, 'href="%s"' % detail(H1))
        self.assertContains(res, 'Evacuated source: 1')
        self.assertContains(res, 'Missing: 1, Incomplete consumer: 1, '
                                 'Unknown consumer: 1, Protected: 1')
        self.assertContains(res, 'Forced down')
        self.assertContains(res, 'No compute node (orphaned provider)')
        self.assertContains(res, '512 / 0')
        self.assertNotContains(res, 'host4')
        self.mock_report.assert_called_once_with(mock.ANY)
        self.assertEqual([], self.messages_seen)

    @helpers.create_mocks({service: ['report']})
    def test_the_index_says_what_nova_hid_or_did_not_answer(self):
        """A policy rule the panel's user lacks (the host of a server left
        out), and a node Nova's listing left out without answering for
        it alone: both said above the table, their rows protected."""
        from tests.unit.cloud import Cloud
        cloud = Cloud()
        vm = cloud.server('vm', None, hidden=(m.EXTENDED_ATTRIBUTES_RULE,))
        cloud.allocate(vm, H1)
        quiet = cloud.gone('quiet')
        cloud.tag(quiet)
        cloud.unanswered.add(quiet)
        self.mock_report.return_value = classify.audit(cloud.snapshot(),
                                                       min_age=0)
        warnings = alerts(self.client.get(INDEX))
        self.assertEqual([], self.messages_seen.texts('warning'))
        self.assertEqual(2, len(warnings), warnings)
        self.assertIn('lacks the policy rule %s' %
                      m.EXTENDED_ATTRIBUTES_RULE, warnings[0])
        self.assertIn('left out quiet', warnings[1])

    @helpers.create_mocks({service: ['report', 'refresh']})
    def test_show_all_and_refresh(self):
        self.reported()
        res = self.client.get(INDEX, {'show': 'all'})
        names = [r.provider.name for r in res.context['providers_table'].data]
        self.assertEqual('host4', names[-1])
        self.assertEqual(6, len(names))
        self.assertContains(res, 'Show mismatched only')
        # Refresh is a button of the table's form, posted with its CSRF
        # token to the page shown.
        self.assertContains(res, 'name="action" type="submit" '
                                 'value="providers__refresh"')
        self.assertContains(res, 'action="%s?show=all" method="POST"'
                            % INDEX)
        self.assertNotContains(res, 'refresh=1')
        # It asks for a sweep and comes back at once.
        res = self.client.post(INDEX + '?show=all',
                               {'action': 'providers__refresh'})
        self.assertRedirectsNoFollow(res, INDEX + '?show=all')
        self.mock_refresh.assert_called_once_with(mock.ANY)

    @helpers.create_mocks({service: ['report']})
    def test_the_toggles_label_follows_each_request(self):
        """Horizon keeps one instance of a table action for every table
        and request: a label written on it by one request would stay for
        the next user."""
        self.reported()
        self.assertContains(self.client.get(INDEX, {'show': 'all'}),
                            'Show mismatched only')
        res = self.client.get(INDEX)
        self.assertContains(res, 'Show all hypervisors')
        self.assertNotContains(res, 'Show mismatched only')

    @helpers.create_mocks({service: ['report']})
    def test_only_compute_nodes_count_as_hypervisors(self):
        """A routed network's segment provider is Neutron's root, no
        hypervisor: not in the count of the header."""
        incidents = Incidents()
        snapshot = incidents.snapshot
        segment = uid('Neutron segment id 2c1f7d3a')
        snapshot.providers[segment] = m.Provider(
            segment, 'Neutron segment id 2c1f7d3a', 1, segment)
        snapshot.inventory_classes[segment] = ('IPV4_ADDRESS',)
        self.mock_report.return_value = classify.audit(snapshot, min_age=600)
        res = self.client.get(INDEX)
        text = ' '.join(res.content.decode().split())
        self.assertIn('of 6 hypervisors need attention.', text)

    @helpers.create_mocks({service: ['report', 'refresh']})
    def test_a_get_never_starts_a_sweep(self):
        """A link (a cross-site one too) cannot make the panel sweep."""
        self.reported()
        for query in ({'refresh': '1'}, {'show': 'all', 'refresh': 'yes'},
                      {'action': 'providers__refresh'},
                      {'table': 'providers', 'action': 'refresh'}):
            res = self.client.get(INDEX, query)
            self.assertEqual(200, res.status_code, query)
        self.mock_refresh.assert_not_called()

    @helpers.create_mocks({service: ['report', 'refresh']})
    def test_a_refresh_without_the_csrf_token_is_refused(self):
        from django.test import Client
        self.reported()
        client = Client(enforce_csrf_checks=True)
        client.cookies = self.client.cookies
        res = client.post(INDEX, {'action': 'providers__refresh'})
        self.assertContains(res, 'CSRF', status_code=403)
        self.mock_refresh.assert_not_called()

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'refresh']})
    def test_a_refresh_that_cannot_start_says_so(self):
        self.reported()
        self.mock_refresh.side_effect = ks_exc.ConnectFailure('down')
        res = self.client.post(INDEX, {'action': 'providers__refresh'})
        self.assertRedirectsNoFollow(res, INDEX)
        (error,) = self.messages_seen.texts('error')
        self.assertTrue(error.startswith('Unable to start a sweep.'), error)

    @helpers.create_mocks({service: ['report', 'refresh']})
    def test_a_refresh_behind_a_running_sweep_says_it_waits(self):
        self.reported()
        self.mock_refresh.return_value = False
        res = self.client.post(INDEX, {'action': 'providers__refresh'})
        self.assertRedirectsNoFollow(res, INDEX)
        self.assertEqual(['A sweep is already running: the full sweep you '
                          'asked for starts when it ends.'],
                         self.messages_seen.texts('info'))
        self.mock_refresh.return_value = True
        self.client.post(INDEX, {'action': 'providers__refresh'})
        self.assertEqual(1, len(self.messages_seen.texts('info')))

    @helpers.create_mocks({service: ['report', 'sweep_state']})
    def test_the_first_page_shows_the_sweep_instead_of_waiting(self):
        self.mock_report.return_value = None
        self.mock_sweep_state.return_value = {
            'version': None, 'age': None, 'sweeping': True,
            'progress': {'full': True, 'elapsed': 3, 'read': {
                'servers': [1000, None], 'migrations': [0, None],
                'providers': [4, 20]}}}
        res = self.client.get(INDEX)
        self.assertEqual(200, res.status_code)
        self.assertContains(res, 'The first audit of this cloud is running')
        self.assertContains(res, 'data-sweep-url="%ssweep/"' % INDEX)
        self.assertContains(res, 'class="orphan-sweep-progress"')
        self.assertEqual([], res.context['providers_table'].data)
        res = self.client.get(INDEX + 'sweep/')
        self.assertEqual(self.mock_sweep_state.return_value, res.json())

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['sweep_state']})
    def test_the_page_names_the_version_of_the_report_it_shows(self):
        """Its script swaps in a newer one: the page names the version it
        was read from, not the newest published meanwhile; a page that
        could read none names the newest, or it would reload itself over
        and over."""
        self.mock_sweep_state.return_value = {'version': 'v9',
                                              'sweeping': False}
        shown = sweep.Current(sweep.Shown('v7', 600, Incidents().report),
                              None)
        with mock.patch.object(sweep, 'current', return_value=shown):
            res = self.client.get(INDEX)
        self.assertContains(res, 'data-version="v7"')
        self.assertEqual([], self.messages_seen.texts('error'))
        with mock.patch.object(sweep, 'current',
                               side_effect=RuntimeError('cache')):
            res = self.client.get(INDEX)
        self.assertContains(res, 'data-version="v9"')
        self.assertEqual(['Unable to read the audit of this cloud: no '
                          'repair is possible now.'],
                         [t.split('…')[0].strip()
                          for t in self.messages_seen.texts('error')])

    @helpers.create_mocks({service: ['report', 'sweep_state']})
    def test_the_page_says_why_the_last_sweep_failed(self):
        self.mock_report.return_value = None
        self.mock_sweep_state.return_value = {
            'version': None, 'age': None, 'sweeping': False,
            'progress': None, 'failure': {
                'at': time.time() - 120, 'owner': 'o', 'kind': 'timeout',
                'url': 'http://nova:8774/v2.1/os-hypervisors/detail',
                'status': None, 'timeout': 60.0, 'detail': 'timed out'}}
        res = self.client.get(INDEX)
        text = ' '.join(res.content.decode().split())
        words = ('The last audit failed 2 minutes ago: '
                 'http://nova:8774/v2.1/os-hypervisors/detail did not '
                 'answer within 60 s (ORPHAN_AUDIT_API_TIMEOUT).')
        self.assertIn(words, text)
        self.assertContains(res, 'orphan-sweep-failed alert alert-warning"')
        # The bar's poll says it too (the page open while a sweep fails).
        self.assertEqual(words, ' '.join(self.client.get(
            INDEX + 'sweep/').json()['failure'].split()))

    def test_each_way_a_sweep_fails_reads_in_words(self):
        now = time.time()

        def said(**failure):
            return str(labels.sweep_failure(dict(
                {'at': now - 5, 'owner': 'o', 'url': None, 'status': None,
                 'timeout': 60.0, 'detail': 'boom'}, **failure)))
        self.assertEqual('', labels.sweep_failure(None))
        self.assertIn(': http://placement/resource_providers answered 503: '
                      'boom', said(kind='answered', status=503,
                                   url='http://placement/resource_providers'))
        self.assertIn(': http://nova could not be reached: boom',
                      said(kind='unreachable', url='http://nova'))
        self.assertIn(': the sweeper process ended with status -9 (killed',
                      said(kind='exited', status=-9))
        self.assertIn(': boom', said(kind='error'))
        # A timeout of the cloud's own (the CLI's None): the error's text.
        self.assertIn(': boom', said(kind='timeout', timeout=None))

    @helpers.create_mocks({service: ['report']})
    def test_pages_worst_first_with_the_users_page_size(self):
        self.reported()
        names = lambda res: [  # noqa: E731
            r.provider.name for r in res.context['providers_table'].data]
        with self.settings(API_RESULT_PAGE_SIZE=2):
            first = self.client.get(INDEX)
            self.assertEqual(['host3', 'gone-busy'], names(first))
            self.assertContains(first, '5 of 6 hypervisors need '
                                       'attention.')
            self.assertContains(first, '?marker=%s"' % GONE_BUSY)
            self.assertNotContains(first, 'prev_marker')
            second = self.client.get(INDEX, {'marker': GONE_BUSY})
            self.assertEqual(['host1', 'host2'], names(second))
            self.assertContains(second, '?prev_marker=%s"' % H1)
            self.assertContains(second, '?marker=%s"' % H2)
            last = self.client.get(INDEX, {'marker': H2})
            self.assertEqual(['gone'], names(last))
            self.assertNotContains(last, 'href="?marker=')
            back = self.client.get(INDEX, {'prev_marker': H1})
            self.assertEqual(['host3', 'gone-busy'], names(back))
            everything = self.client.get(INDEX, {'show': 'all',
                                                 'marker': GONE})
            self.assertEqual(['host4'], names(everything))
            self.assertContains(everything,
                                '?prev_marker=%s&amp;show=all"' % H4)
            # A marker whose row is gone (repaired, or never there).
            stale = self.client.get(INDEX, {'marker': H4})
            self.assertEqual(['host3', 'gone-busy'], names(stale))

    @helpers.create_mocks({service: ['report', 'refresh']})
    def test_down_cell_warning(self):
        """Said once, in the page's summary (which sweep.js swaps with
        the tables), never as a message: a message kept for the next page
        (a Refresh's redirect, the page sweep.js fetches) came twice, and
        stayed after the cell was back."""
        self.mock_report.return_value = Incidents(down_cell=True).report
        self.mock_refresh.return_value = True
        self.client.post(INDEX, {'action': 'providers__refresh'})
        page = self.client.get(INDEX)
        [warning] = alerts(page)
        self.assertIn('A cell is down', warning)
        self.assertEqual([], self.messages_seen.texts('warning'))
        self.assertEqual(1, flat(page).count('A cell is down'))
        self.mock_report.return_value = Incidents().report
        self.assertEqual([], alerts(self.client.get(INDEX)))
        self.assertEqual([], self.messages_seen.texts('warning'))

    @helpers.create_mocks({service: ['report']})
    def test_down_cell_warning_names_what_is_protected(self):
        self.mock_report.return_value = Incidents(down_cell='host5').report
        response = self.client.get(INDEX)
        [warning] = alerts(response)
        self.assertIn('A cell is down', warning)
        self.assertIn('compute hosts of the down cells: host5', warning)
        # With no hypervisor listing, a provider whose compute node is gone
        # cannot be told from one of the down cell's nodes; one holding
        # nothing that nobody proved Nova's (node9) has nothing to
        # protect, and is not named.
        self.assertIn('as compute nodes: gone, gone-busy;', warning)
        self.assertIn('partial records: 1', warning)
        # None is an orphaned provider the index offers to delete.
        link = 'href="%s?provider=%%s"' % DELETE_PROVIDER
        for name in ('node9', 'host5'):
            self.assertNotContains(response, link % uid(name))
        self.assertNotContains(response, link % GONE)

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report']})
    def test_unreachable_cloud_is_a_message_not_a_500(self):
        for exc in (self.exceptions.nova,
                    ks_exc.ConnectFailure('placement is down'),
                    ks_exc.http.ServiceUnavailable(),
                    horizon_exc.ServiceCatalogException('placement')):
            self.messages_seen.clear()
            self.mock_report.side_effect = exc
            res = self.client.get(INDEX)
            self.assertEqual(200, res.status_code, exc)
            self.assertEqual([], res.context['providers_table'].data)
            self.assertEqual(1, len(self.messages_seen.texts('error')), exc)

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_fix_recommended_goes_to_the_preview(self):
        """The preview of the hypervisors ticked, as their link shows it."""
        self.reported()
        self.mock_preview.return_value = []
        res = self.client.post(INDEX, {
            'action': 'providers__fix_recommended',
            'object_ids': [H1, H3]})
        self.assertEqual((REPAIR, INDEX), preview_link(res))
        self.client.get(res['location'])
        self.client.get(REPAIR, {'provider': [H1, H3]})
        batch, link = self.mock_preview.call_args_list
        self.assertEqual(link.args[1:], batch.args[1:])
        self.assertTrue(batch.args[1])

    @helpers.create_mocks({service: ['report']})
    def test_fix_recommended_needs_a_selection(self):
        self.reported()
        res = self.client.post(INDEX, {'action': 'providers__fix_recommended'})
        self.assertEqual(200, res.status_code)
        self.assertEqual(['Please select a row before taking that action.'],
                         self.messages_seen.texts('info'))


def blocked_tree():
    """The delete preview of gone-busy's tree: gone-busy still holds
    allocations, its member gone could go."""
    return [
        repair.Row(m.Selection('', GONE_BUSY, m.DELETE_PROVIDER),
                   error='provider gone-busy still holds allocations: '
                         'repair them first'),
        provider_row(provider_plan())]


class DeleteProviderTests(AdminViewTests):
    @helpers.create_mocks({service: ['report']})
    def test_offered_only_for_an_empty_orphaned_provider(self):
        self.reported()
        res = self.client.get(INDEX)
        link = 'href="%s?provider=%%s"' % DELETE_PROVIDER
        self.assertContains(res, link % GONE)
        self.assertNotContains(res, link % GONE_BUSY)
        self.assertNotContains(res, link % H1)

    def previewing(self, *rows):
        """The index's report of :class:`Incidents`, and a provider delete
        whose preview shows ``rows``: the last row's plan."""
        self.reported()
        self.mock_preview_provider_delete.return_value = list(rows)
        return rows[-1].plan

    @helpers.create_mocks({service: ['report', 'preview_provider_delete',
                                     'delete_providers']})
    def test_preview_then_delete(self):
        plan = self.previewing(provider_row(provider_plan()))
        res = self.client.get(DELETE_PROVIDER, {'provider': GONE})
        self.mock_preview_provider_delete.assert_called_once_with(
            mock.ANY, [GONE])
        self.assertContains(res, 'COMPUTE_STATUS_DISABLED')
        self.assertContains(res, 'VCPU=8')
        self.assertContains(res, 'openstack resource provider delete %s' %
                            GONE)
        self.assertContains(res, 'value="Delete"')
        self.mock_delete_providers.return_value = [write.Outcome(
            m.Selection('', GONE, m.DELETE_PROVIDER), write.DONE,
            'done', plan, entry_id=3)]
        res = self.client.post(DELETE_PROVIDER, {'rows': signed_rows(res)})
        self.assertRedirectsNoFollow(res, INDEX)
        self.mock_delete_providers.assert_called_once_with(mock.ANY, [plan])
        self.assertEqual(('success', ['1 provider deleted.',
                                      'Delete provider gone: done.']),
                         batch_message(self.messages_seen)[:2])

    @helpers.create_mocks({service: ['report', 'preview_provider_delete']})
    def test_the_delete_is_a_danger_button_in_sentence_case(self):
        self.reported()
        res = self.client.get(INDEX)
        self.assertContains(res, 'Delete provider')
        self.assertNotContains(res, 'Delete Provider')
        self.mock_preview_provider_delete.return_value = [
            provider_row(provider_plan())]
        res = self.client.get(DELETE_PROVIDER, {'provider': GONE})
        self.assertContains(res, 'class="btn btn-danger" type="submit" '
                                 'value="Delete"')

    @helpers.create_mocks({service: ['report', 'preview_provider_delete']})
    def test_the_preview_names_each_provider_once(self):
        """By its name, its uuid one small grey id away: a refused row's
        name comes from the last audit."""
        self.previewing(*blocked_tree())
        res = self.client.get(DELETE_PROVIDER, {'provider': GONE_BUSY})
        assert_named(res, GONE, GONE_BUSY)
        self.assertContains(res, '<span class="orphan-name">gone-busy</span>')

    @helpers.create_mocks({service: ['report', 'preview_provider_delete',
                                     'delete_providers']})
    def test_a_tree_with_a_blocked_member_cannot_be_confirmed(self):
        self.previewing(*blocked_tree())
        res = self.client.get(DELETE_PROVIDER, {'provider': GONE_BUSY})
        self.assertContains(res, 'still holds allocations')
        self.assertNotContains(res, 'value="Delete"')
        self.assertNotIn('rows', res.context['form'].initial)
        res = self.client.post(DELETE_PROVIDER, {'rows': ''})
        self.assertTrue(res.context['form'].non_field_errors())
        self.mock_delete_providers.assert_not_called()

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview_provider_delete',
                                     'delete_providers']})
    def test_placement_refusal_is_a_message(self):
        plan = self.previewing(provider_row(provider_plan()))
        signed = signed_rows(self.client.get(DELETE_PROVIDER,
                                             {'provider': GONE}))
        self.mock_delete_providers.return_value = [write.Outcome(
            m.Selection('', GONE, m.DELETE_PROVIDER), write.FAILED,
            'Placement failed: resource provider in use', plan)]
        res = self.client.post(DELETE_PROVIDER, {'rows': signed})
        self.assertRedirectsNoFollow(res, INDEX)
        self.assertEqual(('error', ['0 providers deleted, 1 failed.',
                                    'Delete provider gone failed: '
                                    'Placement failed: resource provider '
                                    'in use']),
                         batch_message(self.messages_seen)[:2])
