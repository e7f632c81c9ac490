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

"""Running one sweep (I/O): the sweep that renews the snapshot the cache
holds (:mod:`orphan_dashboard.reading.snapshots`), under its lock, from
cron or in the background.

A background sweep started by a page runs in a process of its own
(:mod:`orphan_dashboard.reading.sweeper`) when the cache is shared: parsing
thousands of servers holds the interpreter's lock for long stretches,
which in a thread would stall every page its Horizon process serves
meanwhile.  With a process-local cache it can only be a thread.
"""

import concurrent.futures
import dataclasses
import json
import logging
import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import client
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import refresh as reconsidering
from orphan_dashboard import conf
from orphan_dashboard.reading import collect
from orphan_dashboard.reading.progress import NO_PROGRESS
from orphan_dashboard.reading.progress import Progress
from orphan_dashboard.reading.progress import Tee
from orphan_dashboard.reading import refresh

LOG = logging.getLogger(__name__)
PROGRESS_EVERY = 0.5
SWEEPER_THREAD = 'orphan-sweeper-'
"""The name, before its pid, of the thread that waits for a sweeper process."""


TIMED_OUT = 'timeout'
UNREACHABLE = 'unreachable'
ANSWERED = 'answered'
EXITED = 'exited'
FAILED = 'error'
"""How a sweep failed (:func:`failure`): a request past the API timeout,
a service that could not be reached, one that answered an error, a
sweeper process that died, anything else."""
DETAIL = 300
"""Characters of an error's own text kept for the page."""
_URL = re.compile(r'https?://[^\s,]+[^\s,.:]')


def _failed(owner, api_timeout, kind, url=None, status=None, detail=''):
    return {'at': time.time(), 'owner': owner, 'kind': kind, 'url': url,
            'status': status, 'timeout': api_timeout, 'detail': detail}


def failure(exc, owner, api_timeout):
    """Why ``owner``'s sweep failed with ``exc``, as the pages word it
    (see ``labels.sweep_failure``): when, how (:data:`FAILED` and its
    kin), the request that failed where known, its status, the timeout
    in force and the error's own text."""
    kind, status = FAILED, None
    url = getattr(exc, 'url', None)
    if isinstance(exc, ks_exc.ConnectTimeout):
        kind = TIMED_OUT
    elif isinstance(exc, ks_exc.ConnectionError):
        kind = UNREACHABLE
    elif isinstance(exc, ks_exc.HttpError):
        kind, status = ANSWERED, exc.http_status
    if url is None:
        # keystoneauth names the URL only in its message.
        found = _URL.search(' '.join(map(str, (exc,) + exc.args)))
        url = found and found.group(0)
    return _failed(owner, api_timeout, kind, url, status,
                   (str(exc) or type(exc).__name__)[:DETAIL])


def exited(owner, api_timeout, code):
    """A sweeper process that ended with ``code`` before it could say why
    (killed, out of memory)."""
    return _failed(owner, api_timeout, EXITED, status=code)


def owner_id():
    """Who sweeps: host, process and a token, for the lock and the page."""
    return '%s:%d:%s' % (socket.gethostname(), os.getpid(),
                         uuid.uuid4().hex[:8])


