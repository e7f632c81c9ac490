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

"""The panel as production serves it: Apache and mod_wsgi, Horizon under
``/dashboard/``, offline-compressed static files (``tests/browser/apache.py``),
over the browser tier's cloud.  Where a hard-coded URL, an
uncompressed asset or Apache's request-line limit would show: the first
sweep's progress bar, a row repaired from its preview, a batch of more rows
than a URL could carry, a flavor checked from its button."""

import urllib.error
import urllib.parse
import urllib.request

from keystoneauth1 import adapter
import pytest

from tests.browser import apache
from tests.browser.conftest import Browser
from tests.browser.conftest import smallest
from tests.browser.conftest import stage_strangers
from tests.browser.pages import confirm
from tests.browser.pages import held
from tests.browser.pages import INDEX
from tests.browser.pages import row
from tests.browser.pages import row_actions
from tests.browser.pages import verdict_of

BATCH = 100
"""Rows in the batch: their selections in a URL made a request line past
Apache's 8190 bytes from about 95 rows."""


@pytest.fixture(scope='module')
def placement(sandbox):
    return adapter.Adapter(sandbox.admin_session(),
                           service_type='placement', interface='public')


@pytest.fixture(scope='module')
def staged(sandbox, placement):
    """Before Apache's Horizon first sweeps: a server deleted behind
    Nova's back, and ``BATCH`` consumers Nova never knew on host3, their
    uuids sharing a prefix the table's filter finds."""
    entry = sandbox.stage('deleted_behind_nova')
    (single,) = [e for e in entry['expected']
                 if e['verdict'] == 'deleted_instance']
    host3 = sandbox.config['hosts']['host3']
    memory = {'MEMORY_MB': smallest(placement, host3, 'MEMORY_MB')}
    prefix, strangers = stage_strangers(sandbox, placement,
                                        [{host3: memory}] * BATCH)
    return {'single': single, 'host3': host3, 'prefix': prefix,
            'strangers': strangers}


@pytest.fixture(scope='module')
def served(sandbox, staged, tmp_path_factory):
    horizon = apache.ApacheHorizon(sandbox, str(tmp_path_factory.mktemp(
        'apache')))
    try:
        yield horizon
    finally:
        horizon.stop()


@pytest.fixture(scope='module')
def operator(served):
    browser = Browser(served)
    try:
        browser.login('admin', served.config['admin']['password'])
        yield browser
    finally:
        browser.quit()


@pytest.fixture(scope='module')
def first_sweep(sandbox, operator):
    """The panel's first page on the fresh Apache process, whose cache
    holds no snapshot yet: what it showed while sweeping (the sweep held
    until it is read), then the page it reloaded itself into."""
    with sandbox.nova_and_placement_held():
        operator.open(INDEX)
        progress = operator.find('.orphan-sweep-progress')
        seen = {'progress': progress.text,
                'bar': bool(operator.all(
                    '.orphan-sweep-progress .progress-bar'))}
        operator.save('apache-first-sweep')
    seen['snapshot'] = operator.find('.orphan-snapshot', timeout=180).text
    return seen


@pytest.fixture
def browser(operator, first_sweep):
    operator.console_errors()
    yield operator
    assert operator.console_errors() == []


def outside_webroot(browser):
    """The links, scripts, stylesheets, images and form targets of the page
    that lead to this server but not under ``/dashboard/``."""
    return browser.driver.execute_script(
        'var root = arguments[0], out = [];'
        'document.querySelectorAll("a[href], link[href], script[src], '
        'img[src], form[action]").forEach(function (e) {'
        '  var u = new URL(e.getAttribute("href") || e.getAttribute("src")'
        '                  || e.getAttribute("action"), location.href);'
        '  if (u.origin === location.origin &&'
        '      u.pathname.indexOf(root) !== 0) {'
        '    out.push(e.tagName + " " + u.pathname + u.search);'
        '  }'
        '});'
        'return out;', apache.WEBROOT)


