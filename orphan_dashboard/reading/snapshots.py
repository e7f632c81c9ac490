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

"""The audit snapshot and its report in Django's cache, shared by every
Horizon process and by ``orphan-audit refresh``, and the sweep that
renews them: at most one at a time across all of them.

Pages only ever read what is stored here; sweeps run in the background
(or from cron) and publish a new version when done.  Works with any Django
cache; only a shared one (memcached, redis) shares snapshots and the sweep
lock between processes.  Blobs are compressed and cut in chunks below
memcached's default 1 MB item limit.

A background sweep started by a page runs in a process of its own
(:mod:`orphan_dashboard.reading.sweeper`) when the cache is shared: parsing
thousands of servers holds the interpreter's lock for long stretches,
which in a thread would stall every page its Horizon process serves
meanwhile.  With a process-local cache it can only be a thread.
"""

import dataclasses
import datetime
import hashlib
import json
import logging
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
import uuid
import zlib

from django.core.cache.backends import dummy
from django.core.cache.backends import locmem
from django.core.cache import cache as default_cache
from django.core.cache import caches
from django.core.cache import DEFAULT_CACHE_ALIAS

from orphan_dashboard.api import client
from orphan_dashboard.audit import capacity
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model
from orphan_dashboard.audit import reasons
from orphan_dashboard import conf
from orphan_dashboard.reading import collect

LOG = logging.getLogger(__name__)
CHUNK = 900 * 1024
LOCK_TTL = 120
"""Seconds a sweep's lock outlives its last sign of life: a killed worker
blocks sweeps no longer than this."""
PROGRESS_EVERY = 0.5
FORMAT = 1
"""Bump when what the cache holds changes in a way :func:`fingerprint`
cannot see (the fields of the engine's classes it sees itself)."""


def fingerprint(modules):
    """The shape of every dataclass of ``modules``: its module, name, and
    fields with their types."""
    shapes = []
    for module in modules:
        for name, value in sorted(vars(module).items()):
            if isinstance(value, type) and dataclasses.is_dataclass(value):
                shapes.append('%s.%s(%s)' % (
                    module.__name__, name, ', '.join(
                        '%s: %s' % (f.name, f.type)
                        for f in dataclasses.fields(value))))
    return hashlib.sha256('\n'.join(shapes).encode()).hexdigest()[:12]


FORMAT_VERSION = '%d.%s' % (FORMAT, fingerprint((model, reasons, capacity)))
"""Part of every cache key: after an upgrade that changes what a snapshot
or a report pickles, a Horizon never unpickles an older version's classes
(it sweeps again instead)."""


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def owner_id():
    """Who sweeps: host, process and a token, for the lock and the page."""
    return '%s:%d:%s' % (socket.gethostname(), os.getpid(),
                         uuid.uuid4().hex[:8])


def lifetime(full_sweep_interval):
    """Seconds the cache keeps what a sweep stored: two full-sweep
    intervals, so a late sweep never leaves the pages with nothing."""
    return 2 * full_sweep_interval