class CacheProgress(Progress):
    """A sweep's progress in the store for the pages to show (at most
    twice a second).  The last
    snapshot's ``counts`` stand for the totals until the sweep knows
    better (a full sweep reads no old snapshot).

    A throttled report is not dropped: it is written when the throttle
    allows (a trailing write), or reads done in one burst, such as a
    small cloud's providers, would show as nothing read until the sweep
    ends.  :meth:`close` stops it once the sweep is over."""

    def __init__(self, store, owner, full, counts=None):
        self.store, self.owner = store, owner
        self.lock = threading.Lock()
        self.state = {'owner': owner, 'full': full,
                      'started': time.time(), 'done': {},
                      'totals': dict(counts or {})}
        self.written = 0.0
        self.trailing = None
        self.closed = False
        self.flush(force=True)

    def total(self, kind, count):
        with self.lock:
            self.state['totals'][kind] = count
        self.flush()

    def advance(self, kind, count=1):
        with self.lock:
            done = self.state['done']
            done[kind] = done.get(kind, 0) + count
        self.flush()

    def flush(self, force=False):
        with self.lock:
            if self.closed:
                return
            wait = self.written + PROGRESS_EVERY - time.monotonic()
            if not force and wait > 0:
                if self.trailing is None:
                    self.trailing = threading.Timer(wait, self._trail)
                    self.trailing.daemon = True
                    self.trailing.start()
                return
            self.written = time.monotonic()
            self.store.set_progress(dict(
                self.state, done=dict(self.state['done']),
                totals=dict(self.state['totals'])))

    def _trail(self):
        with self.lock:
            self.trailing = None
        self.flush(force=True)

    def close(self):
        with self.lock:
            self.closed = True
            if self.trailing is not None:
                self.trailing.cancel()
                self.trailing = None


def sweep(store, clients, settings=conf.RunSettings(), full=False,
          owner=None, progress=NO_PROGRESS):
    """Renew the stored snapshot: a refresh of the current one, or a full
    sweep when asked or due, as ``settings`` (:class:`conf.RunSettings`)
    say.  The caller holds the lock (see :func:`locked_sweep`).  Its
    progress goes to the store (for the pages) and to ``progress``.
    Consumers written during the sweep are re-read before it is
    published.  A refresh's report takes the last report's findings on
    the consumers nothing has changed for (:func:`.audit.refresh.reusable`),
    judged at the same minimum age: they are loaded from the store while
    the refresh reads the cloud."""
    state = store.state()
    old = None if full else store.load_snapshot(state['version'])
    due = full or refresh.full_sweep_due(old, settings.full_sweep_interval)
    touched = frozenset(state['touched'])
    shown = CacheProgress(store, owner or owner_id(), due, state['counts'])
    with concurrent.futures.ThreadPoolExecutor(1) as loader:
        # The last findings load while the refresh waits for the cloud.
        last = None if due or state['min_age'] != settings.min_age else \
            loader.submit(store.load_findings, state['version'])
        try:
            snapshot = refresh.snapshot(
                clients.placement, clients.nova, cached=old, full=full,
                full_sweep_interval=settings.full_sweep_interval,
                concurrency=settings.concurrency, touched=touched,
                network_client=clients.network,
                progress=Tee(shown, progress))
        finally:
            shown.close()
        late = frozenset(store.state()['touched']) - touched
        if late:
            refresh.reread_consumers(clients.placement, snapshot, late,
                                     settings.concurrency)
        known = last and reconsidering.reusable(old, snapshot, last.result)
    store.save(snapshot, classify.audit(snapshot, min_age=settings.min_age,
                                        known=known,
                                        stuck_after=settings.stuck_after),
               settings.min_age, consumed=touched | late)
    store.note_failure(None)
    store.save_names(dict(collect.owner_names(clients.identity),
                          servers=server_names(snapshot)))
    return snapshot


def server_names(snapshot):
    """``{uuid: name}`` of the snapshot's servers: History names the
    consumers it lists by them (a page never waits for Nova)."""
    return {uuid: server.name for uuid, server in snapshot.servers.items()
            if server.name}


def locked_sweep(store, clients, owner=None, **kwargs):
    """:func:`sweep` under the lock (taken here unless ``owner`` holds it
    already); None when another sweep runs."""
    if owner is None:
        owner = owner_id()
        if not store.acquire(owner):
            return None
    try:
        store.count_sweep()
        state = store.state()
        kwargs['full'] = kwargs.get('full') or state['wanted'] == 'full'
        state['wanted'] = None
        store._set_state(state)
        with store.held(owner):
            return sweep(store, clients, owner=owner, **kwargs)
    except Exception as exc:
        settings = kwargs.get('settings') or conf.RunSettings()
        store.note_failure(failure(exc, owner, settings.api_timeout))
        raise
    finally:
        store.set_progress(None)
        store.release(owner)


