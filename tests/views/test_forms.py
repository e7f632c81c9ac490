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

"""The confirm forms' own serialisation of the plans they sign."""

import unittest

from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import forms
from orphan_dashboard.writing import repair


class DumpLoadTests(unittest.TestCase):
    def test_an_allocations_plan_comes_back_equal(self):
        plan = m.Plan(m.SET_OWNER, 'c', 'p', m.INCOMPLETE_CONSUMER, 'why',
                      3, 'project', 'user', {'p': {'VCPU': 1}},
                      {'p': {'VCPU': 1}}, before_project=m.INCOMPLETE,
                      before_user=m.INCOMPLETE)
        data = forms.dump(plan)
        self.assertEqual('allocations', data['kind'])
        self.assertEqual(plan, forms.load(data))

    def test_a_provider_plan_comes_back_equal(self):
        plan = repair.ProviderPlan(m.DELETE_PROVIDER, 'p', 'host1', 4,
                                   {'name': 'host1', 'inventories': {}})
        data = forms.dump(plan)
        self.assertEqual('provider', data['kind'])
        self.assertEqual(plan, forms.load(data))

    def test_anything_else_is_a_value_error(self):
        plan = forms.dump(repair.ProviderPlan(m.DELETE_PROVIDER, 'p', 'h',
                                              None, {}))
        for data in (dict(plan, kind='other'), dict(plan, extra=1),
                     {'kind': 'provider'}, {}, [], None, 'plan'):
            with self.assertRaises(ValueError, msg=repr(data)):
                forms.load(data)
