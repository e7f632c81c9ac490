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

"""Another service's provider (a Neutron routed network's segment) is
shown with its likely owner, is offered no destructive action, and the
delete and decommission URLs refuse it, whatever the request carries."""

from unittest import mock

from django.urls import reverse

from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import decommission
from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.operations import decommission as decommission_ops
from orphan_dashboard.operations import repairs
from orphan_dashboard.writing import repair
from tests.unit.cloud import Cloud
from tests.views.base import AdminViewTests
from tests.views.base import batch_message
from tests.views.base import DELETE_PROVIDER
from tests.views.base import detail
from tests.views.base import helpers
from tests.views.base import INDEX
from tests.views.base import signed_for
from tests.views.base import signed_rows

DECOMMISSION = reverse('horizon:admin:orphaned_allocations:decommission')
SEGMENT = 'Neutron segment id 8a6c1d2e-3f4b-4c5d-9e6f-7a8b9c0d1e2f'


def segment_cloud():
    cloud = Cloud()
    segment = cloud.foreign(SEGMENT, ['IPV4_ADDRESS'])
    return cloud, segment


def record(uuid):
    return {'uuid': uuid, 'name': SEGMENT, 'generation': 2,
            'parent_provider_uuid': None, 'root_provider_uuid': uuid,
            'inventories': {'IPV4_ADDRESS': {'total': 253}}, 'traits': [],
            'aggregates': ['b1d1c0d4-5a0e-4d8e-9f8e-3b6c2f1a7e90']}


def placement_of(uuid):
    """Placement and Nova as they answer about the segment provider."""
    return [
        mock.patch.object(placement, 'provider_list', return_value=[{
            'uuid': uuid, 'name': SEGMENT, 'generation': 2,
            'root_provider_uuid': uuid, 'parent_provider_uuid': None}]),
        mock.patch.object(placement, 'sharing_provider_uuids',
                          return_value=set()),
        mock.patch.object(placement, 'provider_record',
                          return_value=record(uuid)),
        mock.patch.object(placement, 'provider_allocations',
                          return_value={}),
        mock.patch.object(placement, 'delete_provider'),
        mock.patch.object(nova, 'hypervisor_list', return_value=[
            {'id': 'x', 'hypervisor_hostname': 'host1'}]),
        mock.patch.object(nova, 'service_list',
                          return_value=[{'host': 'host1'}]),
        mock.patch.object(nova, 'delete_service'),
    ]


class OwnershipTests(AdminViewTests):
    @helpers.create_mocks({service: ['report']})
    def test_no_destructive_action_is_offered(self):
        cloud, segment = segment_cloud()
        self.mock_report.return_value = classify.audit(cloud.snapshot(),
                                                       min_age=600)
        res = self.client.get(INDEX, {'show': 'all'})
        self.assertContains(res, SEGMENT)
        self.assertNotContains(res, 'href="%s?provider=%s"' % (
            DELETE_PROVIDER, segment))
        self.assertNotContains(res, 'href="%s?provider=%s"' % (
            DECOMMISSION, segment))
        self.assertContains(res, 'Not a compute node (owner: Neutron)')
        res = self.client.get(detail(segment))
        self.assertContains(res, 'Owner: Neutron')
        self.assertNotContains(res, DELETE_PROVIDER + '?provider=')
        self.assertNotContains(res, DECOMMISSION + '?provider=')

    @helpers.create_mocks({service: ['report', '_clients', 'note_written']})
    def test_the_delete_url_refuses_it(self):
        cloud, segment = segment_cloud()
        self.mock_report.return_value = classify.audit(cloud.snapshot(),
                                                       min_age=600)
        patches = placement_of(segment)
        self.patched(*patches)
        res = self.client.get(DELETE_PROVIDER, {'provider': segment})
        self.assertContains(res, "is not Nova&#x27;s (likely neutron&#x27;s)")
        self.assertNotContains(res, 'value="Delete"')
        # A confirm signed for a plan (an older preview) is refused too.
        plan = repair.ProviderPlan(m.DELETE_PROVIDER, segment, SEGMENT, 2,
                                   record(segment))
        signed = signed_for(self.client, plan)
        self.client.post(DELETE_PROVIDER, {'rows': signed})
        placement.delete_provider.assert_not_called()
        level, lines, _batch = batch_message(self.messages_seen)
        self.assertEqual('warning', level)
        self.assertIn("is not Nova&#x27;s", lines[1])

    @helpers.create_mocks({service: ['report', '_clients', 'note_written']})
    def test_the_decommission_url_refuses_it(self):
        cloud, segment = segment_cloud()
        snapshot = cloud.snapshot()
        self.mock_report.return_value = classify.audit(snapshot, min_age=600)
        patches = placement_of(segment) + [
            mock.patch.object(decommission_ops, 'read',
                              return_value=snapshot),
            mock.patch.object(repairs, 'apply')]
        self.patched(*patches)
        res = self.client.get(DECOMMISSION, {'provider': segment})
        self.assertContains(res, "is not Nova&#x27;s (likely neutron&#x27;s)")
        self.assertNotContains(res, 'value="Decommission"')
        self.assertNotIn('rows', res.context['form'].initial)
        # A confirm signed for it anyway writes nothing.
        unguarded = decommission.plan(snapshot, segment, min_age=0)
        unguarded.foreign = {}
        with mock.patch.object(service, 'preview_decommission',
                               return_value=unguarded):
            signed = signed_rows(self.client.get(DECOMMISSION,
                                                 {'provider': segment}))
        self.client.post(DECOMMISSION, {'rows': signed})
        placement.delete_provider.assert_not_called()
        nova.delete_service.assert_not_called()
        repairs.apply.assert_not_called()
        (skipped,) = self.messages_seen.texts('warning')
        self.assertIn("nothing written: provider %s (%s) is not Nova's" % (
            SEGMENT, segment), skipped)


