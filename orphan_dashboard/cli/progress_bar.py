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

"""The progress bar ``orphan-audit`` shows on a terminal during a sweep:
one line, redrawn in place, with the numbers the panel's bar shows."""

import shutil
import sys
import threading
import time

from orphan_dashboard.cli.i18n import _
from orphan_dashboard.cli.i18n import N_
from orphan_dashboard.reading import progress
from orphan_dashboard.sweep import status

DELAY = 1.0
"""A sweep shorter than this shows no bar."""
EVERY = 0.2
"""Seconds between two redraws."""
WIDTH = 20
"""Characters of the bar itself."""


class TerminalProgress(progress.Progress):
    """A line on stderr, redrawn after a carriage return while the sweep
    runs and erased when it ends; first drawn once the sweep has taken
    :data:`DELAY` seconds (by a clock of its own: Nova's long listing
    reports nothing until it ends).  Only made for a terminal (see
    :func:`for_args`)."""

    LABELS = {'servers': N_('servers'), 'migrations': N_('migrations'),
              'providers': N_('providers')}

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.done = {}
        self.totals = {}
        self.drawn = 0
        self.stopped = threading.Event()
        self.clock = threading.Thread(target=self._tick, daemon=True,
                                      name='orphan-audit-progress')
        self.clock.start()

    def total(self, kind, count):
        with self.lock:
            self.totals[kind] = count

    def advance(self, kind, count=1):
        with self.lock:
            self.done[kind] = self.done.get(kind, 0) + count

    def line(self):
        """What the bar says now, in the operator's language."""
        with self.lock:
            bar = status.bar({kind: (self.done.get(kind, 0),
                                     self.totals.get(kind))
                              for kind in progress.KINDS})
        counts = ', '.join('%s %s%s' % (
            _(self.LABELS[kind]), done, '' if total is None else '/%s' % total)
            for kind, (done, total) in bar['read'].items())
        elapsed = int(time.monotonic() - self.started)
        if bar['percent'] is None:
            return '%s %s (%d s)' % (_('Sweeping Nova and Placement:'),
                                     counts, elapsed)
        filled = WIDTH * bar['percent'] // 100
        return '%s [%s%s] %s: %s (%d s)' % (
            _('Sweeping Nova and Placement:'), '#' * filled,
            '-' * (WIDTH - filled),
            _('%(done)s of %(total)s read (%(percent)s %%)') % bar, counts,
            elapsed)

    def _tick(self):
        if self.stopped.wait(DELAY):
            return
        while not self.stopped.is_set():
            self._draw(self.line())
            self.stopped.wait(EVERY)

    def _draw(self, text):
        columns = shutil.get_terminal_size().columns - 1
        text = text[:columns]
        blank = ' ' * max(0, self.drawn - len(text))
        self.stream.write('\r%s%s' % (text, blank))
        self.stream.flush()
        self.drawn = len(text)

    def close(self):
        self.stopped.set()
        self.clock.join()
        if self.drawn:
            self.stream.write('\r%s\r' % (' ' * self.drawn))
            self.stream.flush()
            self.drawn = 0

    @property
    def shown(self):
        return self.drawn > 0


def for_args(args, stream=None):
    """A bar for a sweep, or none: never with ``--json``, never unless
    stderr is a terminal."""
    stream = stream or sys.stderr
    if getattr(args, 'json', False) or not stream.isatty():
        return progress.NO_PROGRESS
    return TerminalProgress(stream)
