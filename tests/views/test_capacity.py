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

"""What the orphans cost: the summary above the index table, the flavor
chooser of the Capacity tab and the numbers on a provider's page."""

import dataclasses
import re
from unittest import mock

from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.api import placement
from orphan_dashboard.audit import capacity
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import presenters
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.operations import capacity as capacity_ops
from tests.unit.cloud import Cloud
from tests.views.base import AdminViewTests
from tests.views.base import detail
from tests.views.base import flat
from tests.views.base import H1
from tests.views.base import H2
from tests.views.base import H3
from tests.views.base import H4
from tests.views.base import helpers
from tests.views.base import Incidents
from tests.views.base import INDEX
from tests.views.base import uid

TAB = 'orphaned_allocations__capacity'
SMALL = capacity_ops.ListedFlavor('f-small', m.Flavor(
    vcpus=1, ram=512, disk=1, extra_specs={}, name='m1.small'))
FPGA = capacity_ops.ListedFlavor('f-fpga', m.Flavor(
    vcpus=1, ram=512, disk=1, extra_specs={'resources:CUSTOM_FPGA_X': '1'},
    name='fpga'))
VGPU = capacity_ops.ListedFlavor('f-vgpu', m.Flavor(
    vcpus=1, ram=512, disk=1, extra_specs={'resources:VGPU': '1'},
    name='vgpu'))


def inventory(total):
    return {'total': total, 'reserved': 0, 'min_unit': 1, 'max_unit': total,
            'step_size': 1, 'allocation_ratio': 1.0}


def compute(vcpu, ram=4096, disk=100):
    return {'VCPU': inventory(vcpu), 'MEMORY_MB': inventory(ram),
            'DISK_GB': inventory(disk)}


def incidents_with_capacity(host1_up=False):
    """host1 is full only of the evacuated server's orphan; host4 has one
    VCPU free; host2 and host3 are full; host4 has a FPGA child.  host1's
    compute service is forced down, unless ``host1_up`` (back up, its
    leftover still there): only then may anything fit it."""
    incidents = Incidents()
    snapshot = incidents.snapshot
    if host1_up:
        snapshot.services['host1'] = m.Service('host1', 'up')
        snapshot.hypervisors[H1] = dataclasses.replace(
            snapshot.hypervisors[H1], state='up')
        incidents.report = classify.audit(snapshot, min_age=600)
    fpga = uid('host4_fpga')
    snapshot.providers[fpga] = m.Provider(fpga, 'host4_fpga', 1, H4, H4)
    snapshot.inventories = {
        H1: compute(1), H2: compute(3), H3: compute(4), H4: compute(2),
        fpga: {'CUSTOM_FPGA_X': inventory(2)}}
    return incidents, capacity.assess(snapshot, incidents.report)


BW = 'NET_BW_EGR_KILOBIT_PER_SEC'


def wrong_amounts():
    """host2: ``fat`` holds 2048 MB where its flavor needs 512; on its NIC
    (10 Gbit/s) ``leaky`` holds 1000 kbps no port requests and ``short``
    1000 of the 2000 its port requests: findings hold 1536 MB and 1000
    kbps there, and its servers need more bandwidth than they hold.
    ``(report, capacity)``."""
    cloud = Cloud()
    fat = cloud.server('fat', 'host2')
    cloud.allocate(fat, H2, {'VCPU': 1, 'MEMORY_MB': 2048, 'DISK_GB': 1})
    nic = cloud.port_findings('host2', {BW: 2000}, {BW: 1000})
    snapshot = cloud.snapshot()
    snapshot.inventories = {H1: compute(4), H2: compute(8, ram=8192),
                            H3: compute(4), nic: {BW: inventory(10 ** 7)}}
    report = classify.audit(snapshot, min_age=600)
    return report, capacity.assess(snapshot, report)


def held_width(html, title):
    """The width in percent of the part held by findings whose title is
    ``title`` in ``html``."""
    found = re.search(r'class="progress-bar progress-bar-danger orphan-held" '
                      r'style="width: ([\d.]+)%%" title="%s"' % title, html)
    assert found, html
    return float(found.group(1))


def overview_bars(res):
    """The capacity table of a provider's Overview, its blanks squeezed."""
    text = flat(res)
    return text[text.index('<table class="table orphan-capacity">'):]


