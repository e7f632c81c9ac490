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

"""An operator's session in Chromium: menu, drill-down, preview, confirm,
batch repairs, protected rows, history and restore, and a member who must
not see the panel.  The tests share one sandbox and run in file order, each
starting from what the previous one left, as an operator's night would."""

import contextlib
import os

from keystoneauth1 import adapter
import pytest

from orphan_dashboard.api import placement as api
from tests.browser.conftest import smallest
from tests.browser.conftest import stage_strangers
from tests.browser.pages import cell
from tests.browser.pages import confirm
from tests.browser.pages import expected_rows
from tests.browser.pages import held
from tests.browser.pages import incident
from tests.browser.pages import INDEX
from tests.browser.pages import link
from tests.browser.pages import listed_providers
from tests.browser.pages import names
from tests.browser.pages import refreshed
from tests.browser.pages import row
from tests.browser.pages import row_actions
from tests.browser.pages import tick
from tests.browser.pages import verdict_of


@pytest.fixture(scope='module')
def placement(site):
    """Placement queried directly, as the admin, to check what the panel
    claims."""
    return adapter.Adapter(site.sandbox.admin_session(),
                           service_type='placement', interface='public')


def test_admin_opens_the_panel_from_the_menu(site, browser):
    browser.open('/')
    browser.wait(lambda d: '/auth/login' not in d.current_url)
    if not browser.all('#sidebar-accordion-admin.in'):
        browser.click('a[data-target="#sidebar-accordion-admin"]')
    panel = 'a.openstack-panel[href="%s"]' % INDEX
    if not browser.all('#sidebar-accordion-admin-compute.in'):
        browser.click('a[data-target="#sidebar-accordion-admin-compute"]')
    assert browser.find(panel).text.strip() == 'Orphaned Allocations'
    # The first page of a cold cloud does not wait for the first sweep: it
    # shows its progress and reloads itself when the snapshot is there.
    # The sweep is held until the page is read: this small cloud's can end,
    # and the page reload, before a loaded machine's driver reads it.
    with site.sandbox.nova_and_placement_held():
        browser.click(panel)
        browser.wait(lambda d: d.current_url.endswith(INDEX))
        first = browser.find('.orphan-sweep')
        assert 'The first audit of this cloud is running' in first.text
        browser.save('first-sweep')
    host1 = incident(site, 'evacuation')['hosts']['host1']
    browser.find('#providers tr[data-object-id="%s"]' % host1)
    assert 'Audit snapshot taken' in browser.find('.orphan-snapshot').text
    browser.save('index', readme=True)


def test_trim_the_evacuated_servers_leftover(site, browser, placement):
    evacuation = incident(site, 'evacuation')
    host1 = evacuation['hosts']['host1']
    server = evacuation['servers'][0]['uuid']
    browser.open(INDEX)
    browser.click('#providers tr[data-object-id="%s"] a[href$="%s/"]'
                  % (host1, host1))
    leftover = row(browser, 'allocations', '%s:%s' % (server, host1))
    assert verdict_of(leftover) == 'evacuated_source'
    assert 'evacuated from host1' in leftover.text
    # Names from Keystone next to the ids, links to Horizon's own pages.
    assert cell(leftover, 'Project').text == 'admin'
    assert cell(leftover, 'User').text == 'admin'
    server_page = link(cell(leftover, 'Consumer'))
    assert server_page.endswith('/admin/instances/%s/detail' % server)
    host2 = evacuation['hosts']['host2']
    assert link(cell(leftover, 'Current host')).endswith(
        '/admin/hypervisors/%s_host2/' % host2)
    # A reason wraps between words, never inside one ("ser ver").
    assert browser.driver.execute_script(
        'return getComputedStyle(arguments[0]).wordBreak;',
        cell(leftover, 'Reason')) == 'normal'
    browser.save('detail', readme=True)

    actions = row_actions(leftover)
    assert set(actions) == {'trim', 'delete_and_heal'}, set(actions)
    actions['trim'].click()
    modal = browser.find('.modal-dialog table.orphan-preview')
    assert 'Trim to current host' in modal.text
    commands = [c.text
                for c in browser.all('.modal-dialog code.orphan-command')]
    assert any(c.startswith('openstack ') and
               'resource provider allocation unset %s --provider %s'
               % (server, host1) in c for c in commands), commands
    before, after = [c.text for c in browser.all(
        '.modal-dialog .orphan-preview-row td')[2:4]]
    assert 'host1' in before and 'host1' not in after
    browser.save('preview', readme=True)

    confirm(browser)
    assert browser.messages('success'), browser.messages('danger')
    # Back where the repair started: host1's page.
    assert browser.driver.current_url.split('?')[0].endswith(
        INDEX + host1 + '/')
    assert host1 not in held(placement, server)
    assert held(placement, server), 'the server kept its current host'
    # The server's link led to Horizon's own instance page.
    browser.driver.get(server_page)
    assert evacuation['servers'][0]['name'] in browser.find(
        '#content_body').text
    browser.open(INDEX)
    browser.find('#providers')
    assert host1 not in listed_providers(browser)
    browser.save('after-trim')


