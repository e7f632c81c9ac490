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

"""Property: any sequence of repairs and restores on a real Placement,
followed by undoing every change still in effect, latest first (the only
order the History allows), leaves every consumer exactly as it started,
allocation for allocation."""

from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st

from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.writing import journal as journal_module
from orphan_dashboard.writing import write
from tests.integration.batches import write_plan
from tests.integration.conftest import CLOUD
from tests.integration.conftest import logged
from tests.integration.conftest import restore_entries

BIG = dict(vcpus=100000, ram=10 ** 8, disk=10 ** 6)
amounts = st.fixed_dictionaries(
    {}, optional={'VCPU': st.integers(1, 4),
                  'MEMORY_MB': st.integers(1, 2048),
                  'DISK_GB': st.integers(1, 20)}).filter(bool)
allocation = st.dictionaries(st.integers(0, 2), amounts, min_size=1,
                             max_size=3)
operation = st.tuples(st.integers(0, 3),
                      st.sampled_from(['replace', 'empty', 'restore']),
                      st.dictionaries(st.integers(0, 2), amounts, max_size=3))


def _state(placement, consumers):
    return {c: parse.consumer(c, api.consumer_allocations(placement, c))
            .allocations for c in consumers}


def _restore(placement, journal, entry):
    return restore_entries(placement, journal, [entry])[1][0]


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(initial=st.lists(allocation, min_size=1, max_size=4),
       operations=st.lists(operation, max_size=6))
def test_restoring_everything_gives_back_the_initial_state(
        placement, build, journal, initial, operations):
    providers = [build.provider('rp%d' % i, **BIG) for i in range(3)]
    consumers = [build.allocate({providers[p]: r for p, r in a.items()})
                 for a in initial]
    start = _state(placement, consumers)

    for index, kind, target in operations:
        consumer = consumers[index % len(consumers)]
        if kind == 'restore':
            latest = logged(consumer=consumer)
            if latest and latest[0].status == latest[0].APPLIED:
                _restore(placement, journal, latest[0])
            continue
        now = parse.consumer(consumer,
                             api.consumer_allocations(placement, consumer))
        after = ({} if kind == 'empty' else
                 {providers[p]: r for p, r in target.items()})
        if after == now.allocations:
            continue
        plan = m.Plan(m.DELETE_AND_HEAL, consumer, providers[0], m.MOVED,
                      'property test',
                      now.generation if now.allocations else None,
                      'p', 'u', now.allocations, after)
        assert write_plan(placement, journal, plan).status == write.DONE

    # Undo everything, latest change first, as the History allows.
    for consumer in consumers:
        while True:
            allowed = journal_module.restorable(CLOUD, [consumer]).get(
                consumer, set())
            entries = {e.id: e for e in logged(consumer=consumer)}
            undo = [i for i in allowed if entries[i].action != m.RESTORE]
            if not undo:
                break
            outcome = _restore(placement, journal, entries[max(undo)])
            assert outcome.status == write.DONE, outcome.message
    assert _state(placement, consumers) == start