class Store:
    """One cloud's entries in the cache (see the module docstring)."""

    def __init__(self, cloud_key, cache=None, timeout=None):
        self.cloud_key = cloud_key
        self.cache = cache or default_cache
        cloud = hashlib.sha256(cloud_key.encode()).hexdigest()[:20]
        self.base = 'orphan_dashboard:%s:%s' % (FORMAT_VERSION, cloud)
        self.timeout = lifetime(conf.FULL_SWEEP.default) if timeout is None \
            else timeout

    @property
    def shared(self):
        """Whether other processes see this cache."""
        cache = caches[DEFAULT_CACHE_ALIAS] if self.cache is default_cache \
            else self.cache
        return not isinstance(cache, (locmem.LocMemCache, dummy.DummyCache))

    def _key(self, *parts):
        return ':'.join((self.base,) + tuple(str(p) for p in parts))

    # -- what is current --------------------------------------------------

    def state(self):
        """``version`` (None: nothing stored yet), ``taken_at``,
        ``min_age`` of its report, ``counts``, ``wanted`` (a sweep asked
        for: None, 'refresh' or 'full'), ``touched`` (consumers written
        through us since the snapshot was taken)."""
        return self.cache.get(self._key('state')) or {
            'version': None, 'taken_at': None, 'min_age': None, 'counts': {},
            'wanted': None, 'touched': frozenset()}

    def _set_state(self, state):
        self.cache.set(self._key('state'), state, self.timeout)

    def want(self, full=False):
        """Ask for a sweep (a full one wins over a refresh)."""
        state = self.state()
        if full or state['wanted'] != 'full':
            state['wanted'] = 'full' if full else 'refresh'
        self._set_state(state)

    def touch(self, consumers):
        """Consumers written through us: re-read by the next sweep."""
        state = self.state()
        state['touched'] = frozenset(state['touched']) | frozenset(consumers)
        self._set_state(state)

    # -- blobs ------------------------------------------------------------

    def _put(self, blobs):
        """Store ``{key parts: value}`` in one round trip, each value
        pickled, compressed and cut in chunks."""
        entries = {}
        for parts, value in blobs.items():
            data = zlib.compress(pickle.dumps(value, protocol=5), 1)
            chunks = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)]
            entries.update((self._key(*parts, i), chunk)
                           for i, chunk in enumerate(chunks))
            entries[self._key(*parts)] = len(chunks)
        self.cache.set_many(entries, self.timeout)

    def _get(self, *parts):
        count = self.cache.get(self._key(*parts))
        if count is None:
            return None
        keys = [self._key(*parts, i) for i in range(count)]
        chunks = self.cache.get_many(keys)
        if len(chunks) != count:
            return None
        return pickle.loads(zlib.decompress(b''.join(chunks[k] for k in keys)))

    def load_snapshot(self, version):
        return self._get('snapshot', version) if version else None

    def load_report(self, version):
        """The report's :meth:`~audit.model.Report.summary`."""
        return self._get('report', version) if version else None

    def load_capacity(self, version):
        """The :class:`~audit.capacity.Capacity` of the report (None where
        the snapshot has no inventories)."""
        return self._get('capacity', version) if version else None

    def load_tree(self, version, provider_uuid):
        """One provider tree's :class:`~audit.model.ProviderReport`, every
        finding included."""
        return self._get('tree', version, provider_uuid) if version else None

    def save(self, snapshot, report, min_age, consumed=frozenset()):
        """Publish a new version; ``consumed`` are the touched consumers
        this snapshot has re-read (others stay touched).  The report is
        stored as its summary and one entry per provider tree, so that a
        page loads only what it shows."""
        version = uuid.uuid4().hex
        blobs = {('snapshot', version): snapshot,
                 ('report', version): report.summary(),
                 ('capacity', version): capacity.assess(snapshot, report)}
        blobs.update((('tree', version, p.provider.uuid), p)
                     for p in report.providers)
        self._put(blobs)
        state = self.state()
        state.update(
            version=version, taken_at=snapshot.taken_at, min_age=min_age,
            counts={'servers': len(snapshot.servers),
                    'migrations': len(snapshot.migrations),
                    'providers': len(snapshot.providers)},
            touched=frozenset(state['touched']) - frozenset(consumed))
        self._set_state(state)
        return version

    def save_names(self, names):
        """Publish Keystone's project and user names and Nova's server
        names (a sweep reads them)."""
        version = uuid.uuid4().hex
        self._put({('names', version): names})
        state = self.state()
        state['names'] = version
        self._set_state(state)

    def names(self):
        """``{'projects', 'users', 'servers'}``, each ``{id: name}``,
        empty until a sweep has read them."""
        version = self.state().get('names')
        return dict({'projects': {}, 'users': {}, 'servers': {}},
                    **(version and self._get('names', version)) or {})

    # -- one sweep at a time ----------------------------------------------

    def acquire(self, owner):
        """Take the sweep lock; False if another sweep holds it."""
        return self.cache.add(self._key('lock'), owner, LOCK_TTL)

    def heartbeat(self, owner):
        if self.cache.get(self._key('lock')) == owner:
            self.cache.touch(self._key('lock'), LOCK_TTL)

    def release(self, owner):
        if self.cache.get(self._key('lock')) == owner:
            self.cache.delete(self._key('lock'))

    def sweeper(self):
        """Who holds the sweep lock, or None."""
        return self.cache.get(self._key('lock'))

    def count_sweep(self):
        key = self._key('sweeps')
        if not self.cache.add(key, 1, None):
            self.cache.incr(key)

    def sweeps(self):
        return self.cache.get(self._key('sweeps')) or 0

    def progress(self):
        return self.cache.get(self._key('progress'))

    def set_progress(self, progress):
        self.cache.set(self._key('progress'), progress, LOCK_TTL)


