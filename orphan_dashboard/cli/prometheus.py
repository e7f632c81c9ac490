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

"""The Prometheus metrics of a report, for ``orphan-audit metrics``."""

from orphan_dashboard.audit.capacity import FITS_AFTER_REPAIR
from orphan_dashboard.audit import model as m

LAST_SUCCESS = 'orphan_audit_last_success_timestamp_seconds'


def metrics_registry(report, duration, up, last_success, capacity=None,
                     flavor_counts=None, decision=None):
    """The Prometheus metrics of a report (``report`` None when the cloud
    could not be read: then only up, duration and the last success), with
    what findings hold from its ``capacity``, how many hypervisors the
    ``flavor_counts`` (``{flavor: {state: hypervisors}}``) fit only after
    repair, and what ``apply`` would write under its limits and whether
    it would be held (``decision``, a :class:`~.audit.limits.Decision`)."""
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
        if not provider.compute_node and not provider.findings:
            # Another service's root holding nothing: no hypervisor.
            continue
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
    if capacity is not None:
        _capacity_metrics(registry, capacity, flavor_counts or {})
    if decision is not None:
        _apply_metrics(registry, decision)
    return registry


def _apply_metrics(registry, decision):
    from prometheus_client import Gauge

    writes = Gauge('orphan_audit_apply_writes', 'Consumers orphan-audit '
                   'apply would write now, per verdict (with the limits '
                   'given to metrics: --only, --max-writes, --max-share).',
                   ['verdict'], registry=registry)
    for verdict in m.RECOMMENDED:
        writes.labels(verdict).set(decision.writes.get(verdict, 0))
    Gauge('orphan_audit_apply_held', 'Whether orphan-audit apply under '
          'those limits would write nothing and exit 6 (1) or not (0).',
          registry=registry).set(int(decision.held))


def _capacity_metrics(registry, capacity, flavor_counts):
    from prometheus_client import Gauge

    held = Gauge('orphan_audit_held_by_findings', 'Resources findings hold '
                 'that nothing needs, cloud-wide, per resource class.',
                 ['resource_class'], registry=registry)
    for rc, amount in capacity.held().items():
        held.labels(rc).set(amount)
    by_project = Gauge('orphan_audit_project_held_by_findings', 'Resources '
                       'findings hold that nothing needs, per project and '
                       'resource class: quota the orphans eat where Nova '
                       'counts usage from Placement.',
                       ['project', 'resource_class'], registry=registry)
    for project in capacity.charged():
        for rc, amount in sorted(capacity.projects[project].held.items()):
            by_project.labels(project, rc).set(amount)
    fits = Gauge('orphan_audit_flavor_fits_after_repair', 'Hypervisors a '
                 'flavor (ORPHAN_AUDIT_METRIC_FLAVORS) fits only after the '
                 'recommended repairs.', ['flavor'], registry=registry)
    for flavor, counts in sorted(flavor_counts.items()):
        fits.labels(flavor).set(counts[FITS_AFTER_REPAIR])


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
