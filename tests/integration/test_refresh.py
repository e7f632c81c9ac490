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

"""What an incremental refresh reads again, against a real Placement: the
consumers Nova or we changed, one by one; a provider whose generation
moved only when its usages say the consumers do not explain it."""

import concurrent.futures
import datetime
from unittest import mock
import uuid

from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.reading import collect
from orphan_dashboard.reading.progress import Progress
from orphan_dashboard.reading import refresh as incremental

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


class Counting(Progress):
    def __init__(self):
        self.read = 0

    def advance(self, kind, count=1):
        if kind == 'providers':
            self.read += count


def snapshot(placement, providers):
    listed = {p['uuid']: parse.provider(p)
              for p in api.provider_list(placement)}
    allocations = {rp: api.provider_allocations(placement, rp)
                   for rp in providers}
    return m.Snapshot(
        providers=listed, consumers=parse.consumers_from_providers(
            allocations), servers={}, migrations={}, hypervisors={},
        services={}, taken_at=datetime.datetime.now(datetime.timezone.utc))


def refresh(placement, old, providers, changed=()):
    listed = {p['uuid']: parse.provider(p)
              for p in api.provider_list(placement) if p['uuid'] in
              providers}
    progress = Counting()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        reads = incremental._Rereads(pool, placement, old)
        reads.consumers(changed)
        reads.usages(incremental._moved(old.providers, listed))
        bodies, usages = reads.results()
    consumers = incremental._bring_up_to_date(placement, old, listed,
                                              bodies, usages, 4, progress)
    return {u: c.allocations for u, c in consumers.items()}, progress.read


def test_changed_consumers_are_read_alone(placement, build):
    a, b = build.provider('a'), build.provider('b')
    vm = build.allocate({a: SMALL})
    others = [build.allocate({a: SMALL}) for _ in range(3)]
    old = snapshot(placement, [a, b])
    # Nova moved vm (a's and b's generations move with it).
    now = api.consumer_allocations(placement, vm)
    api.put_allocations(placement, vm, {b: SMALL},
                        now['consumer_generation'], 'p', 'u')
    held, provider_reads = refresh(placement, old, [a, b], changed=[vm])
    assert held[vm] == {b: SMALL}
    assert all(held[o] == {a: SMALL} for o in others)
    assert provider_reads == 0          # the usages agreed


def test_a_change_nova_does_not_know_rereads_its_provider(placement, build):
    a, b = build.provider('a'), build.provider('b')
    kept = build.allocate({a: SMALL, b: SMALL})
    old = snapshot(placement, [a, b])
    stranger = build.allocate({a: {'VCPU': 2}})      # another service
    now = api.consumer_allocations(placement, kept)  # an operator's set
    api.put_allocations(placement, kept, {a: SMALL, b: {'VCPU': 3}},
                        now['consumer_generation'], 'p', 'u')
    held, provider_reads = refresh(placement, old, [a, b])
    assert held[stranger] == {a: {'VCPU': 2}}
    assert held[kept] == {a: SMALL, b: {'VCPU': 3}}
    assert provider_reads == 2
    full = snapshot(placement, [a, b])
    assert held == {u: c.allocations for u, c in full.consumers.items()}


def test_only_consumers_holding_allocations_are_identified(placement, build):
    """A server missing its allocations has no details to read; a server
    holding some gets its owner and age from them."""
    a = build.provider('a')
    holder = build.allocate({a: SMALL}, project='p1', user='u1')
    missing = str(uuid.uuid4())
    old = snapshot(placement, [a])
    old.servers = {u: m.Server(u) for u in (holder, missing)}
    with mock.patch.object(api, 'consumer_allocations',
                           wraps=api.consumer_allocations) as read:
        collect.identify(old, placement, None, {holder, missing}, 4)
    assert [call.args[1] for call in read.call_args_list] == [holder]
    assert (old.consumers[holder].project_id,
            old.consumers[holder].modified is not None) == ('p1', True)
    assert missing not in old.consumers
