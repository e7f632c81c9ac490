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

"""No operator waits for a sweep, on the sandbox: two Horizon processes and
``orphan-audit refresh`` (from cron) share a real memcached (Debian's
``memcached``, started here); pages render what is stored, *Refresh* comes
back at once, one sweep runs at a time across processes.  And the
command line: a progress bar on a terminal only, Prometheus metrics equal
to the report."""

import json
import os
import pty
import re
import subprocess
import sys
import threading
import time
import uuid

import pytest
import requests

from orphan_dashboard.api import client as client_module
from orphan_dashboard.cli import commands as cli
from orphan_dashboard.cli import options
from orphan_dashboard.cli import progress_bar
from orphan_dashboard.sweep import lock
from orphan_dashboard.sweep import status
from orphan_dashboard.sweep import store as stores
from orphan_dashboard.sweep import worker
from sandbox import common
from sandbox import demo
from tests.e2e.conftest import INDEX
from tests.e2e.conftest import module_cloud
from tests.e2e.conftest import orphan_audit
from tests.e2e.conftest import ROOT
from tests import memcached as memcached_server
from tests import processes

pytestmark = memcached_server.MISSING

cloud = module_cloud('evacuation,deleted_behind_nova,healthy')


@pytest.fixture(scope='module')
def memcached():
    with memcached_server.running() as address:
        yield address


@pytest.fixture(scope='module')
def env(cloud, memcached, tmp_path_factory):
    """Horizon's settings for the sandbox, sharing that memcached."""
    env = demo.horizon_env(os.path.join(cloud.state_dir, 'sandbox.json'))
    env.update(SANDBOX_HORIZON_CACHE=memcached,
               SANDBOX_ORPHAN_SETTINGS=json.dumps({
                   'ORPHAN_AUDIT_SNAPSHOT_TTL': 3600}),
               OS_CLIENT_CONFIG_FILE=cloud.config['clouds_yaml'])
    return env


@pytest.fixture(scope='module')
def store(cloud, memcached):
    """The store as the panel and the command see it, read from here."""
    from django.core.cache.backends.memcached import PyMemcacheCache
    cache = PyMemcacheCache(memcached, {})
    key = client_module.cloud_for_clients(cloud.clients()).key
    return stores.Store(key, cache=cache)


class Horizon:
    """One Horizon process, and an admin logged in to it."""

    def __init__(self, cloud, env):
        port = common.choose_port(0)
        self.url = 'http://127.0.0.1:%d' % port
        self.log = open(os.path.join(cloud.state_dir, 'horizon-%d.log' %
                                     port), 'w')
        self.proc = subprocess.Popen(
            demo.horizon_command(port), cwd=ROOT, env=env, stdout=self.log,
            stderr=subprocess.STDOUT, start_new_session=True)
        common.wait_http(self.url + '/auth/login/', 120, self.proc)
        self.session = requests.Session()
        page = self.session.get(self.url + '/auth/login/').text
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"',
                          page).group(1)
        admin = cloud.config['admin']
        response = self.session.post(self.url + '/auth/login/', data={
            'csrfmiddlewaretoken': token, 'region': 'default',
            'username': admin['username'], 'password': admin['password']},
            headers={'Referer': self.url + '/auth/login/'},
            allow_redirects=False)
        assert response.status_code == 302, response.text[:500]

    def get(self, path, **kwargs):
        return self.session.get(self.url + path, allow_redirects=False,
                                timeout=60, **kwargs)

    def refresh_form(self):
        """What *Refresh* posts: the table form's CSRF token and action."""
        page = self.get(INDEX).text
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"',
                          page).group(1)
        assert 'value="providers__refresh"' in page
        return {'csrfmiddlewaretoken': token, 'action': 'providers__refresh'}

    def post(self, path, data):
        return self.session.post(self.url + path, data=data,
                                 headers={'Referer': self.url + path},
                                 allow_redirects=False, timeout=60)

    def stop(self):
        common.stop_process(self.proc, 20)
        self.log.close()


