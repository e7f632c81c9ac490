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

"""What ``orphan-audit`` shows besides reports: a progress bar on a
terminal, and the Prometheus metrics of a report."""

import sys
import threading
import time

from orphan_dashboard.audit import model as m
from orphan_dashboard import collect

DELAY = 1.0
"""A sweep shorter than this shows no bar."""
LAST_SUCCESS = 'orphan_audit_last_success_timestamp_seconds'


class TerminalProgress(collect.Progress):
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
                      for kind in collect.KINDS}
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
        return collect.NO_PROGRESS
    return TerminalProgress(stream)


def metrics_registry(report, duration, up, last_success):
    """The Prometheus metrics of a report (``report`` None when the cloud
    could not be read: then only up, duration and the last success)."""
    from prometheus_client import CollectorRegistry
    from prometheus_client import Gauge

    registry = CollectorRegistry()
    Gauge('orphan_audit_up', 'Whether Nova and Placement could be read '
          'and audited (1) or not (0).', registry=registry).set(int(up))
    Gauge('orphan_audit_duration_seconds', 'How long the sweep and audit '
          'took.', registry=registry).set(duration)
    success = Gauge(LAST_SUCCESS,
                    'When an audit last succeeded (Unix time).',
                    registry=registry)
    if last_success is not None:
        success.set(last_success)
    if report is None:
        return registry
    findings = Gauge('orphan_audit_findings', 'Allocations per verdict on '
                     'each provider tree (hypervisor).',
                     ['verdict', 'hypervisor'], registry=registry)
    resources = Gauge('orphan_audit_resources', 'Resources those '
                      'allocations hold, per verdict, provider tree and '
                      'resource class.',
                      ['verdict', 'hypervisor', 'resource_class'],
                      registry=registry)
    for provider in report.providers:
        name = provider.provider.name
        counts = provider.counts
        for verdict in m.VERDICTS:
            findings.labels(verdict, name).set(counts.get(verdict, 0))
        held = {}
        for finding in provider.findings:
            for rc, amount in finding.resources.items():
                key = (finding.verdict, rc)
                held[key] = held.get(key, 0) + amount
        for (verdict, rc), amount in sorted(held.items()):
            resources.labels(verdict, name, rc).set(amount)
    return registry


def last_success(path):
    """The last success a previous textfile recorded, or None."""
    from prometheus_client import parser
    try:
        with open(path) as f:
            families = parser.text_string_to_metric_families(f.read())
            for family in families:
                if family.name == LAST_SUCCESS:
                    return family.samples[0].value if family.samples else None
    except (OSError, ValueError):
        return None
    return None
