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

"""Neutron's providers and a port repair in Chromium, with the real
Neutron: the run's ``neutron`` sandbox (``tests/clouds.py``; the
``routed_segment`` incident staged by Neutron's segments plugin,
``port_deleted_in_neutron`` by deleting a bound port,
``port_binding_lost``, ``port_migrated_left``) and a Horizon process for
this module.  The index lists the segment with its owner and no
destructive action; its page says Neutron and offers neither *Delete
provider* nor *Decommission*.  The bandwidth a migration left on host3's
NIC is drawn held by findings, wide enough to see.  The bandwidth the
deleted port left is released from its row; a port whose binding names no
provider is healed from its row, the preview showing Neutron's write
before Placement's.  With the real Cyborg beside it, a server deleted
behind Nova's back while it held an FPGA is deleted from its row, the
preview naming the ARQ Cyborg keeps bound to it, which stays."""

from keystoneauth1 import adapter
import pytest

from tests.browser.conftest import Browser
from tests.browser.conftest import module_name
from tests.browser.conftest import Site
from tests.browser.pages import bar_of
from tests.browser.pages import confirm
from tests.browser.pages import held
from tests.browser.pages import held_part
from tests.browser.pages import INDEX
from tests.browser.pages import INDEX_BARS
from tests.browser.pages import OVERVIEW_BARS
from tests.browser.pages import row
from tests.browser.pages import row_actions
from tests.browser.pages import verdict_of

pytest.importorskip('neutron')

from tests import clouds  # noqa: E402

pytestmark = pytest.mark.topology('neutron')

BANDWIDTH = 'NET_BW_EGR_KILOBIT_PER_SEC'


def service(site, service_type):
    """An admin adapter to ``service_type`` of ``site``'s sandbox."""
    return adapter.Adapter(site.sandbox.admin_session(),
                           service_type=service_type, interface='public')


@pytest.fixture(scope='module')
def neutron_site(request, static_files):
    sandbox = clouds.staged(request, ('routed_segment',
                                      'port_deleted_in_neutron',
                                      'port_binding_lost',
                                      'port_migrated_left',
                                      'accelerator_deleted_behind_nova'))
    site = Site(sandbox, static_files, module_name(request))
    try:
        yield site
    finally:
        site.stop()


@pytest.fixture(scope='module')
def neutron_browser(neutron_site):
    browser = Browser(neutron_site)
    browser.login('admin', neutron_site.config['admin']['password'])
    yield browser
    browser.quit()


def test_the_segment_provider_offers_no_delete(neutron_site,
                                               neutron_browser):
    browser = neutron_browser
    staged = neutron_site.config['incidents']['routed_segment']['checks']
    segment, name = staged['segment'], staged['segment_name']
    browser.open(INDEX + '?show=all')
    row = browser.find('#providers tr[data-object-id="%s"]' % segment,
                       timeout=300)
    assert name in row.text
    assert 'owner: Neutron' in row.text
    actions = row_actions(row)
    assert 'delete_provider' not in actions
    assert 'decommission' not in actions
    browser.save('neutron-segment-row')

    browser.open(INDEX + '%s/' % segment)
    status = browser.find('.orphan-status')
    assert 'Owner: Neutron' in status.text
    assert not browser.all('[id*="__action_decommission"]')
    assert not browser.all('[id*="__action_delete_provider"]')
    page = browser.find('#content_body').text
    assert 'Delete provider' not in page
    assert 'Decommission' not in page
    browser.save('neutron-segment-page')
    assert browser.console_errors() == []


def test_bandwidth_held_by_findings_is_drawn_wide_enough_to_see(
        neutron_site, neutron_browser):
    """On host3's NIC the 1000 kbps a migration left are held by findings,
    while the server whose port binding was lost needs 1000 it does not
    hold: the servers' need took the whole bar and the findings' part was
    0 px wide.  It is drawn, on the index and on host3's Overview, its
    title exact (before or after that server's heal)."""
    browser = neutron_browser
    host3 = neutron_site.config['hosts']['host3']
    size = browser.driver.get_window_size()
    try:
        # On a laptop too: the class's label shortened where Placement's
        # name ends (its unit), not cut; its part wide enough to see and
        # the exact figure, grouped, after the bar.
        browser.driver.set_window_size(1024, size['height'])
        browser.open(INDEX + '?tab=orphaned_allocations__providers'
                     '&show=all')
        browser.find('#providers tr[data-object-id="%s"] '
                     'td.orphan-capacity' % host3, timeout=300)
        bar = bar_of(browser, INDEX_BARS % host3, BANDWIDTH)
        assert bar == {'title': 'held by findings 1,000', 'drawn': bar[
            'drawn'], 'label': 'NET_BW_EGR', 'cut': False,
            'figure': '1,000'}, bar
        assert bar['drawn'] >= 6, bar
        browser.save('neutron-bandwidth-held-index')
    finally:
        browser.driver.set_window_size(size['width'], size['height'])
    browser.open(INDEX + '%s/?tab=provider__overview' % host3)
    browser.driver.execute_script(
        'arguments[0].scrollIntoView();',
        browser.find('table.orphan-capacity'))
    title, drawn = held_part(browser, OVERVIEW_BARS, BANDWIDTH)
    assert (title, drawn >= 2) == ('held by findings 1,000', True), drawn
    browser.save('neutron-bandwidth-held-overview')
    assert browser.console_errors() == []