AGENT_NAME = 'host1:Open vSwitch agent'
NIC_NAME = 'host1:Open vSwitch agent:br-phys'


def nic_cloud():
    """host1 with Neutron's agent and NIC providers, and a consumer Nova
    has deleted still holding host1 and bandwidth on the NIC."""
    from tests.unit.cloud import uid
    cloud = Cloud()
    host1 = cloud.host('host1')
    agent = cloud.child(host1, AGENT_NAME)
    nic = cloud.child(agent, NIC_NAME)
    ghost = uid('ghost')
    cloud.known.add(ghost)
    cloud.allocate(ghost, host1)
    cloud.allocate(ghost, nic, {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
    return cloud, host1, nic


def nic_record(uuid, parent, root):
    return {'uuid': uuid, 'name': NIC_NAME, 'generation': 3,
            'parent_provider_uuid': parent, 'root_provider_uuid': root,
            'inventories': {'NET_BW_EGR_KILOBIT_PER_SEC': {
                'total': 10000000}},
            'traits': ['CUSTOM_PHYSNET_PHYSNET0'], 'aggregates': []}


class NeutronChildTests(AdminViewTests):
    """Neutron's agent and NIC providers under a compute node read as
    Neutron's wherever a row names them, and the delete URL refuses a
    NIC asked for by a forged request."""

    @helpers.create_mocks({service: ['report', 'provider_report']})
    def test_a_nic_row_is_named_with_its_owner(self):
        cloud, host1, nic = nic_cloud()
        report = classify.audit(cloud.snapshot(), min_age=0)
        self.assertEqual({nic: 'neutron', cloud.providers[nic].parent_uuid:
                          'neutron'}, report.child_owners)
        self.mock_report.return_value = report.summary()
        self.mock_provider_report.return_value = report.provider(host1)
        res = self.client.get(detail(host1))
        # (A name may break after its colons: <wbr>.)
        page = res.content.decode().replace('<wbr>', '')
        self.assertIn('%s (Neutron)' % NIC_NAME, page)
        self.assertNotIn('host1 (Nova)', page)

    @helpers.create_mocks({service: ['report', '_clients', 'note_written']})
    def test_an_orphaned_trees_delete_refuses_neutrons_children(self):
        """host1's compute node is gone, its tree still holds Neutron's
        agent and NIC: the preview refuses those rows naming Neutron, so
        the tree is not offered; a forged confirm deletes nothing."""
        cloud, host1, nic = nic_cloud()
        agent = cloud.providers[nic].parent_uuid
        self.mock_report.return_value = classify.audit(cloud.snapshot(),
                                                       min_age=600)
        records = {
            host1: dict(nic_record(host1, None, host1), name='host1',
                        inventories={'VCPU': {'total': 8}}, traits=[]),
            agent: dict(nic_record(agent, host1, host1), name=AGENT_NAME,
                        inventories={}, traits=[]),
            nic: nic_record(nic, agent, host1)}
        patches = [
            mock.patch.object(placement, 'provider_list', return_value=[
                {'uuid': u, 'name': r['name'], 'generation': 3,
                 'root_provider_uuid': host1,
                 'parent_provider_uuid': r['parent_provider_uuid']}
                for u, r in records.items()]),
            mock.patch.object(placement, 'provider_record',
                              side_effect=lambda _c, u: records[u]),
            mock.patch.object(placement, 'provider_allocations',
                              return_value={}),
            mock.patch.object(placement, 'delete_provider'),
            mock.patch.object(nova, 'hypervisor_list', return_value=[]),
            mock.patch.object(nova, 'service_list', return_value=[]),
        ]
        self.patched(*patches)
        res = self.client.get(DELETE_PROVIDER, {'provider': host1})
        for name, uuid in ((NIC_NAME, nic), (AGENT_NAME, agent)):
            self.assertContains(res, "provider %s (%s) is not Nova&#x27;s "
                                     "(likely neutron&#x27;s)" % (name, uuid))
        self.assertNotContains(res, 'value="Delete"')
        self.assertNotIn('rows', res.context['form'].initial)
        # A confirm signed for the whole tree (an older preview) is
        # refused at the NIC, and nothing after it is attempted.
        plans = [repair.ProviderPlan(m.DELETE_PROVIDER, u, records[u]['name'],
                                     3, records[u])
                 for u in (nic, agent, host1)]
        signed = signed_for(self.client, *plans)
        self.client.post(DELETE_PROVIDER, {'rows': signed})
        placement.delete_provider.assert_not_called()
        level, lines, _batch = batch_message(self.messages_seen)
        self.assertEqual('warning', level)
        self.assertTrue(any("is not Nova&#x27;s" in line for line in lines))


class OwnerProofTests(AdminViewTests):
    """Each owner the panel shows says how it was proven: a compute node
    of a Nova older than 34 carries no ``OWNER_NOVA`` and is Nova's all
    the same, by Nova's listing; its device by its name's shape."""

    @helpers.create_mocks({service: ['report'],
                           placement: ['provider_inventories']})
    def test_the_owner_says_how_it_was_proven(self):
        from tests.unit.cloud import uid
        cloud, segment = segment_cloud()
        host2 = uid('host2')
        device = cloud.device('host2')
        tagged = cloud.device('host1', address='0000:82:00.0', tagged=True)
        self.mock_report.return_value = classify.audit(cloud.snapshot(),
                                                       min_age=600)
        self.mock_provider_inventories.return_value = {}
        res = self.client.get(INDEX, {'show': 'all'})
        self.assertContains(res, 'Not a compute node (owner: Neutron)')
        self.assertContains(res, 'proven by a name that service gives')
        res = self.client.get(detail(segment))
        self.assertContains(
            res, 'Owner: Neutron, proven by a name that service gives')
        res = self.client.get(detail(host2), {'tab': 'provider__overview'})
        self.assertContains(
            res, "Owner: Nova, proven by Nova&#x27;s listing of its "
                 "compute node")
        page = ' '.join(res.content.decode().split())
        self.assertIn(
            '<td title="%s">host2_0000:81:00.0</td> <td>Nova</td> '
            '<td>its name&#x27;s shape and class, as Nova makes a '
            'node&#x27;s child</td>' % device, page)
        res = self.client.get(detail(uid('host1')),
                              {'tab': 'provider__overview'})
        page = ' '.join(res.content.decode().split())
        self.assertIn('<td title="%s">host1_0000:82:00.0</td> <td>Nova</td> '
                      '<td>its OWNER_* trait</td>' % tagged, page)


CEPH = 'ceph-pool'


class DeleteJudgedAgainTests(AdminViewTests):
    """The provider delete judges its target by the audit's own rule on
    a fresh read, whatever the URL names: a sharing provider holding
    DISK_GB for its aggregate (Nova-shaped by its inventory), a node Nova
    did not answer for, a host not mapped to a cell yet, a provider only
    its inventory makes look like a compute node are refused with the
    reason; only a node of Nova's (tagged ``OWNER_NOVA``) Nova says is
    gone is deleted."""

    def serve(self, uuid, name, inventories, sharing=False, shown=None,
              services=(), tagged=True, migrations=()):
        record = {'uuid': uuid, 'name': name, 'generation': 2,
                  'parent_provider_uuid': None, 'root_provider_uuid': uuid,
                  'inventories': inventories, 'traits': [],
                  'aggregates': []}
        patches = [
            mock.patch.object(placement, 'provider_list', return_value=[{
                'uuid': uuid, 'name': name, 'generation': 2,
                'root_provider_uuid': uuid, 'parent_provider_uuid': None}]),
            mock.patch.object(placement, 'sharing_provider_uuids',
                              return_value={uuid} if sharing else set()),
            mock.patch.object(placement, 'owner_traits', return_value=[
                'OWNER_NOVA'] if tagged else []),
            mock.patch.object(placement, 'trait_holders',
                              return_value={uuid} if tagged else set()),
            mock.patch.object(placement, 'provider_inventories',
                              return_value=inventories),
            mock.patch.object(placement, 'provider_record',
                              return_value=record),
            mock.patch.object(placement, 'provider_allocations',
                              return_value={}),
            mock.patch.object(placement, 'delete_provider'),
            mock.patch.object(nova, 'hypervisor_list', return_value=[]),
            mock.patch.object(nova, 'service_list', return_value=[
                {'host': h, 'state': 'up', 'status': 'enabled'}
                for h in services]),
            mock.patch.object(nova, 'migration_list',
                              side_effect=lambda client, host=None: [
                                  g for g in migrations
                                  if host in (g['source_compute'],
                                              g['dest_compute'])]),
            mock.patch.object(nova, 'hypervisor_get', **(
                {'side_effect': shown} if isinstance(shown, Exception)
                else {'return_value': shown})),
        ]
        self.patched(*patches)
        self.mock_report.return_value = classify.audit(Cloud().snapshot(),
                                                       min_age=600)
        return record

    def deleted(self, uuid):
        """The delete previewed, offered and confirmed: Placement asked to
        delete ``uuid``."""
        res = self.client.get(DELETE_PROVIDER, {'provider': uuid})
        self.assertContains(res, 'value="Delete"')
        journal = mock.MagicMock()
        with mock.patch.object(service, '_journal', return_value=journal):
            self.client.post(DELETE_PROVIDER, {'rows': signed_rows(res)})
        placement.delete_provider.assert_called_once_with(mock.ANY, uuid)

    def refused(self, uuid, record, reason):
        res = self.client.get(DELETE_PROVIDER, {'provider': uuid})
        self.assertContains(res, reason)
        self.assertNotContains(res, 'value="Delete"')
        plan = repair.ProviderPlan(m.DELETE_PROVIDER, uuid, record['name'],
                                   2, record)
        signed = signed_for(self.client, plan)
        self.client.post(DELETE_PROVIDER, {'rows': signed})
        placement.delete_provider.assert_not_called()

    @helpers.create_mocks({service: ['report', '_clients', 'note_written']})
    def test_a_sharing_provider_typed_into_the_url_is_refused(self):
        from tests.unit.cloud import uid
        ceph = uid(CEPH)
        record = self.serve(ceph, CEPH, {'DISK_GB': {'total': 10000}},
                            sharing=True)
        self.refused(ceph, record, 'is a sharing provider of its aggregate')

    @helpers.create_mocks({service: ['report', '_clients', 'note_written']})
    def test_a_node_nova_did_not_answer_for_is_refused(self):
        from keystoneauth1 import exceptions as ks_exc

        from tests.unit.cloud import uid
        node = uid('quiet')
        record = self.serve(node, 'quiet', {'VCPU': {'total': 8}},
                            shown=ks_exc.InternalServerError())
        self.refused(node, record, 'it may still be alive')

    @helpers.create_mocks({service: ['report', '_clients', 'note_written']})
    def test_a_host_not_mapped_to_a_cell_is_refused(self):
        from tests.unit.cloud import uid
        node = uid('new-host')
        record = self.serve(node, 'new-host', {'VCPU': {'total': 8}},
                            services=['new-host'])
        self.refused(node, record, 'cell_v2 discover_hosts')

    @helpers.create_mocks({service: ['report', '_clients', 'note_written']})
    def test_a_provider_only_its_inventory_calls_nova_s_is_refused(self):
        """No trait, no record of Nova's by its name: OpenStack Zun's
        compute agent registers such providers.  Nova answers it has no
        such node, and still it is not deleted here."""
        from tests.unit.cloud import uid
        node = uid('zun-container-host-1')
        record = self.serve(node, 'zun-container-host-1',
                            {'VCPU': {'total': 8}, 'MEMORY_MB': {
                                'total': 1024}, 'DISK_GB': {'total': 10}},
                            tagged=False)
        self.refused(node, record, 'decommission it to delete it by an '
                     'explicit tick')

    @helpers.create_mocks({service: ['report', '_clients', 'note_written']})
    def test_an_untagged_node_a_migration_names_is_novas_and_deleted(self):
        """An older Nova tags nothing; a migration Nova still lists from
        host ``dead`` is its own record of the name: the provider is
        Nova's, gone, and deleted."""
        from tests.unit.cloud import uid
        node = uid('dead')
        self.serve(node, 'dead', {'VCPU': {'total': 8}}, tagged=False,
                   migrations=[{
                       'uuid': uid('old-move'), 'instance_uuid': uid('vm'),
                       'status': 'completed', 'migration_type': 'migration',
                       'source_compute': 'dead', 'dest_compute': 'host2',
                       'source_node': 'dead', 'dest_node': 'host2'}])
        self.deleted(node)

    @helpers.create_mocks({service: ['report', '_clients', 'note_written']})
    def test_a_node_nova_says_is_gone_is_deleted(self):
        from tests.unit.cloud import uid
        node = uid('dead')
        self.serve(node, 'dead', {'VCPU': {'total': 8}})
        self.deleted(node)
