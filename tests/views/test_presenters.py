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

"""What previews show of the engine's plans (presenters.py)."""

import types
import unittest

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import presenters
from orphan_dashboard.writing import repair

NAMES = {'rp1': 'host1'}


def _plan(consumer='c1'):
    return m.Plan(m.TRIM, consumer, 'rp1', m.EVACUATED_SOURCE, 'why', 2,
                  'p', 'u', {'rp1': {'VCPU': 1}, 'rp2': {'VCPU': 1}},
                  {'rp2': {'VCPU': 1}})


def _row(consumer, finding=None, plan=None):
    return repair.Row(m.Selection(consumer, 'rp1', m.TRIM), plan=plan,
                      finding=finding)


def _nova(code, **params):
    return types.SimpleNamespace(nova=reasons.reason(code, **params),
                                 reason='gone')


class PresentersTests(unittest.TestCase):
    def test_a_bars_label_is_the_class_shortened_where_it_ends(self):
        """Cut where classes differ, their ends (CUSTOM_..., NET_...
        share their starts), the unit ending dropped first; the full name
        is the label's title (the template's)."""
        for name, label in (
                ('MEMORY_MB', 'MEMORY_MB'),
                ('NET_BW_EGR_KILOBIT_PER_SEC', 'NET_BW_EGR'),
                ('NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC', '\u2026_RATE_EGR'),
                ('CUSTOM_RESERVATION_8F1D2C3B', '\u2026_8F1D2C3B'),
                ('CUSTOM_GPU_A100', '\u2026_GPU_A100'),
                ('CUSTOM_FPGA_X', 'CUSTOM_FPGA_X'),
                ('VERYLONGSINGLEWORDCLASS', '\u2026LEWORDCLASS')):
            with self.subTest(name=name):
                self.assertEqual(label, labels.short_class(name))
                self.assertLessEqual(len(label), labels.SHORT_CLASS)

    def test_side_names_each_provider_in_uuid_order(self):
        self.assertEqual(
            [('host1', 'rp1', {'VCPU': 1}),
             (None, 'rp2', {'VCPU': 2, 'DISK_GB': 1})],
            presenters.side({'rp2': {'VCPU': 2, 'DISK_GB': 1},
                             'rp1': {'VCPU': 1}}, NAMES))
        # Its template groups the amounts in the user's locale.
        self.assertEqual(
            'DISK_<wbr>GB=1, MEMORY_<wbr>MB=32,768',
            labels.breakable_resources({'MEMORY_MB': 32768, 'DISK_GB': 1}))

    def test_server_names_only_of_rows_naming_a_server(self):
        rows = [_row('c1', _nova('nova.server', name='vm1', status='ACTIVE')),
                _row('c2', _nova('nova.server', name='', status='ACTIVE')),
                _row('c3'), types.SimpleNamespace()]
        self.assertEqual({'c1': 'vm1'}, presenters.server_names(rows))

    def test_repair_previews(self):
        plan = _plan()
        rows = [_row('c1', _nova('nova.server', name='vm1', status='ACTIVE'),
                     plan), _row('c2')]
        seen = []
        previews = presenters.repair_previews(
            rows, NAMES, {}, lambda p: seen.append(p) or (None, None))
        self.assertEqual([plan, None], seen)
        first, second = previews
        self.assertEqual(('vm1', 'host1', labels.action(m.TRIM)),
                         (first['server'], first['provider'],
                          first['action']))
        self.assertEqual([('host1', 'rp1', {'VCPU': 1}),
                          (None, 'rp2', {'VCPU': 1})], first['before'])
        self.assertEqual([(None, 'rp2', {'VCPU': 1})], first['after'])
        self.assertEqual((None, None, [], []),
                         (second['server'], second['reason'],
                          second['before'], second['after']))

    def test_restore_previews_show_no_sides_for_a_provider(self):
        entry = types.SimpleNamespace(kind='provider', PROVIDER='provider',
                                      action=m.RESTORE, provider='rp1')
        row = _row('', plan=_plan())
        preview, = presenters.restore_previews([(entry, row)], NAMES,
                                               lambda p: (None, None))
        self.assertEqual(('host1', [], []),
                         (preview['provider'], preview['before'],
                          preview['after']))

    def test_no_decommission_plan_shows_nothing(self):
        self.assertEqual({'steps': [], 'providers': [], 'other_nodes': [],
                          'replacements': [],
                          'foreign_children': [], 'service_commands': [],
                          'provider_commands': []},
                         presenters.decommission_preview(None, {}, {}))


class NamesWrapTests(unittest.TestCase):
    """A provider's name wraps after its colons and at its spaces, never
    inside a word: the preview's sides mark it so."""

    NIC = 'host3:Open vSwitch agent:br-phys'

    def test_a_name_may_break_after_each_colon_only(self):
        self.assertEqual('host3:<wbr>Open vSwitch agent:<wbr>br-phys',
                         labels.breakable(self.NIC))
        self.assertEqual('a&lt;b:<wbr>', labels.breakable('a<b:'))
        self.assertEqual('host1', labels.breakable('host1'))

    def test_resources_may_break_after_their_underscores(self):
        self.assertEqual(
            'DISK_<wbr>GB=10, NET_<wbr>BW_<wbr>EGR=1',
            labels.breakable_resources('DISK_GB=10, NET_BW_EGR=1'))

    def test_the_preview_sides_wrap_names_at_sensible_places(self):
        from django.template.loader import render_to_string
        html = render_to_string('orphaned_allocations/_sides.html', {
            'side': [(self.NIC, 'rp-uuid',
                      'NET_BW_EGR_KILOBIT_PER_SEC=1000')]})
        self.assertIn('<span class="orphan-name">host3:<wbr>Open vSwitch '
                      'agent:<wbr>br-phys</span>', html)

    def test_the_style_keeps_words_whole(self):
        import os

        from orphan_dashboard import content
        scss = os.path.join(os.path.dirname(os.path.dirname(
            content.__file__)), 'static', 'orphan_dashboard', 'scss',
            'orphan_dashboard.scss')
        rule = open(scss).read().split('.orphan-name {', 1)[1].split('}')[0]
        self.assertIn('word-break: normal;', rule)
        self.assertIn('overflow-wrap: normal;', rule)


class ReasonAmountsTests(unittest.TestCase):
    def test_the_panel_groups_a_reasons_amounts_not_its_ids(self):
        """An amount in a reason is grouped as the locale groups
        thousands; a journal entry's id is an id."""
        from orphan_dashboard.audit import reasons
        short = reasons.reason('capacity.short', resource_class='MEMORY_MB',
                               amount=4096, short=1024, free=3072)
        self.assertEqual('MEMORY_MB 1,024 short (it needs 4,096; at most '
                         '3,072 free on one provider, the recommended '
                         'repairs done)', labels.reason(short))
        self.assertIn('1024 short', str(short))
        listed = reasons.listing([short, reasons.reason(
            'restore.recreated', entry=12345, provider='rp')])
        self.assertIn('entry 12345', labels.reason(listed))
        self.assertIn('1,024 short', labels.reason(listed))
