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

"""Every way an operator can repair, for every verdict that offers a
repair: a row's action, the detail page's batch action, *Fix recommended*
and ``orphan-audit apply``.  Each goes through the views, the signed
confirm, the engine's one planning call and the real journal, against an
in-memory cloud standing in for Nova and Placement (the same paths run
against the real services in ``tests/e2e``)."""

import html
import re
from unittest import mock
from urllib import parse

from keystoneauth1 import exceptions as ks_exc
from orphan_dashboard.api import client
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.cli import commands as cli
from orphan_dashboard.cli import options
from orphan_dashboard.content.orphaned_allocations import forms
from orphan_dashboard.writing import journal
import pytest
from tests.views.base import AdminViewTests
from tests.views.base import batch_message
from tests.views.base import detail
from tests.views.base import H2
from tests.views.base import INDEX
from tests.views.base import REPAIR
from tests.views.base import signed_rows
from tests.views.fakes import FakeCloud
from tests.views.fakes import one_of_each


PATHS_ELSEWHERE = {
    m.LEAKED_PORT: 'tests/views/test_ports.py',
}
"""Repairable verdicts whose paths another module walks: a release
writes Neutron's bindings, which this in-memory cloud does not keep."""

REPAIRABLE = tuple(code for code, kind in m.VERDICT_KINDS.items()
                   if kind.actions and code not in PATHS_ELSEWHERE)
"""Every verdict of the registry that offers a repair: a new one is
walked down every path here once :func:`one_of_each` stages a row of
it."""


def shown(cloud, consumer):
    """How a confirm's message names a consumer: by its server's name,
    else by its uuid."""
    server = cloud.snapshot.servers.get(consumer)
    if server is not None:
        return 'server %s on ' % server.name
    return 'consumer %s on ' % consumer


