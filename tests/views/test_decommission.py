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

"""Decommission: the preview of everything on a dead hypervisor, the
explicit choice for consumers Nova does not know, and the confirm."""

import dataclasses
import re
from unittest import mock

from django.urls import reverse
from django.utils import html
import pytest

from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import decommission
from orphan_dashboard.audit import model as m
from orphan_dashboard import conf
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.operations import decommission as decommission_ops
from orphan_dashboard.operations import repairs
from orphan_dashboard.writing import write
from tests.unit.cloud import uid
from tests.unit.staged import ironic
from tests.views.base import AdminViewTests
from tests.views.base import detail
from tests.views.base import GONE
from tests.views.base import H1
from tests.views.base import H3
from tests.views.base import helpers
from tests.views.base import hidden_ids_removed
from tests.views.base import Incidents
from tests.views.base import INDEX
from tests.views.base import signed_rows
from tests.views.fakes import dead_host1
from tests.views.fakes import STRANGER

DECOMMISSION = reverse('horizon:admin:orphaned_allocations:decommission')
AGENT = uid('host1:Open vSwitch agent')
NIC = uid('host1:Open vSwitch agent:br-phys')


def with_neutron_agent():
    """host1 as :func:`dead_host1` with no unknown consumer, its tree
    holding Neutron's Open vSwitch agent and its NIC."""
    incidents = Incidents()
    snapshot = incidents.snapshot
    snapshot.providers[AGENT] = m.Provider(
        AGENT, 'host1:Open vSwitch agent', 1, H1, H1)
    snapshot.providers[NIC] = m.Provider(
        NIC, 'host1:Open vSwitch agent:br-phys', 1, H1, AGENT)
    return incidents, decommission.plan(snapshot, H1, min_age=0)


PREVIEW_AND_CONFIRM = helpers.create_mocks({service: [
    'report', 'preview_decommission', 'decommission_apply']})
"""The panel's service as a decommission's preview and confirm call it."""
PREVIEW = helpers.create_mocks({service: ['report', 'preview_decommission']})


class Shown:
    """A staged cloud shown and its decommission previewed, for host1."""

    def shown(self, staged):
        """``(incidents, plan)`` of ``staged``, which the mocked report
        and preview now give."""
        incidents, plan = staged
        self.mock_report.return_value = incidents.report
        self.mock_preview_decommission.return_value = plan
        return incidents, plan

    def signed(self):
        """The signed rows host1's decommission preview shows."""
        return signed_rows(self.client.get(DECOMMISSION, {'provider': H1}))


class ForeignChildTests(Shown, AdminViewTests):
    """Another service's child of a dead host's tree: a blocker naming its
    owner and the owner's command, deleted only when ticked."""

    @PREVIEW_AND_CONFIRM
    def test_the_dialog_names_the_owner_and_offers_a_tick(self):
        incidents, plan = self.shown(with_neutron_agent())
        res = self.client.get(DECOMMISSION, {'provider': H1})
        self.assertContains(res, "Other services' providers in its tree")
        self.assertContains(res, 'host1:Open vSwitch agent:br-phys '
                                 '(Neutron)')
        self.assertContains(res, html.escape(
            "is Neutron's, not Nova's: delete its agent in Neutron"))
        self.assertContains(res, 'openstack network agent delete '
                                 '&lt;agent ID&gt;')
        for child in (AGENT, NIC):
            self.assertContains(res, 'name="delete_foreign" value="%s"' %
                                child)
        self.assertContains(res, 'value="Decommission"')

    @PREVIEW_AND_CONFIRM
    def test_an_unticked_foreign_child_is_a_field_error(self):
        incidents, plan = self.shown(with_neutron_agent())
        signed = self.signed()
        for ticked in ([], [NIC]):
            res = self.client.post(DECOMMISSION, {
                'rows': signed, 'delete_foreign': ticked})
            self.assertEqual(200, res.status_code)
            errors = res.context['form'].errors
            self.assertIn('delete_foreign', errors)
            self.assertIn('Tick every provider listed',
                          str(errors['delete_foreign']))
        self.mock_decommission_apply.assert_not_called()

    @PREVIEW_AND_CONFIRM
    def test_only_previewed_children_can_be_ticked(self):
        incidents, plan = self.shown(with_neutron_agent())
        signed = self.signed()
        res = self.client.post(DECOMMISSION, {
            'rows': signed, 'delete_foreign': [AGENT, NIC, H1]})
        self.assertIn('delete_foreign', res.context['form'].errors)
        self.mock_decommission_apply.assert_not_called()

    @PREVIEW_AND_CONFIRM
    def test_ticked_children_are_handed_to_the_writes(self):
        incidents, plan = self.shown(with_neutron_agent())
        signed = self.signed()
        self.mock_decommission_apply.return_value = [write.Outcome(
            m.Selection('', NIC, 'delete_provider'), write.DONE,
            'deleted')]
        res = self.client.post(DECOMMISSION, {
            'rows': signed, 'delete_foreign': [AGENT, NIC]})
        self.assertNoFormErrors(res)
        self.mock_decommission_apply.assert_called_once_with(
            mock.ANY, H1, plan.plans(), set(), bound=plan.binding(),
            children={AGENT, NIC})

    def test_the_writes_refuse_an_unticked_child_server_side(self):
        """A forged confirm (a signed blob with no tick) reaches the
        writes, which re-plan and refuse: nothing is written."""
        incidents, plan = with_neutron_agent()
        with mock.patch.object(decommission_ops, 'preview',
                               return_value=plan), \
                mock.patch.object(repairs, 'apply') as repairs_apply, \
                mock.patch.object(nova, 'delete_service') as delete_service, \
                mock.patch.object(placement, 'delete_provider') as delete:
            outcomes = decommission_ops.apply(None, mock.Mock(), H1,
                                              plan.plans(), (),
                                              conf.RunSettings(min_age=0),
                                              bound=plan.binding(),
                                              children={NIC})
        repairs_apply.assert_not_called()
        delete_service.assert_not_called()
        delete.assert_not_called()
        (outcome,) = outcomes
        self.assertEqual(write.SKIPPED, outcome.status)
        self.assertIn("host1:Open vSwitch agent (%s) is Neutron's" % AGENT,
                      str(outcome.message))