def test_delete_the_server_deleted_behind_novas_back(site, browser,
                                                     placement):
    (leftover,) = expected_rows(site, 'deleted_behind_nova',
                                'deleted_instance')
    browser.open(INDEX + leftover['provider'] + '/')
    line = row(browser, 'allocations', '%s:%s' % (leftover['consumer'],
                                                  leftover['provider']))
    assert verdict_of(line) == 'deleted_instance'
    tick(line)
    browser.click('#allocations__action_delete_selected')
    preview = browser.find('table.orphan-preview')
    assert leftover['consumer'] in preview.text
    # Shown in its generation-safe form: "unset" of everything, not the
    # unchecked "delete".
    assert 'resource provider allocation unset %s' % leftover['consumer'] \
        in preview.text
    assert 'allocation delete' not in preview.text
    browser.save('delete-preview')
    confirm(browser)
    assert browser.messages('success'), browser.messages('danger')
    # The batch came back to the page it was ticked on.
    assert browser.driver.current_url.split('?')[0].endswith(
        INDEX + leftover['provider'] + '/')
    assert held(placement, leftover['consumer']) == {}
    browser.save('after-delete')


def test_fix_the_failed_migration_in_one_batch(site, browser, placement):
    failed = incident(site, 'failed_migration')
    hosts = failed['hosts']
    moved = expected_rows(site, 'failed_migration', 'moved')
    stale = expected_rows(site, 'failed_migration', 'stale_migration')
    assert moved and stale
    browser.open(INDEX)
    browser.find('#providers')
    for provider in {e['provider'] for e in moved + stale}:
        tick(row(browser, 'providers', provider))
    browser.click('#providers__action_fix_recommended')
    preview = browser.find('table.orphan-preview')
    lines = [r.text for r in browser.all('.orphan-preview-row')]
    for entry in moved:
        assert any(entry['consumer'] in text and 'Delete and heal' in text
                   for text in lines), lines
    for entry in stale:
        assert any(entry['consumer'] in text and 'Delete' in text
                   for text in lines), lines
    assert len(lines) >= len(moved) + len(stale)
    assert 'Not possible' not in preview.text
    browser.save('batch-preview')
    confirm(browser)
    assert browser.messages('success'), browser.messages('danger')
    assert not browser.messages('danger')
    for entry in stale:
        assert held(placement, entry['consumer']) == {}
    servers = {s['uuid']: s for s in failed['servers']}
    for entry in moved:
        home = hosts[servers[entry['consumer']]['host']]
        assert set(held(placement, entry['consumer'])) == {home}
    browser.save('after-batch')


def test_unconfirmed_resize_is_protected_and_offers_no_repair(
        site, browser, placement):
    protected = expected_rows(site, 'unconfirmed_resize', 'protected')
    assert protected
    before = {e['consumer']: held(placement, e['consumer'])
              for e in protected}
    entry = protected[0]
    browser.open(INDEX + entry['provider'] + '/')
    line = row(browser, 'allocations', '%s:%s' % (entry['consumer'],
                                                  entry['provider']))
    assert verdict_of(line) == 'protected'
    assert row_actions(line) == {}
    assert not line.find_elements('css selector', 'input[type="checkbox"]')
    browser.save('protected')
    assert {c: held(placement, c) for c in before} == before


