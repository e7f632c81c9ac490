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

"""One sweep at a time across every process that shares the cache (I/O):
the lock a sweep holds, in the cloud's :class:`~.store.Store`, while it
reads, audits and publishes."""

import contextlib
import os
import socket
import threading
import uuid

TTL = 120
"""Seconds a sweep's lock outlives its last sign of life: a killed worker
blocks sweeps no longer than this."""


def owner_id():
    """Who sweeps: host, process and a token, for the lock and the page."""
    return '%s:%d:%s' % (socket.gethostname(), os.getpid(),
                         uuid.uuid4().hex[:8])


def acquire(store, owner):
    """Take the sweep lock; False if another sweep holds it."""
    return store.cache.add(store.key('lock'), owner, TTL)


def heartbeat(store, owner):
    if store.cache.get(store.key('lock')) == owner:
        store.cache.touch(store.key('lock'), TTL)


@contextlib.contextmanager
def held(store, owner):
    """``owner``'s sweep lock renewed until the block ends, four times
    a lifetime: past its last read a sweep audits and publishes with
    nothing to report (minutes on the largest clouds), and a lock let
    expire meanwhile would tell the pages that no sweep runs and let a
    second one start."""
    done = threading.Event()

    def keep():
        while not done.wait(TTL / 4):
            heartbeat(store, owner)
    keeper = threading.Thread(target=keep, daemon=True,
                              name='orphan-sweep-lock-%s' % owner)
    keeper.start()
    try:
        yield
    finally:
        done.set()
        keeper.join()


def release(store, owner):
    if store.cache.get(store.key('lock')) == owner:
        store.cache.delete(store.key('lock'))


def holder(store):
    """Who holds the sweep lock, or None."""
    return store.cache.get(store.key('lock'))


def sweeping(store):
    """Whether a sweep of this cloud runs, in any process."""
    return holder(store) is not None
