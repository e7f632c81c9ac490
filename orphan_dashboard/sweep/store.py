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

"""The cache entries of one cloud's sweeps (I/O): the audit snapshots and
their reports in Django's cache, shared by every Horizon process and by
``orphan-audit refresh``, and the small state entry a page reads first.

Pages only ever read what is stored here; sweeps publish a new version
when done.  Works with any Django cache; only a shared one (memcached,
redis) shares snapshots, and the sweep lock (:mod:`.lock`), between
processes.  Blobs are compressed and cut in chunks below memcached's
default 1 MB item limit.
"""

import contextlib
import dataclasses
import datetime
import gc
import hashlib
import pickle
import uuid
import zlib

from django.core.cache.backends import dummy
from django.core.cache.backends import locmem
from django.core.cache import cache as default_cache
from django.core.cache import caches
from django.core.cache import DEFAULT_CACHE_ALIAS

from orphan_dashboard.audit import capacity
from orphan_dashboard.audit import model
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit import report as assembly
from orphan_dashboard import conf

CHUNK = 900 * 1024
FORMAT = 3
"""Bump when what the cache holds changes in a way :func:`fingerprint`
cannot see (the fields of the engine's classes it sees itself).  2: the
report's classes keep their fields in slots, pickled as tuples.  3: a
server's image properties are Nova's boot-time copy, not Glance's."""


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


FORMAT_VERSION = '%d.%s' % (FORMAT, fingerprint(
    (model, assembly, reasons, capacity)))
"""Part of every cache key: after an upgrade that changes what a snapshot
or a report pickles, a Horizon never unpickles an older version's classes
(it sweeps again instead)."""


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off while a page loads what a
    sweep stored: every object loaded survives, and a collector left on
    walks the whole process again and again while they are made.  As it
    was when done (another thread may have paused it too)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def lifetime(full_sweep_interval):
    """Seconds the cache keeps what a sweep stored: two full-sweep
    intervals, so a late sweep never leaves the pages with nothing."""
    return 2 * full_sweep_interval


def for_cloud(cloud_key, settings):
    """The cloud's store, keeping what a sweep stored for as long as
    ``settings`` (:class:`conf.RunSettings`) full sweep interval asks."""
    return Store(cloud_key, timeout=lifetime(settings.full_sweep_interval))


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

    def key(self, *parts):
        return ':'.join((self.base,) + tuple(str(p) for p in parts))

    # -- what is current --------------------------------------------------

    def state(self):
        """``version`` (None: nothing stored yet), ``taken_at``,
        ``min_age`` of its report, ``counts``, ``wanted`` (a sweep asked
        for: None, 'refresh' or 'full'), ``touched`` (consumers written
        through us since the snapshot was taken)."""
        return self.cache.get(self.key('state')) or {
            'version': None, 'taken_at': None, 'min_age': None, 'counts': {},
            'wanted': None, 'touched': frozenset()}

    def set_state(self, state):
        self.cache.set(self.key('state'), state, self.timeout)

    def want(self, full=False):
        """Ask for a sweep (a full one wins over a refresh)."""
        state = self.state()
        if full or state['wanted'] != 'full':
            state['wanted'] = 'full' if full else 'refresh'
        self.set_state(state)

    def touch(self, consumers):
        """Consumers written through us: re-read by the next sweep."""
        state = self.state()
        state['touched'] = frozenset(state['touched']) | frozenset(consumers)
        self.set_state(state)

    # -- blobs ------------------------------------------------------------

    def _put(self, blobs):
        """Store ``{key parts: value}`` in one round trip, each value
        pickled, compressed and cut in chunks."""
        entries = {}
        for parts, value in blobs.items():
            data = zlib.compress(pickle.dumps(value, protocol=5), 1)
            chunks = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)]
            entries.update((self.key(*parts, i), chunk)
                           for i, chunk in enumerate(chunks))
            entries[self.key(*parts)] = len(chunks)
        self.cache.set_many(entries, self.timeout)

    def _get(self, *parts):
        return self._get_many([parts])[0]

    def _get_many(self, keys):
        """The values stored under each of ``keys`` (key parts), in two
        round trips; None for each the cache lost a chunk of."""
        heads = [self.key(*parts) for parts in keys]
        counts = self.cache.get_many(heads)
        chunked = [[self.key(*parts, i) for i in range(counts.get(head, 0))]
                   for parts, head in zip(keys, heads)]
        chunks = self.cache.get_many([k for each in chunked for k in each])
        values = []
        with _collector_paused():
            for head, each in zip(heads, chunked):
                values.append(pickle.loads(zlib.decompress(
                    b''.join(chunks[k] for k in each)))
                    if head in counts and all(k in chunks for k in each)
                    else None)
        return values

    def load_snapshot(self, version):
        return self._get('snapshot', version) if version else None

    def load_report(self, version):
        """The report's :meth:`~audit.report.Report.summary`."""
        return self._get('report', version) if version else None

    def load_capacity(self, version):
        """The :class:`~audit.capacity.Capacity` of the report (None where
        the snapshot has no inventories)."""
        return self._get('capacity', version) if version else None

    def load_tree(self, version, provider_uuid):
        """One provider tree's :class:`~audit.report.ProviderReport`, every
        finding included."""
        return self._get('tree', version, provider_uuid) if version else None

    def load_findings(self, version):
        """Every finding of the version's report, ``ok`` included (each
        tree's), or None where the cache lost any tree."""
        summary = self.load_report(version)
        trees = summary and self._get_many([
            ('tree', version, p.provider.uuid) for p in summary.providers])
        if not summary or None in trees:
            return None
        return [finding for tree in trees for finding in tree.findings]

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
        self.set_state(state)
        return version

    def save_names(self, names):
        """Publish Keystone's project and user names and Nova's server
        names (a sweep reads them)."""
        version = uuid.uuid4().hex
        self._put({('names', version): names})
        state = self.state()
        state['names'] = version
        self.set_state(state)

    def names(self):
        """``{'projects', 'users', 'servers'}``, each ``{id: name}``,
        empty until a sweep has read them."""
        version = self.state().get('names')
        return dict({'projects': {}, 'users': {}, 'servers': {}},
                    **(version and self._get('names', version)) or {})
