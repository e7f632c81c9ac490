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

"""Running one sweep (I/O): the sweep that renews the snapshot its
:class:`~.store.Store` holds, under the sweep lock (:mod:`.lock`), from
cron or in the background, and the sweeper process a page starts.

A background sweep started by a page runs in a process of its own
(:func:`main`) when the cache is shared: parsing thousands of servers
holds the interpreter's lock for long stretches, which in a thread would
stall every page its Horizon process serves meanwhile.  With a
process-local cache it can only be a thread.
"""

import concurrent.futures
import dataclasses
import json
import logging
import os
import subprocess
import sys
import threading

from orphan_dashboard.api import client
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import refresh as reconsidering
from orphan_dashboard import conf
from orphan_dashboard.reading import collect
from orphan_dashboard.reading.progress import NO_PROGRESS
from orphan_dashboard.reading.progress import Tee
from orphan_dashboard.reading import refresh
from orphan_dashboard.sweep import lock
from orphan_dashboard.sweep import status
from orphan_dashboard.sweep import store as stores

LOG = logging.getLogger(__name__)
SWEEPER_THREAD = 'orphan-sweeper-'
"""The name, before its pid, of the thread that waits for a sweeper process."""
NICENESS = 10
"""Pages first: the sweep takes what CPU the Horizon node's pages leave."""
AUTOGROUP = '/proc/self/autogroup'


def sweep(store, clients, settings=conf.RunSettings(), full=False,
          owner=None, progress=NO_PROGRESS):
    """Renew the stored snapshot: a refresh of the current one, or a full
    sweep when asked or due, as ``settings`` (:class:`conf.RunSettings`)
    say.  The caller holds the lock (see :func:`locked_sweep`).  Its
    progress goes to the store (for the pages) and to ``progress``.
    Consumers written during the sweep are re-read before it is
    published.  A refresh's report takes the last report's findings on
    the consumers nothing has changed for (:func:`reaudit`)."""
    state = store.state()
    old = None if full else store.load_snapshot(state['version'])
    due = full or refresh.full_sweep_due(old, settings.full_sweep_interval)
    touched = frozenset(state['touched'])
    shown = status.CacheProgress(store, owner or lock.owner_id(), due,
                                 state['counts'])
    late = set()

    def read():
        try:
            snapshot = refresh.snapshot(
                clients.placement, clients.nova, cached=old, full=full,
                full_sweep_interval=settings.full_sweep_interval,
                concurrency=settings.concurrency, touched=touched,
                network_client=clients.network,
                progress=Tee(shown, progress))
        finally:
            shown.close()
        late.update(frozenset(store.state()['touched']) - touched)
        if late:
            refresh.reread_consumers(clients.placement, snapshot, late,
                                     settings.concurrency)
        return snapshot
    snapshot, report = reaudit(store, state, settings, old, read,
                               reuse=not due)
    store.save(snapshot, report, settings.min_age, consumed=touched | late)
    status.note_failure(store, None)
    store.save_names(dict(collect.owner_names(clients.identity),
                          servers=server_names(snapshot)))
    return snapshot


def reaudit(store, state, settings, old, read, reuse=True):
    """``(snapshot, report)``: the snapshot ``read()`` returns (a refresh
    of ``old``, or a copy of it with some consumers read again) and its
    report, which takes the last report's findings (of the store's
    ``state``) on the consumers nothing changed for
    (:func:`.audit.refresh.reusable`), judged at the same minimum age:
    they load from the store while ``read`` reads the cloud.  Without
    ``reuse`` (a full sweep) every consumer is judged again."""
    with concurrent.futures.ThreadPoolExecutor(1) as loader:
        last = None if not reuse or state['min_age'] != settings.min_age \
            else loader.submit(store.load_findings, state['version'])
        snapshot = read()
        known = last and reconsidering.reusable(old, snapshot, last.result)
    return snapshot, classify.audit(snapshot, min_age=settings.min_age,
                                    known=known,
                                    stuck_after=settings.stuck_after)