def start(store, credentials, settings=conf.RunSettings(), python=None,
          full=False):
    """Sweep in the background unless one runs somewhere already; True if
    this call started one (a failure to start is logged: the page goes on
    with the last snapshot).  The lock is taken before this returns, so the
    page already shows the sweep.  The sweep acts with ``credentials``
    (:class:`client.Credentials`) and ``settings`` (its API timeout
    included), in a process of its own run by ``python`` when the cache is
    shared, else in a thread."""
    owner = owner_id()
    if not store.acquire(owner):
        return False
    job = {'cloud': store.cloud_key, 'timeout': store.timeout,
           'owner': owner, 'credentials': credentials._asdict(),
           'settings': dataclasses.asdict(settings), 'full': full}
    try:
        if store.shared:
            _spawn(store, job, python or sys.executable)
        else:
            threading.Thread(target=_logged, args=(run, store, job),
                             name='orphan-sweep-%s' % owner,
                             daemon=True).start()
    except Exception:
        LOG.exception('background sweep could not start')
        store.release(owner)
        return False
    return True


def run(store, job):
    """The sweep :func:`start` handed over, under the lock it took: the
    body of the sweep thread and of the sweeper process."""
    settings = conf.RunSettings(**job['settings'])
    try:
        clients = client.for_credentials(
            client.Credentials(**job['credentials']), settings.api_timeout,
            settings.nova_listing_timeout, settings.nova_cell_timeout)
        client.validate_token(clients)
    except Exception as exc:
        store.note_failure(failure(exc, job['owner'], settings.api_timeout))
        store.release(job['owner'])
        raise
    return locked_sweep(store, clients, owner=job['owner'],
                        settings=settings, full=job['full'])


def _logged(func, *args):
    try:
        func(*args)
    except Exception:
        LOG.exception('background sweep failed')


SWEEPER = ('import runpy, sys; sys.path += sys.argv[1:]; '
           'runpy.run_module("orphan_dashboard.reading.sweeper", '
           'run_name="__main__")')
"""The sweeper's module run as ``-m`` would, by an isolated Python (``-I``:
no current directory, ``PYTHON*`` variable or user site on its path) that
looks in this process's import path only after its own."""


def _spawn(store, job, python):
    """:mod:`orphan_dashboard.reading.sweeper` with this process's settings
    module, in a session of its own (a Horizon worker restarted
    meanwhile does not take it down); the job, token included, goes
    through its stdin, never its command line or environment.  It runs
    isolated, from ``/``: a ``json.py`` in Horizon's directory must not
    read the token, and the interpreter's own modules come before this
    process's import path, which it needs for the settings module."""
    from django.conf import settings

    env = dict(os.environ, DJANGO_SETTINGS_MODULE=settings.SETTINGS_MODULE)
    path = [os.path.abspath(p) for p in sys.path if p]
    proc = subprocess.Popen(
        [python, '-I', '-c', SWEEPER] + path, stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, cwd='/', env=env, close_fds=True,
        start_new_session=True)

    def hand_over():
        proc.communicate(json.dumps(job).encode())
        if proc.returncode:
            LOG.error('background sweep %s exited with %s', job['owner'],
                      proc.returncode)
            said = store.failure()
            if not said or said['owner'] != job['owner']:
                # Killed, or out of memory: it could not say why itself.
                store.note_failure(exited(
                    job['owner'], job['settings'].get('api_timeout'),
                    proc.returncode))
            store.release(job['owner'])

    threading.Thread(target=_logged, args=(hand_over,),
                     name=SWEEPER_THREAD + str(proc.pid),
                     daemon=True).start()