class PathTests(AdminViewTests):
    databases = {'default', 'orphan_journal'}

    def setUp(self):
        super().setUp()
        snapshot, self.rows = one_of_each()
        self.assertEqual(set(), set(REPAIRABLE) - set(self.rows),
                         'add a row of each of these verdicts to '
                         'one_of_each() in tests/views/test_paths.py')
        self.assertEqual(set(REPAIRABLE), set(self.rows))
        auditor = classify.Auditor(snapshot, min_age=0)
        self.findings = {v: auditor.finding(*row)
                         for v, row in self.rows.items()}
        for verdict, finding in self.findings.items():
            self.assertEqual(verdict, finding.verdict)
            self.assertTrue(finding.actions, verdict)

    def fresh(self):
        cloud = FakeCloud(one_of_each()[0])
        self.patched(*cloud.patches())
        return cloud

    def confirm(self, preview):
        self.assertEqual(200, preview.status_code)
        res = self.client.post(REPAIR, {'rows': signed_rows(preview)})
        self.assertEqual(302, res.status_code)
        self.assertFalse(self.messages_seen.texts('error'))

    def assert_repaired(self, cloud, verdict):
        consumer = self.rows[verdict][0]
        self.assertLessEqual(cloud.verdicts(consumer), {m.OK}, verdict)
        entry = journal.entries(None, consumer=consumer)[0][0]
        self.assertEqual((entry.status, entry.action, entry.verdict),
                         (entry.APPLIED, self.findings[verdict].action or
                          self.findings[verdict].actions[0], verdict))

    def test_a_rows_action(self):
        for verdict in REPAIRABLE:
            with self.subTest(verdict):
                consumer, provider = self.rows[verdict]
                for action in self.findings[verdict].actions:
                    cloud = self.fresh()
                    res = self.client.get(detail(provider))
                    link = '%s?%s' % (REPAIR, parse.urlencode({
                        'sel': '%s:%s:%s' % (consumer, provider, action),
                        'next': detail(provider)}))
                    self.assertContains(res, 'href="%s"' % html.escape(link))
                    self.confirm(self.client.get(link))
                    self.assertLessEqual(cloud.verdicts(consumer), {m.OK},
                                         (verdict, action))

    def test_the_detail_pages_batch_action(self):
        for verdict in REPAIRABLE:
            with self.subTest(verdict):
                cloud = self.fresh()
                consumer, provider = self.rows[verdict]
                action = self.findings[verdict].actions[0]
                res = self.client.post(detail(provider), {
                    'action': 'allocations__%s_selected' % action,
                    'object_ids': ['%s:%s' % (consumer, provider)]})
                self.assertEqual(302, res.status_code)
                self.confirm(self.client.get(res['location']))
                self.assert_repaired(cloud, verdict)

    def test_fix_recommended(self):
        for verdict in REPAIRABLE:
            with self.subTest(verdict):
                cloud = self.fresh()
                consumer, provider = self.rows[verdict]
                res = self.client.post(INDEX, {
                    'action': 'providers__fix_recommended',
                    'object_ids': [provider]})
                self.assertEqual(302, res.status_code)
                self.confirm(self.client.get(res['location']))
                if verdict in m.NOT_RECOMMENDED:
                    # Only ever by an explicit per-row choice.
                    self.assertEqual({verdict}, cloud.verdicts(consumer))
                else:
                    self.assert_repaired(cloud, verdict)

    def test_orphan_audit_apply(self):
        cloud = self.fresh()
        adapter = mock.Mock(**{'get_user_id.return_value': 'uid',
                               'get_project_id.return_value': 'pid',
                               'auth.get_access.side_effect': KeyError})
        clients = client.Clients(adapter, adapter)
        # One row of each verdict: mostly leftovers, past the unattended
        # share a command line takes unless told.
        args = options.build_parser().parse_args(
            ['apply', '--min-age', '0', '--max-share', '100'])
        with mock.patch.object(client, 'for_cloud', return_value=clients), \
                mock.patch.object(client, 'cloud_for_clients',
                                  return_value=client.Cloud('k', 'r', 'p',
                                                            's')):
            self.assertEqual(options.APPLIED, cli.execute(args))
        for verdict in REPAIRABLE:
            consumer = self.rows[verdict][0]
            if verdict in m.NOT_RECOMMENDED:
                self.assertEqual({verdict}, cloud.verdicts(consumer))
            else:
                self.assert_repaired(cloud, verdict)

    def fixed_on_host2(self, cloud, then=None):
        """*Fix recommended* on host2, previewed and confirmed, each PUT
        (or POST, its first consumer) written to ``cloud`` and then handed
        to ``then(consumer, written)``
        (which may raise as Placement or a gateway would): ``(the
        confirm's response, the preview, the consumers written in
        order)``."""
        written = []

        def put(*args):
            written.append(args[1])
            cloud.put_allocations(*args)
            if then is not None:
                then(args[1], written)

        def post(client, consumers):
            cloud.post_allocations(client, consumers)
            written.append(next(iter(consumers)))
            if then is not None:
                then(written[-1], written)

        with mock.patch.object(placement, 'put_allocations', put), \
                mock.patch.object(placement, 'post_allocations', post):
            res = self.client.post(INDEX, {
                'action': 'providers__fix_recommended',
                'object_ids': [H2]})
            preview = self.client.get(res['location'])
            res = self.client.post(REPAIR, {'rows': signed_rows(preview)})
        return res, preview, written

    @pytest.mark.error_messages
    def test_a_row_our_own_identical_write_beat_does_not_stop_the_batch(
            self):
        """The first row's write loses the race to an identical one
        (another confirm of the same preview), journaled applied: that
        row is skipped in words, recorded only by the twin's entry, and
        the batch goes on; it is no journal failure."""
        from orphan_dashboard.models import JournalEntry

        def twin_first(consumer, written):
            if len(written) == 1:
                twin = JournalEntry.objects.get(consumer=consumer,
                                                status='pending')
                twin.pk, twin.status = None, 'applied'
                twin.save()
                raise ks_exc.Conflict('consumer generation conflict')

        cloud = self.fresh()
        res, _preview, written = self.fixed_on_host2(cloud, twin_first)
        self.assertGreater(len(written), 1)
        level, lines, batch = batch_message(self.messages_seen)
        self.assertEqual('warning', level)
        self.assertEqual('%d repairs done, 1 skipped.' % (len(written) - 1),
                         lines[0])
        skipped = lines[1]
        self.assertIn(shown(cloud, written[0]), skipped)
        self.assertIn('already as this change would leave it', skipped)
        # The journal has only the twin's entry: History lists this row
        # with its batch.
        self.assertEqual([skipped], forms.kept_result(
            res.wsgi_request, batch))
        for consumer in written:
            self.assertLessEqual(cloud.verdicts(consumer), {m.OK})
        (twin,) = journal.entries(None, consumer=written[0])[0]
        self.assertEqual('applied', twin.status)

    @pytest.mark.error_messages
    def test_a_batch_past_the_writes_limit_writes_nothing(self):
        """ORPHAN_AUDIT_MAX_WRITES bounds a confirm of the panel's rows as
        it bounds an unattended run: past it, one error says what the
        batch would have written, and nothing is."""
        from django.test.utils import override_settings

        with override_settings(ORPHAN_AUDIT_MAX_WRITES=1):
            _res, preview, written = self.fixed_on_host2(self.fresh())
        rows = len(preview.context['rows'])
        self.assertGreater(rows, 1)
        self.assertEqual([], written)
        (error,) = self.messages_seen.texts('error')
        self.assertIn('held, nothing written: it would write %d consumers'
                      % rows, error)
        self.assertIn('more than the limit of 1', error)
        self.assertEqual([], list(journal.entries(None)[0]))

    @pytest.mark.error_messages
    def test_a_write_a_gateway_retried_after_it_landed_is_done(self):
        """Placement applied the first row's PUT, and a gateway that sent
        it again got the 409 of its own write: read back, the consumer
        holds the plan, so the row is done and journaled applied with its
        new generation (restorable), not "wrote nothing"."""
        def retried(consumer, written):
            if len(written) == 1:
                raise ks_exc.Conflict('consumer generation conflict')

        cloud = self.fresh()
        _res, _preview, written = self.fixed_on_host2(cloud, retried)
        level, lines, batch = batch_message(self.messages_seen)
        self.assertEqual('%d repairs done.' % len(written), lines[0])
        (entry,) = journal.entries(None, consumer=written[0])[0]
        self.assertEqual(('applied', batch), (entry.status, entry.batch))
        held = cloud.snapshot.consumers.get(written[0])
        self.assertEqual(held.generation if held else None,
                         entry.new_generation)
        self.assertLessEqual(cloud.verdicts(written[0]), {m.OK})

    @pytest.mark.error_messages
    def test_a_batch_whose_journal_fails_says_the_truth_per_row(self):
        """The journal's database goes away on the second row of a batch:
        the first row was written (and says so), the second is not sent,
        the rest are not attempted, each with its own message."""
        cloud = self.fresh()
        real_begin = journal.Journal.begin
        calls = []

        def begin(self_, plan, restores=None):
            calls.append(plan.consumer)
            if len(calls) == 2:
                raise RuntimeError('database is locked')
            return real_begin(self_, plan, restores)

        with mock.patch.object(journal.Journal, 'begin', begin):
            res = self.client.post(INDEX, {
                'action': 'providers__fix_recommended',
                'object_ids': [H2]})
            res = self.confirm_with_errors(
                self.client.get(res['location']))
        level, lines, batch = batch_message(self.messages_seen)
        self.assertEqual('error', level)
        # Counted, then named worst first: the failure, the rows not
        # attempted, the one done in a batch of five rows at most.
        skipped = int(re.fullmatch(r'1 repair done, 1 failed, (\d+) '
                                   r'skipped\.', lines[0]).group(1))
        failed = lines[1]
        self.assertIn(shown(cloud, calls[1]), failed)
        self.assertIn('not written: the journal could not record it first',
                      failed)
        # The journal database's own words go to the log, not the user.
        self.assertNotIn('database is locked', failed)
        named = lines[2:2 + min(skipped, forms.NAMED - 1)]
        self.assertTrue(named)
        for text in named:
            self.assertIn('not attempted: the journal failed on an earlier '
                          'row', text)
        if skipped + 2 <= forms.NAMED:
            self.assertIn(shown(cloud, calls[0]), lines[-1])
        self.assertEqual(skipped + 1, len(forms.kept_result(
            res.wsgi_request, batch)))
        self.assertLessEqual(cloud.verdicts(calls[0]), {m.OK})
        self.assertNotIn(m.OK, cloud.verdicts(calls[1]))

    def confirm_with_errors(self, preview):
        self.assertEqual(200, preview.status_code)
        res = self.client.post(REPAIR, {'rows': signed_rows(preview)})
        self.assertEqual(302, res.status_code)
        return res
