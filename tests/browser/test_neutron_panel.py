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

"""Neutron's routed segment provider in Chromium, with the real Neutron:
its own sandbox (``--neutron``, the ``routed_segment`` incident staged by
Neutron's segments plugin) and Horizon process for this module.  The
index lists it with its owner and no destructive action; its page says
Neutron and offers neither *Delete provider* nor *Decommission*."""

import pytest

from tests.browser.conftest import Browser
from tests.browser.conftest import Site
from tests.browser.test_panel import INDEX
from tests.browser.test_panel import row_actions

pytest.importorskip('neutron')

from sandbox.harness import Sandbox  # noqa: E402


@pytest.fixture(scope='module')
def neutron_site(tmp_path_factory):
    sandbox = Sandbox(incidents=['routed_segment'], neutron=True,
                      timeout=300,
                      state_dir=str(tmp_path_factory.mktemp('sandbox')))
    sandbox.start()
    try:
        site = Site(sandbox, str(tmp_path_factory.mktemp('static')))
        try:
            yield site
        finally:
            site.stop()
    finally:
        sandbox.stop()


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
