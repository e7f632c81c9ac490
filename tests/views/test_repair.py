"""Preview (GET) and confirm (POST): nothing is written without a preview,
and nothing forged gets through."""

import json
from unittest import mock

from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.audit import model as m
from orphan_dashboard import repair
from orphan_dashboard import service
from tests.views.base import (AdminViewTests, EVIL, FP1, FP2, H1, H2, H3,
                              INDEX, REPAIR, Incidents, encoded, helpers,
                              plan_row, uid)


class PreviewTests(AdminViewTests):
    @helpers.create_mocks({service: ['report', 'preview']})
    def test_before_after_and_commands(self):
        incidents = Incidents()
        self.mock_report.return_value = incidents.report
        row = plan_row(incidents.vm)
        self.mock_preview.return_value = [row]
        res = self.client.get(REPAIR, {'sel': '%s:%s:trim' % (incidents.vm,
                                                              H1)})
        self.assertEqual(200, res.status_code)
        self.assertTemplateUsed(res, 'admin/orphaned_allocations/repair.html')
        self.mock_preview.assert_called_once_with(
            mock.ANY, [repair.Selection(incidents.vm, H1, m.TRIM)])
        # Before on host1 and host2, after on host2 only, by name.
        previews = res.context['previews']
        self.assertEqual([('host1', H1, 'VCPU=1'), ('host2', H2, 'VCPU=1')],
                         previews[0]['before'])
        self.assertEqual([('host2', H2, 'VCPU=1')], previews[0]['after'])
        self.assertContains(res, 'Trim to current host')
        self.assertEqual(1, len(row.commands))
        self.assertIn('resource provider allocation unset', row.commands[0])
        self.assertContains(res, row.commands[0].replace("'", '&#x27;'))
        # The server's name is escaped.
        self.assertNotContains(res, EVIL)
        self.assertContains(res, 'server &lt;script&gt;alert(1)'
                                 '&lt;/script&gt; (ACTIVE)')
        self.assertContains(res, 'type="submit" value="Confirm"')
        self.assertEqual([[encoded(incidents.vm, H1, m.TRIM), FP1]],
                         json.loads(res.context['form'].initial['rows']))
        self.assertEqual([], self.messages_seen)

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_modal(self):
        incidents = Incidents()
        self.mock_report.return_value = incidents.report
        self.mock_preview.return_value = [plan_row(incidents.vm)]
        res = self.client.get(
            REPAIR, {'sel': encoded(incidents.vm, H1, m.TRIM)},
            HTTP_X_REQUESTED_WITH='XMLHttpRequest')
        self.assertTemplateUsed(res,
                                'admin/orphaned_allocations/_repair.html')
        self.assertTemplateNotUsed(res, 'base.html')

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_html_in_a_plan_is_escaped(self):
        incidents = Incidents()
        self.mock_report.return_value = incidents.report
        self.mock_preview.return_value = [
            plan_row(incidents.vm, reason='server %s moved' % EVIL),
            repair.Row(repair.Selection(incidents.bare, H3, m.HEAL),
                       error='flavor %s is gone' % EVIL)]
        res = self.client.get(REPAIR, {'sel': [
            encoded(incidents.vm, H1, m.TRIM),
            encoded(incidents.bare, H3, m.HEAL)]})
        self.assertNotContains(res, EVIL)
        self.assertContains(res, 'server &lt;script&gt;', count=2)
        self.assertContains(res, 'flavor &lt;script&gt;')

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_rows_that_cannot_be_done_are_not_submitted(self):
        incidents = Incidents()
        self.mock_report.return_value = incidents.report
        self.mock_preview.return_value = [
            plan_row(incidents.vm),
            repair.Row(repair.Selection(incidents.bare, H3, m.HEAL),
                       error='now ok: heal is not allowed',
                       fingerprint=FP2)]
        res = self.client.get(REPAIR, {'sel': [
            encoded(incidents.vm, H1, m.TRIM),
            encoded(incidents.bare, H3, m.HEAL)]})
        self.assertContains(res, 'Not possible:')
        self.assertContains(res, 'now ok: heal is not allowed')
        self.assertEqual([[encoded(incidents.vm, H1, m.TRIM), FP1]],
                         json.loads(res.context['form'].initial['rows']))

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_nothing_possible_means_no_confirm_button(self):
        incidents = Incidents()
        self.mock_report.return_value = incidents.report
        self.mock_preview.return_value = [repair.Row(
            repair.Selection(incidents.bare, H3, m.HEAL),
            error='now ok: heal is not allowed')]
        res = self.client.get(REPAIR, {'sel': encoded(incidents.bare, H3,
                                                      m.HEAL)})
        self.assertContains(res, 'nothing will be written')
        self.assertNotContains(res, 'value="Confirm"')

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_fix_recommended_takes_recommended_rows_only(self):
        """Of host2 and host3: the stale migration (with its server) and
        the missing allocation; not the unknown consumer, not protected."""
        incidents = Incidents()
        self.mock_report.return_value = incidents.report
        self.mock_preview.return_value = []
        self.client.get(REPAIR, {'provider': [H2, H3]})
        self.mock_preview.assert_called_once_with(mock.ANY, [
            repair.Selection(incidents.stale, H2, m.DELETE, incidents.old),
            repair.Selection(incidents.bare, H3, m.HEAL)])

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_a_migration_row_gets_its_instance(self):
        """From the link, or from the report when a batch left it out."""
        incidents = Incidents()
        self.mock_report.return_value = incidents.report
        self.mock_preview.return_value = []
        expected = repair.Selection(incidents.stale, H2, m.DELETE,
                                    incidents.old)
        for sel in (encoded(incidents.stale, H2, m.DELETE, incidents.old),
                    '%s:%s:delete' % (incidents.stale, H2)):
            self.mock_preview.reset_mock()
            self.client.get(REPAIR, {'sel': sel})
            self.mock_preview.assert_called_once_with(mock.ANY, [expected])

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview']})
    def test_forged_selection_is_refused(self):
        self.mock_report.return_value = Incidents().report
        vm = uid('vm')
        for query in ({'sel': 'x:y:trim'},
                      {'sel': '%s:%s:drop_table' % (vm, H1)},
                      {'sel': '%s:%s:restore' % (vm, H1)},
                      {'sel': '%s:%s:trim:not-a-uuid' % (vm, H1)},
                      {'sel': '%s:%s:trim::extra' % (vm, H1)},
                      {'sel': 'garbage'},
                      {'sel': '<b>%s</b>:%s:trim' % (vm, H1)},
                      {'provider': 'not-a-uuid'},
                      {'provider': uid('nowhere')},
                      {}):
            self.messages_seen.clear()
            res = self.client.get(REPAIR, query)
            self.assertRedirectsNoFollow(res, INDEX)
            self.assertEqual(1, len(self.messages_seen.texts('error')),
                             query)
        self.mock_preview.assert_not_called()

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview']})
    def test_preview_failure_is_a_message(self):
        incidents = Incidents()
        self.mock_report.return_value = incidents.report
        self.mock_preview.side_effect = ks_exc.ConnectFailure('down')
        res = self.client.get(REPAIR, {'sel': encoded(incidents.vm, H1,
                                                      m.TRIM)})
        self.assertRedirectsNoFollow(res, INDEX)
        self.assertEqual(1, len(self.messages_seen.texts('error')))

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_next_must_stay_on_this_site(self):
        incidents = Incidents()
        self.mock_report.return_value = incidents.report
        self.mock_preview.return_value = [plan_row(incidents.vm)]
        sel = encoded(incidents.vm, H1, m.TRIM)
        res = self.client.get(REPAIR, {'sel': sel,
                                       'next': 'https://evil.example.com/'})
        self.assertEqual(str(INDEX), res.context['view'].get_success_url())
        res = self.client.get(REPAIR, {'sel': sel, 'next': '/admin/'})
        self.assertEqual('/admin/', res.context['view'].get_success_url())


