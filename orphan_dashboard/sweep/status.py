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

"""What the pages and the command line are told of a cloud's sweeps
(I/O): how far the running one has read, how many ran, and why the last
one failed, kept in its :class:`~.store.Store`'s cache."""

import datetime
import re
import threading
import time

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.reading.progress import KINDS
from orphan_dashboard.reading.progress import Progress
from orphan_dashboard.sweep import lock

PROGRESS_EVERY = 0.5
"""Seconds between two writes of a sweep's progress to the cache."""

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


def note_failure(store, failure):
    """Why the last sweep failed (:func:`failure`), kept for the pages
    until a sweep publishes; None: it did not fail."""
    if failure is None:
        store.cache.delete(store.key('failure'))
    else:
        store.cache.set(store.key('failure'), failure, store.timeout)


def last_failure(store):
    return store.cache.get(store.key('failure'))


def count_sweep(store):
    key = store.key('sweeps')
    if not store.cache.add(key, 1, None):
        store.cache.incr(key)


def sweeps(store):
    """How many sweeps of this cloud have started, in any process."""
    return store.cache.get(store.key('sweeps')) or 0


def progress(store):
    return store.cache.get(store.key('progress'))


def set_progress(store, progress):
    store.cache.set(store.key('progress'), progress, lock.TTL)


class CacheProgress(Progress):
    """A sweep's progress in the store for the pages to show (at most
    twice a second).  The last snapshot's ``counts`` stand for the
    totals until the sweep knows better (a full sweep reads no old
    snapshot).

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
            set_progress(self.store, dict(
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


def age(taken_at):
    """Seconds since ``taken_at``."""
    return (datetime.datetime.now(datetime.timezone.utc) -
            taken_at).total_seconds()


def of(store):
    """What the page's progress bar shows: the snapshot's version and age,
    the running sweep's progress, if one runs, why the last sweep failed,
    if it did (kept until one publishes), and ``wanted``, the sweep a
    *Refresh* asked for behind another (None, 'refresh' or 'full'),
    which the front end starts once none runs."""
    state = store.state()
    running = lock.sweeping(store)
    found = (progress(store) if running else None) or {
        'full': None, 'started': time.time(), 'done': {}, 'totals': {}}
    return {
        'version': state['version'],
        'age': int(age(state['taken_at'])) if state['taken_at'] else None,
        'sweeping': running,
        'wanted': None if running else state['wanted'],
        'failure': last_failure(store),
        'progress': running and dict(bar({
            kind: (found['done'].get(kind, 0), found['totals'].get(kind))
            for kind in KINDS}), full=found['full'],
            elapsed=int(time.time() - found['started'])) or None,
    }


def bar(counts):
    """What the bar draws and its text says, from the same numbers:
    ``read`` per kind ``[done, total]`` (a total estimated from the last
    snapshot grows to what was read beyond it), their sums ``done`` and
    ``total`` and the ``percent`` the bar is filled to; ``total`` and
    ``percent`` are None while a kind's total is unknown."""
    read = {kind: [done, None if total is None else max(total, done)]
            for kind, (done, total) in counts.items()}
    done = sum(d for d, _t in read.values())
    total = (None if any(t is None for _d, t in read.values())
             else sum(t for _d, t in read.values()))
    return {'read': read, 'done': done, 'total': total,
            'percent': int(100 * done / total) if total else None}
