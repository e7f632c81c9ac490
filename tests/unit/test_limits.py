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

"""The blast radius of a run of every recommended repair: which findings
``--only`` lets through, and when ``--max-writes`` or ``--max-share``
holds the run (``audit/limits.py``, pure)."""

import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import limits
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid
from tests.unit.staged import leftovers

H1, H2, H3 = uid('host1'), uid('host2'), uid('host3')


def cloud_of_leftovers():
    return classify.audit(leftovers(), min_age=0)


def writes(report, only=None):
    """The consumers a run would write, one selection-like finding each."""
    return [f for f, _action in plan.recommended(
        limits.eligible(report.problems, only))]


def test_within_its_limits_a_run_says_what_it_would_write():
    report = cloud_of_leftovers()
    decision = limits.decide(limits.Limits(max_writes=4, max_share=80),
                             writes(report), report.findings)
    assert not decision.held
    assert decision.writes == {m.MOVED: 1, m.DELETED_INSTANCE: 3}
    assert list(decision.writes) == [m.MOVED, m.DELETED_INSTANCE]
    assert (decision.total, decision.consumers) == (4, 5)
    assert decision.share == 80.0


@pytest.mark.parametrize('given,exceeded,limit', [
    (limits.Limits(max_writes=3), limits.MAX_WRITES, 3),
    (limits.Limits(max_writes=0), limits.MAX_WRITES, 0),
    (limits.Limits(max_share=79.9), limits.MAX_SHARE, 79.9),
    # Both past: the count is named first.
    (limits.Limits(max_writes=1, max_share=10), limits.MAX_WRITES, 1),
])
def test_a_run_past_a_limit_is_held_with_what_it_would_write(
        given, exceeded, limit):
    report = cloud_of_leftovers()
    decision = limits.decide(given, writes(report), report.findings)
    assert decision.held
    assert (decision.exceeded, decision.limit) == (exceeded, limit)
    assert decision.writes == {m.MOVED: 1, m.DELETED_INSTANCE: 3}


def test_no_limit_holds_nothing():
    report = cloud_of_leftovers()
    assert not limits.decide(limits.NO_LIMITS, writes(report),
                             report.findings).held


def test_only_lets_through_the_consumers_of_those_verdicts_alone():
    """A server moved and now missing on its host has two findings: one
    write repairs both, so ``--only moved`` leaves it whole."""
    cloud = Cloud()
    both = cloud.server('both', 'host2')
    cloud.allocate(both, H1)
    moved = cloud.server('moved', 'host2')
    cloud.allocate(moved, H1)
    cloud.allocate(moved, H2)
    cloud.deleted('gone', H3)
    report = classify.audit(cloud.snapshot(), min_age=0)
    assert {(f.consumer, f.verdict) for f in report.problems} == {
        (both, m.MOVED), (both, m.MISSING), (moved, m.MOVED),
        (uid('gone'), m.DELETED_INSTANCE)}
    assert {f.consumer for f in limits.eligible(
        report.problems, frozenset({m.MOVED}))} == {moved}
    assert {f.consumer for f in limits.eligible(
        report.problems, frozenset({m.MOVED, m.MISSING}))} == {both, moved}
    assert limits.eligible(report.problems, None) == report.problems


def test_apply_repairs_no_verdict_only_an_explicit_choice_repairs():
    """``--only`` takes the verdicts a recommended repair puts right: an
    unknown consumer is deleted only by an explicit choice, ok and
    protected rows need nothing."""
    assert {m.DELETED_INSTANCE, m.INCOMPLETE_CONSUMER, m.MISSING} <= set(
        m.RECOMMENDED)
    assert not {m.UNKNOWN_CONSUMER, m.OK, m.PROTECTED} & set(m.RECOMMENDED)