class ConfirmTests(AdminViewTests):
    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['apply']})
    def test_applies_and_reports_each_row(self):
        vm, other, third, stale, old = (uid('vm'), uid('other'),
                                        uid('third'), uid('stale'),
                                        uid('old'))
        self.mock_apply.return_value = [
            repair.Outcome(repair.Selection(vm, H1, m.TRIM), repair.DONE,
                           'trim done'),
            repair.Outcome(repair.Selection(stale, H2, m.DELETE, old),
                           repair.DONE, 'delete done'),
            repair.Outcome(repair.Selection(other, H1, m.DELETE),
                           repair.SKIPPED, 'allocations changed since the '
                           'preview; review them again'),
            repair.Outcome(repair.Selection(third, H1, m.HEAL),
                           repair.FAILED, 'Placement failed: 500 boom')]
        rows = [[encoded(vm, H1, m.TRIM), FP1],
                [encoded(stale, H2, m.DELETE, old), FP1],
                [encoded(other, H1, m.DELETE), FP2],
                [encoded(third, H1, m.HEAL), FP2]]
        res = self.client.post(REPAIR, {'rows': json.dumps(rows)})
        self.assertNoFormErrors(res)
        self.assertRedirectsNoFollow(res, INDEX)
        self.mock_apply.assert_called_once_with(
            mock.ANY, [repair.Selection(vm, H1, m.TRIM),
                       repair.Selection(stale, H2, m.DELETE, old),
                       repair.Selection(other, H1, m.DELETE),
                       repair.Selection(third, H1, m.HEAL)],
            {vm: FP1, stale: FP1, other: FP2, third: FP2})
        seen = self.messages_seen
        self.assertEqual(
            ['Trim to current host of consumer %s on provider %s: done.'
             % (vm, H1),
             'Delete of consumer %s on provider %s: done.' % (stale, H2)],
            seen.texts('success'))
        self.assertEqual(
            ['Delete of consumer %s on provider %s skipped: allocations '
             'changed since the preview; review them again' % (other, H1)],
            seen.texts('warning'))
        self.assertEqual(
            ['Heal of consumer %s on provider %s failed: Placement failed: '
             '500 boom' % (third, H1)], seen.texts('error'))
        self.assertEqual(
            ['2 allocation changes written and journaled.',
             '1 change skipped: nothing was written for it.',
             '1 change failed.'], seen.texts('info'))

    @helpers.create_mocks({service: ['apply']})
    def test_forged_post_is_refused_without_writing(self):
        vm = uid('vm')
        for rows in ([[encoded('../../etc', H1, m.TRIM), FP1]],
                     [['%s:%s:rm:' % (vm, H1), FP1]],
                     [[encoded(vm, H1, m.RESTORE), FP1]],
                     [[encoded(vm, 'not-a-uuid', m.TRIM), FP1]],
                     [[encoded(vm, H1, m.TRIM, 'not-a-uuid'), FP1]],
                     [[encoded(vm, H1, m.TRIM), 'not-a-fingerprint']],
                     [[encoded(vm, H1, m.TRIM)]],
                     [[encoded(vm, H1, m.TRIM), FP1, 'extra']],
                     {'sel': FP1}, 'not json', [], 42):
            res = self.client.post(REPAIR, {'rows': json.dumps(rows)})
            self.assertEqual(200, res.status_code, rows)
            self.assertTrue(res.context['form'].non_field_errors(), rows)
            # Shown to the operator, and no way to submit it again.
            self.assertContains(res, 'alert-danger')
            self.assertNotContains(res, 'value="Confirm"')
        for data in ({'rows': 'not json'}, {}):
            res = self.client.post(REPAIR, data)
            self.assertEqual(200, res.status_code)
            self.assertTrue(res.context['form'].non_field_errors())
        self.mock_apply.assert_not_called()

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['apply']})
    def test_apply_failure_is_a_message(self):
        self.mock_apply.side_effect = ks_exc.ConnectFailure('down')
        res = self.client.post(REPAIR, {'rows': json.dumps(
            [[encoded(uid('vm'), H1, m.TRIM), FP1]])})
        self.assertEqual(200, res.status_code)
        self.assertEqual(1, len(self.messages_seen.texts('error')))
        self.assertIn('nothing was written',
                      self.messages_seen.texts('error')[0])


class CsrfTests(AdminViewTests):
    @helpers.create_mocks({service: ['apply', 'restore']})
    def test_confirm_without_csrf_token_is_refused(self):
        from django.test import Client
        client = Client(enforce_csrf_checks=True)
        client.cookies = self.client.cookies
        rows = [[encoded(uid('vm'), H1, m.TRIM), FP1]]
        res = client.post(REPAIR, {'rows': json.dumps(rows)})
        self.assertContains(res, 'CSRF', status_code=403)
        res = client.post(REPAIR.replace('repair', 'restore'),
                          {'rows': json.dumps([[7, FP1]])})
        self.assertContains(res, 'CSRF', status_code=403)
        self.mock_apply.assert_not_called()
        self.mock_restore.assert_not_called()
