"""The journal: history tabs, export, restore preview and confirm."""

import json
from unittest import mock

from django.core.exceptions import ObjectDoesNotExist
from django.urls import reverse
import pytest

from orphan_dashboard.audit import model as m
from orphan_dashboard import repair
from orphan_dashboard import service
from tests.views.base import (AdminViewTests, FP1, H1, INDEX, RESTORE,
                              Incidents, helpers, uid)


def entry():
    from orphan_dashboard.models import JournalEntry
    return JournalEntry(id=7, action=m.TRIM, verdict=m.MOVED, provider=H1,
                        consumer=uid('vm'), before={H1: {'VCPU': 1}},
                        after={}, status=JournalEntry.APPLIED,
                        user_name='admin', source='panel')


class HistoryTests(AdminViewTests):
    @helpers.create_mocks({service: ['report', 'history']})
    def test_history_tab_and_export(self):
        self.mock_report.return_value = Incidents().report
        self.mock_history.return_value = [entry()]
        res = self.client.get(INDEX, {'tab': 'orphaned_allocations__history'})
        self.assertContains(res, uid('vm'))
        self.assertContains(res, 'Trim to current host')
        self.assertContains(res, RESTORE + '?entry=7')
        res = self.client.get(reverse(
            'horizon:admin:orphaned_allocations:export', args=['csv']))
        self.assertEqual('text/csv', res['Content-Type'])
        self.assertIn(uid('vm'), res.content.decode())


class RestoreTests(AdminViewTests):
    @helpers.create_mocks({service: ['journal_entries', 'preview_restore',
                                     'restore']})
    def test_preview_and_confirm(self):
        journaled = entry()
        self.mock_journal_entries.return_value = [journaled]
        plan = m.Plan(m.RESTORE, journaled.consumer, H1, m.MOVED, '', None,
                      'p', 'u', {}, {H1: {'VCPU': 1}})
        self.mock_preview_restore.return_value = [repair.Row(
            repair.Selection(journaled.consumer, H1, m.RESTORE), plan=plan,
            fingerprint=FP1)]
        res = self.client.get(RESTORE, {'entry': 7})
        self.assertContains(res, 'VCPU=1')
        self.mock_restore.return_value = [repair.Outcome(
            repair.Selection(journaled.consumer, H1, m.RESTORE), repair.DONE,
            'restore done')]
        res = self.client.post(RESTORE, {'rows': json.dumps([[7, FP1]])})
        self.assertRedirectsNoFollow(res, INDEX)
        self.mock_restore.assert_called_once_with(
            mock.ANY, [journaled], {journaled.consumer: FP1})
        self.assertEqual(['Restore of consumer %s on provider %s: done.'
                          % (journaled.consumer, H1)],
                         self.messages_seen.texts('success'))

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['journal_entries', 'preview_restore',
                                     'restore']})
    def test_bad_entries_are_refused(self):
        self.mock_journal_entries.side_effect = ObjectDoesNotExist
        for query in ({'entry': 'x'}, {}, {'entry': 99}):
            res = self.client.get(RESTORE, query)
            self.assertRedirectsNoFollow(res, INDEX)
        for rows in ('not json', [['x', FP1]], [[7, 'nope']], []):
            res = self.client.post(RESTORE, {'rows': json.dumps(rows)})
            self.assertEqual(200, res.status_code)
            self.assertTrue(res.context['form'].non_field_errors())
        self.mock_preview_restore.assert_not_called()
        self.mock_restore.assert_not_called()
