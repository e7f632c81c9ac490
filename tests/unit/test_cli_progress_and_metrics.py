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

"""Prometheus metrics of a report, and the terminal's progress bar."""

import argparse
import io
import time

from prometheus_client import parser
import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.cli import progress_bar
from orphan_dashboard.cli import prometheus
from orphan_dashboard.reading.progress import NO_PROGRESS
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid

pytestmark = pytest.mark.horizon

H1, H2 = uid('host1'), uid('host2')


def samples(registry_or_text):
    from prometheus_client import generate_latest
    text = registry_or_text if isinstance(registry_or_text, str) else \
        generate_latest(registry_or_text).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in parser.text_string_to_metric_families(text)
            for s in family.samples}


def a_report():
    cloud = Cloud()
    vm = cloud.server('vm', 'host2')
    cloud.allocate(vm, H1)
    cloud.allocate(vm, H2)
    cloud.deleted('ghost', H1, {'VCPU': 4, 'MEMORY_MB': 8})
    return classify.audit(cloud.snapshot(), min_age=0)


def test_findings_and_resources_match_the_report_zeros_included():
    report = a_report()
    found = samples(prometheus.metrics_registry(report, 1.5, True, 1000.0))
    for provider in report.providers:
        for verdict in m.VERDICTS:
            key = ('orphan_audit_findings', (
                ('hypervisor', provider.provider.name), ('verdict', verdict)))
            assert found[key] == provider.counts.get(verdict, 0)
    assert found[('orphan_audit_resources', (
        ('hypervisor', 'host1'), ('resource_class', 'VCPU'),
        ('verdict', 'deleted_instance')))] == 4
    assert found[('orphan_audit_up', ())] == 1
    assert found[('orphan_audit_duration_seconds', ())] == 1.5
    assert found[('orphan_audit_last_success_timestamp_seconds', ())] == 1000


def test_a_segment_provider_is_no_hypervisor_of_the_metrics():
    """Neutron's segment provider holds nothing: no series of zeros
    counts it among the hypervisors."""
    cloud = Cloud()
    segment = cloud.foreign('Neutron segment id 2c1f7d3a', ['IPV4_ADDRESS'])
    report = classify.audit(cloud.snapshot(), min_age=0)
    assert segment in {p.provider.uuid for p in report.providers}
    found = samples(prometheus.metrics_registry(report, 1.5, True, 1000.0))
    assert {dict(labels)['hypervisor'] for name, labels in found
            if name == 'orphan_audit_findings'} == {
        'host1', 'host2', 'host3'}


def test_a_failed_audit_writes_no_stale_findings(tmp_path):
    path = str(tmp_path / 'orphan.prom')
    from prometheus_client import write_to_textfile
    write_to_textfile(path, prometheus.metrics_registry(a_report(), 1, True,
                                                        1000.0))
    assert prometheus.last_success(path) == 1000.0
    write_to_textfile(path, prometheus.metrics_registry(
        None, 2, False, prometheus.last_success(path)))
    found = samples(open(path).read())
    assert found[('orphan_audit_up', ())] == 0
    assert found[('orphan_audit_last_success_timestamp_seconds', ())] == 1000
    assert not [k for k in found if k[0].startswith(
        ('orphan_audit_findings', 'orphan_audit_resources'))]
    assert [p.name for p in tmp_path.iterdir()] == ['orphan.prom']


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_a_bar_only_on_a_terminal_and_never_with_json():
    assert progress_bar.for_args(argparse.Namespace(json=False),
                                 io.StringIO()) is NO_PROGRESS
    assert progress_bar.for_args(argparse.Namespace(json=True),
                                 Tty()) is NO_PROGRESS
    assert isinstance(progress_bar.for_args(argparse.Namespace(json=False),
                                            Tty()),
                      progress_bar.TerminalProgress)


def test_the_bar_shows_after_a_second(monkeypatch):
    monkeypatch.setattr(progress_bar, 'DELAY', 0.3)
    stream = Tty()
    bar = progress_bar.TerminalProgress(stream)
    bar.total('providers', 20)
    bar.advance('providers', 5)
    assert not bar.shown and stream.getvalue() == ''
    # Nova's listing reports nothing until it ends: the bar shows anyway.
    time.sleep(0.6)
    assert bar.shown
    bar.close()
    assert 'providers 5/20' in stream.getvalue()


