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

"""The sweep wing: the audit snapshot in Django's cache that the panel's
pages show, the sweeps that renew it (in the background, or
``orphan-audit refresh``) and our own writes shown at once.

A front end asks :func:`current` what is stored and which sweep it is
due for; it starts that one itself (:func:`.worker.start`): nothing
here calls back up.  :mod:`.store` holds the cache entries, :mod:`.lock`
the one sweep at a time, :mod:`.status` what the pages are told of the
sweeps, and :mod:`.worker` runs one.
"""

import copy
import logging
import typing

from orphan_dashboard.audit import classify
from orphan_dashboard.reading import refresh as rereading
from orphan_dashboard.sweep import status
from orphan_dashboard.sweep import worker

LOG = logging.getLogger(__name__)


def refresh(store, clients, full, settings, progress):
    """Renew the stored snapshot now, under the sweep lock, with
    ``clients`` whose token was validated; None when another sweep runs.
    ``progress`` is closed when the sweep ends."""
    try:
        return worker.locked_sweep(store, clients, full=full,
                                   settings=settings, progress=progress)
    finally:
        progress.close()


class Shown(typing.NamedTuple):
    version: str
    min_age: int
    report: object
    """The report's summary, as the index shows it."""
    audited: object = None
    """The whole report, when this process audited the snapshot again."""


class Current(typing.NamedTuple):
    """What :func:`current` found: the :class:`Shown` of the last snapshot
    (None before the first sweep of this cloud has finished, or when the
    cache lost it), and ``due``, the sweep the caller is to start: None,
    'refresh' or 'full'."""
    shown: typing.Optional[Shown]
    due: typing.Optional[str]


def current(store, shown, settings):
    """The :class:`Current` of the last snapshot.

    Pages never sweep: they render the report published with the last
    snapshot in the store, and start a sweep in the background when it is
    due: when the snapshot is ``settings.ttl`` seconds old, when one was
    asked for, when there is none, or when the cache lost it (then a full
    one).  ``shown`` is the caller's memory, per process and cloud, of the
    version last shown: a page reads only the small state entry while the
    version does not change.  Repairs never use it: they re-read what they
    touch.
    """
    min_age = settings.min_age
    state = store.state()
    due = None
    if state['version'] is None or state['wanted'] or \
            status.age(state['taken_at']) >= settings.ttl:
        due = 'full' if state['wanted'] == 'full' else 'refresh'
    if state['version'] is None:
        return Current(None, due)
    last = shown.get(store.base)
    if last is None or (last.version, last.min_age) != (
            state['version'], min_age):
        if state['min_age'] != min_age:
            snapshot = store.load_snapshot(state['version'])
            audited = snapshot and classify.audit(
                snapshot, min_age=min_age, stuck_after=settings.stuck_after)
            last = audited and Shown(state['version'], min_age,
                                     audited.summary(), audited)
        else:
            summary = store.load_report(state['version'])
            last = summary and Shown(state['version'], min_age, summary)
        if last is None:        # evicted from the cache: sweep again
            return Current(None, 'full')
        shown[store.base] = last
    return Current(last, due)


def provider_tree(store, shown, provider_uuid):
    """One provider tree of the ``shown`` report, with every finding
    (``ok`` included), and whether the cache lost it (a full sweep is then
    due): ``(tree or None, lost)``."""
    if shown is None or shown.report.provider(provider_uuid) is None:
        return None, False
    if shown.audited is not None:
        return shown.audited.provider(provider_uuid), False
    tree = store.load_tree(shown.version, provider_uuid)
    return tree, tree is None


def names(store, known):
    """``{'projects': {id: name}, 'users': {id: name}}`` as the last sweep
    read them from Keystone; ``known`` is the caller's memory of them, per
    process and cloud, renewed when a sweep stored new ones."""
    version = store.state().get('names')
    cached = known.get(store.base)
    if cached is None or cached[0] != version:
        cached = known[store.base] = (version, store.names())
    return cached[1]


def note_written(store, clients, consumers, providers_changed, settings):
    """After our own writes: the stored snapshot re-reads the consumers at
    once, so the next page shows them repaired (a refresh is asked for
    when providers changed); they stay touched for the next sweep's
    provider re-reads.  Only what the writes may have changed is judged
    again: the others keep the last report's findings
    (:func:`.worker.reaudit`).  Best effort: a failure leaves them
    touched for the next sweep."""
    if providers_changed:
        store.want()
    consumers = {c for c in consumers if c}
    if not consumers:
        return
    store.touch(consumers)
    try:
        state = store.state()
        snapshot = store.load_snapshot(state['version'])
        if snapshot is None:
            return
        before = copy.copy(snapshot)
        before.consumers = dict(snapshot.consumers)

        def read():
            rereading.reread_consumers(clients.placement, snapshot,
                                       consumers, settings.concurrency)
            return snapshot
        store.save(*worker.reaudit(store, state, settings, before, read),
                   settings.min_age)
    except Exception:
        LOG.exception('re-reading written consumers failed')
