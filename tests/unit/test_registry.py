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

"""The registry of verdicts and actions: every table derived from it covers
every entry, so adding a verdict or an action is one entry (plus its rule
in ``rules.STAGES`` or its branch in ``plan.target``)."""

import ast
import pathlib

import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import messages
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit import rules
from orphan_dashboard.content.orphaned_allocations import labels
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid

pytestmark = pytest.mark.horizon

MODEL = pathlib.Path(m.__file__)


def _marked_in(path):
    """The literal texts of ``N_()`` calls in ``path``: what Babel
    extracts."""
    return {node.args[0].value
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call) and getattr(
                node.func, 'id', None) == 'N_' and node.args and
            isinstance(node.args[0], ast.Constant)}


def test_every_verdict_and_action_has_its_texts_marked_for_extraction():
    marked = _marked_in(MODEL)
    for kind in (*m.VERDICT_KINDS.values(), *m.ACTION_KINDS.values()):
        assert kind.title and kind.name, kind.code
        assert kind.title in marked and kind.name in marked, kind.code


def test_the_registry_keys_are_the_codes():
    assert all(code == kind.code for code, kind in m.VERDICT_KINDS.items())
    assert all(code == kind.code for code, kind in m.ACTION_KINDS.items())


def test_every_derived_table_covers_every_entry():
    assert set(labels.VERDICTS) == set(m.VERDICT_KINDS) == set(m.VERDICTS)
    assert set(labels.ACTIONS) == set(m.ACTION_KINDS)
    assert set(m.CANDIDATE_ACTIONS) == set(m.VERDICT_KINDS)
    for code in m.VERDICT_KINDS:
        assert 'verdict.' + code in messages.MESSAGES
        assert labels.verdict(code) != code
    for code in m.ACTION_KINDS:
        assert 'action.' + code in messages.MESSAGES
        assert labels.action(code) != code
    assert sorted(m.PRIORITY) == sorted(m.ACTIONS)


def test_every_verdict_has_a_rule_and_every_rule_a_verdict():
    """A verdict's rule goes in ``rules.STAGES`` at the place where it must
    be tried (see "Adding a verdict" in ``doc/source/contributor.md``)."""
    ruled = {rule.verdict for rule in rules.RULES}
    assert set(m.VERDICT_KINDS) - ruled == set(), \
        'a verdict of VERDICT_KINDS with no Rule in rules.STAGES'
    assert ruled - set(m.VERDICT_KINDS) == set(), \
        'a Rule in rules.STAGES for no verdict of VERDICT_KINDS'


def test_every_offered_action_is_a_repair_with_a_priority():
    for kind in m.VERDICT_KINDS.values():
        for action in kind.actions:
            assert action in m.ACTIONS, (kind.code, action)
            assert m.ACTION_KINDS[action].priority is not None
    priorities = [m.ACTION_KINDS[a].priority for a in m.ACTIONS]
    assert len(set(priorities)) == len(priorities), 'a tie in priority'


BEFORE_THE_REGISTRY = (
    m.EVACUATED_SOURCE, m.MOVED, m.DELETED_INSTANCE, m.STALE_MIGRATION,
    m.LEAKED_PORT, m.MISSING, m.WRONG_AMOUNT, m.INCOMPLETE_CONSUMER,
    m.UNKNOWN_CONSUMER, m.PROTECTED, m.OK)
"""The verdicts declared by hand before the registry, worst first."""


def _old(codes):
    return set(codes) & set(BEFORE_THE_REGISTRY)


def test_the_derived_tables_keep_what_was_declared_before_the_registry():
    """A new entry joins every derived table by its own fields, with no
    edit here; the verdicts and repairs declared before the registry keep
    their order and their place in each table."""
    assert [v for v in m.VERDICTS if v in BEFORE_THE_REGISTRY] == list(
        BEFORE_THE_REGISTRY)
    assert m.VERDICTS[-2:] == (m.PROTECTED, m.OK), \
        'a verdict needing no repair goes last in VERDICT_KINDS'
    assert m.ACTIONS[:6] == (m.TRIM, m.DELETE_AND_HEAL, m.DELETE, m.HEAL,
                             m.SET_OWNER, m.RELEASE)
    assert [a for a in m.PRIORITY if a in m.ACTIONS[:6]] == [
        m.TRIM, m.RELEASE, m.HEAL, m.SET_OWNER, m.DELETE_AND_HEAL, m.DELETE]
    assert _old(m.NOT_RECOMMENDED) == {m.UNKNOWN_CONSUMER}
    assert _old(m.NO_PROBLEM) == {m.OK, m.PROTECTED}
    assert _old(m.NEEDED_AS_HELD) == {m.OK, m.PROTECTED,
                                      m.INCOMPLETE_CONSUMER}
    assert _old(m.NEEDED_FROM_FLAVOR) == {m.MISSING, m.WRONG_AMOUNT,
                                          m.LEAKED_PORT}
    assert _old(m.HOLDS_NOTHING) == {m.MISSING}
    assert str(reasons.verdict_name(m.STALE_MIGRATION)) == 'stale migration'
    assert str(reasons.action_name(m.SET_OWNER)) == 'set project and user'
    assert str(labels.verdict(m.STALE_MIGRATION)) == 'Stale migration'
    assert str(labels.action(m.TRIM)) == 'Trim to current host'


@pytest.mark.parametrize('action', m.ACTIONS)
def test_plan_target_has_a_branch_for_every_repair(action):
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    cloud.allocate(vm, uid('host1'))
    snapshot = cloud.snapshot()
    auditor = classify.Auditor(snapshot, min_age=600)
    try:
        plan.target(snapshot, auditor.topology, vm, action)
    except plan.CannotRepair as exc:
        assert exc.reason.code != 'cannot.unknown_action'


def test_recommended_ranks_every_repair():
    findings = [m.Finding(uid('c'), uid('host1'), m.MOVED, '', {}, (a,))
                for a in reversed(m.PRIORITY)]
    assert plan.recommended(findings) == [(findings[-1], m.PRIORITY[0])]