def shown_with_capacity(test, *flavors):
    """``test``'s report and capacity mocked as
    :func:`incidents_with_capacity` finds them, its flavors ``flavors``
    where given: ``(incidents, capacity)``."""
    incidents, found = incidents_with_capacity()
    test.mock_report.return_value = incidents.report
    test.mock_capacity.return_value = found
    if flavors:
        test.mock_flavors.return_value = list(flavors)
    return incidents, found


class CapacityTests(AdminViewTests):

    @helpers.create_mocks({service: ['report', 'capacity']})
    def test_the_index_sums_up_what_findings_hold(self):
        incidents, found = shown_with_capacity(self)
        res = self.client.get(INDEX)
        text = flat(res)
        self.assertIn('Held by findings on 3 hypervisors:', text)
        # host1's orphan, host2's stale migration, host3's stranger.
        self.assertIn('<span class="orphan-held-class">VCPU 3</span>', text)
        self.assertIn('<span class="orphan-held-class">MEMORY_MB 1,536'
                      '</span>', text)
        self.assertEqual([], self.messages_seen)

    @helpers.create_mocks({service: ['report', 'capacity']})
    def test_each_hypervisor_row_has_its_bars_and_numbers(self):
        incidents, found = shown_with_capacity(self)
        res = self.client.get(INDEX, {
            'tab': 'orphaned_allocations__providers', 'show': 'all'})
        text = flat(res)
        row = text[text.index('id="providers__row__%s"' % H1):]
        row = row[:row.index('</tr>')]
        self.assertIn('<span class="orphan-capacity-class" title="VCPU">'
                      'VCPU</span>', row)
        self.assertIn('class="progress-bar progress-bar-danger orphan-held" '
                      'style="width: 100.0%" title="held by findings 1"', row)
        self.assertIn('aria-label="0 needed, 1 held by findings, 0 free of '
                      '1"', row)
        row = text[text.index('id="providers__row__%s"' % H4):]
        row = row[:row.index('</tr>')]
        fpga = row[row.index('>CUSTOM_FPGA_X<'):]
        self.assertIn('title="needed 0"', fpga)
        # Only a part that holds something is drawn at its minimum width.
        self.assertIn('class="progress-bar progress-bar-danger" style="width: '
                      '0.0%" title="held by findings 0"', fpga)
        self.assertIn('title="free 2"', fpga)

    @helpers.create_mocks({service: ['report', 'capacity']})
    def test_the_index_draws_a_compact_bar_per_class_under_one_legend(self):
        """Looked at before read: per class a bar whose parts carry their
        numbers on hover, one legend for the table, and host1's single
        VCPU held of 256 drawn wide enough to be seen."""
        incidents, _found = incidents_with_capacity()
        incidents.snapshot.inventories[H1] = compute(256)
        self.mock_report.return_value = incidents.report
        self.mock_capacity.return_value = capacity.assess(
            incidents.snapshot, incidents.report)
        res = self.client.get(INDEX, {
            'tab': 'orphaned_allocations__providers', 'show': 'all'})
        text = flat(res)
        self.assertEqual(1, text.count('class="orphan-capacity-legend"'))
        row = text[text.index('id="providers__row__%s"' % H1):]
        row = row[:row.index('</tr>')]
        self.assertNotIn('held by findings 1 &middot;', row)
        vcpu = row[row.index('>VCPU<'):row.index('>MEMORY_MB<')]
        held = re.search(r'class="progress-bar progress-bar-danger '
                         r'orphan-held" style="width: ([\d.]+)%" '
                         r'title="held by findings 1"', vcpu)
        self.assertIsNotNone(held, vcpu)
        self.assertGreaterEqual(float(held.group(1)),
                                presenters.MIN_HELD_PERCENT)
        self.assertIn('title="free 255"', vcpu)

    @helpers.create_mocks({service: ['report', 'capacity'],
                           placement: ['provider_inventories']})
    def test_bandwidth_held_by_findings_is_drawn_wide_enough_to_see(self):
        """host2's servers need 2000 kbps of the 2000 held there, 1000 of
        them held by findings: the held part is drawn, on the index as on
        the Overview, its title exact."""
        self.mock_report.return_value, self.mock_capacity.return_value = (
            wrong_amounts())
        self.mock_provider_inventories.return_value = {}
        res = self.client.get(INDEX, {
            'tab': 'orphaned_allocations__providers', 'show': 'all'})
        text = flat(res)
        row = text[text.index('id="providers__row__%s"' % H2):]
        bandwidth = row[row.index('title="%s">' % BW):row.index('</tr>')]
        self.assertGreaterEqual(
            held_width(bandwidth, 'held by findings 1,000'),
            presenters.MIN_HELD_PERCENT)
        self.assertIn('title="needed 2,000"', bandwidth)
        # Its label short, its name whole on hover, and what findings
        # hold written after the bar, however thin its part.
        self.assertIn('title="%s">NET_BW_EGR</span>' % BW, row)
        self.assertIn('<span class="orphan-capacity-figure text-danger" '
                      'title="%s">1,000</span>' % BW, row)
        res = self.client.get(detail(H2), {'tab': 'provider__overview'})
        text = overview_bars(res)
        bandwidth = text[text.index('<td>%s</td>' % BW):]
        bandwidth = bandwidth[:bandwidth.index('</tr>')]
        self.assertGreaterEqual(
            held_width(bandwidth, 'held by findings 1,000'),
            presenters.MIN_HELD_PERCENT)
        self.assertIn('needed 2,000 &middot; held by findings 1,000 '
                      '&middot; free 9,998,000', bandwidth)

    @helpers.create_mocks({service: ['report', 'capacity'],
                           placement: ['provider_inventories']})
    def test_a_wrong_amounts_excess_is_drawn_held_not_other_use(self):
        self.mock_report.return_value, self.mock_capacity.return_value = (
            wrong_amounts())
        self.mock_provider_inventories.return_value = {}
        res = self.client.get(detail(H2), {'tab': 'provider__overview'})
        text = overview_bars(res)
        memory = text[text.index('<td>MEMORY_MB</td>'):]
        memory = memory[:memory.index('</tr>')]
        # Grouped as the locale groups thousands.
        self.assertIn('needed 1,536 &middot; held by findings 1,536 '
                      '&middot; free 5,120</small>', memory)
        self.assertNotIn('other use', memory)
        self.assertEqual(18.8, held_width(memory, 'held by findings 1,536'))

    @helpers.create_mocks({service: ['report', 'capacity']})
    def test_no_summary_without_inventories(self):
        self.reported()
        self.mock_capacity.return_value = None
        res = self.client.get(INDEX)
        self.assertNotContains(res, 'Held by findings')

    @helpers.create_mocks({service: ['report', 'capacity', 'flavors']})
    def test_a_flavor_fits_now_after_the_repair_or_not(self):
        incidents, found = incidents_with_capacity(host1_up=True)
        self.mock_report.return_value = incidents.report
        self.mock_capacity.return_value = found
        self.mock_flavors.return_value = [FPGA, SMALL, VGPU]
        res = self.client.get(INDEX, {'tab': TAB, 'flavor': 'f-small'})
        text = self.rendered(res, '_capacity.html')
        self.assertIn('<option value="f-small" selected>m1.small</option>',
                      text)
        self.assertIn('Fits now: 1 &middot; Fits after the recommended '
                      'repairs: 2 &middot; Does not fit: 1', text)
        rows = re.findall(r'<tr class="orphan-fit-(\w+)"> <td><a [^>]*>'
                          r'([^<]+)</a>', text)
        # host2 is full of a resize in progress, the server evacuated to
        # it and a confirmed migration's leftover: deleting that makes
        # room.
        self.assertEqual([('fits_after_repair', 'host1'),
                          ('fits_after_repair', 'host2'),
                          ('fits_now', 'host4'),
                          ('does_not_fit', 'host3')], rows)
        self.assertIn('sel=%s%%3A%s%%3Adelete' % (incidents.stale, H2),
                      text)
        # The repair that makes room, previewed like any other.
        self.assertIn('sel=%s%%3A%s%%3Atrim' % (incidents.vm, H1), text)
        self.assertIn('Traits, aggregates, sharing providers', text)
        self.assertEqual([], self.messages_seen)

    @helpers.create_mocks({service: ['report', 'capacity', 'flavors']})
    def test_the_chooser_submits_itself(self):
        """Horizon's Angular ``form`` directive cancels the submit of a
        form without an ``action``: the *Check* button must name where
        it goes."""
        incidents, found = shown_with_capacity(self, SMALL)
        res = self.client.get(INDEX, {'tab': TAB})
        self.assertContains(res, '<form method="get" action="%s" '
                                 'class="form-inline orphan-flavor-chooser">'
                            % INDEX)

    @helpers.create_mocks({service: ['report', 'capacity', 'flavors']})
    def test_the_answer_says_the_age_of_its_one_snapshot(self):
        """The tab loads after the page: a sweep may have published a
        newer snapshot than the header's meanwhile.  The answer says the
        age of the one it was counted from."""
        incidents, found = incidents_with_capacity()
        self.mock_report.return_value = dataclasses.replace(
            incidents.report, taken_at=None)
        self.mock_capacity.return_value = found
        self.mock_flavors.return_value = [SMALL]
        res = self.client.get(INDEX, {'tab': TAB, 'flavor': 'f-small'})
        text = flat(res)
        self.assertIn('<p class="text-muted orphan-fit-age">Audit snapshot '
                      'taken ', text)

    @helpers.create_mocks({service: ['report', 'capacity', 'flavors']})
    def test_a_forced_down_host_fits_nothing_and_says_why(self):
        incidents, found = shown_with_capacity(self, SMALL)
        res = self.client.get(INDEX, {'tab': TAB, 'flavor': 'f-small'})
        text = flat(res)
        self.assertIn('<tr class="orphan-fit-does_not_fit"> <td><a href="%s">'
                      'host1</a></td> <td>Does not fit: <span class='
                      '"orphan-fit-why">its compute service is forced down: '
                      'Nova schedules no server there</span></td>'
                      % detail(H1), text)
        self.assertNotIn('sel=%s%%3A%s%%3Atrim' % (incidents.vm, H1), text)

    @helpers.create_mocks({service: ['report', 'capacity', 'flavors']})
    def test_the_repairs_that_make_room_name_their_servers(self):
        """By name, the consumer's uuid beside, as the rest of the panel
        names them; a migration by its server's name (the name escaped)."""
        incidents, found = incidents_with_capacity(host1_up=True)
        self.mock_report.return_value = incidents.report
        self.mock_capacity.return_value = found
        self.mock_flavors.return_value = [SMALL]
        res = self.client.get(INDEX, {'tab': TAB, 'flavor': 'f-small'})
        text = flat(res)
        repairs = dict(re.findall(
            r'<tr class="orphan-fit-\w+"> <td><a [^>]*>([^<]+)</a></td> '
            r'<td>[^<]*</td> <td>(.*?)</td> </tr>', text))
        self.assertIn('Trim to current host server '
                      '&lt;script&gt;alert(1)&lt;/script&gt; (%s)</a>' %
                      incidents.vm, repairs['host1'])
        self.assertIn('Delete migration %s of server old</a>' %
                      incidents.stale, repairs['host2'])
        table = text[text.index('<table class="table table-striped '
                                'orphan-fit">'):]
        self.assertNotIn('<script>', table[:table.index('</table>')])

    @helpers.create_mocks({service: ['report', 'capacity', 'flavors']})
    def test_a_custom_class_fits_only_where_a_provider_has_it(self):
        incidents, found = shown_with_capacity(self, FPGA, SMALL)
        res = self.client.get(INDEX, {'tab': TAB, 'flavor': 'f-fpga'})
        text = flat(res)
        self.assertIn('Fits now: 1 &middot; Fits after the recommended '
                      'repairs: 0 &middot; Does not fit: 3', text)
        self.assertIn('<tr class="orphan-fit-fits_now"> <td><a href="%s">'
                      'host4</a>' % detail(H4), text)

    @helpers.create_mocks({service: ['report', 'capacity', 'flavors']})
    def test_a_bad_flavor_id_gets_a_clear_message(self):
        incidents, found = shown_with_capacity(self, SMALL)
        res = self.client.get(INDEX, {'tab': TAB,
                                      'flavor': '<b>no-such</b>'})
        self.assertContains(res, 'No flavor has the id '
                                 '&quot;&lt;b&gt;no-such&lt;/b&gt;&quot;: '
                                 'choose one of the list.')
        self.assertNotContains(res, 'orphan-fit-')

    @helpers.create_mocks({service: ['report', 'capacity', 'flavors']})
    def test_check_without_a_flavor_says_to_choose_one(self):
        """*Check* on the list's first line: said, not a silent reload."""
        incidents, found = shown_with_capacity(self, SMALL)
        res = self.client.get(INDEX, {'tab': TAB})
        self.assertNotContains(res, 'orphan-flavor-error')
        res = self.client.get(INDEX, {'tab': TAB, 'flavor': ''})
        self.assertContains(res, '<div class="alert alert-danger '
                                 'orphan-flavor-error">Choose a flavor in '
                                 'the list, then press Check.</div>',
                            html=True)
        self.assertNotContains(res, 'orphan-fit-')

    @helpers.create_mocks({service: ['report', 'capacity', 'flavors']})
    def test_a_flavor_a_flavor_alone_cannot_describe(self):
        incidents, found = shown_with_capacity(self, VGPU)
        res = self.client.get(INDEX, {'tab': TAB, 'flavor': 'f-vgpu'})
        self.assertContains(res, 'orphan-flavor-error')
        self.assertContains(res, 'VGPU')
        self.assertNotContains(res, 'orphan-fit-')

    @pytest.mark.error_messages
    @helpers.create_mocks({service: ['report', 'capacity', 'flavors']})
    def test_nova_not_listing_flavors_says_so(self):
        self.reported()
        self.mock_capacity.return_value = None
        self.mock_flavors.side_effect = ks_exc.ConnectFailure('down')
        res = self.client.get(INDEX, {'tab': TAB})
        self.assertEqual(200, res.status_code)
        self.assertEqual(['Unable to retrieve the flavors.'],
                         [t.split('…')[0]
                          for t in self.messages_seen.texts('error')])

    @helpers.create_mocks({service: ['report', 'capacity'],
                           placement: ['provider_inventories']})
    def test_the_provider_page_shows_the_numbers_and_bars(self):
        incidents, found = shown_with_capacity(self)
        self.mock_provider_inventories.return_value = {}
        res = self.client.get(detail(H4), {'tab': 'provider__overview'})
        text = self.rendered(res, '_capacity_bars.html')
        # VCPU: capacity 2, used 1, needed 1, held 0, free 1, after 1.
        self.assertIn('needed 1 &middot; held by findings 0 &middot; '
                      'free 1', text)
        self.assertIn('<td>2</td><td>1</td><td>1</td> <td>0</td><td>1</td>'
                      '<td>1</td>', text)
        self.assertIn('<td>CUSTOM_FPGA_X</td>', text)
        self.assertIn('style="width: 50.0%"', text)
        self.assertEqual([], self.messages_seen)

    @helpers.create_mocks({service: ['report', 'capacity'],
                           placement: ['provider_inventories']})
    def test_the_held_part_of_a_bar_on_a_host_with_an_orphan(self):
        incidents, found = shown_with_capacity(self)
        self.mock_provider_inventories.return_value = {}
        res = self.client.get(detail(H1), {'tab': 'provider__overview'})
        text = flat(res)
        self.assertIn('needed 0 &middot; held by findings 1 &middot; '
                      'free 0', text)
        self.assertIn('class="progress-bar progress-bar-danger orphan-held" '
                      'style="width: 100.0%"', text)


