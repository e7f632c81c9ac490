"""The panel's views with the engine's real data classes and mocked I/O."""

import json
from unittest import mock

from django.test.utils import override_settings
from django.urls import reverse

import horizon
from openstack_auth import utils as auth_utils

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard import repair
from orphan_dashboard import service
from tests.unit.cloud import Cloud, uid
from tests.views.base import AdminViewTests, helpers

INDEX = reverse('horizon:admin:orphaned_allocations:index')
REPAIR = reverse('horizon:admin:orphaned_allocations:repair')
RESTORE = reverse('horizon:admin:orphaned_allocations:restore')
H1, H2, H3 = uid('host1'), uid('host2'), uid('host3')
EVIL = '<script>alert(1)</script>'


def detail(provider):
    return reverse('horizon:admin:orphaned_allocations:detail',
                   args=[provider])


def evacuation_report():
    """host1 dead and forced down; vm1 evacuated to host2; host3 healthy."""
    cloud = Cloud()
    cloud.host('host1', state='down', forced_down=True)
    vm = cloud.server(EVIL, 'host2')
    cloud.allocate(vm, H1)
    cloud.allocate(vm, H2)
    cloud.migration('evac', vm, 'done', kind='evacuation')
    ok = cloud.server('ok', 'host3')
    cloud.allocate(ok, H3)
    resize = cloud.server('resizing', 'host3')
    cloud.allocate(resize, H3)
    mig = cloud.migration('resize', resize, 'finished', kind='resize',
                          source='host2', dest='host3')
    cloud.allocate(mig, H2)
    return classify.audit(cloud.snapshot()), vm, mig


def plan_row(vm, fingerprint='0123456789abcdef'):
    plan = m.Plan(m.TRIM, vm, H1, m.EVACUATED_SOURCE, 'evacuated', 1, 'p',
                  'u', {H1: {'VCPU': 1}, H2: {'VCPU': 1}}, {H2: {'VCPU': 1}})
    return repair.Row(repair.Selection(vm, H1, m.TRIM), plan=plan,
                      fingerprint=fingerprint)


class RegistrationTests(AdminViewTests):
    def test_panel_is_registered_in_admin_compute(self):
        dashboard = horizon.get_dashboard('admin')
        panel = dashboard.get_panel('orphaned_allocations')
        self.assertEqual('orphaned_allocations', panel.slug)
        group = dashboard.get_panel_group('compute')
        self.assertIn(panel, list(group))
        self.assertEqual('/admin/orphaned_allocations/', INDEX)


class AdminPolicyTests(AdminViewTests):
    @override_settings(POLICY_CHECK_FUNCTION='openstack_auth.policy.check')
    def test_panel_visible_to_admin_with_policy(self):
        self.request.user = auth_utils.get_user(self.request)
        panel = horizon.get_dashboard('admin').get_panel(
            'orphaned_allocations')
        self.assertTrue(panel.can_access({'request': self.request}))


class IndexTests(AdminViewTests):
    @helpers.create_mocks({service: ['report']})
    def test_index_lists_mismatched_providers_worst_first(self):
        report, _vm, _mig = evacuation_report()
        self.mock_report.return_value = report
        res = self.client.get(INDEX)
        self.assertTemplateUsed(res, 'admin/orphaned_allocations/index.html')
        rows = res.context['providers_table'].data
        self.assertEqual(['host1'], [r.provider.name for r in rows])
        self.assertContains(res, 'evacuated_source: 1')
        self.assertContains(res, 'forced down')
        self.assertContains(res, '1 / 0')
        self.mock_report.assert_called_once_with(mock.ANY, refresh=False)

    @helpers.create_mocks({service: ['report']})
    def test_show_all_and_refresh(self):
        report, _vm, _mig = evacuation_report()
        self.mock_report.return_value = report
        res = self.client.get(INDEX + '?show=all&refresh=1')
        names = [r.provider.name for r in res.context['providers_table'].data]
        self.assertEqual('host1', names[0])
        self.assertEqual({'host1', 'host2', 'host3'}, set(names))
        self.mock_report.assert_called_once_with(mock.ANY, refresh=True)

    @helpers.create_mocks({service: ['report']})
    def test_unreachable_cloud_is_a_message_not_a_500(self):
        self.mock_report.side_effect = self.exceptions.nova
        res = self.client.get(INDEX)
        self.assertEqual(200, res.status_code)
        self.assertEqual([], res.context['providers_table'].data)
        self.assertMessageCount(res, error=1)

    @helpers.create_mocks({service: ['report']})
    def test_down_cell_warning(self):
        cloud = Cloud()
        cloud.servers[uid('lost')] = m.Server(uid('lost'), status='UNKNOWN')
        self.mock_report.return_value = classify.audit(cloud.snapshot())
        res = self.client.get(INDEX)
        self.assertMessageCount(res, warning=1)

    @helpers.create_mocks({service: ['report']})
    def test_fix_recommended_goes_to_the_preview(self):
        report, _vm, _mig = evacuation_report()
        self.mock_report.return_value = report
        res = self.client.post(INDEX, {
            'action': 'providers__fix_recommended', 'object_ids': [H1]})
        self.assertRedirectsNoFollow(res, REPAIR + '?provider=' + H1)


