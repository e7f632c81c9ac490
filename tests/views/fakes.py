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

"""What several view modules build: a cloud the paths walk (one finding of
each kind) and the fake clients that answer for it, host1 dead with a
consumer nobody knows, a journal entry and a provider's delete plan."""

import copy
import dataclasses
import datetime
from unittest import mock

from keystoneauth1 import exceptions as ks_exc
from orphan_dashboard.api import client
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import decommission
from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.reading import collect
from orphan_dashboard.reading import refresh
from orphan_dashboard.writing import repair
from tests.unit.cloud import Cloud
from tests.unit.cloud import NOW
from tests.unit.cloud import uid
from tests.views.base import GONE
from tests.views.base import H1
from tests.views.base import H2
from tests.views.base import H3
from tests.views.base import Incidents


def one_of_each():
    """``{verdict: (consumer, provider)}``, one row of every verdict that
    offers a repair, on three hosts."""
    cloud = Cloud()
    cloud.host('host1', state='down', forced_down=True)
    rows = {}
    evacuated = cloud.server('evacuated', 'host2')
    cloud.allocate(evacuated, H1)
    cloud.allocate(evacuated, H2)
    cloud.migration('evac', evacuated, 'done', kind='evacuation')
    rows[m.EVACUATED_SOURCE] = (evacuated, H1)
    moved = cloud.server('moved', 'host3')
    cloud.allocate(moved, H2)
    cloud.allocate(moved, H3)
    rows[m.MOVED] = (moved, H2)
    ghost = cloud.deleted('ghost', H2)
    rows[m.DELETED_INSTANCE] = (ghost, H2)
    offloaded = cloud.server('offloaded', None, status='SHELVED_OFFLOADED')
    cloud.allocate(offloaded, H2)
    rows[m.SHELVED_OFFLOADED] = (offloaded, H2)
    owner = cloud.server('owner', 'host3')
    cloud.allocate(owner, H3)
    stale = cloud.migration('stale', owner, 'confirmed', source='host2',
                            dest='host3')
    cloud.allocate(stale, H2)
    rows[m.STALE_MIGRATION] = (stale, H2)
    bare = cloud.server('bare', 'host3')
    rows[m.MISSING] = (bare, H3)
    greedy = cloud.server('greedy', 'host3')
    cloud.allocate(greedy, H3, {'VCPU': 1, 'MEMORY_MB': 4096, 'DISK_GB': 1})
    rows[m.WRONG_AMOUNT] = (greedy, H3)
    legacy = cloud.server('legacy', 'host2')
    cloud.allocate(legacy, H2, owner=(m.INCOMPLETE, m.INCOMPLETE))
    rows[m.INCOMPLETE_CONSUMER] = (legacy, H2)
    stranger = uid('stranger')
    cloud.allocate(stranger, H3)
    rows[m.UNKNOWN_CONSUMER] = (stranger, H3)
    crashed = cloud.server('crashed', 'host2')
    stuck = cloud.migration('stuck', crashed, 'migrating', source='host2',
                            dest='host3', updated=NOW - datetime.timedelta(
                                hours=2))
    cloud.allocate(stuck, H2)
    cloud.allocate(crashed, H3)
    rows[m.STUCK_MIGRATION] = (crashed, H3)
    return cloud.snapshot(), rows