def uncompressed_panel_files(browser):
    """The panel's own scripts and stylesheets the page links one by one:
    offline compression puts them into Horizon's bundles."""
    return [a for a in browser.driver.execute_script(
        'return Array.prototype.map.call(document.querySelectorAll('
        '"script[src], link[rel=stylesheet]"), function (e) {'
        '  return e.getAttribute("src") || e.getAttribute("href"); });')
        if '/orphan_dashboard/' in a]


def refused_status(url):
    """The status Apache answers ``url`` with, if it refuses it."""
    try:
        urllib.request.urlopen(url, timeout=60).close()
    except urllib.error.HTTPError as exc:
        return exc.code
    return None


def test_the_first_sweep_shows_its_progress_and_the_page_fills_in(
        browser, first_sweep):
    assert first_sweep['bar']
    assert 'Sweeping Nova and Placement' in first_sweep['progress']
    assert 'Audit snapshot taken' in first_sweep['snapshot']
    assert browser.driver.current_url.startswith(
        browser.site.url + INDEX)
    assert outside_webroot(browser) == []
    assert uncompressed_panel_files(browser) == []


def test_repair_one_row_from_its_preview(browser, staged, placement):
    single = staged['single']
    browser.open(INDEX + single['provider'] + '/')
    line = row(browser, 'allocations', '%s:%s' % (single['consumer'],
                                                  single['provider']))
    assert verdict_of(line) == 'deleted_instance'
    assert outside_webroot(browser) == []
    row_actions(line)['delete'].click()
    assert single['consumer'] in browser.find(
        '.modal-dialog table.orphan-preview').text
    confirm(browser)
    assert browser.messages('success'), browser.messages('danger')
    assert browser.driver.current_url.split('?')[0] == (
        browser.site.url + INDEX + single['provider'] + '/')
    assert held(placement, single['consumer']) == {}


def test_a_batch_of_more_rows_than_a_url_carries(browser, staged,
                                                 placement):
    """Filtered to the strangers, all ticked, deleted by the table's own
    action: one preview of every row, behind Apache's request-line
    limit."""
    browser.page_size(2 * BATCH)
    browser.open(INDEX + staged['host3'] + '/')
    search = browser.find('#allocations input[name="allocations__filter__q"]')
    search.send_keys(staged['prefix'])
    browser.click('#allocations .table_search button[type="submit"]')
    browser.wait(lambda d: len(d.find_elements(
        'css selector', '#allocations tbody tr[data-object-id]')) == BATCH)
    browser.click('#allocations thead .themable-checkbox '
                  'input.table-row-multi-select + label')
    browser.click('#allocations__action_delete_selected')
    preview = browser.find('table.orphan-preview')
    assert len(browser.all('.orphan-preview-row')) == BATCH
    assert 'Not possible' not in preview.text
    browser.save('apache-batch-preview')
    confirm(browser)
    assert browser.messages('success'), browser.messages('danger')
    assert outside_webroot(browser) == []
    assert all(held(placement, consumer) == {}
               for consumer in staged['strangers'])
    # The preview's link once named every row: Apache refuses that line.
    carried = browser.site.url + INDEX + 'repair/?' + urllib.parse.urlencode(
        {'sel': ['%s:%s:delete' % (consumer, staged['host3'])
                 for consumer in staged['strangers']]}, doseq=True)
    assert len(carried) > 8190
    assert refused_status(carried) == 414


def test_a_flavor_checked_from_its_button(browser):
    from selenium.webdriver.support.ui import Select
    browser.open(INDEX + '?tab=orphaned_allocations__capacity')
    Select(browser.find('#orphan-flavor')).select_by_value('sb-small')
    browser.click('form.orphan-flavor-chooser button[type="submit"]')
    browser.find('#orphaned_allocations__capacity tr[class*="orphan-fit-"]',
                 timeout=30)
    assert browser.driver.current_url.startswith(browser.site.url + INDEX)
    assert 'flavor=sb-small' in browser.driver.current_url
    assert browser.find('.orphan-fit-counts').text.startswith('sb.small: ')
    assert outside_webroot(browser) == []
    browser.save('apache-capacity-flavor')
