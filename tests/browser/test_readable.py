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

"""Read at 3 a.m.: a refresh that updates the page in place, a repair
done with the keyboard alone, the index and a provider page at 1024 px
with names that wrap only where a name may."""

import re

from keystoneauth1 import adapter
import pytest

from orphan_dashboard.api import placement as api

from tests.browser.conftest import smallest
from tests.browser.conftest import stage_strangers
from tests.browser.pages import incident
from tests.browser.pages import INDEX
from tests.browser.pages import row
from tests.browser.pages import row_actions
from tests.browser.pages import tick

MID_WORD = """
// Where a name's text wraps inside a word: a character on a line below
// the one before it, neither a space nor a character a name may break
// after (a colon, a hyphen) before it.
var found = [];
arguments[0].forEach(function (element) {
  var node = element.firstChild, text = element.textContent, top = null;
  var walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  var chars = [];
  while ((node = walker.nextNode())) {
    for (var i = 0; i < node.length; i++) {
      var range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      var rect = range.getClientRects()[0];
      chars.push([node.data[i], rect ? rect.top : null]);
    }
  }
  for (var j = 1; j < chars.length; j++) {
    if (chars[j][1] !== null && chars[j - 1][1] !== null &&
        chars[j][1] > chars[j - 1][1] + 2 &&
        ' :-'.indexOf(chars[j - 1][0]) < 0 && chars[j][0] !== ' ') {
      found.push(text);
    }
  }
});
return found;
"""


@pytest.fixture(scope='module')
def placement(site):
    """Placement queried directly, as the admin."""
    return adapter.Adapter(site.sandbox.admin_session(),
                           service_type='placement', interface='public')


@pytest.fixture
def narrow(browser):
    """The browser 1024 px wide, as a laptop shows Horizon."""
    size = browser.driver.get_window_size()
    browser.driver.set_window_size(1024, 768)
    yield browser
    browser.driver.set_window_size(size['width'], size['height'])


HYPERVISORS = '?tab=orphaned_allocations__providers'
ALLOCATIONS = '?tab=provider__allocations'
"""The tabs asked for by name: Horizon reopens the tab last shown."""


def audited(browser):
    """The index's hypervisors once the cloud's first audit is there (a
    provider page leads to the index before it)."""
    browser.open(INDEX + HYPERVISORS)
    return browser.find('#providers tbody tr[data-object-id]', timeout=180)


def overflow(browser):
    """How many pixels the page is wider than the window."""
    return browser.driver.execute_script(
        'return document.documentElement.scrollWidth - '
        'document.documentElement.clientWidth;')


def test_a_newer_audit_updates_the_tables_in_place(site, browser):
    """When the page learns of an audit newer than the one it shows, it
    swaps its tables in place: no reload, the ticked row still ticked, no
    "reload the page" link."""
    audited(browser)
    # (Horizon's themed checkbox hides the input itself.)
    first = browser.all('#providers tbody tr[data-object-id] '
                        'input.table-row-multi-select')[0].find_element(
                            'xpath', './ancestor::tr')
    ticked = first.get_attribute('data-object-id')
    tick(first)
    version = browser.find('.orphan-sweep').get_attribute('data-version')
    assert version
    # As if this page had been rendered from an older audit.
    browser.driver.execute_script(
        'window.orphanNotReloaded = true;'
        '$(".orphan-sweep").data("version", "older");'
        '$("#providers tbody").attr("data-swapped", "no");')
    browser.wait(lambda d: d.execute_script(
        'return $("#providers tbody").attr("data-swapped") === undefined '
        '&& $(".orphan-sweep").data("version") === arguments[0];',
        version), timeout=60)
    assert browser.driver.execute_script('return window.orphanNotReloaded;')
    assert not browser.all('.orphan-sweep-newer:not(.hidden)')
    box = row(browser, 'providers', ticked)
    assert box.find_element(
        'css selector', 'input.table-row-multi-select').is_selected()
    assert 'Audit snapshot taken' in browser.find('.orphan-snapshot').text
    browser.save('updated-in-place')


def test_the_totals_line_changes_with_the_tables_after_refresh(
        site, browser, placement):
    """120 leftovers staged on host2 and host3, then *Refresh*: when the
    page swaps in the new audit, what findings hold above the table
    changes with it (as a reload shows it), from the same snapshot."""
    audited(browser)
    before = browser.find('.orphan-held').text
    hosts = [site.config['hosts'][h] for h in ('host2', 'host3')]
    holdings = [{host: {'MEMORY_MB': smallest(placement, host,
                                              'MEMORY_MB')}}
                for host in hosts] * 60
    _prefix, strangers = stage_strangers(site.sandbox, placement, holdings)
    try:
        # The sweep held until the page is back from *Refresh*: it shows
        # the older audit, and must swap in the new one by itself.
        with site.sandbox.nova_and_placement_held():
            browser.driver.execute_script('window.orphanBefore = true;')
            browser.click('#providers__action_refresh')
            browser.wait(lambda d: d.execute_script(
                'return !window.orphanBefore && '
                'document.readyState === "complete";'))
            shown = browser.find('.orphan-sweep').get_attribute(
                'data-version')
            assert browser.find('.orphan-held').text == before
            browser.driver.execute_script('window.orphanNotReloaded = true;')
        browser.wait(lambda d: d.execute_script(
            'var v = $(".orphan-sweep").data("version");'
            'return v && v !== arguments[0] && '
            '!$(".orphan-sweep-progress").is(":visible");', shown),
            timeout=180)
        assert browser.driver.execute_script(
            'return window.orphanNotReloaded;')
        swapped = browser.find('.orphan-held').text
        browser.save('totals-after-refresh')
        assert swapped != before
        browser.open(INDEX + HYPERVISORS)
        assert browser.find('.orphan-held').text == swapped
    finally:
        for consumer in strangers:
            placement.delete('/allocations/%s' % consumer)