def test_filters_find_hypervisors_and_rows(site, browser):
    """Both filters search on the server: every hypervisor, every row of
    a hypervisor's allocations, not only the page shown."""
    protected = expected_rows(site, 'unconfirmed_resize', 'protected')
    browser.open(INDEX)
    browser.find('#providers')
    browser.click('#providers .themable-select button.dropdown-toggle')
    browser.click('#providers .themable-select a[data-select-value='
                  '"verdict"]')
    field = browser.find('#providers input[name="providers__filter__q"]')
    field.clear()
    field.send_keys('protected')
    browser.click('#providers .table_search button[type="submit"]')
    browser.wait(lambda d: d.execute_script(
        'return document.readyState === "complete";'))
    browser.find('#providers')
    rows = browser.all('#providers tbody tr[data-object-id]')
    assert {e['provider'] for e in protected} <= listed_providers(browser)
    assert rows and all('Protected' in cell(r, 'Findings').text
                        for r in rows), [r.text for r in rows]
    browser.save('providers-filtered')
    field = browser.find('#providers input[name="providers__filter__q"]')
    field.clear()
    browser.click('#providers .table_search button[type="submit"]')
    browser.wait(lambda d: d.execute_script(
        'return document.readyState === "complete";'))
    browser.find('#providers')

    entry = protected[0]
    browser.open(INDEX + entry['provider'] + '/')
    browser.find('#allocations')
    everything = browser.all('#allocations tbody tr[data-object-id]')
    assert len(everything) > 1
    search = browser.find('#allocations input[name="allocations__filter__q"]')
    search.send_keys(entry['consumer'][:13])
    browser.click('#allocations .table_search button[type="submit"]')
    browser.wait(lambda d: [
        r.get_attribute('data-object-id') for r in d.find_elements(
            'css selector', '#allocations tbody tr[data-object-id]')
    ] == ['%s:%s' % (entry['consumer'], entry['provider'])])
    browser.save('allocations-filtered')
    search = browser.find('#allocations input[name="allocations__filter__q"]')
    search.clear()
    browser.click('#allocations .table_search button[type="submit"]')
    browser.wait(lambda d: len(d.find_elements(
        'css selector', '#allocations tbody tr[data-object-id]')) ==
        len(everything))


def test_history_shows_the_changes_and_restore_puts_one_back(site, browser,
                                                             placement):
    (leftover,) = expected_rows(site, 'deleted_behind_nova',
                                'deleted_instance')
    consumer = leftover['consumer']
    browser.open(INDEX)
    browser.click('a[data-target="#orphaned_allocations__history"]')
    table = browser.find('#history')
    for trimmed in incident(site, 'evacuation')['servers']:
        assert names(table, trimmed['uuid'])
    entries = [r for r in browser.all('#history tbody tr[data-object-id]')
               if names(r, consumer)]
    assert len(entries) == 1 and 'Applied' in entries[0].text
    # The demo's Horizon keeps its journal with its own sandbox.
    assert os.path.exists(os.path.join(site.sandbox.state_dir,
                                       'journal.sqlite3'))
    browser.save('history')
    row_actions(entries[0])['restore'].click()
    modal = browser.find('.modal-dialog table.orphan-preview')
    assert names(modal, consumer)
    browser.save('restore-preview')
    confirm(browser)
    assert browser.messages('success'), browser.messages('danger')
    restored = held(placement, consumer)
    assert restored == {leftover['provider']: {
        'VCPU': 12, 'MEMORY_MB': 32768, 'DISK_GB': 80}}


