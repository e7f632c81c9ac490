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

"""A background sweep a page starts runs in a process of its own when the
cache is shared (here a file-based one): at a lower CPU priority, with the
user's token handed over on its stdin only, and a sweeper that dies
releases the lock at once.

The "cloud" is a socket that accepts and never answers, so the sweeper is
caught at its first request, which shows the token it carries.
"""

import os
import select
import signal
import socket
import time
import uuid

from django.core.cache.backends.filebased import FileBasedCache
from django.core.cache.backends.locmem import LocMemCache
import pytest

from orphan_dashboard.api import client
from orphan_dashboard import conf
from orphan_dashboard.sweep import lock
from orphan_dashboard.sweep import status
from orphan_dashboard.sweep import store as stores
from orphan_dashboard.sweep import worker
from tests import processes


def _children(name):
    return processes.children({os.getpid()}, name)


def _wait(predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.fixture
def silent_cloud():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        sock.listen(16)
        sock.settimeout(60)
        yield sock


def test_only_a_shared_cache_sends_the_sweep_to_another_process(tmp_path):
    assert stores.Store('c', cache=FileBasedCache(
        str(tmp_path), {})).shared
    assert not stores.Store('c', cache=LocMemCache('c', {})).shared


def test_a_pages_sweep_runs_in_a_niced_process_of_its_own(tmp_path,
                                                          silent_cloud):
    store = stores.Store('test-cloud', cache=FileBasedCache(
        str(tmp_path / 'cache'), {}))
    url = 'http://127.0.0.1:%d' % silent_cloud.getsockname()[1]
    token = 'token-%s' % uuid.uuid4().hex
    credentials = client.Credentials(token, url, url, url, True)

    assert worker.start(store, credentials,
                        conf.RunSettings(api_timeout=120), full=True)
    owner = lock.holder(store)
    assert owner, 'the lock is taken before the page returns'
    assert not worker.start(store, credentials, full=True)

    connection, _ = silent_cloud.accept()
    with connection:
        request = connection.recv(65536)
        assert ('X-Auth-Token: %s' % token).encode() in request
        pids = _children(worker.SWEEPER)
        assert len(pids) == 1
        pid = pids[0]
        assert os.getpriority(os.PRIO_PROCESS, pid) == worker.NICENESS
        if os.path.exists(worker.AUTOGROUP):
            with open('/proc/%d/autogroup' % pid) as f:
                assert f.read().split()[-2:] == [
                    'nice', str(worker.NICENESS)], 'its session too'
        for part in ('cmdline', 'environ'):
            with open('/proc/%d/%s' % (pid, part), 'rb') as f:
                assert token.encode() not in f.read()
        assert lock.holder(store) == owner
        os.kill(pid, signal.SIGKILL)
        _wait(lambda: lock.holder(store) is None)
    # It could not say why itself: the page says how it ended.
    failure = status.last_failure(store)
    assert (failure['kind'], failure['status'], failure['owner']) == (
        status.EXITED, -signal.SIGKILL, owner)
    assert worker.start(store, credentials, full=True), \
        'the next page may sweep again'
    connection, _ = silent_cloud.accept()
    connection.close()
    for pid in _children(worker.SWEEPER):
        os.kill(pid, signal.SIGKILL)
    _wait(lambda: lock.holder(store) is None)


def test_the_sweeper_imports_nothing_from_horizons_directory(
        tmp_path, silent_cloud, monkeypatch):
    """Whatever lies in the directory Horizon runs in (a ``json.py``, an
    ``orphan_dashboard`` of someone else's) is not imported by the process
    that reads the token."""
    horizon = tmp_path / 'horizon'
    (horizon / 'orphan_dashboard').mkdir(parents=True)
    imported = tmp_path / 'imported'
    plant = 'open(%r, "a").write(__name__ + " ")\n' % str(imported)
    (horizon / 'json.py').write_text(plant)
    (horizon / 'orphan_dashboard' / '__init__.py').write_text(plant)
    monkeypatch.chdir(horizon)
    store = stores.Store('test-cloud', cache=FileBasedCache(
        str(tmp_path / 'cache'), {}))
    url = 'http://127.0.0.1:%d' % silent_cloud.getsockname()[1]
    token = 'token-%s' % uuid.uuid4().hex
    assert worker.start(store, client.Credentials(token, url, url, url,
                                                  True), full=True)
    _wait(lambda: imported.exists() or lock.holder(store) is None or
          select.select([silent_cloud], [], [], 0)[0])
    assert not imported.exists(), 'imported: %s' % imported.read_text()
    connection, _ = silent_cloud.accept()
    with connection:
        assert ('X-Auth-Token: %s' % token).encode() in connection.recv(
            65536), 'the sweeper runs'
        (pid,) = _children(worker.SWEEPER)
        assert os.readlink('/proc/%d/cwd' % pid) == '/'
        os.kill(pid, signal.SIGKILL)
        _wait(lambda: lock.holder(store) is None)


def test_a_sweeper_that_cannot_start_leaves_no_lock(tmp_path, caplog):
    store = stores.Store('test-cloud', cache=FileBasedCache(
        str(tmp_path / 'cache'), {}))
    credentials = client.Credentials('t', 'http://p', 'http://n',
                                     'http://k', True)
    assert not worker.start(store, credentials,
                            python=str(tmp_path / 'no-python'))
    assert lock.holder(store) is None
    assert 'background sweep could not start' in caplog.text


@pytest.mark.parametrize('shared', [True, False])
def test_a_sweep_that_fails_says_why_and_frees_the_lock(tmp_path,
                                                        silent_cloud,
                                                        shared,
                                                        monkeypatch):
    """Nova or Placement past ``ORPHAN_AUDIT_API_TIMEOUT``: the pages say
    which request, and the next page may sweep at once, whether the sweep
    ran in a process of its own (sharing the cache: the test's settings
    read ``ORPHAN_TEST_CACHE_DIR``) or in a thread."""
    monkeypatch.setenv('ORPHAN_TEST_CACHE_DIR', str(tmp_path / 'cache'))
    cache = FileBasedCache(str(tmp_path / 'cache'), {}) if shared else \
        LocMemCache('failing-%s' % uuid.uuid4().hex, {})
    store = stores.Store('test-cloud', cache=cache)
    port = silent_cloud.getsockname()[1]
    url = 'http://127.0.0.1:%d' % port
    credentials = client.Credentials('t', url, url, url, True)
    assert worker.start(store, credentials,
                        conf.RunSettings(api_timeout=1), full=True)
    _wait(lambda: lock.holder(store) is None)
    failure = status.last_failure(store)
    assert failure['kind'] == status.TIMED_OUT, failure
    assert failure['url'].startswith(url + '/'), failure
    assert failure['timeout'] == 1
    assert time.time() - failure['at'] < 60
    assert status.of(store)['failure'] == failure
    assert worker.start(store, credentials, conf.RunSettings(api_timeout=1),
                        full=True), 'the next page may sweep again'
    _wait(lambda: lock.holder(store) is None)