def test_the_bar_draws_what_its_text_says(site, browser):
    """*Refresh*: whenever a poll catches the sweep, the bar's width is
    the percentage its text states."""
    audited(browser)
    browser.driver.execute_script('window.orphanBefore = true;')
    browser.click('#providers__action_refresh')
    browser.wait(lambda d: d.execute_script(
        'return !window.orphanBefore && document.readyState === "complete";'))
    seen = []

    def ended(driver):
        # Read in one script: the sweep may end, and its bar be hidden,
        # between two calls.
        sample = driver.execute_script(
            "var d = document.querySelector('.orphan-sweep-detail');"
            "var b = document.querySelector('.orphan-sweep .progress-bar');"
            "if (!d || !b || !d.offsetParent || !b.parentNode.offsetWidth)"
            "  return null;"
            "return [d.textContent, b.getAttribute('style'),"
            "        100 * b.getBoundingClientRect().width /"
            "        b.parentNode.getBoundingClientRect().width];")
        if sample is not None:
            seen.append(tuple(sample))
            return False
        return bool(driver.find_elements('css selector',
                                         '#providers tbody tr'))
    browser.wait(ended, timeout=120)
    for text, style, drawn in seen:
        stated = re.search(r'\((\d+) %\)', text)
        if stated:
            # Drawn as stated, not on its way there.
            assert 'width: %s%%' % stated.group(1) in style, (text, style)
            assert abs(drawn - int(stated.group(1))) < 2, (text, drawn)


def keyboard_target(site, browser, placement):
    """A staged row's action whose confirm writes, opened on its page; and
    how to tell it was written."""
    for name in ('pre_pike_consumer', 'wrong_amount'):
        (expected,) = incident(site, name)['expected']
        server, provider = expected['consumer'], expected['provider']
        browser.open(INDEX + provider + '/' + ALLOCATIONS)
        browser.find('#allocations')
        shown = [a for line in browser.all(
            '#allocations tr[data-object-id="%s:%s"]' % (server, provider))
            for a in row_actions(line).values() if a.is_displayed()]
        if shown:
            before = api.consumer_allocations(placement, server)
            return shown[0].get_attribute('id'), lambda: (
                api.consumer_allocations(placement, server) != before)
    pytest.fail('no staged row offers a repair')


def press(browser, *keys):
    """``keys`` pressed together, as a user does."""
    from selenium.webdriver.common.action_chains import ActionChains
    chain = ActionChains(browser.driver)
    for key in keys[:-1]:
        chain.key_down(key)
    chain.send_keys(keys[-1])
    for key in reversed(keys[:-1]):
        chain.key_up(key)
    chain.perform()


def key_to(browser, selector, back=False, presses=400):
    """Tab (Shift+Tab with ``back``) until the focus is on what
    ``selector`` finds; failing, where the focus went."""
    from selenium.webdriver.common.keys import Keys
    walked = []
    for _ in range(presses):
        press(browser, *((Keys.SHIFT, Keys.TAB) if back else (Keys.TAB,)))
        there, where = browser.driver.execute_script(
            'var e = document.activeElement;'
            'return [e.matches(arguments[0]), e.tagName + "#" + e.id + "." +'
            ' e.className + " " + (e.textContent || "").trim().slice(0, 30)];',
            selector)
        if there:
            return
        walked.append(where)
    pytest.fail('no %s reaches %s: %s' % ('Shift+Tab' if back else 'Tab',
                                          selector, walked[:60]))


def confirm_by_keys(browser):
    """Tab to the preview's confirm, Enter, and the page it leads to."""
    from selenium.webdriver.common.keys import Keys
    key_to(browser, 'form .modal-footer [type="submit"]', presses=100)
    browser.save('keyboard-confirm')
    browser.driver.execute_script('window.orphanPreviewPage = true;')
    press(browser, Keys.ENTER)
    browser.wait(lambda d: d.execute_script(
        'return !window.orphanPreviewPage && '
        'document.readyState === "complete";'))