@pytest.fixture(scope='module')
def horizons(cloud, env):
    pair = [Horizon(cloud, env), Horizon(cloud, env)]
    yield pair
    for horizon in pair:
        horizon.stop()


def manage(env, *args):
    return subprocess.run(
        [sys.executable, '-m', 'django', 'orphan_audit', *args], cwd=ROOT,
        env=env, capture_output=True, text=True, timeout=300)


def test_cron_fills_the_cache_the_pages_read(env, store, horizons):
    assert store.state()['version'] is None
    refresh = manage(env, '--os-cloud', 'sandbox', 'refresh')
    assert refresh.returncode == 0, refresh.stdout + refresh.stderr
    assert 'stored' in refresh.stdout and 'full sweep' in refresh.stdout
    version = store.state()['version']
    assert version and status.sweeps(store) == 1
    for horizon in horizons:
        page = horizon.get(INDEX)
        assert page.status_code == 200
        assert 'Audit snapshot taken' in page.text
        assert 'data-version="%s"' % version in page.text
    assert status.sweeps(store) == 1, 'a page swept'
    again = manage(env, '--os-cloud', 'sandbox', 'refresh')
    assert again.returncode == 0 and 'incremental sweep' in again.stdout
    assert store.state()['version'] != version


def test_one_sweep_at_a_time_across_two_horizons(store, horizons):
    before = status.sweeps(store)
    version = store.state()['version']
    answers = []
    forms = [h.refresh_form() for h in horizons]

    def press_refresh(horizon, form):
        answers.append(horizon.post(INDEX, form))

    threads = [threading.Thread(target=press_refresh, args=pair)
               for pair in zip(horizons, forms)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [a.status_code for a in answers] == [302, 302]
    # The lock is taken before the page answers; the sweep runs in a
    # process of its own, started by one of the two.
    assert lock.holder(store) is not None
    assert len(processes.children({h.proc.pid for h in horizons},
                                  worker.SWEEPER)) == 1
    deadline = time.monotonic() + 120
    while True:
        state = horizons[1].get(INDEX + 'sweep/').json()
        if not state['sweeping'] and state['version'] != version:
            break
        assert time.monotonic() < deadline, state
        time.sleep(0.5)
    assert status.sweeps(store) == before + 1
    for horizon in horizons:
        assert 'data-version="%s"' % state['version'] in horizon.get(
            INDEX).text


def test_a_link_starts_no_sweep(store, horizons):
    """*Refresh* is a POST with the page's CSRF token: the old link, or
    the same POST from another site (no token), starts nothing."""
    horizon = horizons[0]
    before = status.sweeps(store)
    version = store.state()['version']
    assert horizon.get(INDEX + '?refresh=1').status_code == 200
    form = horizon.refresh_form()
    del form['csrfmiddlewaretoken']
    refused = horizon.post(INDEX, form)
    # Horizon's CSRF failure view sends the user to the login page.
    assert refused.status_code == 302
    assert 'csrf_failure' in refused.headers['Location']
    time.sleep(2)
    assert lock.holder(store) is None
    assert status.sweeps(store) == before
    assert store.state()['version'] == version


def test_a_batch_of_max_rows_is_previewed_by_either_horizon(cloud,
                                                            horizons):
    """A table's batch keeps its rows in the shared cache, bound to the
    session: the preview's short link works on the other Horizon process,
    for 200 rows (``ORPHAN_AUDIT_MAX_ROWS``), whose selections once made a
    URL past what Apache and Django take; another session finds none."""
    first, second = horizons
    leftover = cloud.incidents['evacuation']['expected'][0]
    page = INDEX + leftover['provider'] + '/'
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"',
                      first.get(page).text).group(1)
    rows = ['%s:%s' % (consumer, leftover['provider']) for consumer in
            [leftover['consumer']] + [str(uuid.uuid4()) for _ in range(199)]]
    batch = first.post(page, {'csrfmiddlewaretoken': token,
                              'action': 'allocations__delete_selected',
                              'object_ids': rows})
    assert batch.status_code == 302, batch.text[:300]
    location = batch.headers['Location']
    assert leftover['consumer'] not in location and len(location) < 300
    preview = requests.get(second.url + location, allow_redirects=False,
                           cookies=first.session.cookies, timeout=120)
    assert preview.status_code == 200, preview.headers
    assert preview.text.count('<tr class="orphan-preview-row') == 200
    assert leftover['consumer'] in preview.text
    refused = second.get(location)
    assert refused.status_code == 302
    assert refused.headers['Location'] == page