def history_filtered(browser, field, text):
    """The rows History lists once ``field`` is chosen in its filter and
    ``text`` searched, from the index with History clicked: the tab is
    loaded after the page, as a person reaches it (Horizon would open
    History at once, the tab last shown)."""
    browser.open(INDEX + '?tab=orphaned_allocations__providers')
    browser.find('#providers')
    browser.click('a[data-target="#orphaned_allocations__history"]')
    browser.find('#history')
    browser.click('#history .themable-select button.dropdown-toggle')
    browser.click('#history .themable-select a[data-select-value="%s"]'
                  % field)
    browser.wait(lambda d: d.find_element(
        'css selector', '#history select[name="history__filter__q_field"]'
    ).get_attribute('value') == field)
    query = browser.find('#history input[name="history__filter__q"]')
    query.clear()
    query.send_keys(text)
    browser.click('#history .table_search button[type="submit"]')
    browser.wait(lambda d: d.execute_script(
        'return document.readyState === "complete";'))
    browser.find('#history')
    chosen = browser.find('#history .themable-select .dropdown-title').text
    return chosen, browser.all('#history tbody tr[data-object-id]')


def journal_rows(site, sql, *args):
    """What the demo's journal (its Horizon's sqlite) answers ``sql``."""
    import sqlite3
    path = os.path.join(site.sandbox.state_dir, 'journal.sqlite3')
    with contextlib.closing(sqlite3.connect(path)) as db:
        return db.execute(sql, args).fetchall()


def test_the_history_filter_finds_by_each_field_from_its_tab(site, browser):
    """History's filter, its tab clicked from the index (Horizon sets up
    the field dropdown only of what the page held when it loaded): each
    field chosen there finds its entries, by consumer, by the host's name,
    by the project's name and by the start of a batch's id.  Horizon keeps
    a tab's server-side filter nowhere by itself: ours is stored by the
    view, applied to the journal, and shown again."""
    (leftover,) = expected_rows(site, 'deleted_behind_nova',
                                'deleted_instance')
    consumer = leftover['consumer']
    browser.open(INDEX + '?tab=orphaned_allocations__history')
    browser.find('#history')
    everything = browser.all('#history tbody tr[data-object-id]')
    assert len({r.text for r in everything if not names(r, consumer)}) > 0

    chosen, rows = history_filtered(browser, 'consumer', consumer)
    assert chosen == 'Consumer ='
    assert rows and all(names(r, consumer) for r in rows), \
        [r.text for r in rows]
    assert len(rows) == 2   # the delete, and its restore
    assert browser.find('#history input[name="history__filter__q"]'
                        ).get_attribute('value') == consumer
    export = browser.find('#history a[href*="export/csv/"]')
    assert 'consumer=%s' % consumer in export.get_attribute('href')
    browser.save('history-filtered')

    (host,) = [n for n, u in site.config['hosts'].items()
               if u == leftover['provider']]
    on_host = {c for (c,) in journal_rows(
        site, 'SELECT DISTINCT consumer FROM orphan_dashboard_journalentry '
        'WHERE provider = ?', leftover['provider'])}
    chosen, rows = history_filtered(browser, 'provider', host)
    assert chosen == 'Provider ='
    assert len(rows) == len(journal_rows(
        site, 'SELECT id FROM orphan_dashboard_journalentry WHERE '
        'provider = ?', leftover['provider'])), [r.text for r in rows]
    assert all(any(names(r, c) for c in on_host) for r in rows)
    assert any(names(r, consumer) for r in rows)

    ((project, batch),) = journal_rows(
        site, 'SELECT consumer_project, batch FROM '
        'orphan_dashboard_journalentry WHERE consumer = ? AND restores_id '
        'IS NULL', consumer)
    project_name = site.sandbox.admin_session().get(
        '/projects/%s' % project, endpoint_filter={
            'service_type': 'identity', 'interface': 'public'}
    ).json()['project']['name']
    chosen, rows = history_filtered(browser, 'project', project_name)
    assert chosen == 'Project ='
    assert any(names(r, consumer) for r in rows), [r.text for r in rows]
    _chosen, rows = history_filtered(browser, 'project', 'no-such-project')
    assert rows == []

    batch_of = journal_rows(
        site, 'SELECT DISTINCT consumer FROM orphan_dashboard_journalentry '
        'WHERE batch = ?', batch)
    chosen, rows = history_filtered(browser, 'batch', batch[:8])
    assert chosen == 'Batch ='
    assert rows and {c for (c,) in batch_of} == {
        c for (c,) in batch_of if any(names(r, c) for r in rows)}
    # Clearing it shows everything again.
    field = browser.find('#history input[name="history__filter__q"]')
    field.clear()
    browser.click('#history .table_search button[type="submit"]')
    browser.wait(lambda d: len(d.find_elements(
        'css selector', '#history tbody tr[data-object-id]')) > 2)


