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

"""A partial audit in Chromium, on the run's ``two_cells`` cloud (as
``tests/e2e/test_cells.py`` stages it): with cell2 down, a Refresh shows
one warning in the index's summary, over neither the Export and *Fix
recommended* buttons nor the bars; the header counts host5 among the
hypervisors that could not be judged and the table lists it without
*Show all*.  Once the cell is back, a Refresh shows no warning."""

import pytest

from tests.browser.pages import incident
from tests.browser.pages import PROVIDERS
from tests.browser.pages import refreshed
from tests import clouds

pytestmark = pytest.mark.topology('two_cells')

COVERED = """
// Whether the centre of each element is something else: an element drawn
// over it (a warning), or nothing (off the page).
return Array.prototype.map.call(arguments[0], function (element) {
  var box = element.getBoundingClientRect();
  var top = document.elementFromPoint(box.left + box.width / 2,
                                      box.top + box.height / 2);
  return !(top && (top === element || element.contains(top)));
});
"""


@pytest.fixture(scope='module')
def sandbox(request):
    return clouds.staged(request, ('evacuation', 'second_cell',
                                   'deleted_behind_nova'))


@pytest.fixture
def cell2_down(site):
    site.sandbox.control('POST', '/cells/cell2/down')
    try:
        yield incident(site, 'second_cell')
    finally:
        site.sandbox.control('POST', '/cells/cell2/up')


def warnings(browser):
    return [w.text for w in browser.all('.orphan-summary .orphan-partial')
            if w.is_displayed()]


def test_a_down_cell_is_said_once_and_covers_nothing(site, browser,
                                                     cell2_down):
    host5 = cell2_down['hosts']['host5']
    refreshed(browser)
    browser.open(PROVIDERS)
    browser.find('#providers tr[data-object-id="%s"]' % host5)
    (warning,) = warnings(browser)
    assert 'A cell is down' in warning, warning
    assert 'host5' in warning, warning
    summary = browser.find('.orphan-summary').text
    assert 'could not be judged' in summary, summary
    # Listed without Show all, its allocations protected.
    assert 'show=all' not in browser.driver.current_url
    row = browser.find('#providers tr[data-object-id="%s"]' % host5)
    assert 'host5' in row.text
    # Nothing under the warning: the table's buttons and the bars.
    shown = [browser.find('#providers__action_export_findings_csv'),
             browser.find('#providers__action_fix_recommended')] + \
        browser.all('#providers .orphan-capacity-cell .progress')[:3]
    browser.driver.execute_script('window.scrollTo(0, 0);')
    assert browser.driver.execute_script(COVERED, shown) == [False] * len(
        shown)
    browser.save('partial-cell-down')

    site.sandbox.control('POST', '/cells/cell2/up')
    refreshed(browser)
    browser.open(PROVIDERS)
    browser.find('#providers tbody tr[data-object-id]')
    assert warnings(browser) == []
    assert 'could not be judged' not in browser.find('.orphan-summary').text
