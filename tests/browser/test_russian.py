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

"""The panel in Russian, chosen the way an operator chooses it: in
Horizon's user settings."""

from tests.browser.pages import INDEX
from tests.browser.pages import PROVIDERS
from tests.browser.pages import row

# Horizon's LANGUAGE_COOKIE_NAME, which its user settings set.
LANGUAGE_COOKIE = 'horizon_language'


def choose_language(browser, code):
    from selenium.webdriver.support.ui import Select
    browser.open('/settings/')
    language = browser.find('#id_language')
    Select(language).select_by_value(code)
    language.submit()
    browser.wait(lambda d: (d.get_cookie(LANGUAGE_COOKIE) or {}).get(
        'value') == code)


def test_the_panel_in_russian(site, browser):
    choose_language(browser, 'ru')
    try:
        browser.open(PROVIDERS)
        snapshot = browser.find('.orphan-snapshot', timeout=180).text
        assert 'Снимок аудита сделан' in snapshot
        row(browser, 'providers', site.config['hosts']['host2'])
        page = browser.find('#main_content').text
        assert 'Осиротевшие выделения' in page
        header = ' '.join(th.get_attribute('textContent')
                          for th in browser.all('#providers thead th')
                          ).lower()
        assert 'гипервизор' in header and 'вычислительная служба' in header
        assert 'Orphaned Allocations' not in page
        assert 'hypervisor' not in header
        browser.save('index-ru', readme=True)
    finally:
        choose_language(browser, 'en')
    browser.open(INDEX)
    assert 'Orphaned Allocations' in browser.find('#main_content').text
