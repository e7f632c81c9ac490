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

"""A short soak: repairs and restores in a loop, bounded in count and time,
against the real Placement; prints the number of writes and of lost
allocations (which must be zero)."""

import random
import time

from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.writing import write
from tests.integration.batches import write_plan
from tests.integration.conftest import logged
from tests.integration.conftest import restore_entries

ROUNDS = 150
SECONDS = 45
SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


def test_soak_repairs_and_restores_lose_nothing(placement, build, journal,
                                                capsys):
    rng = random.Random(2170)
    providers = [build.provider('soak%d' % i) for i in range(3)]
    consumers = [build.allocate({rp: SMALL for rp in rng.sample(
        providers, rng.randint(1, 3))}) for _ in range(8)]

    def state(consumer):
        return parse.consumer(consumer,
                              api.consumer_allocations(placement, consumer))

    initial = {c: state(c).allocations for c in consumers}
    writes = refused = rounds = 0
    started = time.monotonic()
    while rounds < ROUNDS and time.monotonic() - started < SECONDS:
        rounds += 1
        consumer = rng.choice(consumers)
        now = state(consumer)
        keep = rng.sample(sorted(now.allocations),
                          rng.randint(0, len(now.allocations) - 1))
        plan = m.Plan(m.TRIM if keep else m.DELETE, consumer, providers[0],
                      m.MOVED, 'soak', now.generation, 'p', 'u',
                      now.allocations, {rp: now.allocations[rp]
                                        for rp in keep})
        outcome = write_plan(placement, journal, plan)
        writes += 1
        assert outcome.status == write.DONE, outcome.message
        entry = logged(consumer=consumer)[0]
        _, (restored,) = restore_entries(placement, journal, [entry])
        writes += 1
        refused += restored.status != write.DONE
    final = {c: state(c).allocations for c in consumers}
    lost = sum(abs(initial[c].get(rp, {}).get(rc, 0) -
                   final[c].get(rp, {}).get(rc, 0))
               for c in consumers
               for rp in set(initial[c]) | set(final[c])
               for rc in set(initial[c].get(rp, {})) |
               set(final[c].get(rp, {})))
    elapsed = time.monotonic() - started
    with capsys.disabled():
        print('\nsoak: %d rounds, %d writes (%d journal entries) in %.1f s, '
              '%d restores refused, %d allocation units lost' % (
                  rounds, writes, len(logged()),
                  elapsed, refused, lost))
    assert refused == 0
    assert lost == 0
    assert final == initial
