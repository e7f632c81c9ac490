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

"""Real Chromium against real Horizon over the sandbox cloud.

Each module gets the run's ``plain`` cloud reset to every incident staged
(``tests/clouds.py``), a Horizon process of its own and a Chromium of its
own: nothing a module repaired, cached, journaled or set in its cookies
reaches the next, so a module passes alone and in any order.  Horizon runs
as production does: ``collectstatic`` and ``compress`` once for the tier,
then ``COMPRESS_OFFLINE=True``, so a template whose compressed block or
static file is missing fails the page.

Chromium is Debian's, driven by Debian's chromedriver (no selenium-manager
download).  Every test saves screenshots into the artifacts directory
(``ORPHAN_BROWSER_ARTIFACTS``, default ``.artifacts/browser``); a failing
test also saves the page source there.  ``ORPHAN_SCREENSHOTS`` names a
directory that receives the documentation's screenshots
(``doc/source/images``).
"""

import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from sandbox import common
from sandbox import demo
from tests import clouds

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
CHROMIUM = '/usr/bin/chromium'
CHROMEDRIVER = '/usr/bin/chromedriver'
ARTIFACTS = os.environ.get('ORPHAN_BROWSER_ARTIFACTS') or os.path.join(
    ROOT, '.artifacts', 'browser')


def pytest_collection_modifyitems(config, items):
    """Skip without Chromium (and, for ``test_apache.py``, Apache with
    mod_wsgi), unless ``./run test`` installed them (then their absence is
    a failure, not a silent skip)."""
    if os.environ.get('ORPHAN_BROWSER_REQUIRED') == '1':
        return
    from tests.browser import apache
    chromium = os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)
    for item in items:
        path = str(item.fspath)
        if 'tests/browser' not in path:
            continue
        if not chromium:
            item.add_marker(pytest.mark.skip(
                reason='Debian chromium and chromium-driver are not '
                'installed'))
        elif path.endswith('test_apache.py') and not apache.available():
            item.add_marker(pytest.mark.skip(
                reason='Debian apache2 and libapache2-mod-wsgi-py3 are not '
                'installed'))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if outcome.get_result().failed:
        for number, browser in enumerate(Browser.running):
            browser.save('%s-failed-%d' % (item.name, number))


def _run(args, env, what):
    result = subprocess.run(args, cwd=ROOT, env=env, capture_output=True,
                            text=True)
    if result.returncode:
        raise RuntimeError('%s failed:\n%s%s' % (what, result.stdout[-3000:],
                                                 result.stderr[-3000:]))


def collect_and_compress(env):
    """Horizon's static files and its offline-compressed bundles into the
    ``SANDBOX_HORIZON_STATIC_ROOT`` of ``env``, for its settings."""
    django = [sys.executable, '-m', 'django']
    _run(django + ['collectstatic', '--noinput', '-v', '0'], env,
         'collectstatic')
    _run(django + ['compress', '--force'], env, 'compress')


def horizon_env(sandbox):
    """Horizon's settings for ``sandbox``, offline-compressed."""
    env = demo.horizon_env(os.path.join(sandbox.state_dir, 'sandbox.json'))
    env['SANDBOX_HORIZON_OFFLINE'] = '1'
    return env


class StaticFiles:
    """The runserver Horizons' static root, collected and compressed by
    the first that needs it: what is in it comes from Horizon and the
    plugin, not from the cloud (the slow part of starting Horizon)."""

    def __init__(self, root):
        self.root = root
        self.ready = False

    def serve(self, env):
        """``env`` pointed at the static root, filled if it is not yet."""
        env['SANDBOX_HORIZON_STATIC_ROOT'] = self.root
        if not self.ready:
            collect_and_compress(env)
            self.ready = True


@pytest.fixture(scope='package')
def static_files(tmp_path_factory):
    return StaticFiles(str(tmp_path_factory.mktemp('static')))