def test_a_deleted_ports_bandwidth_is_released_from_its_row(
        neutron_site, neutron_browser):
    browser = neutron_browser
    staged = neutron_site.config['incidents']['port_deleted_in_neutron']
    server = staged['servers'][0]['uuid']
    nic = staged['checks']['nic']
    host2 = neutron_site.config['hosts']['host2']
    placement = service(neutron_site, 'placement')
    before = held(placement, server)
    browser.open(INDEX + '%s/' % host2)
    leak = row(browser, 'allocations', '%s:%s' % (server, nic))
    assert verdict_of(leak) == 'leaked_port'
    assert 'host2:Open vSwitch agent:br-phys' in leak.text
    actions = row_actions(leak)
    assert set(actions) == {'release', 'delete_and_heal'}, set(actions)
    actions['release'].click()
    modal = browser.find('.modal-dialog table.orphan-preview')
    assert 'Release leaked resources' in modal.text
    browser.save('neutron-release-preview')
    confirm(browser)
    assert browser.messages('success'), browser.messages('danger')
    assert held(placement, server) == {host2: before[host2]}
    browser.save('neutron-released')
    assert browser.console_errors() == []


def test_a_port_bound_nowhere_is_healed_neutron_first_from_its_row(
        neutron_site, neutron_browser):
    browser = neutron_browser
    staged = neutron_site.config['incidents']['port_binding_lost']
    server = staged['servers'][0]['uuid']
    nic, port = staged['checks']['nic'], staged['checks']['port']
    host3 = neutron_site.config['hosts']['host3']
    placement = service(neutron_site, 'placement')
    network = service(neutron_site, 'network')
    browser.open(INDEX + '%s/' % host3)
    missing = row(browser, 'allocations', '%s:%s' % (server, nic))
    assert verdict_of(missing) == 'missing'
    assert "Placement's one allocation candidate there is host3:Open " \
        'vSwitch agent:br-phys' in missing.text
    row_actions(missing)['heal'].click()
    modal = browser.find('.modal-dialog table.orphan-preview')
    binding = modal.find_element('css selector', 'tr.orphan-binding')
    assert 'First, in Neutron: the binding of port' in binding.text
    assert 'names no provider' in binding.text
    assert 'host3:Open vSwitch agent:br-phys' in binding.text
    commands = modal.text.index('openstack port set --binding-profile')
    assert commands < modal.text.index('resource provider allocation set')
    browser.save('preview-binding', readme=True)
    confirm(browser)
    assert browser.messages('success'), browser.messages('danger')
    assert held(placement, server)[nic] == {
        'NET_BW_EGR_KILOBIT_PER_SEC': staged['checks']['kbps']}
    profile = network.get('/v2.0/ports/%s' % port).json()['port'][
        'binding:profile']
    assert list(profile['allocation'].values()) == [nic]
    assert browser.console_errors() == []


def test_a_deleted_servers_arq_is_named_in_its_preview_and_left_bound(
        neutron_site, neutron_browser):
    browser = neutron_browser
    staged = neutron_site.config['incidents'][
        'accelerator_deleted_behind_nova']
    server = staged['servers'][0]['uuid']
    (arq,) = staged['checks']['arqs']
    host3 = neutron_site.config['hosts']['host3']
    placement = service(neutron_site, 'placement')
    cyborg = service(neutron_site, 'accelerator')
    browser.open(INDEX + '%s/' % host3)
    leftover = row(browser, 'allocations', '%s:%s' % (server, host3))
    assert verdict_of(leftover) == 'deleted_instance'
    row_actions(leftover)['delete'].click()
    modal = browser.find('.modal-dialog table.orphan-preview')
    note = modal.find_element('css selector', '.orphan-note')
    assert 'Cyborg keeps accelerator requests bound' in note.text
    assert arq in note.text and 'X-Service-Token' in note.text
    browser.save('preview-accelerator', readme=True)
    confirm(browser)
    assert browser.messages('success'), browser.messages('danger')
    assert held(placement, server) == {}
    arqs = cyborg.get('/accelerator_requests',
                      params={'instance': server}).json()['arqs']
    assert [(a['uuid'], a['state']) for a in arqs] == [(arq, 'Bound')]
    assert browser.console_errors() == []
