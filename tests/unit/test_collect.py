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

"""The order of a refresh's reads, with Nova and Placement mocked (the
sandbox tests check what they read; these, when)."""

import threading
from unittest import mock

from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard import collect
from tests.unit import cloud


def test_a_listed_consumer_is_read_while_nova_still_lists():
    """Nova's listing of changes is the refresh's longest read: a changed
    consumer's allocations are read as soon as its page is in."""
    c = cloud.Cloud()
    vm = c.server('vm', 'host1')
    host1, host2 = cloud.uid('host1'), cloud.uid('host2')
    c.allocate(vm, host1)
    old = c.snapshot()
    read = threading.Event()

    def server_list(client, on_page=None, **filters):
        assert 'changes-since' in filters
        on_page([{'id': vm}])
        assert read.wait(10), 'the consumer waited for the whole listing'
        return []

    def consumer_allocations(client, uuid):
        read.set()
        return {'allocations': {host2: {'resources': {'VCPU': 1}}},
                'consumer_generation': 2, 'project_id': 'p',
                'user_id': 'u', 'last_modified': cloud.LONG_AGO}

    topology = dict(providers=old.providers, hypervisors=old.hypervisors,
                    services=old.services,
                    sharing_providers=old.sharing_providers)
    with mock.patch.object(nova, 'server_list', server_list), \
            mock.patch.object(nova, 'migration_list', return_value=[]), \
            mock.patch.object(placement, 'consumer_allocations',
                              side_effect=consumer_allocations) as reads, \
            mock.patch.object(placement, 'incomplete_usages',
                              return_value={}), \
            mock.patch.object(collect, 'read_topology',
                              return_value=topology):
        fresh = collect.refresh_snapshot(None, None, old)
    assert reads.call_count == 1
    assert fresh.consumers[vm].allocations == {host2: {'VCPU': 1}}
    assert fresh.consumers[vm].generation == 2


def test_ownership_is_read_cheaply_and_survives_an_older_os_traits():
    """One ``required=OWNER_NOVA`` listing; inventories only of the roots
    with no compute node and no trait; a 400 (no such trait) means no
    provider is tagged, and the inventories decide."""
    from keystoneauth1 import exceptions as ks_exc

    gone, segment, host1 = (cloud.uid('gone'), cloud.uid('segment'),
                            cloud.uid('host1'))
    child = cloud.uid('host1_pci')
    listed = [{'uuid': u, 'name': n, 'generation': 1,
               'root_provider_uuid': r, 'parent_provider_uuid': p}
              for u, n, r, p in ((host1, 'host1', host1, None),
                                 (child, 'host1_pci', host1, host1),
                                 (gone, 'gone', gone, None),
                                 (segment, 'Neutron segment id x', segment,
                                  None))]
    inventories = {gone: {'VCPU': {}, 'MEMORY_MB': {}},
                   segment: {'IPV4_ADDRESS': {}}}

    def provider_list(client, **filters):
        if filters.get('required') == 'OWNER_NOVA':
            raise ks_exc.BadRequest('No such trait(s): OWNER_NOVA')
        if filters.get('required') == 'MISC_SHARES_VIA_AGGREGATE':
            return []
        assert not filters
        return listed

    with mock.patch.object(placement, 'provider_list',
                           side_effect=provider_list), \
            mock.patch.object(placement, 'trait_exists',
                              return_value=False), \
            mock.patch.object(placement, 'provider_inventories',
                              side_effect=lambda c, u: inventories[u]) \
            as read, \
            mock.patch.object(nova, 'hypervisor_list', return_value=[{
                'id': host1, 'hypervisor_hostname': 'host1',
                'service': {'host': 'host1'}}]), \
            mock.patch.object(nova, 'service_list', return_value=[{
                'host': 'host1', 'state': 'up', 'id': 's1'}]):
        topology = collect.read_topology(None, None)
    assert topology['owner_nova'] == frozenset()
    assert sorted(c.args[1] for c in read.call_args_list) == sorted(
        [gone, segment])
    assert topology['inventory_classes'] == {
        gone: ('MEMORY_MB', 'VCPU'), segment: ('IPV4_ADDRESS',)}


def test_a_400_for_a_trait_placement_knows_is_asked_again():
    """Placement's trait cache, cleared by a concurrent trait write, can
    answer a known trait with 400: the listing is asked again, not taken
    as "nothing tagged" (which would refuse every tagged provider)."""
    from keystoneauth1 import exceptions as ks_exc

    answers = [ks_exc.BadRequest('No such trait(s): OWNER_NOVA'),
               [{'uuid': 'n1'}]]

    def provider_list(client, **filters):
        assert filters == {'required': 'OWNER_NOVA'}
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    with mock.patch.object(placement, 'provider_list',
                           side_effect=provider_list), \
            mock.patch.object(placement, 'trait_exists', return_value=True):
        assert placement.nova_owned_uuids(None) == {'n1'}
    assert answers == []