class Site:
    """A Horizon process over ``sandbox`` serving the offline-compressed
    static files, with an empty History: the journal the cloud's earlier
    modules left records repairs that its reset undid."""

    def __init__(self, sandbox, static_files, name):
        self.sandbox = sandbox
        self.config = sandbox.config
        self.name = name
        self.env = horizon_env(sandbox)
        static_files.serve(self.env)
        journal = os.path.join(sandbox.state_dir, 'journal.sqlite3')
        if os.path.exists(journal):
            os.remove(journal)
        port = common.choose_port(0)
        self.url = 'http://127.0.0.1:%d' % port
        self.log = open(os.path.join(sandbox.state_dir, 'horizon-server.log'),
                        'w')
        self.proc = subprocess.Popen(
            demo.horizon_command(port), cwd=ROOT, env=self.env,
            stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        common.wait_http(self.url + '/auth/login/', 120, self.proc)

    def stop(self):
        common.stop_process(self.proc, 20)
        self.log.close()
        keep_logs(self.sandbox.state_dir, self.name)


def module_name(request):
    return request.module.__name__.rsplit('.', 1)[-1]


@pytest.fixture(scope='module')
def sandbox(request):
    """The run's ``plain`` cloud with every incident staged, and nothing
    another module did to it."""
    return clouds.staged(request, ('all',))


@pytest.fixture(scope='module')
def site(request, sandbox, static_files):
    """This module's Horizon: its cache and journal hold nothing of
    another module's cloud."""
    horizon = Site(sandbox, static_files, module_name(request))
    try:
        yield horizon
    finally:
        horizon.stop()


def keep_logs(state_dir, prefix):
    """Horizon's and the sandbox's logs in the artifacts, named after the
    module whose Horizon wrote them."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    for name in ('horizon-server.log', 'horizon.log', 'sandbox.log'):
        path = os.path.join(state_dir, name)
        if os.path.exists(path):
            shutil.copy(path, os.path.join(ARTIFACTS,
                                           '%s-%s' % (prefix, name)))


class Browser:
    """A headless Chromium session with the few waits Horizon needs."""

    running = []

    def __init__(self, site):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        self.site = site
        self.profile = os.path.join(site.sandbox.state_dir,
                                    'chromium-%d' % time.monotonic_ns())
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
        for flag in ('--headless=new', '--no-sandbox', '--disable-gpu',
                     '--disable-dev-shm-usage', '--disable-quic',
                     '--no-first-run', '--disable-background-networking',
                     '--disable-component-update', '--disable-sync',
                     '--window-size=1400,1000',
                     '--user-data-dir=' + self.profile):
            options.add_argument(flag)
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER),
                                       options=options)
        self.driver.set_page_load_timeout(180)
        self.running.append(self)

    def open(self, path):
        self.driver.get(self.site.url + path)

    def wait(self, condition, timeout=60):
        """``condition`` again until it holds; an element it read going
        stale (the page it came from was replaced meanwhile, as after a
        filter's submit) is a reason to look again, not a failure."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.support.ui import WebDriverWait
        return WebDriverWait(
            self.driver, timeout,
            ignored_exceptions=(StaleElementReferenceException,)).until(
                condition)

    def find(self, css, timeout=60):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        return self.wait(ec.visibility_of_element_located(
            (By.CSS_SELECTOR, css)), timeout)

    def all(self, css):
        from selenium.webdriver.common.by import By
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def click(self, css, timeout=60):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        element = self.wait(ec.element_to_be_clickable(
            (By.CSS_SELECTOR, css)), timeout)
        element.click()
        return element

    def login(self, username, password):
        self.open('/auth/login/')
        self.find('#id_username').send_keys(username)
        self.find('#id_password').send_keys(password)
        self.click('#loginBtn')
        self.wait(lambda d: '/auth/login' not in d.current_url)

    def console_errors(self):
        """What the page logged as severe since the last call: a missing
        static file or a script error."""
        return [entry['message'] for entry in self.driver.get_log('browser')
                if entry['level'] == 'SEVERE']

    def messages(self, kind):
        return [m.text for m in self.all('.messages .alert-%s' % kind)]

    def page_size(self, rows):
        """The user's *Items Per Page*, as set on Horizon's settings
        page."""
        self.open('/settings/')
        size = self.find('#id_pagesize')
        size.clear()
        size.send_keys(str(rows))
        size.submit()
        self.wait(lambda d: (d.get_cookie('API_RESULT_PAGE_SIZE') or {}).get(
            'value') == str(rows))

    def save(self, name, readme=False):
        """A screenshot (and the page source) in the artifacts directory;
        with ``readme``, a copy for the documentation's screenshots too."""
        os.makedirs(ARTIFACTS, exist_ok=True)
        png = os.path.join(ARTIFACTS, name + '.png')
        self.driver.save_screenshot(png)
        with open(os.path.join(ARTIFACTS, name + '.html'), 'w') as page:
            page.write(self.driver.page_source)
        screenshots = os.environ.get('ORPHAN_SCREENSHOTS')
        if readme and screenshots:
            os.makedirs(screenshots, exist_ok=True)
            shutil.copy(png, os.path.join(screenshots, name + '.png'))

    def quit(self):
        self.running.remove(self)
        self.driver.quit()
        shutil.rmtree(self.profile, ignore_errors=True)


def smallest(placement, provider, resource_class):
    """The least amount of ``resource_class`` a consumer may hold on
    ``provider``."""
    inventory = placement.get('/resource_providers/%s/inventories/%s' % (
        provider, resource_class), microversion='1.28').json()
    return max(inventory['min_unit'], inventory['step_size'])


def stage_strangers(sandbox, placement, holdings):
    """Consumers Nova never knew, each holding what ``holdings`` (one
    ``{provider: resources}`` per consumer) gives it, in one POST; their
    uuids share a prefix the tables' filters find.  ``(prefix,
    consumers)``."""
    session = sandbox.admin_session()
    prefix = uuid.uuid4().hex[:8]
    consumers = ['%s-0000-4000-8000-%012d' % (prefix, number)
                 for number in range(len(holdings))]
    placement.post('/allocations', microversion='1.28', json={
        consumer: {'allocations': {provider: {'resources': resources}
                                   for provider, resources in held.items()},
                   'project_id': session.get_project_id(),
                   'user_id': session.get_user_id(),
                   'consumer_generation': None}
        for consumer, held in zip(consumers, holdings)}).raise_for_status()
    return prefix, consumers


@pytest.fixture(scope='module')
def admin_browser(site):
    """The module's operator, in a Chromium of its own: cookies ignore the
    port, so a shared one would carry another module's language, page size
    and last tab shown."""
    browser = Browser(site)
    browser.login('admin', site.config['admin']['password'])
    yield browser
    browser.quit()


@pytest.fixture
def browser(admin_browser):
    admin_browser.console_errors()
    yield admin_browser
    assert admin_browser.console_errors() == []