class DetailTests(AdminViewTests):
    @helpers.create_mocks({service: ['report', 'inventories', 'history']})
    def test_detail_shows_verdicts_and_only_allowed_actions(self):
        report, vm, mig = evacuation_report()
        self.mock_report.return_value = report
        self.mock_inventories.return_value = {'VCPU': {'total': 8}}
        self.mock_history.return_value = []
        res = self.client.get(detail(H1))
        self.assertContains(res, 'evacuated_source')
        self.assertContains(res, 'evacuated from host1 to host2')
        self.assertContains(res, 'sel=%s%%3A%s%%3Atrim' % (vm, H1))
        self.assertNotContains(res, EVIL)
        self.assertContains(res, '&lt;script&gt;')
        res = self.client.get(detail(H2))
        self.assertContains(res, 'protected')
        self.assertNotContains(res, 'sel=%s' % mig)

    @helpers.create_mocks({service: ['report']})
    def test_unknown_provider_redirects_with_error(self):
        self.mock_report.return_value = evacuation_report()[0]
        res = self.client.get(detail(uid('nowhere')))
        self.assertRedirectsNoFollow(res, INDEX)

    def test_malformed_provider_is_404(self):
        res = self.client.get(INDEX + 'not-a-uuid/')
        self.assertEqual(404, res.status_code)


class RepairTests(AdminViewTests):
    @helpers.create_mocks({service: ['report', 'preview']})
    def test_preview_shows_before_after_and_commands(self):
        report, vm, _mig = evacuation_report()
        self.mock_report.return_value = report
        row = plan_row(vm)
        self.mock_preview.return_value = [row]
        res = self.client.get(REPAIR, {'sel': '%s:%s:trim' % (vm, H1)})
        self.assertEqual(200, res.status_code)
        self.assertContains(res, row.commands[0].replace("'", '&#x27;'))
        self.assertContains(res, 'VCPU=1')
        (selections,) = self.mock_preview.call_args[0][1:]
        self.assertEqual([repair.Selection(vm, H1, m.TRIM)], selections)
        rows = json.loads(res.context['form'].initial['rows'])
        self.assertEqual([['%s:%s:trim:' % (vm, H1), '0123456789abcdef']],
                         rows)

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_preview_of_a_provider_takes_its_recommended_rows(self):
        report, vm, _mig = evacuation_report()
        self.mock_report.return_value = report
        self.mock_preview.return_value = [plan_row(vm)]
        self.client.get(REPAIR, {'provider': H1})
        (selections,) = self.mock_preview.call_args[0][1:]
        self.assertEqual([repair.Selection(vm, H1, m.TRIM)], selections)

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_forged_selection_in_the_url_is_refused(self):
        for sel in ('x:y:trim', '%s:%s:drop_table' % (H1, H2), 'garbage'):
            res = self.client.get(REPAIR, {'sel': sel})
            self.assertEqual(302, res.status_code)
        self.mock_preview.assert_not_called()

    @helpers.create_mocks({service: ['apply']})
    def test_confirm_applies_and_reports_each_row(self):
        vm, other = uid('vm'), uid('other')
        self.mock_apply.return_value = [
            repair.Outcome(repair.Selection(vm, H1, m.TRIM), repair.DONE,
                           'trim done'),
            repair.Outcome(repair.Selection(other, H1, m.DELETE),
                           repair.SKIPPED, 'allocations changed')]
        rows = [['%s:%s:trim:' % (vm, H1), '0123456789abcdef'],
                ['%s:%s:delete:' % (other, H1), 'fedcba9876543210']]
        res = self.client.post(REPAIR, {'rows': json.dumps(rows)})
        self.assertNoFormErrors(res)
        self.assertRedirectsNoFollow(res, INDEX)
        self.mock_apply.assert_called_once_with(
            mock.ANY, [repair.Selection(vm, H1, m.TRIM),
                       repair.Selection(other, H1, m.DELETE)],
            {vm: '0123456789abcdef', other: 'fedcba9876543210'})
        self.assertMessageCount(success=1, warning=1, info=1)

    @helpers.create_mocks({service: ['apply']})
    def test_forged_post_is_refused_without_writing(self):
        for rows in ([['../../etc:%s:trim:' % H1, '0123456789abcdef']],
                     [['%s:%s:rm:' % (H1, H2), '0123456789abcdef']],
                     [['%s:%s:trim:' % (H1, H2), 'not-a-fingerprint']],
                     'not json', []):
            res = self.client.post(REPAIR, {'rows': json.dumps(rows)})
            self.assertEqual(200, res.status_code)
            self.assertTrue(res.context['form'].errors)
        self.mock_apply.assert_not_called()