class CacheProgress(collect.Progress):
    """A sweep's progress in the store for the pages to show (at most
    twice a second), which also keeps the sweep's lock alive.  The last
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
            self.store.heartbeat(self.owner)

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


def sweep(store, clients, full=False, min_age=classify.DEFAULT_MIN_AGE,
          full_sweep_interval=conf.FULL_SWEEP.default,
          concurrency=collect.DEFAULT_CONCURRENCY,
          owner=None, progress=collect.NO_PROGRESS):
    """Renew the stored snapshot: a refresh of the current one, or a full
    sweep when asked or due.  The caller holds the lock (see
    :func:`locked_sweep`).  Its progress goes to the store (for the pages)
    and to ``progress``.  Consumers written during the sweep are re-read
    before it is published."""
    state = store.state()
    old = None if full else store.load_snapshot(state['version'])
    touched = frozenset(state['touched'])
    shown = CacheProgress(store, owner or owner_id(), full or old is None,
                          state['counts'])
    try:
        snapshot = collect.snapshot(
            clients.placement, clients.nova, cached=old, full=full,
            full_sweep_interval=full_sweep_interval, concurrency=concurrency,
            touched=touched, network_client=clients.network,
            image_client=clients.image,
            progress=collect.Tee(shown, progress))
    finally:
        shown.close()
    late = frozenset(store.state()['touched']) - touched
    if late:
        collect.reread_consumers(clients.placement, snapshot, late,
                                 concurrency)
    store.save(snapshot, classify.audit(snapshot, min_age=min_age), min_age,
               consumed=touched | late)
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
        return sweep(store, clients, owner=owner, **kwargs)
    finally:
        store.set_progress(None)
        store.release(owner)


def start(store, credentials, api_timeout=client.DEFAULT_TIMEOUT,
          python=None, **kwargs):
    """Sweep in the background unless one runs somewhere already; True if
    this call started one (a failure to start is logged: the page goes on
    with the last snapshot).  The lock is taken before this returns, so the
    page already shows the sweep.  ``kwargs`` are :func:`sweep`'s; the
    sweep acts with ``credentials`` (:class:`client.Credentials`), in a
    process of its own run by ``python`` when the cache is shared, else in
    a thread."""
    owner = owner_id()
    if not store.acquire(owner):
        return False
    job = {'cloud': store.cloud_key, 'timeout': store.timeout,
           'owner': owner, 'credentials': credentials._asdict(),
           'api_timeout': api_timeout, 'sweep': kwargs}
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
    clients = client.for_credentials(
        client.Credentials(**job['credentials']), job['api_timeout'])
    client.validate_token(clients)
    return locked_sweep(store, clients, owner=job['owner'], **job['sweep'])


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
            store.release(job['owner'])

    threading.Thread(target=_logged, args=(hand_over,),
                     name='orphan-sweeper-%d' % proc.pid,
                     daemon=True).start()


def patch(store, clients, consumers, min_age,
          concurrency=collect.DEFAULT_CONCURRENCY):
    """After our own writes: the stored snapshot with ``consumers`` read
    again and re-audited, so the next page shows them repaired at once;
    they stay touched for the next sweep's provider re-reads."""
    store.touch(consumers)
    state = store.state()
    snapshot = store.load_snapshot(state['version'])
    if snapshot is None:
        return
    collect.reread_consumers(clients.placement, snapshot, consumers,
                             concurrency)
    store.save(snapshot, classify.audit(snapshot, min_age=min_age), min_age)