def server_names(snapshot):
    """``{uuid: name}`` of the snapshot's servers: History names the
    consumers it lists by them (a page never waits for Nova)."""
    return {uuid: server.name for uuid, server in snapshot.servers.items()
            if server.name}


def locked_sweep(store, clients, owner=None, **kwargs):
    """:func:`sweep` under the lock (taken here unless ``owner`` holds it
    already); None when another sweep runs."""
    if owner is None:
        owner = lock.owner_id()
        if not lock.acquire(store, owner):
            return None
    try:
        status.count_sweep(store)
        state = store.state()
        kwargs['full'] = kwargs.get('full') or state['wanted'] == 'full'
        state['wanted'] = None
        store.set_state(state)
        with lock.held(store, owner):
            return sweep(store, clients, owner=owner, **kwargs)
    except Exception as exc:
        settings = kwargs.get('settings') or conf.RunSettings()
        status.note_failure(store, status.failure(exc, owner,
                                                  settings.api_timeout))
        raise
    finally:
        status.set_progress(store, None)
        lock.release(store, owner)


def start(store, credentials, settings=conf.RunSettings(), python=None,
          full=False):
    """Sweep in the background unless one runs somewhere already; True if
    this call started one (a failure to start is logged: the page goes on
    with the last snapshot).  The lock is taken before this returns, so the
    page already shows the sweep.  The sweep acts with ``credentials``
    (:class:`client.Credentials`) and ``settings`` (its API timeout
    included), in a process of its own run by ``python`` when the cache is
    shared, else in a thread."""
    owner = lock.owner_id()
    if not lock.acquire(store, owner):
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
        lock.release(store, owner)
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
        status.note_failure(store, status.failure(exc, job['owner'],
                                                  settings.api_timeout))
        lock.release(store, job['owner'])
        raise
    return locked_sweep(store, clients, owner=job['owner'],
                        settings=settings, full=job['full'])


def _logged(func, *args):
    try:
        func(*args)
    except Exception:
        LOG.exception('background sweep failed')


SWEEPER = ('import sys; sys.path += sys.argv[1:]; '
           'from orphan_dashboard.sweep import worker; '
           'sys.exit(worker.main())')
"""The sweeper process's program (:func:`main`), run by an isolated Python
(``-I``: no current directory, ``PYTHON*`` variable or user site on its
path) that looks in this process's import path only after its own."""


def _spawn(store, job, python):
    """The sweeper process (:func:`main`) with this process's settings
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
            said = status.last_failure(store)
            if not said or said['owner'] != job['owner']:
                # Killed, or out of memory: it could not say why itself.
                status.note_failure(store, status.exited(
                    job['owner'], job['settings'].get('api_timeout'),
                    proc.returncode))
            lock.release(store, job['owner'])

    threading.Thread(target=_logged, args=(hand_over,),
                     name=SWEEPER_THREAD + str(proc.pid),
                     daemon=True).start()


def lower_priority():
    """Niceness for the process and for its session's autogroup.

    With Linux's autogroup scheduling a session of its own is a scheduling
    group of its own, which gets as much CPU as all of Horizon's session:
    the process's niceness only ranks it within that group.
    """
    os.nice(NICENESS)
    try:
        with open(AUTOGROUP, 'w') as autogroup:
            autogroup.write(str(NICENESS))
    except OSError:
        pass  # no autogroup scheduling in this kernel


def main():
    """The sweeper process: one background sweep a page asked for
    (:func:`start`).  It reads the job as JSON on stdin, sets up Django
    with the settings module of the Horizon process that started it (its
    cache, its ``ORPHAN_AUDIT_*``) and runs :func:`run` at a lower CPU
    priority; its log goes where Horizon's goes."""
    lower_priority()
    job = json.load(sys.stdin)
    import django
    django.setup()

    store = stores.Store(job['cloud'], timeout=job['timeout'])
    try:
        run(store, job)
    except Exception:
        LOG.exception('background sweep failed')
        return 1
    return 0