def test_decommission_the_retired_host(site, browser, placement):
    """host4 died with its leftovers: from its row, the preview lists
    them, a confirm without the consumer of another service ticked comes
    back to the same preview saying so, it is ticked by hand, and the
    compute service and provider go."""
    retired = incident(site, 'retired_host')
    host4 = retired['hosts']['host4']
    (stranger,) = [e['consumer'] for e in retired['expected']
                   if e['verdict'] == 'unknown_consumer']
    browser.open(INDEX + '?tab=orphaned_allocations__providers')
    line = row(browser, 'providers', host4)
    line.find_element('css selector', '.dropdown-toggle').click()
    row_actions(line)['decommission'].click()
    modal = browser.find('.modal-dialog table.orphan-preview')
    for entry in retired['expected']:
        if entry['host'] == 'host4':
            assert entry['consumer'] in modal.text
    assert 'the compute service is not re-created' in browser.find(
        '.modal-dialog .orphan-service').text
    # Confirmed unticked: the same preview comes back, with the field
    # error and its button.
    browser.click('.modal-dialog .modal-footer [type="submit"]')
    browser.wait(lambda d: 'Tick every consumer listed' in d.find_element(
        'css selector', '.modal-dialog').text)
    # Said at the top of the dialog, where the focus goes: not below the
    # fold of its long preview, as if nothing had happened.
    browser.wait(lambda d: d.execute_script(
        'return document.activeElement.matches('
        '".modal-dialog .orphan-form-errors");'), timeout=20)
    top, bottom, height, said = browser.driver.execute_script(
        'var e = document.activeElement, r = e.getBoundingClientRect();'
        'return [r.top, r.bottom, window.innerHeight, e.textContent];')
    assert 0 <= top and bottom <= height, (top, bottom, height)
    assert 'Tick every consumer listed' in said
    assert stranger in browser.find('.modal-dialog table.orphan-preview').text
    assert 'cannot be decommissioned now' not in browser.find(
        '.modal-dialog').text
    box = browser.find('.modal-dialog input[name="delete_unknown"][value='
                       '"%s"]' % stranger)
    browser.driver.execute_script('arguments[0].click();', box)
    assert box.is_selected()
    browser.save('decommission-preview')
    confirm(browser)
    assert not browser.messages('danger'), browser.messages('danger')
    # One summary, not a message per step, linking its History batch.
    (text,) = browser.messages('success')
    assert 'Decommission of host4:' in text, text
    assert 'steps done and journaled' in text, text
    assert browser.all('.messages .alert-success a[href*="batch="]')
    services = adapter.Adapter(
        site.sandbox.admin_session(), service_type='compute',
        interface='public').get(
        '/os-services?binary=nova-compute&host=host4',
        microversion='2.53').json()['services']
    assert services == []
    assert api.provider_record(placement, host4) is None
    assert held(placement, stranger) == {}
    browser.save('after-decommission')


BATCH = 120
"""Rows in the batch of ``test_a_batch_is_one_message_and_its_history``:
the issue's batch (128 rows, 59 of whose messages a cookie kept)."""


def selection(browser, table):
    """The rows ``table`` lists, as one script reads them."""
    return browser.driver.execute_script(
        'return Array.prototype.map.call(document.querySelectorAll('
        'arguments[0]), function (r) { return r.textContent; });',
        '#%s tbody tr[data-object-id]' % table)