class FakeCloud:
    """Placement's consumers in memory, generation-checked like the real
    one; Nova as the snapshot says."""

    def __init__(self, snapshot):
        self.snapshot = snapshot

    def read(self, *args, **kwargs):
        return copy.deepcopy(self.snapshot)

    def consumer_allocations(self, _client, uuid):
        consumer = self.snapshot.consumers.get(uuid)
        if consumer is None:
            return {'allocations': {}}
        return {'allocations': {p: {'resources': r}
                                for p, r in consumer.allocations.items()},
                'consumer_generation': consumer.generation,
                'project_id': consumer.project_id,
                'user_id': consumer.user_id}

    def put_allocations(self, _client, uuid, allocations, generation,
                        project_id, user_id):
        consumer = self.snapshot.consumers.get(uuid)
        if (consumer.generation if consumer else None) != generation:
            raise ks_exc.Conflict('consumer generation conflict')
        consumers = dict(self.snapshot.consumers)
        consumers.pop(uuid, None)
        if allocations:
            consumers[uuid] = m.Consumer(
                uuid, (generation or 0) + 1, copy.deepcopy(allocations),
                project_id, user_id,
                consumer.modified if consumer else None)
        self.snapshot = dataclasses.replace(self.snapshot,
                                            consumers=consumers)

    def post_allocations(self, _client, consumers):
        """Every consumer's generation checked first, then all written,
        as Placement's ``POST /allocations`` does."""
        for uuid, (_, generation, _, _) in consumers.items():
            consumer = self.snapshot.consumers.get(uuid)
            if (consumer.generation if consumer else None) != generation:
                raise ks_exc.Conflict('consumer generation conflict')
        for uuid, values in consumers.items():
            self.put_allocations(_client, uuid, *values)

    def verdicts(self, consumer):
        return {f.verdict for f in classify.Auditor(
            self.snapshot, min_age=0).consumer_findings(consumer)}

    def patches(self):
        return [
            mock.patch.object(refresh, 'consumer_snapshot', self.read),
            mock.patch.object(collect, 'full_snapshot', self.read),
            mock.patch.object(placement, 'consumer_allocations',
                              self.consumer_allocations),
            mock.patch.object(placement, 'put_allocations',
                              self.put_allocations),
            mock.patch.object(placement, 'post_allocations',
                              self.post_allocations),
            mock.patch.object(service, 'report', lambda request, **kw:
                              classify.audit(self.snapshot, min_age=0)),
            mock.patch.object(service, '_clients',
                              return_value=client.Clients(None, None)),
            mock.patch.object(collect, 'read_capacity',
                              return_value=({}, {})),
        ]


STRANGER = uid('stranger-on-host1')


def dead_host1(with_stranger=True, with_server=False, servers=1):
    """host1 of the incidents (forced down, the evacuated leftover), with
    a consumer nobody knows, or servers still on it."""
    incidents = Incidents()
    snapshot = incidents.snapshot
    if with_stranger:
        snapshot.consumers[STRANGER] = m.Consumer(
            STRANGER, 1, {H1: {'VCPU': 2}}, 'p', 'u')
    for i in range(servers if with_server else 0):
        name = 'stuck-%d' % i if i else 'stuck'
        server = m.Server(uid(name), name, 'SHUTOFF', host='host1',
                          node='host1', project_id='p', user_id='u')
        snapshot.servers[server.uuid] = server
    return incidents, decommission.plan(snapshot, H1, min_age=0)


HISTORY_TAB = {'tab': 'orphaned_allocations__history'}


def entry(id=7, consumer=None, reason='moved', **kwargs):
    from orphan_dashboard.models import JournalEntry
    consumer = consumer or uid('vm')
    return JournalEntry(**{
        'id': id, 'action': m.TRIM, 'verdict': m.MOVED, 'provider': H1,
        'consumer': consumer, 'subject': consumer, 'reason': reason,
        'touched': H1, 'before': {H1: {'VCPU': 1}}, 'after': {},
        'status': JournalEntry.APPLIED, 'user_name': 'admin',
        'source': 'panel', 'consumer_project': 'p', 'consumer_user': 'u',
        **kwargs})


def provider_plan(uuid=GONE, name='gone'):
    record = {'uuid': uuid, 'name': name, 'generation': 3,
              'parent_provider_uuid': None, 'root_provider_uuid': uuid,
              'inventories': {'VCPU': {'total': 8}},
              'traits': ['COMPUTE_STATUS_DISABLED'], 'aggregates': []}
    return repair.ProviderPlan(m.DELETE_PROVIDER, uuid, name, 3, record)