def test_the_bar_is_one_line_redrawn_in_place_with_real_counts(
        monkeypatch):
    """A carriage return before each redraw, never a new line; the counts
    as read, the bar filled to the percentage it states (the numbers the
    panel's bar shows), and the line erased at the end."""
    monkeypatch.setattr(progress_bar, 'DELAY', 0)
    monkeypatch.setattr(progress_bar, 'EVERY', 0.05)
    monkeypatch.setenv('COLUMNS', '200')
    stream = Tty()
    bar = progress_bar.TerminalProgress(stream)
    for kind, total in (('providers', 8), ('servers', 10),
                        ('migrations', 2)):
        bar.total(kind, total)
    time.sleep(0.2)
    bar.advance('providers', 8)
    bar.advance('servers', 2)
    time.sleep(0.2)
    drawn = stream.getvalue()
    assert '\n' not in drawn
    lines = [line.rstrip() for line in drawn.split('\r') if line.strip()]
    assert len(lines) > 2
    assert any('[' + '-' * progress_bar.WIDTH + '] 0 of 20 read (0 %)'
               in line for line in lines)
    assert lines[-1].startswith(
        'Sweeping Nova and Placement: [##########----------] 10 of 20 read '
        '(50 %): servers 2/10, migrations 0/2, providers 8/8 (')
    bar.close()
    assert stream.getvalue().endswith('\r')
    assert stream.getvalue().split('\r')[-2].strip() == ''


def test_the_bar_speaks_the_operators_language(monkeypatch):
    monkeypatch.setenv('LANGUAGE', 'ru')
    bar = progress_bar.TerminalProgress(Tty())
    bar.total('providers', 4)
    bar.advance('providers', 1)
    line = bar.line()
    bar.close()
    assert 'провайдеры 1/4' in line or 'провайдеров 1/4' in line, line


def metrics_of(*argv):
    """``orphan-audit metrics ARGV`` on :func:`a_report`'s cloud: the
    samples it prints."""
    from unittest import mock

    from orphan_dashboard.cli import commands as cli
    from orphan_dashboard.cli import handlers
    from orphan_dashboard.cli import options

    args = options.build_parser().parse_args(['metrics', *argv])
    out = io.StringIO()
    with mock.patch.object(handlers.capacity_ops, 'audit',
                           return_value=(a_report(), None)), \
            mock.patch.object(handlers.capacity_ops, 'flavor_counts',
                              return_value={}), \
            mock.patch.object(cli.client, 'for_cloud'):
        assert cli.execute(args, out) == options.NOTHING
    return samples(out.getvalue())


def test_a_held_apply_is_a_series_with_its_writes_by_verdict():
    """What ``apply`` with the same limits would write now, per verdict,
    and whether it would be held (exit 6, nothing written)."""
    found = metrics_of('--max-writes', '1')
    assert found[('orphan_audit_apply_held', ())] == 1
    assert found[('orphan_audit_apply_writes',
                  (('verdict', m.DELETED_INSTANCE),))] == 1
    assert found[('orphan_audit_apply_writes', (('verdict', m.MOVED),))] == 1
    assert {dict(labels)['verdict'] for name, labels in found
            if name == 'orphan_audit_apply_writes'} == set(m.RECOMMENDED)
    assert metrics_of('--max-writes', '2', '--max-share', '100')[
        ('orphan_audit_apply_held', ())] == 0
    only = metrics_of('--only', m.MOVED, '--max-writes', '1')
    assert only[('orphan_audit_apply_held', ())] == 0
    assert only[('orphan_audit_apply_writes',
                 (('verdict', m.DELETED_INSTANCE),))] == 0


def test_the_held_series_follows_the_settings(monkeypatch):
    """Two writes of three consumers: past a share of 50 set, or unset (a
    command line's unattended share); not past 100."""
    monkeypatch.setenv('ORPHAN_AUDIT_MAX_SHARE', '50')
    assert metrics_of()[('orphan_audit_apply_held', ())] == 1
    monkeypatch.delenv('ORPHAN_AUDIT_MAX_SHARE')
    assert metrics_of()[('orphan_audit_apply_held', ())] == 1
    monkeypatch.setenv('ORPHAN_AUDIT_MAX_SHARE', '100')
    assert metrics_of()[('orphan_audit_apply_held', ())] == 0