class DecommissionTests(Shown, AdminViewTests):
    @helpers.create_mocks({service: ['report']})
    def test_offered_on_dead_hypervisors_only(self):
        self.reported()
        link = 'href="%s?provider=%%s"' % DECOMMISSION
        res = self.client.get(INDEX)
        self.assertContains(res, link % H1)      # forced down
        self.assertContains(res, link % GONE)    # no compute node
        self.assertNotContains(res, link % H3)   # up
        res = self.client.get(detail(H1))
        self.assertContains(res, link % H1)
        self.assertNotContains(self.client.get(detail(H3)), link % H3)

    @PREVIEW_AND_CONFIRM
    def test_preview_then_confirm_with_a_chosen_unknown_consumer(self):
        incidents, plan = self.shown(dead_host1())
        res = self.client.get(DECOMMISSION, {'provider': H1})
        self.mock_preview_decommission.assert_called_once_with(
            mock.ANY, H1, whole_service=False)
        self.assertContains(res, 'Evacuated source')
        self.assertContains(res, 'resource provider allocation unset %s '
                                 '--provider %s' % (incidents.vm, H1))
        self.assertContains(res, 'Deleted only if you tick it below.')
        self.assertContains(res, 'value="%s"' % STRANGER)   # its checkbox
        self.assertContains(res, 'the compute service is not re-created')
        self.assertContains(res, 'value="Decommission"')
        signed = signed_rows(res)
        self.mock_decommission_apply.return_value = [write.Outcome(
            m.Selection('', H1, 'delete_service'), write.DONE,
            'compute service host1 deleted')]
        res = self.client.post(DECOMMISSION, {
            'rows': signed, 'delete_unknown': [STRANGER]})
        self.assertNoFormErrors(res)
        self.assertRedirectsNoFollow(res, INDEX)
        self.mock_decommission_apply.assert_called_once_with(
            mock.ANY, H1, plan.plans({STRANGER}), {STRANGER},
            bound=plan.binding(), children=set())
        self.assertEqual(['Decommission of host1: 1 step done and '
                          'journaled.'], self.messages_seen.texts('success'))

    @helpers.create_mocks({service: ['report', 'preview_decommission',
                                     'names']})
    def test_the_preview_names_the_owner_and_shows_every_command(self):
        """The unknown consumer's project and user (all an operator can
        go on before deleting it), and the equivalent commands of the
        service and provider deletes, as every other step has its own."""
        incidents, plan = dead_host1()
        plan.service = dataclasses.replace(plan.service,
                                           uuid=uid('host1-service'))
        self.mock_report.return_value = incidents.report
        self.mock_preview_decommission.return_value = plan
        self.mock_names.return_value = {
            'projects': {'p': 'web'}, 'users': {'u': 'alice'}}
        res = self.client.get(DECOMMISSION, {'provider': H1})
        shown = hidden_ids_removed(res)
        self.assertIn('project web, user alice', shown)
        self.assertContains(
            res, 'openstack --os-compute-api-version 2.53 compute service '
                 'delete %s' % uid('host1-service'))
        self.assertContains(res, 'openstack resource provider delete %s'
                                 % H1)

    @PREVIEW_AND_CONFIRM
    def test_only_previewed_unknown_consumers_can_be_chosen(self):
        incidents, plan = self.shown(dead_host1())
        signed = self.signed()
        res = self.client.post(DECOMMISSION, {
            'rows': signed, 'delete_unknown': [incidents.fine]})
        self.assertTrue(res.context['form'].errors)
        self.mock_decommission_apply.assert_not_called()

    @PREVIEW
    def test_a_host_with_servers_cannot_be_confirmed(self):
        incidents, plan = self.shown(
            dead_host1(with_stranger=False, with_server=True))
        res = self.client.get(DECOMMISSION, {'provider': H1})
        self.assertContains(res, 'Servers still on it')
        self.assertContains(res, reverse('horizon:admin:instances:detail',
                                         args=[uid('stuck')]))
        self.assertContains(res, 'cannot be decommissioned now')
        self.assertNotContains(res, 'value="Decommission"')
        self.assertNotIn('rows', res.context['form'].initial)

    @PREVIEW
    def test_a_host_with_thousands_of_servers_is_previewed(self):
        """An Ironic compute service places thousands of servers."""
        incidents, plan = self.shown(
            dead_host1(with_stranger=False, with_server=True, servers=5000))
        res = self.client.get(DECOMMISSION, {'provider': H1})
        self.assertEqual(200, res.status_code)
        (blocker,) = [b for b in res.context['blockers']
                      if 'servers still on it' in str(b)]
        text = str(blocker)
        self.assertContains(res, '<li>%s</li>' % html.escape(text))
        self.assertTrue(all('stuck-%d (%s)' % (i, uid('stuck-%d' % i)) in text
                            for i in range(1, 5000)))
        self.assertNotContains(res, 'value="Decommission"')

    @pytest.mark.error_messages
    @PREVIEW
    def test_a_malformed_provider_is_refused(self):
        self.reported()
        res = self.client.get(DECOMMISSION, {'provider': 'x'})
        self.assertRedirectsNoFollow(res, INDEX)
        self.mock_preview_decommission.assert_not_called()

    @pytest.mark.error_messages
    @PREVIEW
    def test_an_unknown_provider_is_no_such_provider(self):
        """A uuid no audit saw is said to be none, as its detail page
        says, never "already gone"; nothing is read or written."""
        self.reported()
        res = self.client.get(DECOMMISSION, {'provider': uid('nowhere')})
        self.assertRedirectsNoFollow(res, INDEX)
        self.assertEqual(['No such resource provider in the last audit.'],
                         self.messages_seen.texts('error'))
        self.mock_preview_decommission.assert_not_called()