def test_a_bar_on_a_terminal_only(cloud, monkeypatch):
    """In-process, stderr on a real pseudo-terminal: the bar is drawn;
    with --json, or piped, it is not."""
    monkeypatch.setattr(progress_bar, 'DELAY', 0)
    monkeypatch.setenv('OS_CLIENT_CONFIG_FILE', cloud.config['clouds_yaml'])

    def run(argv):
        master, slave = pty.openpty()
        terminal = os.fdopen(slave, 'w')
        monkeypatch.setattr(sys, 'stderr', terminal)
        out = open(os.devnull, 'w')
        args = options.build_parser().parse_args(options.normalize(argv))
        code = cli.execute(args, out=out)
        terminal.flush()
        terminal.close()
        drawn = b''
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
        os.close(master)
        return code, drawn.decode(errors='replace')

    code, drawn = run(['--os-cloud', 'sandbox', 'report', '--min-age', '0'])
    assert code == options.FOUND
    # One line, redrawn in place.
    assert '\rSweeping Nova and Placement:' in drawn, drawn
    code, drawn = run(['--os-cloud', 'sandbox', 'report', '--min-age', '0',
                       '--json'])
    assert code == options.FOUND and 'Sweeping' not in drawn
    piped = orphan_audit(cloud, cloud.state_dir, 'report', '--min-age', '0')
    assert 'Sweeping' not in piped.stderr


def test_metrics_equal_the_report(cloud, tmp_path):
    path = str(tmp_path / 'orphan.prom')
    result = orphan_audit(cloud, tmp_path, 'metrics', '--min-age', '0',
                          '--textfile', path)
    assert result.returncode == 0, result.stderr
    from prometheus_client import parser
    with open(path) as f:
        families = {f.name: f for f in
                    parser.text_string_to_metric_families(f.read())}
    assert families['orphan_audit_up'].samples[0].value == 1
    report = json.loads(orphan_audit(cloud, tmp_path, 'report', '--min-age',
                                     '0', '--json').stdout)
    expected = {}
    for finding in report['findings']:
        expected[finding['verdict']] = expected.get(finding['verdict'], 0) + 1
        # The reason in English, with the code a script can match on.
        assert finding['reason'] and finding['reason_code']
    counted = {}
    for sample in families['orphan_audit_findings'].samples:
        verdict = sample.labels['verdict']
        if verdict != 'ok' and sample.value:
            counted[verdict] = counted.get(verdict, 0) + sample.value
    assert counted == expected and expected
    per_host = {p['name']: p['findings'] for p in report['providers']}
    for sample in families['orphan_audit_findings'].samples:
        assert sample.value == per_host[sample.labels['hypervisor']].get(
            sample.labels['verdict'], 0)
    # Nova unreachable: up 0, the last success kept, no stale findings.
    broken = dict(os.environ, OS_AUTH_URL='http://127.0.0.1:%d/v3' %
                  common.choose_port(0), OS_USERNAME='admin',
                  OS_PASSWORD='x', OS_PROJECT_NAME='admin',
                  OS_USER_DOMAIN_NAME='Default',
                  OS_PROJECT_DOMAIN_NAME='Default')
    broken.pop('OS_CLIENT_CONFIG_FILE', None)
    failed = subprocess.run(
        [sys.executable, '-m', 'orphan_dashboard.cli', 'metrics',
         '--textfile', path], env=broken, cwd=ROOT, capture_output=True,
        text=True, timeout=120)
    assert failed.returncode == 1
    with open(path) as f:
        text = f.read()
    assert 'orphan_audit_up 0.0' in text
    assert 'orphan_audit_findings{' not in text
    assert 'orphan_audit_last_success_timestamp_seconds' in text
