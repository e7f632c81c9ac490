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

"""The tables' modules: repair actions built from the engine's codes,
the filter action reached without Horizon's private attribute."""

import unittest
from unittest import mock
from urllib import parse

from django.test import RequestFactory
from django.urls import reverse

from orphan_dashboard.api import client
from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import actions
from orphan_dashboard.content.orphaned_allocations import filters
from orphan_dashboard.content.orphaned_allocations import finding_tables
from orphan_dashboard.content.orphaned_allocations import forms
from orphan_dashboard.content.orphaned_allocations import history_tables
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import provider_tables
from orphan_dashboard.content.orphaned_allocations import service


class RepairActionsTests(unittest.TestCase):
    def test_one_row_and_one_selection_action_per_repair(self):
        rows, selected = actions.repair_actions(m.ACTIONS)
        self.assertEqual(['TrimRow', 'DeleteAndHealRow', 'DeleteRow',
                          'HealRow', 'SetOwnerRow', 'ReleaseRow',
                          'MoveBackRow'],
                         [cls.__name__ for cls in rows])
        self.assertEqual(['TrimRows', 'DeleteAndHealRows', 'DeleteRows',
                          'HealRows', 'SetOwnerRows', 'ReleaseRows',
                          'MoveBackRows'],
                         [cls.__name__ for cls in selected])
        for code, row, rows_ in zip(m.ACTIONS, rows, selected):
            self.assertTrue(issubclass(row, actions.RepairRow))
            self.assertTrue(issubclass(rows_, actions.RepairRows))
            self.assertEqual((code, code), (row.name, row.repair))
            self.assertEqual((code + '_selected', code),
                             (rows_.name, rows_.repair))
            self.assertEqual(labels.action(code), row.verbose_name)
            self.assertEqual(labels.action(code), rows_.verbose_name)
            self.assertEqual(labels.action(code), rows_.verbose_name_plural)

    def test_the_allocations_table_offers_them_in_the_same_order(self):
        meta = finding_tables.AllocationsTable._meta
        self.assertEqual(
            ['filter', 'export_findings_csv', 'export_findings_json',
             'trim_selected', 'delete_and_heal_selected', 'delete_selected',
             'heal_selected', 'set_owner_selected', 'release_selected',
             'move_back_selected', 'delete_unknown', 'decommission'],
            [action.name for action in meta.table_actions])
        self.assertEqual(['trim', 'delete_and_heal', 'delete', 'heal',
                          'set_owner', 'release', 'move_back'],
                         [action.name for action in meta.row_actions])

    def test_class_name(self):
        self.assertEqual('DeleteAndHeal',
                         actions._class_name('delete_and_heal'))
        self.assertEqual('Trim', actions._class_name('trim'))


class SelectionActionsTests(unittest.TestCase):
    def setUp(self):
        self.request = RequestFactory().get('/page/?tab=x')
        self.request.session = {}
        self.request.user = mock.Mock(id='admin')
        # A request of no login: the cloud its selection is bound to.
        patch = mock.patch.object(service, 'cloud_for_request',
                                  return_value=client.Cloud(
                                      'http://keystone.test/v3', 'RegionOne',
                                      'http://placement.test', 'p'))
        patch.start()
        self.addCleanup(patch.stop)

    def kept(self, action, obj_ids):
        """``(preview path, next, the selection kept for it)``."""
        url = parse.urlsplit(action().handle(None, self.request,
                                             obj_ids)['Location'])
        query = parse.parse_qs(url.query)
        (token,) = query.pop('selection')
        kept = forms.kept_selection(self.request, token)
        return url.path, query, {k: kept.getlist(k) for k in kept}

    def test_each_leads_to_its_preview_of_the_rows_ticked(self):
        repair = reverse('horizon:admin:orphaned_allocations:repair')
        restore = reverse('horizon:admin:orphaned_allocations:restore')
        back = {'next': ['/page/?tab=x']}
        self.assertEqual((repair, back, {'provider': ['a', 'b']}),
                         self.kept(provider_tables.FixRecommended,
                                   ['a', 'b']))
        self.assertEqual((restore, back, {'entry': ['1', '2']}),
                         self.kept(history_tables.RestoreRows, ['1', '2']))
        rows = actions.repair_actions([m.HEAL])[1][0]
        self.assertEqual((repair, back, {'sel': ['c:p:heal']}),
                         self.kept(rows, ['c:p']))
        for action in (provider_tables.FixRecommended,
                       history_tables.RestoreRows, rows):
            self.assertEqual(actions.ON_SELECTION, action.attrs)


class FilterActionTests(unittest.TestCase):
    def test_the_bound_filter_action_horizon_keeps(self):
        for table in (provider_tables.ProvidersTable,
                      finding_tables.AllocationsTable,
                      history_tables.HistoryTable):
            self.assertIs(table._meta._filter_action,
                          filters.filter_action(table))