def test_a_batch_is_one_message_and_its_history(site, browser, placement):
    """``BATCH`` consumers Nova never knew on host3, one of them on its
    NIC too (two rows, one write), ticked and deleted at once: one of
    them gone before the preview (not possible), one changed before the
    confirm (skipped).  One message counts them all, names the two, and
    leads to History, which lists the batch's writes and the two rows
    that wrote nothing."""
    host3 = site.config['hosts']['host3']
    (nic,) = [p['uuid'] for p in placement.get(
        '/resource_providers?name=host3:br-phys',
        microversion='1.14').json()['resource_providers']]
    memory = {'MEMORY_MB': smallest(placement, host3, 'MEMORY_MB')}
    bandwidth = {'NET_BW_EGR_KILOBIT_PER_SEC': smallest(
        placement, nic, 'NET_BW_EGR_KILOBIT_PER_SEC')}
    prefix, strangers = stage_strangers(
        site.sandbox, placement,
        [{host3: memory, nic: bandwidth}] + [{host3: memory}] * (BATCH - 1))
    twice, gone, changed = strangers[0], strangers[7], strangers[42]
    browser.page_size(3 * BATCH)
    try:
        refreshed(browser)
        browser.open(INDEX + host3 + '/?tab=provider__allocations')
        search = browser.find('#allocations input[name="allocations__filter'
                              '__q"]')
        search.send_keys(prefix)
        browser.click('#allocations .table_search button[type="submit"]')
        browser.wait(lambda d: len(selection(browser, 'allocations')) ==
                     BATCH + 1)
        placement.delete('/allocations/%s' % gone)
        browser.click('#allocations thead .themable-checkbox '
                      'input.table-row-multi-select + label')
        browser.click('#allocations__action_delete_selected')
        preview = browser.find('table.orphan-preview')
        lines = [r.text for r in browser.all('.orphan-preview-row')]
        # The consumer on host3 and its NIC: one row, one write.
        assert len(lines) == BATCH, len(lines)
        assert len([t for t in lines if twice in t]) == 1
        (refused,) = [t for t in lines if 'Not possible' in t]
        assert gone in refused
        assert 'Not possible' in preview.text
        now = api.consumer_allocations(placement, changed)
        placement.put('/allocations/%s' % changed, microversion='1.28', json={
            'allocations': {host3: {'resources': {
                'MEMORY_MB': 2 * memory['MEMORY_MB']}}},
            'project_id': now['project_id'], 'user_id': now['user_id'],
            'consumer_generation': now['consumer_generation']}
        ).raise_for_status()
        confirm(browser)
        alerts = browser.all('.messages .alert')
        assert len(alerts) == 1, [a.text for a in alerts]
        (text,) = browser.messages('warning')
        assert '%d repairs done, 2 skipped.' % (BATCH - 2) in text, text
        assert gone in text and changed in text, text
        assert 'already repaired' not in text, text
        browser.save('batch-result', readme=True)
        assert all(held(placement, c) == {} for c in strangers
                   if c != changed)
        browser.click('.messages a.orphan-batch-link')
        browser.wait(lambda d: len(selection(browser, 'history')) ==
                     BATCH - 2)
        unwritten = browser.find('.orphan-unwritten').text
        assert gone in unwritten and changed in unwritten, unwritten
        browser.save('batch-history', readme=True)
    finally:
        placement.delete('/allocations/%s' % changed)
        browser.page_size(20)


@pytest.fixture
def member(site):
    from tests.browser.conftest import Browser
    browser = Browser(site)
    yield browser
    errors = browser.console_errors()
    browser.quit()
    assert [e for e in errors if '403' not in e] == []


def test_a_member_does_not_see_the_panel(site, member):
    member.login('member', site.config['member']['password'])
    member.open('/')
    member.find('#sidebar-accordion')
    assert not member.all('#sidebar-accordion-admin')
    assert not member.all('a[href="%s"]' % INDEX)
    member.save('member-menu')
    member.open(INDEX)
    member.wait(lambda d: 'You are not authorized to access this page' in
                d.find_element('tag name', 'body').text)
    assert not member.all('#providers')
    member.save('member-panel-url')
