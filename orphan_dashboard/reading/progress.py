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

"""How far a sweep or a refresh has read: told from its threads to the
cache (the panel's bar) and to the terminal (the CLI's)."""

KINDS = ('servers', 'migrations', 'providers')
"""What a sweep reports progress on: servers and migrations listed,
providers' allocations read."""


class Progress:
    """What a sweep has read so far, out of what it expects; this one
    ignores it (see :class:`~orphan_dashboard.sweep.status.CacheProgress`
    and the CLI's bar).
    Called from the sweep's threads."""

    def total(self, kind, count):
        """``count`` of ``kind`` are expected (an estimate for servers and
        migrations: the last snapshot's)."""

    def advance(self, kind, count=1):
        """``count`` more of ``kind`` were read."""

    def flush(self, force=False):
        """Show what was read (throttled unless ``force``)."""

    def close(self):
        """The sweep is over."""


NO_PROGRESS = Progress()


class Tee(Progress):
    """Progress told to several listeners (the cache and a terminal)."""

    def __init__(self, *listeners):
        self.listeners = listeners

    def total(self, kind, count):
        for listener in self.listeners:
            listener.total(kind, count)

    def advance(self, kind, count=1):
        for listener in self.listeners:
            listener.advance(kind, count)

    def flush(self, force=False):
        for listener in self.listeners:
            listener.flush(force)