SERVICE, AGAIN = uid('host1-service'), uid('host1-service-again')


def host1_with_service_uuid():
    """host1 of the incidents, its compute service with its uuid."""
    incidents = Incidents()
    snapshot = incidents.snapshot
    snapshot.services['host1'] = dataclasses.replace(
        snapshot.services['host1'], uuid=SERVICE)
    return incidents, snapshot


class BindingTests(Shown, AdminViewTests):
    """The confirm deletes only the compute service and the providers its
    preview showed: re-read at submit, any difference writes nothing."""

    def confirm_after(self, changed):
        incidents, snapshot = host1_with_service_uuid()
        self.mock_report.return_value = incidents.report
        plan = decommission.plan(snapshot, H1, min_age=0)
        with mock.patch.object(service, 'preview_decommission',
                               return_value=plan):
            signed = self.signed()
        journal = mock.Mock()
        with mock.patch.object(decommission_ops, 'read',
                               return_value=changed(snapshot)), \
                mock.patch.object(service, '_journal',
                                  return_value=journal), \
                mock.patch.object(repairs, 'apply') as repairs_apply, \
                mock.patch.object(nova, 'delete_service') as delete_service, \
                mock.patch.object(placement, 'delete_provider') as delete:
            res = self.client.post(DECOMMISSION, {'rows': signed})
        self.assertNoFormErrors(res)
        repairs_apply.assert_not_called()
        delete_service.assert_not_called()
        delete.assert_not_called()
        self.assertEqual([], journal.method_calls)
        (skipped,) = self.messages_seen.texts('warning')
        return skipped

    @helpers.create_mocks({service: ['report', '_clients', 'note_written']})
    def test_a_service_registered_again_since_the_preview(self):
        def again(snapshot):
            snapshot.services['host1'] = dataclasses.replace(
                snapshot.services['host1'], uuid=AGAIN)
            return snapshot

        skipped = self.confirm_after(again)
        self.assertIn('nothing written: compute service host1 is now %s, '
                      'not %s since the preview' % (AGAIN, SERVICE),
                      skipped)

    @helpers.create_mocks({service: ['report', '_clients', 'note_written']})
    def test_a_provider_added_to_the_tree_since_the_preview(self):
        child = uid('host1_pci_0000_81_00_0')

        def grown(snapshot):
            snapshot.providers[child] = m.Provider(
                child, 'host1_pci_0000_81_00_0', 0, H1, H1)
            return snapshot

        skipped = self.confirm_after(grown)
        self.assertIn('providers were added: host1_pci_0000_81_00_0 (%s)' %
                      child, skipped)

    @helpers.create_mocks({service: ['report', 'decommission_apply']})
    def test_one_node_of_several_needs_the_whole_service_ticked(self):
        cloud, (a, b, c) = ironic()
        snapshot = cloud.snapshot()
        self.mock_report.return_value = classify.audit(snapshot, min_age=600)
        with mock.patch.object(decommission_ops, 'read',
                               return_value=snapshot), \
                mock.patch.object(service, '_clients'):
            res = self.client.get(DECOMMISSION, {'provider': b})
            self.assertContains(res, 'also serves')
            for other in (a, c):
                self.assertContains(res, other)
            self.assertContains(res, 'whole_service=1')
            self.assertNotContains(res, 'value="Decommission"')
            res = self.client.get(DECOMMISSION, {'provider': b,
                                                 'whole_service': '1'})
            self.assertContains(res, 'value="Decommission"')
            self.assertContains(res, 'name="whole_service"')
            signed = signed_rows(res)
            res = self.client.post(DECOMMISSION, {'rows': signed})
        self.assertIn('whole_service', res.context['form'].errors)
        # The whole service's preview again, its box to tick.
        self.assertContains(res, 'value="Decommission"')
        self.assertContains(res, 'name="whole_service"')
        self.assertNotContains(res, 'also serves')
        self.mock_decommission_apply.assert_not_called()
        self.mock_decommission_apply.return_value = []
        res = self.client.post(DECOMMISSION, {'rows': signed,
                                              'whole_service': 'on'})
        self.assertNoFormErrors(res)
        (call,) = self.mock_decommission_apply.call_args_list
        self.assertEqual(call.kwargs['bound'], {
            'service': uid('conductor-svc'),
            'providers': sorted([a, b, c]),
            'whole_service': True})