def test_a_repair_with_the_keyboard_alone(site, browser, placement):
    """Tab to a row's action, Enter opens its preview, Tab to the
    confirm, Enter writes: no mouse."""
    from selenium.webdriver.common.keys import Keys

    audited(browser)
    target, written = keyboard_target(site, browser, placement)
    browser.driver.execute_script('document.activeElement.blur();')
    key_to(browser, '[id="%s"]' % target)
    press(browser, Keys.ENTER)
    browser.find('.modal-dialog table.orphan-preview')
    confirm_by_keys(browser)
    assert browser.messages('success'), browser.messages('danger')
    assert written(), 'nothing written'


def test_fix_recommended_with_the_keyboard_alone(site, browser, placement):
    """Tab to a hypervisor's checkbox (its box shows the focus), Space
    ticks it, Shift+Tab back to *Fix recommended*, Enter previews, Tab to
    the confirm, Enter writes: a batch without a mouse."""
    from selenium.webdriver.common.keys import Keys

    stale = [e for e in incident(site, 'failed_migration')['expected']
             if e['verdict'] == 'stale_migration'][0]
    audited(browser)
    box = '#providers tr[data-object-id="%s"] input.table-row-multi-select' \
        % stale['provider']
    browser.driver.execute_script('document.activeElement.blur();')
    key_to(browser, box)
    assert browser.driver.execute_script(
        'return getComputedStyle(document.activeElement.nextElementSibling)'
        '.outlineStyle;') == 'solid'
    browser.save('keyboard-checkbox')
    press(browser, Keys.SPACE)
    assert browser.driver.execute_script(
        'return document.querySelector(arguments[0]).checked;', box)
    key_to(browser, '#providers__action_fix_recommended', back=True,
           presses=100)
    press(browser, Keys.ENTER)
    assert stale['consumer'] in browser.find('table.orphan-preview').text
    confirm_by_keys(browser)
    assert browser.all('.messages a.orphan-batch-link')
    assert api.consumer_allocations(placement, stale['consumer'])[
        'allocations'] == {}


HEADERS = """
// Each header of a table: its text, and whether it is shown.
return Array.prototype.map.call(
  document.querySelectorAll(arguments[0] + ' thead th'), function (th) {
    return [th.textContent.trim(), th.offsetParent !== null];
  });
"""

REASONS = """
// Each folded reason of the allocations: its summary's height in lines,
// and the height of the whole details.
return Array.prototype.map.call(
  document.querySelectorAll('#allocations details.orphan-reason'),
  function (details) {
    var summary = details.querySelector('summary');
    var line = parseFloat(getComputedStyle(summary).lineHeight);
    return [summary.getBoundingClientRect().height / line,
            details.getBoundingClientRect().height];
  });
"""


def headers(browser, table):
    """``{header: shown}`` of ``table`` (a css selector)."""
    return dict(browser.driver.execute_script(HEADERS, table))


def test_the_index_and_a_provider_page_at_1024_px(site, narrow):
    """Readable on a laptop: no page wider than the window, provider
    names wrapped only at their spaces, colons and hyphens; the columns
    left out are chosen and said, a consumer's project and user under it,
    each reason on one line, the rest on a click."""
    browser = narrow
    audited(browser)
    assert overflow(browser) <= 0
    shown = headers(browser, '#providers')
    assert not any(shown[h] for h in ('VCPU used / needed',
                                      'RAM (MB) used / needed',
                                      'Disk (GB) used / needed')), shown
    assert shown['Needed, held by findings, free'], shown
    said = browser.find('.orphan-narrow')
    assert said.is_displayed()
    assert 'used / needed columns are left out' in said.text
    browser.save('index-1024', readme=True)
    host3 = incident(site, 'wrong_amount')['hosts']['host3']
    browser.open(INDEX + host3 + '/' + ALLOCATIONS)
    browser.find('#allocations tbody tr[data-object-id]')
    assert overflow(browser) <= 0
    names = browser.all('.orphan-name')
    assert browser.driver.execute_script(MID_WORD, names) == []
    shown = headers(browser, '#allocations')
    assert (shown['Project'], shown['User']) == (False, False), shown
    # Under each consumer instead (the sandbox's servers are the admin's).
    owner = browser.find('#allocations tbody .orphan-owner')
    assert owner.is_displayed()
    assert owner.text == 'admin / admin', owner.text
    folded = browser.driver.execute_script(REASONS)
    assert folded, 'no long reason on host3'
    assert all(lines < 1.5 for lines, _ in folded), folded
    browser.save('detail-1024', readme=True)
    # A click opens the rest: the whole reason, and what follows it.
    summary = browser.find('#allocations details.orphan-reason summary')
    summary.click()
    browser.wait(lambda d: d.execute_script(
        'return document.querySelector("#allocations '
        'details.orphan-reason").open;'))
    opened = browser.driver.execute_script(REASONS)
    assert opened[0][1] > folded[0][1], (opened, folded)

    # Wide, Project and User have their own columns again.
    browser.driver.set_window_size(1400, 768)
    browser.open(INDEX + host3 + '/' + ALLOCATIONS)
    browser.find('#allocations tbody tr[data-object-id]')
    shown = headers(browser, '#allocations')
    assert (shown['Project'], shown['User']) == (True, True), shown
    owners = browser.all('#allocations tbody .orphan-owner')
    assert owners and not any(o.is_displayed() for o in owners)
