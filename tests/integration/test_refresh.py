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

"""What an incremental refresh reads again, against a real Placement:
each provider whose generation moved, and each a consumer Nova or we
changed held, whole; nothing else."""

import concurrent.futures
import datetime
from unittest import mock
import uuid

from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import refresh as rules
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
    """``{consumer: allocations}`` after a refresh of ``old`` told that
    Nova changed ``changed``, and how many providers it read again."""
    listed = {p['uuid']: parse.provider(p)
              for p in api.provider_list(placement) if p['uuid'] in
              providers}
    progress = Counting()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        reads = incremental._Rereads(pool, placement, old, progress)
        reads.consumers(changed)
        reads.listed(listed)
        fresh = reads.allocations()
    consumers = rules.merged(old, rules.carried_over(old, listed), fresh)
    return {u: c.allocations for u, c in consumers.items()}, progress.read


def test_a_consumer_nova_moved_is_read_where_it_was_and_is(placement, build):
    """Nova's PUT bumps only the provider it writes to: the one it left is
    read because Nova listed the server."""
    a, b, idle = (build.provider('a'), build.provider('b'),
                  build.provider('idle'))
    vm = build.allocate({a: SMALL})
    others = [build.allocate({a: SMALL}) for _ in range(3)]
    old = snapshot(placement, [a, b, idle])
    now = api.consumer_allocations(placement, vm)
    api.put_allocations(placement, vm, {b: SMALL},
                        now['consumer_generation'], 'p', 'u')
    held, provider_reads = refresh(placement, old, [a, b, idle],
                                   changed=[vm])
    assert held[vm] == {b: SMALL}
    assert all(held[o] == {a: SMALL} for o in others)
    assert provider_reads == 2          # a and b, not idle


def test_a_server_nova_deleted_is_gone_though_no_generation_moved(
        placement, build):
    a = build.provider('a')
    vm, kept = build.allocate({a: SMALL}), build.allocate({a: SMALL})
    old = snapshot(placement, [a])
    placement.delete('/allocations/%s' % vm)
    blind, _ = refresh(placement, old, [a])
    assert blind == {vm: {a: SMALL}, kept: {a: SMALL}}
    held, provider_reads = refresh(placement, old, [a], changed=[vm])
    assert held == {kept: {a: SMALL}}
    assert provider_reads == 1


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


def test_a_change_that_keeps_every_total_is_seen(placement, build):
    """Two consumers Nova does not know swap their amounts: the provider's
    usages are what they were, its generation is not."""
    a = build.provider('a')
    one = build.allocate({a: {'VCPU': 1}})
    two = build.allocate({a: {'VCPU': 2}})
    old = snapshot(placement, [a])
    for consumer, amount in ((one, 2), (two, 1)):
        now = api.consumer_allocations(placement, consumer)
        api.put_allocations(placement, consumer, {a: {'VCPU': amount}},
                            now['consumer_generation'], 'p', 'u')
    held, _ = refresh(placement, old, [a])
    assert held == {one: {a: {'VCPU': 2}}, two: {a: {'VCPU': 1}}}


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
