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

"""Preview (GET) and confirm (POST): nothing is written without a preview
of this session, and nothing forged, altered, foreign or stale gets
through."""

import dataclasses
import html
import json
import re
from unittest import mock
from urllib import parse

from django.conf import settings
from django.contrib.messages.storage import base as message
from django.contrib.messages.storage import cookie
from django.core import signing
from django import http
from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons
from orphan_dashboard.content.orphaned_allocations import forms
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write
from tests.views.base import AdminViewTests
from tests.views.base import assert_named
from tests.views.base import batch_message
from tests.views.base import detail
from tests.views.base import encoded
from tests.views.base import EVIL
from tests.views.base import H1
from tests.views.base import H2
from tests.views.base import H3
from tests.views.base import helpers
from tests.views.base import Incidents
from tests.views.base import INDEX
from tests.views.base import plan_row
from tests.views.base import preview_cells
from tests.views.base import REPAIR
from tests.views.base import signed_rows
from tests.views.base import uid

NOT_OURS = 'does not come from a preview of yours'


class PreviewTests(AdminViewTests):
    @helpers.create_mocks({service: ['report', 'preview']})
    def test_a_protected_row_kept_by_the_repair_is_named(self):
        incidents = self.reported()
        row = plan_row(incidents.vm, after={H1: {'VCPU': 1},
                                            H2: {'VCPU': 1}})
        row.plan = dataclasses.replace(
            row.plan, before={H1: {'VCPU': 1}, H2: {'VCPU': 2}}, kept=[H1])
        self.mock_preview.return_value = [row]
        res = self.client.get(REPAIR, {'sel': '%s:%s:trim' % (
            incidents.vm, H1)})
        self.assertEqual('host1', res.context['previews'][0]['kept'])
        self.assertContains(res, 'Kept as read, its row is protected: '
                                 'host1')

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_before_after_commands_and_signed_rows(self):
        incidents = self.reported()
        row = plan_row(incidents.vm)
        self.mock_preview.return_value = [row]
        res = self.client.get(REPAIR, {'sel': '%s:%s:trim' % (
            incidents.vm, H1.upper())})
        self.assertEqual(200, res.status_code)
        self.assertTemplateUsed(res, 'orphaned_allocations/repair.html')
        self.mock_preview.assert_called_once_with(
            mock.ANY, [m.Selection(incidents.vm, H1, m.TRIM)], [])
        # Before on host1 and host2, after on host2 only, by name.
        previews = res.context['previews']
        self.assertEqual([('host1', H1, {'VCPU': 1}),
                          ('host2', H2, {'VCPU': 1})], previews[0]['before'])
        self.assertEqual([('host2', H2, {'VCPU': 1})], previews[0]['after'])
        self.assertContains(res, 'Trim to current host')
        self.assertEqual(1, len(row.commands))
        self.assertIn('resource provider allocation unset', row.commands[0])
        self.assertContains(res, row.commands[0].replace("'", '&#x27;'))
        self.assertContains(res, 'type="submit" value="Confirm"')
        # The confirm carries the plan itself, signed, not a fingerprint.
        signed = signing.loads(signed_rows(res), salt=forms._salt(
            res.wsgi_request, 'repair'))
        self.assertEqual([forms.dump(row.plan)], signed['plans'])
        self.assertEqual('host1', signed['names'][H1])
        self.assertEqual([], self.messages_seen)

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_a_binding_written_first_is_shown_and_signed_with_the_plan(self):
        """A heal that names the port's new provider in Neutron first:
        the preview shows that write above Placement's, by name, its
        command first, and the confirm carries it."""
        incidents = self.reported()
        row = plan_row(incidents.vm, H2, m.HEAL, before={H2: {'VCPU': 1}},
                       after={H2: {'VCPU': 1}, H3: {'VCPU': 1}})
        port = uid('port')
        row.plan = dataclasses.replace(row.plan, ports={port: {
            'name': 'web-port', 'revision': 4, 'before': {},
            'after': {'allocation': {'group': H3}}}})
        self.mock_preview.return_value = [row]
        res = self.client.get(REPAIR, {'sel': encoded(incidents.vm, H2,
                                                      m.HEAL)})
        (binding,) = res.context['previews'][0]['bindings']
        self.assertEqual(dict(name='web-port', port=port, before=[],
                              after=[('host3', H3)]), binding)
        self.assertContains(res, 'First, in Neutron: the binding of port')
        self.assertContains(res, 'names no provider')
        content = res.content.decode()
        self.assertLess(content.index('openstack port set'),
                        content.index('resource provider allocation set'))
        self.assertContains(res, 'Equivalent commands, in their order:')
        signed = signing.loads(signed_rows(res), salt=forms._salt(
            res.wsgi_request, 'repair'))
        (plan,) = signed['plans']
        self.assertEqual(row.plan, forms.load(plan))

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_modal(self):
        incidents = self.reported()
        self.mock_preview.return_value = [plan_row(incidents.vm)]
        res = self.client.get(
            REPAIR, {'sel': encoded(incidents.vm, H1, m.TRIM)},
            HTTP_X_REQUESTED_WITH='XMLHttpRequest')
        self.assertTemplateUsed(res,
                                'orphaned_allocations/_repair.html')
        self.assertTemplateNotUsed(res, 'base.html')

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_html_in_a_plan_is_escaped(self):
        incidents = self.reported()
        self.mock_preview.return_value = [
            plan_row(incidents.vm, reason='server %s moved' % EVIL,
                     nova='server %s (ACTIVE)' % EVIL),
            repair.Row(m.Selection(incidents.bare, H3, m.HEAL),
                       error='flavor %s is gone' % EVIL)]
        res = self.client.get(REPAIR, {'sel': [
            encoded(incidents.vm, H1, m.TRIM),
            encoded(incidents.bare, H3, m.HEAL)]})
        self.assertNotContains(res, EVIL)
        self.assertContains(res, 'server &lt;script&gt;', count=2)
        self.assertContains(res, 'flavor &lt;script&gt;')

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_rows_that_cannot_be_done_are_not_signed(self):
        incidents = self.reported()
        good = plan_row(incidents.vm)
        self.mock_preview.return_value = [
            good, repair.Row(m.Selection(incidents.bare, H3, m.HEAL),
                             error='Nothing to heal: server bare lives on '
                                   'host3.')]
        res = self.client.get(REPAIR, {'sel': [
            encoded(incidents.vm, H1, m.TRIM),
            encoded(incidents.bare, H3, m.HEAL)]})
        self.assertContains(res, 'Not possible:')
        self.assertContains(res, 'Nothing to heal: server bare lives on')
        signed = signing.loads(signed_rows(res), salt=forms._salt(
            res.wsgi_request, 'repair'))
        self.assertEqual([forms.dump(good.plan)], signed['plans'])

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_nothing_possible_means_no_confirm_button(self):
        incidents = self.reported()
        self.mock_preview.return_value = [repair.Row(
            m.Selection(incidents.bare, H3, m.HEAL),
            error='Nothing to heal.')]
        res = self.client.get(REPAIR, {'sel': encoded(incidents.bare, H3,
                                                      m.HEAL)})
        self.assertContains(res, 'nothing will be written')
        self.assertNotContains(res, 'value="Confirm"')
        self.assertNotIn('rows', res.context['form'].initial)

    @helpers.create_mocks({service: ['report', 'preview', 'names']})
    def test_set_owner_shows_the_owner_change_by_name(self):
        """*Set project and user* writes the same allocations under a new
        owner: Before and After differ by the owner, named."""
        incidents = self.reported()
        self.mock_names.return_value = {
            'projects': {'p': 'web'}, 'users': {'u': 'alice'}}
        held = {H3: {'VCPU': 1}}
        plan = m.Plan(m.SET_OWNER, incidents.legacy, H3,
                      m.INCOMPLETE_CONSUMER, 'legacy', 3, 'p', 'u', held,
                      held, before_project=m.INCOMPLETE,
                      before_user=m.INCOMPLETE)
        self.mock_preview.return_value = [repair.Row(
            m.Selection(incidents.legacy, H3, m.SET_OWNER), plan=plan)]
        res = self.client.get(REPAIR, {'sel': encoded(
            incidents.legacy, H3, m.SET_OWNER)})
        self.assertEqual(200, res.status_code)
        before, after = preview_cells(res)
        self.assertNotEqual(before, after)
        self.assertIn('project web, user alice', after)
        self.assertIn('no project, no user', before)
        self.assertContains(res, 'title="p"')

    @helpers.create_mocks({service: ['report', 'preview', 'names']})
    def test_the_set_owner_reason_names_the_owner(self):
        """The incomplete consumer's reason, as the engine words it, names
        its server's project and user rather than their ids."""
        incidents = self.reported()
        self.mock_names.return_value = {
            'projects': {'p': 'web'}, 'users': {'u': 'alice'}}
        (finding,) = [f for f in incidents.report.findings
                      if f.consumer == incidents.legacy]
        held = {H3: dict(finding.resources)}
        plan = m.Plan(m.SET_OWNER, incidents.legacy, H3,
                      m.INCOMPLETE_CONSUMER, finding.reason, 3, 'p', 'u',
                      held, held, before_project=m.INCOMPLETE,
                      before_user=m.INCOMPLETE)
        self.mock_preview.return_value = [repair.Row(
            m.Selection(incidents.legacy, H3, m.SET_OWNER), plan=plan,
            finding=finding)]
        res = self.client.get(REPAIR, {'sel': encoded(
            incidents.legacy, H3, m.SET_OWNER)})
        self.assertContains(res, 'its server belongs to project web, user '
                                 'alice')

    @helpers.create_mocks({service: ['report', 'preview', 'names']})
    def test_a_stale_migrations_reason_names_its_server(self):
        """*Fix recommended* re-reads the migration consumer alone, so the
        engine's reason has only the server's uuid: the preview names it
        as its row did, from the last sweep's server names."""
        incidents = self.reported()
        self.mock_names.return_value = {
            'projects': {}, 'users': {},
            'servers': {incidents.old: 'failed-confirm-vm'}}
        (finding,) = [f for f in incidents.report.findings
                      if f.consumer == incidents.stale]
        reread = dataclasses.replace(finding, reason=reasons.reason(
            'stale_migration', move='migration', server=incidents.old,
            status='confirmed'))
        plan = m.Plan(m.DELETE, incidents.stale, H2, m.STALE_MIGRATION,
                      reread.reason, 1, 'p', 'u', {H2: {'VCPU': 1}}, {})
        self.mock_preview.return_value = [repair.Row(
            m.Selection(incidents.stale, H2, m.DELETE), plan=plan,
            finding=reread)]
        res = self.client.get(REPAIR, {'sel': encoded(
            incidents.stale, H2, m.DELETE)})
        self.assertContains(res, 'migration of server failed-confirm-vm '
                                 '(%s) ended' % incidents.old)

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_the_preview_names_the_server_first(self):
        """The Consumer column leads with the server's name, its uuid in
        small grey beside it, as a provider's (and in the equivalent
        command, where it belongs)."""
        incidents = self.reported()
        web = reasons.reason('nova.server', name='web-1', status='ACTIVE')
        self.mock_preview.return_value = [plan_row(incidents.vm, nova=web)]
        res = self.client.get(REPAIR, {'sel': encoded(incidents.vm, H1,
                                                      m.TRIM)})
        self.assertEqual(200, res.status_code)
        assert_named(res, incidents.vm, H1, H2)
        self.assertContains(res, '<span class="orphan-name">web-1</span> '
                            '<small class="text-muted '
                            'orphan-provider-id">%s</small>' % incidents.vm)

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_fix_recommended_takes_recommended_rows_only(self):
        """Of host2 and host3: the stale migration, the missing allocation
        and the incomplete consumer; not the unknown consumer, not
        protected.  The stale migration's server comes from the report
        shown, not the request."""
        incidents = self.reported()
        self.mock_preview.return_value = []
        self.client.get(REPAIR, {'provider': [H2, H3]})
        self.mock_preview.assert_called_once_with(mock.ANY, [
            m.Selection(incidents.stale, H2, m.DELETE),
            m.Selection(incidents.bare, H3, m.HEAL),
            m.Selection(incidents.legacy, H3, m.SET_OWNER)],
            [incidents.old])

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview']})
    def test_forged_selection_is_refused(self):
        self.reported()
        vm = uid('vm')
        for query in ({'sel': 'x:y:trim'},
                      {'sel': '%s:%s:drop_table' % (vm, H1)},
                      {'sel': '%s:%s:restore' % (vm, H1)},
                      {'sel': '%s:%s:trim:%s' % (vm, H1, vm)},
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
        self.messages_seen.clear()
        res = self.client.get(REPAIR, {'sel': [
            encoded(uid(str(i)), H1, m.DELETE) for i in range(201)]})
        self.assertRedirectsNoFollow(res, INDEX)
        self.assertEqual(['Too many rows (201): at most 200 at once '
                          '(ORPHAN_AUDIT_MAX_ROWS). Select fewer: nothing '
                          'was written.'],
                         self.messages_seen.texts('error'))
        self.mock_preview.assert_not_called()

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview']})
    def test_preview_failure_is_a_message(self):
        incidents = self.reported()
        self.mock_preview.side_effect = ks_exc.ConnectFailure('down')
        res = self.client.get(REPAIR, {'sel': encoded(incidents.vm, H1,
                                                      m.TRIM)})
        self.assertRedirectsNoFollow(res, INDEX)
        self.assertEqual(1, len(self.messages_seen.texts('error')))

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_next_must_stay_on_this_site(self):
        incidents = self.reported()
        self.mock_preview.return_value = [plan_row(incidents.vm)]
        sel = encoded(incidents.vm, H1, m.TRIM)
        res = self.client.get(REPAIR, {'sel': sel,
                                       'next': 'https://evil.example.com/'})
        self.assertEqual(str(INDEX), res.context['view'].get_success_url())
        res = self.client.get(REPAIR, {'sel': sel, 'next': '/admin/'})
        self.assertEqual('/admin/', res.context['view'].get_success_url())


class BatchSizeTests(AdminViewTests):
    """A table's batch action, posted as Horizon's table form posts it,
    leads to a preview of every row ticked, up to ``ORPHAN_AUDIT_MAX_ROWS``
    (200): the selection travels in no URL, which Apache cuts at 8,190
    bytes and Django refuses to redirect to past 2,048 characters."""

    def batch(self, count):
        """``(consumers, answer)``: ``count`` rows of host3 ticked, then
        *Delete* over them."""
        consumers = [uid('stranger-%d' % i) for i in range(count)]
        return consumers, self.client.post(detail(H3), {
            'action': 'allocations__delete_selected',
            'object_ids': ['%s:%s' % (c, H3) for c in consumers]})

    @helpers.create_mocks({service: ['report', 'preview', 'apply']})
    def test_one_to_max_rows_are_previewed_and_confirmed(self):
        self.reported()
        self.mock_preview.side_effect = lambda request, chosen, hints: [
            plan_row(s.consumer, H3, m.DELETE, before={H3: {'VCPU': 1}},
                     after={}) for s in chosen]
        self.mock_apply.return_value = []
        for count in (1, 199, 200):
            with self.subTest(count=count):
                consumers, res = self.batch(count)
                self.assertEqual(302, res.status_code)
                location = res['location']
                self.assertNotIn(consumers[0], location)
                self.assertLess(len(location), 200, location)
                preview = self.client.get(location)
                self.assertEqual(200, preview.status_code)
                self.assertEqual(
                    [m.Selection(c, H3, m.DELETE) for c in consumers],
                    self.mock_preview.call_args.args[1])
                self.assertEqual(count, len(preview.context['rows']))
                done = self.client.post(location,
                                        {'rows': signed_rows(preview)})
                self.assertNoFormErrors(done)
                self.assertRedirectsNoFollow(done, detail(H3))
                self.assertEqual(count,
                                 len(self.mock_apply.call_args.args[1]))

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview']})
    def test_one_row_over_max_rows_is_refused_with_the_limit(self):
        self.reported()
        _consumers, res = self.batch(201)
        self.assertRedirectsNoFollow(res, detail(H3))
        self.assertEqual(
            ['Too many rows (201): at most 200 at once '
             '(ORPHAN_AUDIT_MAX_ROWS). Select fewer: nothing was written.'],
            self.messages_seen.texts('error'))
        self.mock_preview.assert_not_called()

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview', 'apply']})
    def test_more_rows_than_django_reads_get_the_panels_answer(self):
        """10,001 ticked rows are more fields than Django reads
        (``DATA_UPLOAD_MAX_NUMBER_FIELDS``, in its CSRF middleware before
        any view): the panel's answer, back on the page, a warning and no
        traceback in the log, nothing previewed or written; a dialog's
        POST as large, the same."""
        self.reported()
        with self.assertLogs(level='WARNING') as logged:
            _consumers, res = self.batch(10001)
            self.assertRedirectsNoFollow(res, detail(H3))
            dialog = self.client.post(
                INDEX + 'repair/', {'rows': ['x'] * 10001},
                HTTP_X_REQUESTED_WITH='XMLHttpRequest',
                HTTP_REFERER='http://testserver' + detail(H3))
        self.assertEqual(200, dialog.status_code)
        self.assertEqual('http://testserver' + detail(H3),
                         dialog['X-Horizon-Location'])
        refused = ('Too many rows: more than this dashboard reads in one '
                   'request, and at most 200 at once (ORPHAN_AUDIT_MAX_ROWS)'
                   '. Select fewer: nothing was written.')
        self.assertEqual({refused}, set(self.messages_seen.texts('error')))
        self.assertEqual(2, len(logged.records), logged.output)
        for record in logged.records:
            self.assertEqual('WARNING', record.levelname)
            self.assertIsNone(record.exc_info)
            self.assertIn('Refused a POST to', record.getMessage())
        self.mock_preview.assert_not_called()
        self.mock_apply.assert_not_called()

    @helpers.create_mocks({service: ['report', 'preview']})
    def test_a_post_still_needs_its_csrf_token(self):
        """The CSRF middleware does not read the panel's POSTs
        (:func:`views.post_checked`): the views check the token
        themselves."""
        from django import test
        self.reported()
        client = test.Client(enforce_csrf_checks=True)
        client.cookies = self.client.cookies
        refused = client.post(detail(H3), {
            'action': 'allocations__delete_selected',
            'object_ids': ['%s:%s' % (uid('stranger-0'), H3)]})
        self.assertEqual(403, refused.status_code)
        page = client.get(detail(H3))
        token = page.cookies.get('csrftoken') or client.cookies['csrftoken']
        taken = client.post(detail(H3), {
            'action': 'allocations__delete_selected',
            'csrfmiddlewaretoken': token.value,
            'object_ids': ['%s:%s' % (uid('stranger-0'), H3)]})
        self.assertEqual(302, taken.status_code)
        self.assertIn('repair/', taken['location'])

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview']})
    def test_a_selection_is_this_sessions_only(self):
        """The preview's link carries no selection, only what finds this
        session's: another session, or a forged link, finds nothing."""
        self.reported()
        _consumers, res = self.batch(2)
        session = self.client.session
        session[forms.SESSION_KEY] = 'another session'
        session.save()
        self.client.cookies[settings.SESSION_COOKIE_NAME] = \
            session.session_key
        for location in (res['location'],
                         REPAIR + '?selection=forged&next=' + detail(H3)):
            self.messages_seen.clear()
            again = self.client.get(location)
            self.assertRedirectsNoFollow(again, detail(H3))
            self.assertEqual(
                ['This selection is no longer available: select the rows '
                 'again. Nothing was written.'],
                self.messages_seen.texts('error'))
        self.mock_preview.assert_not_called()


class ConfirmTests(AdminViewTests):
    def preview(self, rows, hints=()):
        """Sign ``rows`` through the real preview page, as a browser gets
        them."""
        with mock.patch.object(service, 'report') as report, \
                mock.patch.object(service, 'preview') as preview:
            report.return_value = Incidents().report
            preview.return_value = rows
            with mock.patch.object(service, 'selections',
                                   return_value=([r.selection for r in rows],
                                                 list(hints))):
                res = self.client.get(REPAIR, {'sel': [
                    encoded(*map(str, (r.selection.consumer,
                                       r.selection.provider,
                                       r.selection.action)))
                    for r in rows]})
        self.salt = forms._salt(res.wsgi_request, 'repair')
        self.previewed_by = res.wsgi_request
        return signed_rows(res)

    def confirm(self, rows, outcomes):
        """Preview ``rows``, confirm them, the writes answering
        ``outcomes``; the confirm's response."""
        signed = self.preview(rows)
        self.mock_apply.return_value = outcomes
        res = self.client.post(REPAIR, {'rows': signed})
        self.assertNoFormErrors(res)
        return res

    @helpers.create_mocks({service: ['apply']})
    def test_the_confirm_returns_to_the_page_the_repair_started_from(self):
        rows = [plan_row(uid('vm'))]
        signed = self.preview(rows)
        self.mock_apply.return_value = [
            write.Outcome(rows[0].selection, write.DONE, 'done')]
        res = self.client.post('%s?%s' % (REPAIR, parse.urlencode(
            {'next': detail(H1) + '?tab=provider__allocations'})),
            {'rows': signed})
        self.assertNoFormErrors(res)
        self.assertRedirectsNoFollow(
            res, detail(H1) + '?tab=provider__allocations')

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['apply', 'batch_of']})
    def test_one_message_for_the_batch_its_failures_first(self):
        """Counted, then each row named, the failures first, and a link to
        the batch in History: one message however many rows."""
        vm, other, third, stale = (uid('vm'), uid('other'), uid('third'),
                                   uid('stale'))
        rows = [plan_row(vm), plan_row(stale, H2, m.DELETE, after={}),
                plan_row(other, H1, m.DELETE, after={}),
                plan_row(third, H1, m.HEAL)]
        signed = self.preview(rows, hints=[uid('old')])
        self.mock_apply.return_value = [
            write.Outcome(rows[0].selection, write.DONE, 'done',
                          entry_id=7),
            write.Outcome(rows[1].selection, write.DONE, 'done',
                          entry_id=8),
            write.Outcome(rows[2].selection, write.SKIPPED,
                          'its allocations changed since the preview'),
            write.Outcome(rows[3].selection, write.FAILED,
                          'Placement failed: 500 boom', entry_id=9)]
        self.mock_batch_of.return_value = 'f' * 32
        res = self.client.post(REPAIR, {'rows': signed})
        self.assertNoFormErrors(res)
        self.assertRedirectsNoFollow(res, INDEX)
        self.mock_apply.assert_called_once_with(
            mock.ANY, [r.plan for r in rows], [uid('old')])
        self.assertEqual(('error', [
            '2 repairs done, 1 failed, 1 skipped.',
            'Heal of consumer %s on host1 failed: Placement failed: 500 '
            'boom' % third,
            'Delete of consumer %s on host1 skipped: its allocations '
            'changed since the preview' % other,
            'Trim to current host of consumer %s on host1: done.' % vm,
            'Delete of consumer %s on host2: done.' % stale], 'f' * 32),
            batch_message(self.messages_seen))
        # The row History has no entry for is kept for it.
        self.assertEqual(
            ['Delete of consumer %s on host1 skipped: its allocations '
             'changed since the preview' % other],
            forms.kept_result(res.wsgi_request, 'f' * 32))

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['apply', 'batch_of']})
    def test_a_large_batch_is_one_message_that_fits_a_cookie(self):
        """128 rows, 2 failed and 2 skipped: one message, which Django's
        cookie keeps whole (it drops what does not fit), naming those
        four, none of the done; History has them all."""
        rows = [plan_row(uid('vm%d' % i), H2 if i % 2 else H3, m.DELETE,
                         after={}) for i in range(128)]
        signed = self.preview(rows)
        failed, skipped = {3, 90}, {6, 100}
        self.mock_apply.return_value = [
            write.Outcome(r.selection, write.FAILED if i in failed else
                          write.SKIPPED if i in skipped else write.DONE,
                          'its allocations changed since the preview'
                          if i in skipped else 'Placement failed: 409',
                          entry_id=None if i in skipped else i)
            for i, r in enumerate(rows)]
        self.mock_batch_of.return_value = 'f' * 32
        res = self.client.post(REPAIR, {'rows': signed})
        self.assertNoFormErrors(res)
        level, lines, batch = batch_message(self.messages_seen)
        self.assertEqual(('error', 'f' * 32), (level, batch))
        self.assertEqual('124 repairs done, 2 failed, 2 skipped.', lines[0])
        self.assertEqual([uid('vm%d' % i) for i in (3, 90, 6, 100)],
                         [re.search('consumer (\\S+) on', line).group(1)
                          for line in lines[1:]])
        # The skipped rows, which the journal has no entry for.
        self.assertEqual(2, len(forms.kept_result(res.wsgi_request, batch)))
        storage = cookie.CookieStorage(res.wsgi_request)
        ((_level, text),) = self.messages_seen
        self.assertEqual([], storage._store(
            [message.Message(40, text, 'safe')], http.HttpResponse()))

    @helpers.create_mocks({service: ['apply', 'batch_of', 'report',
                                     'history']})
    def test_its_history_lists_the_rows_that_wrote_nothing(self):
        """The message's link: the batch in History, its journaled rows
        in the table and, over it, the rows the journal has no entry
        for."""
        vm, other = uid('vm'), uid('other')
        rows = [plan_row(vm), plan_row(other, H1, m.DELETE, after={})]
        signed = self.preview(rows)
        self.mock_apply.return_value = [
            write.Outcome(rows[0].selection, write.DONE, 'done',
                          entry_id=1),
            write.Outcome(rows[1].selection, write.SKIPPED,
                          'its allocations changed since the preview')]
        self.mock_batch_of.return_value = 'f' * 32
        self.reported()
        self.mock_history.return_value = ([], False, False, {})
        self.client.post(REPAIR, {'rows': signed})
        ((_level, text),) = self.messages_seen
        link = html.unescape(re.search('href="([^"]+)"', text).group(1))
        res = self.client.get(link)
        self.assertRedirectsNoFollow(
            res, INDEX + '?tab=orphaned_allocations__history')
        res = self.client.get(res['location'])
        self.assertEqual('f' * 32,
                         self.mock_history.call_args.kwargs['batch'])
        box = re.search(r'<div class="alert alert-warning orphan-unwritten">'
                        r'(.*?)</div>', res.content.decode(), re.S)
        self.assertTrue(box, res.content.decode())
        self.assertIn('Delete of consumer %s on host1 skipped: its '
                      'allocations changed since the preview' % other,
                      box.group(1))
        self.assertNotIn(vm, box.group(1))
        # Another batch's History has no such box.
        self.client.get(INDEX, {'batch': 'e' * 32})
        res = self.client.get(INDEX, {'tab': 'orphaned_allocations__history'})
        self.assertNotContains(res, 'orphan-unwritten')

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['apply']})
    def test_a_write_of_unknown_outcome_is_said_and_counted_apart(self):
        """Neither done nor failed: the batch's message counts it on its
        own, names it first with its outcome unknown, at the error level,
        and points to History."""
        vm, other = uid('vm'), uid('other')
        rows = [plan_row(vm), plan_row(other, H1, m.HEAL)]
        self.confirm(rows, [
            write.Outcome(rows[0].selection, write.DONE, 'done'),
            write.Outcome(rows[1].selection, write.UNKNOWN,
                          'Placement gave no clear answer')])
        level, lines, _batch = batch_message(self.messages_seen)
        self.assertEqual('error', level)
        self.assertEqual('1 repair done, 1 of unknown outcome (it may have '
                         'been written).', lines[0])
        self.assertEqual('Heal of consumer %s on host1: outcome unknown: '
                         'Placement gave no clear answer' % other, lines[1])

    @helpers.create_mocks({service: ['apply']})
    def test_the_rows_the_preview_could_not_plan_are_in_the_result(self):
        """A batch's "Not possible" rows are counted and named with the
        rest, as skipped, with the reason the preview gave."""
        vm, bare = uid('vm'), uid('bare')
        rows = [plan_row(vm), repair.Row(
            m.Selection(bare, H3, m.HEAL),
            error=reasons.reason('cannot.no_node_to_heal'))]
        signed = self.preview(rows)
        self.mock_apply.return_value = [
            write.Outcome(rows[0].selection, write.DONE, 'done')]
        self.client.post(REPAIR, {'rows': signed})
        level, lines, _batch = batch_message(self.messages_seen)
        self.assertEqual('warning', level)
        self.assertEqual('1 repair done, 1 skipped.', lines[0])
        self.assertEqual(1, len(self.mock_apply.call_args.args[1]))
        self.assertRegex(lines[1], '^Heal of consumer %s on host3 skipped: '
                         '.+' % bare)
        self.assertEqual('Trim to current host of consumer %s on host1: '
                         'done.' % vm, lines[2])

    @helpers.create_mocks({service: ['apply']})
    def test_the_message_names_the_server_the_preview_showed(self):
        """The message names the server (and the hypervisor) the preview
        named, not the consumer's uuid."""
        vm, gone = uid('vm'), uid('gone-vm')
        web = reasons.reason('nova.server', name='web-1', status='ACTIVE')
        rows = [plan_row(vm, nova=web),
                plan_row(gone, H1, m.DELETE, after={},
                         nova=reasons.reason('nova.deleted_server'))]
        self.confirm(rows, [
            write.Outcome(rows[0].selection, write.DONE, 'done'),
            write.Outcome(rows[1].selection, write.SKIPPED,
                          'its allocations changed since the preview')])
        # A deleted server has no name left: its consumer's uuid it is.
        self.assertEqual(
            ['1 repair done, 1 skipped.',
             'Delete of consumer %s on host1 skipped: its allocations '
             'changed since the preview' % gone,
             'Trim to current host of server web-1 on host1: done.'],
            batch_message(self.messages_seen)[1])

    def assert_refused(self, data, text):
        res = self.client.post(REPAIR, data)
        self.assertEqual(200, res.status_code, data)
        errors = res.context['form'].non_field_errors()
        self.assertTrue(errors, data)
        self.assertIn(text, ' '.join(errors), data)
        self.assertNotIn('Traceback', ' '.join(errors))
        self.assertContains(res, 'alert-danger')
        self.assertNotContains(res, 'value="Confirm"')

    @helpers.create_mocks({service: ['apply']})
    def test_a_preview_of_another_cloud_or_region_writes_nothing(self):
        """Signed while the user was in one region (or logged in to one
        Keystone), confirmed in another: it names nothing of this one."""
        from orphan_dashboard.api import client

        vm = uid('vm')
        signed = self.preview([plan_row(vm)])
        here = service.cloud_for_request(self.previewed_by)
        for there in (here._replace(region='RegionTwo'),
                      here._replace(auth_url='http://other.test/v3')):
            with mock.patch.object(service, 'cloud_for_request',
                                   return_value=client.Cloud(*there)):
                self.assert_refused({'rows': signed}, NOT_OURS)
        self.mock_apply.assert_not_called()

    @helpers.create_mocks({service: ['apply']})
    def test_forged_altered_foreign_and_stale_posts_write_nothing(self):
        vm = uid('vm')
        signed = self.preview([plan_row(vm)])
        salt = self.salt
        plan = forms.dump(plan_row(vm).plan)
        deep = '[' * 100000 + ']' * 100000
        for rows, text in (
                # Old unsigned rows, and anything else made up.
                (json.dumps([[encoded(vm, H1, m.TRIM), '0123456789abcdef']]),
                 NOT_OURS),
                (json.dumps({'plans': [plan]}), NOT_OURS),
                ('not json', NOT_OURS), ('', NOT_OURS), (deep, NOT_OURS),
                # The signed rows with one letter changed.
                (signed[:-3] + ('A' if signed[-3] != 'A' else 'B') +
                 signed[-2:], NOT_OURS),
                # Signed for another session (or user), or another form.
                (signing.dumps({'plans': [plan]}, salt=salt + 'x'),
                 NOT_OURS),
                (signing.dumps({'plans': [plan]},
                               salt=salt.replace('repair', 'restore')),
                 NOT_OURS),
                # Signed by us, but not a plan: never Python's words.
                (signing.dumps({'plans': [{'kind': 'allocations',
                                           'rm': '-rf'}]}, salt=salt),
                 'not understood'),
                (signing.dumps({'plans': 42}, salt=salt), 'not understood'),
                (signing.dumps({'plans': []}, salt=salt), 'Nothing to'),
                (signing.dumps({'plans': [plan] * 201}, salt=salt),
                 'Too many rows (201)')):
            self.assert_refused({'rows': rows}, text)
        self.assert_refused({}, NOT_OURS)
        self.mock_apply.assert_not_called()

    @helpers.create_mocks({service: ['apply']})
    def test_a_preview_expires(self):
        signed = self.preview([plan_row(uid('vm'))])
        later = signing.time.time() + 601
        with mock.patch.object(signing.time, 'time', return_value=later):
            self.assert_refused({'rows': signed}, 'more than 10 minutes old')
        self.mock_apply.assert_not_called()

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['apply']})
    def test_apply_failure_is_a_message(self):
        signed = self.preview([plan_row(uid('vm'))])
        self.mock_apply.side_effect = ks_exc.ConnectFailure('down')
        res = self.client.post(REPAIR, {'rows': signed})
        self.assertEqual(200, res.status_code)
        self.assertEqual(1, len(self.messages_seen.texts('error')))
        self.assertIn('nothing was written',
                      self.messages_seen.texts('error')[0])


class CsrfTests(AdminViewTests):
    @helpers.create_mocks({service: ['apply', 'restore',
                                     'delete_providers']})
    def test_confirm_without_csrf_token_is_refused(self):
        from django.test import Client
        client = Client(enforce_csrf_checks=True)
        client.cookies = self.client.cookies
        for url in (REPAIR, REPAIR.replace('repair', 'restore'),
                    REPAIR.replace('repair', 'providers/delete')):
            res = client.post(url, {'rows': 'x'})
            self.assertContains(res, 'CSRF', status_code=403)
        self.mock_apply.assert_not_called()
        self.mock_restore.assert_not_called()
        self.mock_delete_providers.assert_not_called()