class DialogTests(Shown, AdminViewTests):
    """What the decommission dialog says before and after the confirm."""

    @PREVIEW
    def test_the_confirm_is_a_danger_button(self):
        incidents, plan = self.shown(dead_host1())
        res = self.client.get(DECOMMISSION, {'provider': H1})
        self.assertContains(res, 'class="btn btn-danger" type="submit" '
                                 'value="Decommission"')
        self.assertNotContains(res, 'class="btn btn-primary" type="submit"')

    @PREVIEW
    def test_no_heading_for_unknown_consumers_when_there_are_none(self):
        incidents, plan = self.shown(dead_host1(with_stranger=False))
        res = self.client.get(DECOMMISSION, {'provider': H1})
        self.assertContains(res, 'value="Decommission"')
        self.assertNotContains(res, 'consumers Nova does not know')
        self.assertNotContains(res, 'name="delete_unknown"')

    @PREVIEW_AND_CONFIRM
    def test_an_unticked_unknown_consumer_is_a_field_error(self):
        """The decommission needs it deleted: refused in the form, before
        anything is written, not after the confirm."""
        incidents, plan = self.shown(dead_host1())
        res = self.client.get(DECOMMISSION, {'provider': H1})
        self.assertContains(res, 'must be deleted for the decommission')
        res = self.client.post(DECOMMISSION, {'rows': signed_rows(res)})
        self.assertEqual(200, res.status_code)
        errors = res.context['form'].errors
        self.assertIn('delete_unknown', errors)
        self.assertIn('Tick every consumer', str(errors['delete_unknown']))
        self.assertContains(res, 'Tick every consumer')
        self.mock_decommission_apply.assert_not_called()

    @PREVIEW_AND_CONFIRM
    def test_the_error_comes_first_in_the_dialog(self):
        """Above the long preview, where the eye is and the focus goes
        (an alert keyboard.js focuses), not at its foot; the field keeps
        its mark."""
        incidents, plan = self.shown(dead_host1())
        res = self.client.get(DECOMMISSION, {'provider': H1})
        self.assertNotContains(res, 'orphan-form-errors')
        res = self.client.post(DECOMMISSION, {'rows': signed_rows(res)})
        content = res.content.decode()
        top = re.search(r'<div class="alert alert-danger orphan-form-errors" '
                        r'role="alert" tabindex="-1">\s*<p>Tick every '
                        r'consumer listed', content)
        self.assertTrue(top, content)
        self.assertLess(top.start(), content.index('orphan-preview'))
        self.assertLess(content.index('orphan-preview'),
                        content.index('has-error'))

    @PREVIEW_AND_CONFIRM
    def test_an_unticked_consumer_keeps_the_preview_and_its_confirm(self):
        """The field error comes back over the same preview, read again
        for the hypervisor the signed preview names, with its Decommission
        button: not a dialog saying it cannot be done."""
        incidents, plan = self.shown(dead_host1())
        url = '%s?provider=%s' % (DECOMMISSION, H1)
        signed = signed_rows(self.client.get(url))
        for where in (url, DECOMMISSION):
            self.mock_preview_decommission.reset_mock()
            res = self.client.post(where, {'rows': signed})
            self.assertIn('delete_unknown', res.context['form'].errors)
            self.mock_preview_decommission.assert_called_once_with(
                mock.ANY, H1, whole_service=False)
            self.assertContains(res, 'Allocations left on it')
            self.assertContains(res, 'name="delete_unknown" value="%s"' %
                                STRANGER)
            self.assertContains(res, 'value="Decommission"')
            self.assertNotContains(res, 'cannot be decommissioned now')
        self.mock_decommission_apply.assert_not_called()

    @helpers.create_mocks({service: ['report', 'preview_decommission',
                                     'decommission_apply', 'batch_of']})
    def test_one_summary_message_with_its_history_batch(self):
        incidents, plan = self.shown(dead_host1())
        signed = self.signed()
        self.mock_decommission_apply.return_value = [
            write.Outcome(m.Selection(c, H1, m.DELETE), write.DONE,
                          'done', entry_id=i)
            for i, c in enumerate((incidents.vm, STRANGER), 1)] + [
            write.Outcome(m.Selection('', H1, m.DELETE_SERVICE),
                          write.DONE, 'deleted', entry_id=3)] + [
            write.Outcome(m.Selection('', p, m.DELETE_PROVIDER),
                          write.DONE, 'deleted', entry_id=4)
            for p in (H1,)]
        self.mock_batch_of.return_value = 'abcdef0123'
        res = self.client.post(DECOMMISSION, {
            'rows': signed, 'delete_unknown': [STRANGER]})
        self.assertNoFormErrors(res)
        ((level, message),) = self.messages_seen
        self.assertEqual('success', level)
        self.assertIn('Decommission of host1: 4 steps done and journaled.',
                      message)
        self.assertIn('%s?tab=orphaned_allocations__history&amp;'
                      'batch=abcdef0123' % INDEX, message)

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'preview_decommission',
                                     'decommission_apply', 'batch_of']})
    def test_the_summary_says_where_it_stopped(self):
        incidents, plan = self.shown(dead_host1())
        signed = self.signed()
        self.mock_decommission_apply.return_value = [
            write.Outcome(m.Selection(STRANGER, H1, m.DELETE),
                          write.DONE, 'done', entry_id=1),
            write.Outcome(m.Selection('', H1, m.DELETE_SERVICE),
                          write.FAILED, 'Nova said no')]
        self.mock_batch_of.return_value = 'abcdef0123'
        self.client.post(DECOMMISSION, {
            'rows': signed, 'delete_unknown': [STRANGER]})
        (message,) = self.messages_seen.texts('error')
        self.assertIn('Decommission of host1: 1 of 2 steps done. Delete '
                      'compute service host1 failed: Nova said no', message)
        self.assertEqual(1, len(self.messages_seen))

    @helpers.create_mocks({service: ['report', 'history']})
    def test_the_history_link_shows_that_batch(self):
        self.reported()
        self.mock_history.return_value = ([], False, False, {})
        res = self.client.get(INDEX, {'batch': 'abcdef0123'})
        self.assertRedirectsNoFollow(
            res, INDEX + '?tab=orphaned_allocations__history')
        res = self.client.get(INDEX, {'tab': 'orphaned_allocations__history'})
        self.mock_history.assert_called_once_with(
            mock.ANY, marker=None, prev_marker=None, limit=20, provider=None,
            batch='abcdef0123', all_clouds=False)
        self.assertContains(res, 'value="abcdef0123"')
