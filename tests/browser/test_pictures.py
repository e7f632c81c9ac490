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

"""What the orphans cost, as pictures: the bars on the index, the
Capacity tab's answer for a flavor that fits host2 only once a server
deleted behind Nova's back is cleaned up, a provider's Overview, and the
Projects tab.  Stages its own orphan, and takes the documentation's
screenshots."""

import uuid

from keystoneauth1 import adapter
import pytest
from tests.browser.pages import bar_of
from tests.browser.pages import held_memory
from tests.browser.pages import INDEX
from tests.browser.pages import INDEX_BARS
from tests.browser.pages import PROVIDERS
from tests.browser.pages import refreshed
from tests.browser.pages import texts


@pytest.fixture(scope='module')
def placement(site):
    return adapter.Adapter(site.sandbox.admin_session(),
                           service_type='placement', interface='public')


@pytest.fixture(scope='module')
def nova(site):
    return adapter.Adapter(site.sandbox.admin_session(),
                           service_type='compute', interface='public',
                           default_microversion='2.61')


@pytest.fixture(scope='module')
def staged(site, placement, nova):
    """A server deleted behind Nova's back on host2 (``sb.big``: 32 GB),
    and a flavor asking one MB more than host2 has free: it fits there
    only once that orphan is deleted."""
    entry = site.sandbox.stage('deleted_behind_nova')
    host2 = site.config['hosts']['host2']
    inventory = placement.get('/resource_providers/%s/inventories' % host2,
                              microversion='1.28').json()['inventories']
    usages = placement.get('/resource_providers/%s/usages' % host2,
                           microversion='1.28').json()['usages']
    ram = inventory['MEMORY_MB']
    free = int((ram['total'] - ram['reserved']) * ram['allocation_ratio']
               ) - usages['MEMORY_MB']
    name = 'pictures-%s' % uuid.uuid4().hex[:6]
    flavor = nova.post('/flavors', json={'flavor': {
        'name': name, 'vcpus': 1, 'ram': free + 1, 'disk': 1}}).json()
    return entry['servers'][0]['uuid'], flavor['flavor']['id'], name


def test_bars_on_the_index_and_a_flavor_that_fits_after_repair(
        site, browser, staged):
    orphan, flavor_id, flavor_name = staged
    host2 = site.config['hosts']['host2']
    refreshed(browser)
    held = browser.find('.orphan-held').text
    assert held.startswith('Held by findings on ')
    assert 'MEMORY_MB' in held
    size = browser.driver.get_window_size()
    try:
        for width, picture in ((1024, 'capacity-index-1024'),
                               (1400, 'capacity-index')):
            browser.driver.set_window_size(width, size['height'])
            browser.open(PROVIDERS + '&show=all')
            browser.find('#providers tr[data-object-id="%s"] '
                         'td.orphan-capacity' % host2)
            (cell,) = texts(browser, '#providers tr[data-object-id="%s"] '
                                     'td.orphan-capacity' % host2)
            assert 'held by findings' not in cell, cell
            (legend,) = texts(browser, '.orphan-capacity-legend')
            assert legend
            bar = bar_of(browser, INDEX_BARS % host2, 'MEMORY_MB')
            # The exact figure after the bar, grouped by thousands; the
            # label whole.
            held = int(bar['title'].split()[-1].replace(',', ''))
            assert held >= 32768, bar
            assert bar['figure'] == '{:,}'.format(held), bar
            assert (bar['label'], bar['cut']) == ('MEMORY_MB', False), bar
            assert bar['drawn'] >= 6, (width, bar)
            browser.save(picture, readme=width == 1400)
    finally:
        browser.driver.set_window_size(size['width'], size['height'])

    # Chosen and checked from the tab's own button, as an operator does.
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import Select
    browser.open(INDEX + '?tab=orphaned_allocations__capacity')
    for attempt in range(3):
        # A sweep published meanwhile swaps the tab under the form (the
        # choice kept): choose and check again on the new one.
        try:
            Select(browser.find('#orphan-flavor')).select_by_value(flavor_id)
            browser.click('form.orphan-flavor-chooser button[type="submit"]')
            break
        except StaleElementReferenceException:
            if attempt == 2:
                raise
    row = browser.find('#orphaned_allocations__capacity '
                       'tr.orphan-fit-fits_after_repair', timeout=30)
    assert 'flavor=%s' % flavor_id in browser.driver.current_url
    # host1 (evacuated) and host4 (retired) are forced down: nothing fits
    # there.
    listed = {row.text.split()[0] for row in browser.all(
        '#orphaned_allocations__capacity tr[class*="orphan-fit-"]')}
    closed = {row.text.split()[0] for row in browser.all(
        '#orphaned_allocations__capacity tr.orphan-fit-does_not_fit')
        if 'its compute service is forced down' in row.text}
    assert 'host1' in listed and 'host2' in listed, listed
    assert closed == {'host1', 'host4'}, (closed, listed)
    assert row.text.startswith('host2 Fits after the recommended repairs')
    assert 'Delete %s' % orphan in row.text
    counts = browser.find('.orphan-fit-counts').text
    assert counts.startswith('%s: Fits now: ' % flavor_name)
    assert 'Traits, aggregates' in browser.find(
        '#orphaned_allocations__capacity .orphan-scope').text
    browser.save('capacity-flavor', readme=True)


def test_a_flavor_that_fits_nowhere_says_what_is_short(site, browser, nova):
    """All of a hypervisor's memory (its max_unit), while servers use some:
    each one Nova would schedule on says by how much it is short, of what
    it needs, grouped by thousands."""
    name = 'pictures-huge-%s' % uuid.uuid4().hex[:6]
    flavor = nova.post('/flavors', json={'flavor': {
        'name': name, 'vcpus': 1, 'ram': 262144, 'disk': 1}}).json()
    browser.open(INDEX + '?tab=orphaned_allocations__capacity&flavor=%s'
                 % flavor['flavor']['id'])
    browser.find('#orphaned_allocations__capacity '
                 'tr.orphan-fit-does_not_fit', timeout=60)
    rows = {row.text.split()[0]: row.text for row in browser.all(
        '#orphaned_allocations__capacity tr.orphan-fit-does_not_fit')}
    assert 'host3' in rows, rows
    assert rows['host3'].startswith(
        'host3 Does not fit: MEMORY_MB '), rows['host3']
    assert 'short (it needs 262,144; at most ' in rows['host3'], rows


def test_a_providers_overview_and_the_projects_tab(site, browser, staged):
    host2 = site.config['hosts']['host2']
    browser.open(INDEX + '%s/?tab=provider__overview' % host2)
    bars = browser.find('table.orphan-capacity')
    assert held_memory(bars.text) >= 32768, bars.text
    browser.save('capacity-overview', readme=True)

    browser.open(INDEX + '?tab=orphaned_allocations__projects')
    table = browser.find('table.orphan-projects')
    assert 'held by findings' in table.text
    browser.save('capacity-projects', readme=True)
    # A project leads to the hypervisors holding its findings.
    browser.click('table.orphan-projects a[href^="?project="]')
    browser.find('#providers tbody tr[data-object-id]')
