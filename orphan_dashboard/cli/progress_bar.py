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

"""The progress bar ``orphan-audit`` shows on a terminal during a sweep."""

import sys
import threading
import time

from orphan_dashboard.operations import snapshot

DELAY = 1.0
"""A sweep shorter than this shows no bar."""


class TerminalProgress(snapshot.Progress):
    """A ``rich`` progress bar on stderr, shown once a sweep has taken
    :data:`DELAY` seconds; only made for a terminal (see :func:`for_args`).
    """

    LABELS = {'servers': 'servers listed', 'migrations': 'migrations listed',
              'providers': 'provider allocations read'}

    def __init__(self, stream=None):
        from rich import console
        from rich import progress
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.bar = progress.Progress(
            progress.TextColumn('{task.description}'),
            progress.BarColumn(), progress.MofNCompleteColumn(),
            progress.TimeElapsedColumn(), transient=True,
            console=console.Console(file=stream or sys.stderr))
        self.tasks = {kind: self.bar.add_task(self.LABELS[kind], total=None)
                      for kind in snapshot.PROGRESS_KINDS}
        self.shown = False

    def _show(self):
        if not self.shown and time.monotonic() - self.started >= DELAY:
            self.bar.start()
            self.shown = True

    def total(self, kind, count):
        with self.lock:
            self.bar.update(self.tasks[kind], total=count)
            self._show()

    def advance(self, kind, count=1):
        with self.lock:
            self.bar.advance(self.tasks[kind], count)
            self._show()

    def close(self):
        if self.shown:
            self.bar.stop()


def for_args(args, stream=None):
    """A bar for a sweep, or none: never with ``--json``, never unless
    stderr is a terminal."""
    stream = stream or sys.stderr
    if getattr(args, 'json', False) or not stream.isatty():
        return snapshot.NO_PROGRESS
    return TerminalProgress(stream)
