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

"""What the panel's pages show (use case): the audit snapshot in Django's
cache, the sweeps that renew it (in the background, or ``orphan-audit
refresh``) and our own writes shown at once."""

import datetime
import logging
import time
import typing

from orphan_dashboard.audit import classify
from orphan_dashboard.reading import progress as sweep_progress
from orphan_dashboard.reading import snapshots
from orphan_dashboard.reading import sweeps

LOG = logging.getLogger(__name__)
Progress = sweep_progress.Progress
"""What a front end implements to show a sweep's progress, on each of
:data:`PROGRESS_KINDS`."""
PROGRESS_KINDS = sweep_progress.KINDS
NO_PROGRESS = sweep_progress.NO_PROGRESS
TIMED_OUT, UNREACHABLE, ANSWERED, EXITED, FAILED = (
    sweeps.TIMED_OUT, sweeps.UNREACHABLE, sweeps.ANSWERED, sweeps.EXITED,
    sweeps.FAILED)
"""How a sweep failed (:func:`sweeps.failure`), for a front end to word."""


def store(cloud_key, settings):
    """The cloud's snapshot store, keeping what a sweep stored for as
    long as ``settings`` (:class:`conf.RunSettings`) full sweep interval
    asks."""
    return snapshots.Store(
        cloud_key, timeout=snapshots.lifetime(settings.full_sweep_interval))


def refresh(store_, clients, full, settings, progress=NO_PROGRESS):
    """Renew the stored snapshot now, under the sweep lock, with
    ``clients`` whose token was validated; None when another sweep runs.
    ``progress`` is closed when the sweep ends."""
    try:
        return sweeps.locked_sweep(store_, clients, full=full,
                                   settings=settings, progress=progress)
    finally:
        progress.close()


start_sweep = sweeps.start
"""Start a background sweep unless one runs (in any process)."""


def want_full(store_):
    """Ask for a full sweep (the operator's *Refresh*)."""
    store_.want(full=True)


class Shown(typing.NamedTuple):
    version: str
    min_age: int
    report: object
    """The report's summary, as the index shows it."""
    audited: object = None
    """The whole report, when this process audited the snapshot again."""


def _age(taken_at):
    return (datetime.datetime.now(datetime.timezone.utc) -
            taken_at).total_seconds()


def current(store_, shown, settings, sweep):
    """The :class:`Shown` of the last snapshot, or None before the first
    sweep of this cloud has finished.

    Pages never sweep: they render the report published with the last
    snapshot in the store and call ``sweep(full)`` (which starts one in
    the background) when it is ``settings.ttl`` seconds old, when one was
    asked for, or when there is none.  ``shown`` is the caller's memory, per
    process and cloud, of the version last shown: a page reads only the
    small state entry while the version does not change.  Repairs never
    use it: they re-read what they touch.
    """
    min_age = settings.min_age
    state = store_.state()
    if state['version'] is None or state['wanted'] or \
            _age(state['taken_at']) >= settings.ttl:
        sweep(state['wanted'] == 'full')
    if state['version'] is None:
        return None
    last = shown.get(store_.base)
    if last is None or (last.version, last.min_age) != (
            state['version'], min_age):
        if state['min_age'] != min_age:
            snapshot = store_.load_snapshot(state['version'])
            audited = snapshot and classify.audit(
                snapshot, min_age=min_age, stuck_after=settings.stuck_after)
            last = audited and Shown(state['version'], min_age,
                                     audited.summary(), audited)
        else:
            summary = store_.load_report(state['version'])
            last = summary and Shown(state['version'], min_age, summary)
        if last is None:        # evicted from the cache: sweep again
            sweep(True)
            return None
        shown[store_.base] = last
    return last


def provider_tree(store_, shown, provider_uuid, sweep):
    """One provider tree of the ``shown`` report, with every finding
    (``ok`` included), or None where it has no such provider."""
    if shown is None or shown.report.provider(provider_uuid) is None:
        return None
    if shown.audited is not None:
        return shown.audited.provider(provider_uuid)
    tree = store_.load_tree(shown.version, provider_uuid)
    if tree is None:            # evicted from the cache: sweep again
        sweep(True)
    return tree


def sweeping(store_):
    """Whether a sweep of this cloud runs, in any process."""
    return store_.sweeper() is not None


def sweep_state(store_, sweep=None):
    """What the page's progress bar shows: the snapshot's version and age,
    the running sweep's progress, if one runs, and why the last sweep
    failed, if it did (:func:`sweeps.failure`; kept until one
    publishes).

    A sweep asked for while another ran (the operator's *Refresh*) is
    started here with ``sweep(full)`` once none runs: the page it was
    asked from polls this, so it follows the other without a reload, and
    the state returned already shows it."""
    state = store_.state()
    running = sweeping(store_)
    if sweep is not None and state['wanted'] and not running:
        running = bool(sweep(state['wanted'] == 'full')) or sweeping(store_)
    progress = (store_.progress() if running else None) or {
        'full': None, 'started': time.time(), 'done': {}, 'totals': {}}
    return {
        'version': state['version'],
        'age': int(_age(state['taken_at'])) if state['taken_at'] else None,
        'sweeping': running,
        'failure': store_.failure(),
        'progress': running and dict(bar({
            kind: (progress['done'].get(kind, 0),
                   progress['totals'].get(kind))
            for kind in PROGRESS_KINDS}), full=progress['full'],
            elapsed=int(time.time() - progress['started'])) or None,
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


def names(store_, known):
    """``{'projects': {id: name}, 'users': {id: name}}`` as the last sweep
    read them from Keystone; ``known`` is the caller's memory of them, per
    process and cloud, renewed when a sweep stored new ones."""
    version = store_.state().get('names')
    cached = known.get(store_.base)
    if cached is None or cached[0] != version:
        cached = known[store_.base] = (version, store_.names())
    return cached[1]


def note_written(store_, clients, consumers, providers_changed, settings):
    """After our own writes: the stored snapshot re-reads the consumers at
    once (a refresh is asked for when providers changed).  Best effort:
    a failure leaves them touched for the next sweep."""
    if providers_changed:
        store_.want()
    consumers = {c for c in consumers if c}
    if not consumers:
        return
    try:
        snapshots.patch(store_, clients, consumers, settings)
    except Exception:
        LOG.exception('re-reading written consumers failed')
        store_.touch(consumers)
