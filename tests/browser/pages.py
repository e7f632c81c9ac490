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

"""What the browser tests read and click on the panel's pages, shared by
their modules: rows and their actions, the preview's confirm, the
capacity bars, and the index once a Refresh has swept again."""

import json
import re

from orphan_dashboard.api import placement as api

INDEX = '/admin/orphaned_allocations/'
PROVIDERS = INDEX + '?tab=orphaned_allocations__providers'
"""The index on its hypervisor table, whichever tab was open last (the
tabs are sticky)."""


def incident(site, name):
    return site.config['incidents'][name]


def expected_rows(site, name, verdict):
    return [e for e in incident(site, name)['expected']
            if e['verdict'] == verdict]


def held(placement, consumer):
    """{provider: resources} that Placement holds for ``consumer``."""
    allocations = api.consumer_allocations(placement, consumer)['allocations']
    return {rp: a['resources'] for rp, a in allocations.items()}


def names(element, uuid):
    """Whether ``element`` shows ``uuid``: as text, or as the hover title
    of the name the panel gives it (History names a server it knows)."""
    return uuid in element.text or bool(element.find_elements(
        'css selector', '[title="%s"]' % uuid))


def row(browser, table, object_id):
    return browser.find('#%s tr[data-object-id="%s"]' % (table, object_id))


def verdict_of(row_element):
    from selenium.webdriver.common.by import By
    return row_element.find_element(
        By.CSS_SELECTOR, '.orphan-verdict').get_attribute('data-verdict')


def row_actions(row_element):
    """The row's action elements by action name."""
    from selenium.webdriver.common.by import By
    return {a.get_attribute('id').rsplit('__action_', 1)[1]: a
            for a in row_element.find_elements(By.CSS_SELECTOR,
                                               '[id*="__action_"]')}


def tick(row_element):
    from selenium.webdriver.common.by import By
    # Horizon's themed checkbox: the label is what a user clicks.
    row_element.find_element(
        By.CSS_SELECTOR, '.themable-checkbox input.table-row-multi-select + '
        'label').click()


def confirm(browser):
    """Submit the preview (modal or page) and wait for the page it leads
    to: a modal's answer is a redirect that Horizon's JavaScript follows."""
    browser.driver.execute_script('window.orphanPreviewPage = true;')
    browser.click('form .modal-footer [type="submit"]')
    browser.wait(lambda d: d.execute_script(
        'return !window.orphanPreviewPage && '
        'document.readyState === "complete";'))
    browser.find('#content_body')


def cell(row_element, header):
    """The cell of ``row_element`` under the column headed ``header``."""
    from selenium.webdriver.common.by import By
    table = row_element.find_element(By.XPATH, './ancestor::table')
    headers = [th.text.strip() for th in table.find_elements(
        By.CSS_SELECTOR, 'thead tr:last-child th')]
    assert header in headers, headers
    return row_element.find_elements(By.XPATH, './td')[
        headers.index(header)]


def link(cell_element):
    from selenium.webdriver.common.by import By
    return cell_element.find_element(By.TAG_NAME, 'a').get_attribute('href')


def listed_providers(browser):
    return {r.get_attribute('data-object-id')
            for r in browser.all('#providers tbody tr[data-object-id]')}


def held_memory(text):
    """What findings hold of MEMORY_MB, as a provider's Overview writes
    it beside its bar."""
    return int(re.search(r'MEMORY_MB:?\s+needed [\d,]+ \S held by findings '
                         r'([\d,]+)', text).group(1).replace(',', ''))


INDEX_BARS = '#providers tr[data-object-id="%s"] .orphan-capacity-cell'
"""A hypervisor's bars on the index, one cell per class."""
OVERVIEW_BARS = 'table.orphan-capacity tbody tr'
"""A hypervisor's bars on its Overview, one row per class."""


def held_part(browser, bars, resource_class):
    """The title and the drawn width in pixels of the part that findings
    hold of one class, in ``bars`` (:data:`INDEX_BARS` of a hypervisor,
    :data:`OVERVIEW_BARS`), each led by its class, named whole in the
    label's title on the index (read in one script: a sweep published
    meanwhile swaps the tables)."""
    found = bar_of(browser, bars, resource_class)
    return found['title'], found['drawn']


def bar_of(browser, bars, resource_class):
    """One class's bar in ``bars``, as :func:`held_part` finds it: the
    held part's ``title`` and ``drawn`` width, and on the index the
    ``label`` shown, whether it is ``cut`` (wider than its room) and the
    ``figure`` written after the bar."""
    found = browser.driver.execute_script(
        'var bars = document.querySelectorAll(arguments[0]);'
        'for (var i = 0; i < bars.length; i++) {'
        '  var label = bars[i].firstElementChild;'
        '  if (label && (label.getAttribute("title") || '
        '                label.textContent.trim()) === arguments[1]) {'
        '    var part = bars[i].querySelector(".progress-bar-danger");'
        '    var figure = bars[i].querySelector(".orphan-capacity-figure");'
        '    return {title: part.getAttribute("title"),'
        '            drawn: part.getBoundingClientRect().width,'
        '            label: label.textContent.trim(),'
        '            cut: label.scrollWidth > label.clientWidth,'
        '            figure: figure && figure.textContent.trim()};'
        '  }'
        '}'
        'return null;', bars, resource_class)
    assert found, 'no %s bar in %s' % (resource_class, bars)
    return found


def texts(browser, selector):
    """The text of each element ``selector`` finds, read in one script."""
    return browser.driver.execute_script(
        'return Array.prototype.map.call(document.querySelectorAll('
        'arguments[0]), function (e) { return e.textContent.trim(); });',
        selector)


def sweep_state(browser):
    return json.loads(browser.driver.execute_script(
        'var x = new XMLHttpRequest(); x.open("GET", arguments[0], false);'
        'x.send(); return x.responseText;', INDEX + 'sweep/'))


def refreshed(browser):
    """The index once the operator's Refresh has swept again: its POST
    answered first (the page it comes back to replaces this one), so the
    sweep it asked for is running or asked for; then no sweep runs and a
    newer snapshot is published.  A sweep asked for behind another starts
    at the first poll after it, which then says it runs, so the wait
    covers it too and no sweep publishes during the caller's test.  Last,
    the page shows that snapshot: one rendered before it swaps its tables
    in at its next poll (``sweep.js``), and an element the caller found
    before the swap would be gone."""
    from selenium.webdriver.support import expected_conditions as ec
    browser.open(PROVIDERS)
    before = sweep_state(browser)['version']
    button = browser.click('#providers__action_refresh')
    browser.wait(ec.staleness_of(button), timeout=180)

    def published(driver):
        state = sweep_state(browser)
        return (state['version'] not in (None, before) and
                not state['sweeping'] and state['version'])
    version = browser.wait(published, timeout=180)
    browser.wait(lambda d: d.execute_script(
        'return $(".orphan-sweep").data("version") === arguments[0];',
        version), timeout=180)