class RestoreAndHistoryTests(AdminViewTests):
    def _entry(self):
        from orphan_dashboard.models import JournalEntry
        return JournalEntry(id=7, action=m.TRIM, verdict=m.MOVED,
                            provider=H1, consumer=uid('vm'),
                            before={H1: {'VCPU': 1}}, after={},
                            status=JournalEntry.APPLIED, user_name='admin',
                            source='panel')

    @helpers.create_mocks({service: ['report', 'history']})
    def test_history_tab_and_export(self):
        self.mock_report.return_value = evacuation_report()[0]
        self.mock_history.return_value = [self._entry()]
        res = self.client.get(INDEX + '?tab=orphaned_allocations__history')
        self.assertContains(res, uid('vm'))
        self.assertContains(res, 'restore?entry=7'.replace('?', '/?'))
        res = self.client.get(reverse(
            'horizon:admin:orphaned_allocations:export', args=['csv']))
        self.assertEqual('text/csv', res['Content-Type'])
        self.assertIn(uid('vm'), res.content.decode())

    @helpers.create_mocks({service: ['journal_entries', 'preview_restore',
                                     'restore']})
    def test_restore_preview_and_confirm(self):
        entry = self._entry()
        self.mock_journal_entries.return_value = [entry]
        plan = m.Plan(m.RESTORE, entry.consumer, H1, m.MOVED, '', None, 'p',
                      'u', {}, {H1: {'VCPU': 1}})
        self.mock_preview_restore.return_value = [repair.Row(
            repair.Selection(entry.consumer, H1, m.RESTORE), plan=plan,
            fingerprint='0123456789abcdef')]
        res = self.client.get(RESTORE, {'entry': 7})
        self.assertContains(res, 'VCPU=1')
        self.mock_restore.return_value = [repair.Outcome(
            repair.Selection(entry.consumer, H1, m.RESTORE), repair.DONE,
            'restore done')]
        res = self.client.post(RESTORE, {
            'rows': json.dumps([[7, '0123456789abcdef']])})
        self.assertRedirectsNoFollow(res, INDEX)
        self.mock_restore.assert_called_once_with(
            mock.ANY, [entry], {entry.consumer: '0123456789abcdef'})


class NonAdminTests(helpers.TestCase):
    """A member cannot see the panel nor post an action."""

    @helpers.create_mocks({service: ['report', 'apply']})
    def test_member_is_refused(self):
        res = self.client.get(INDEX)
        self.assertEqual(403, res.status_code)
        res = self.client.post(REPAIR, {'rows': json.dumps(
            [['%s:%s:trim:' % (H1, H2), '0123456789abcdef']])})
        self.assertEqual(403, res.status_code)
        self.mock_report.assert_not_called()
        self.mock_apply.assert_not_called()

    @override_settings(POLICY_CHECK_FUNCTION='openstack_auth.policy.check')
    def test_panel_hidden_from_member_with_policy(self):
        self.request.user = auth_utils.get_user(self.request)
        panel = horizon.get_dashboard('admin').get_panel(
            'orphaned_allocations')
        self.assertFalse(panel.can_access({'request': self.request}))
