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