def test_the_capacity_is_cached_per_version_and_minimum_age():
    store = mock.Mock(base='b')
    shown = mock.Mock(version='v1', min_age=600, audited=None)
    known = {}
    first = capacity_ops.shown(store, shown, known)
    assert capacity_ops.shown(store, shown, known) is first
    store.load_capacity.assert_called_once_with('v1')
    assert capacity_ops.shown(store, None, known) is None


PROJECTS_TAB = 'orphaned_allocations__projects'


class ProjectsTests(AdminViewTests):

    def unlimited_projects(self, usage):
        """The Projects tab (its blanks squeezed), Placement giving each
        project ``usage`` and Keystone no limit, nor names."""
        self.mock_names.return_value = {'projects': {}, 'users': {}}
        with mock.patch.object(capacity_ops.placement, 'project_usages',
                               return_value=usage), \
                mock.patch.object(capacity_ops.keystone, 'class_limits',
                                  side_effect=ks_exc.NotFound()):
            res = self.client.get(INDEX, {'tab': PROJECTS_TAB})
        return flat(res)

    @helpers.create_mocks({service: ['report', 'capacity', 'names',
                                     '_clients']})
    def test_projects_worst_first_with_their_bars_and_limits(self):
        incidents, found = shown_with_capacity(self)
        self.mock_names.return_value = {'projects': {'p': 'demo'},
                                        'users': {}}
        usages = {'p': {'VCPU': 8, 'MEMORY_MB': 4096, 'DISK_GB': 8}}
        with mock.patch.object(capacity_ops.placement, 'project_usages',
                               side_effect=lambda c, p: usages.get(p, {})), \
                mock.patch.object(capacity_ops, 'compute_scope',
                                  return_value=('nova', 'RegionOne')), \
                mock.patch.object(capacity_ops.keystone, 'catalog'), \
                mock.patch.object(capacity_ops.keystone, 'class_limits',
                                  return_value=({'VCPU': 16}, {})):
            res = self.client.get(INDEX, {'tab': PROJECTS_TAB})
        text = self.rendered(res, '_projects.html')
        self.assertIn('<a href="?project=p" title="Its hypervisors, with '
                      'the findings to repair">demo</a>', text)
        # p's findings holding what nothing needs: host1's orphan, host2's
        # stale migration, host3's stranger, gone-busy's deleted server;
        # its seven servers need 7 VCPUs.
        self.assertIn('held by findings 4 &middot; usage 8 &middot; '
                      'limit 16', text)
        self.assertIn('<td>4</td><td>8</td><td>7</td>', text)
        # Its recommended repairs free 2 VCPUs net (the heals among them
        # take some back): under a limit of 16 its headroom goes 8 -> 10.
        self.assertIn('<td>2</td> <td>16</td> <td class="orphan-headroom">'
                      '8 now, 10 after</td>', text)
        self.assertIn('<td>1,024</td> <td>&ndash;</td> '
                      '<td class="orphan-headroom">&ndash;</td>', text)
        self.assertIn('style="width: 25.0%"', text)    # 4 of 16
        # Registered limits only name VCPU: the other classes have none.
        self.assertIn('held by findings 2,048 &middot; usage 4,096</small>',
                      text)
        self.assertEqual([], self.messages_seen)

    @helpers.create_mocks({service: ['report', 'capacity', 'names',
                                     '_clients']})
    def test_no_keystone_limits_is_no_error(self):
        incidents, found = shown_with_capacity(self)
        text = self.unlimited_projects({'VCPU': 3})
        self.assertIn('held by findings 4 &middot; usage 3</small>', text)
        self.assertEqual([], self.messages_seen)

    @helpers.create_mocks({service: ['report', 'capacity', 'names',
                                     '_clients']})
    def test_what_the_repairs_free_findings_held(self):
        """fat's delete and heal frees the 1536 MB it holds beyond its
        flavor: its project's findings hold them too."""
        self.mock_report.return_value, self.mock_capacity.return_value = (
            wrong_amounts())
        text = self.unlimited_projects({'MEMORY_MB': 3072})
        memory = text[text.index('<td>MEMORY_MB</td>'):]
        self.assertIn('<td>1,536</td><td>3,072</td><td>1,536</td> '
                      '<td>1,536</td>', memory[:memory.index('</tr>')])
        self.assertEqual([], self.messages_seen)

    @helpers.create_mocks({service: ['report']})
    def test_a_projects_link_filters_the_hypervisors_by_it(self):
        self.reported()
        res = self.client.get(INDEX, {'project': 'p'})
        self.assertRedirectsNoFollow(
            res, INDEX + '?tab=orphaned_allocations__providers')
        res = self.client.get(INDEX, {
            'tab': 'orphaned_allocations__providers'})
        names = [p.provider.name for p in res.context[
            'tab_group'].get_tab('providers')._tables[
            'providers'].data]
        self.assertEqual(['gone-busy', 'host1', 'host2', 'host3'],
                         sorted(names))
