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

"""Absence is never proof: what a listing leaves out or a policy hides is
unknown, and only Nova's answer for one item proves a destructive verdict
(a node gone, a server deleted)."""

import dataclasses
from unittest import mock

from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.api import neutron
from orphan_dashboard.api import nova
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import reasons
from orphan_dashboard.reading import collect
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid

H1 = uid('host1')


def _judged(cloud):
    report = classify.audit(cloud.snapshot(), min_age=0)
    return {(f.consumer, f.provider): f for f in report.findings}, report


def test_a_node_nova_did_not_answer_for_is_protected_not_orphaned():
    """Left out of the listing (a page Nova cut short) and its one-node
    read failed: it may be alive, whatever it holds is kept."""
    cloud = Cloud()
    node = cloud.gone('quiet')
    cloud.tag(node)
    cloud.unanswered.add(node)
    ghost = cloud.deleted('ghost', node)
    found, report = _judged(cloud)
    tree = report.provider(node)
    assert (tree.service_state, tree.node_gone, tree.orphaned_provider) == (
        'unconfirmed', False, False)
    assert tree.not_orphaned().code == 'provider.unproven'
    finding = found[(ghost, node)]
    assert (finding.verdict, finding.actions) == (m.PROTECTED, ())
    assert finding.reason.code == 'protected.unproven_node'


def test_a_host_not_mapped_to_a_cell_is_said_and_never_deleted():
    """Its service is listed, Nova answers 404 for its node: the host is
    alive, waiting for ``nova-manage cell_v2 discover_hosts``."""
    cloud = Cloud()
    node = cloud.unmapped('new-host')
    cloud.allocate(uid('early'), node)
    found, report = _judged(cloud)
    tree = report.provider(node)
    assert (tree.service_state, tree.unmapped, tree.dead,
            tree.orphaned_provider, tree.needs_attention) == (
        'not mapped to a cell', True, False, False, True)
    assert 'discover_hosts' in str(tree.not_orphaned())
    finding = found[(uid('early'), node)]
    assert (finding.verdict, finding.reason.code) == (
        m.PROTECTED, 'protected.unmapped_node')


@pytest.mark.parametrize('node', ['host9.example.com', uid('ironic-node')])
def test_a_node_named_unlike_its_unmapped_host_is_never_gone(node):
    """libvirt names a node by the hypervisor's FQDN, Ironic by the node's
    uuid: a provider's name is no host's.  While compute service host9
    has no node in Nova's listing, a provider Nova answers 404 for may be
    its node, alive, whatever its name: kept, the service named."""
    cloud = Cloud()
    rp = cloud.unmapped('host9', node=node)
    cloud.tag(rp)
    early = cloud.deleted('early', rp)
    found, report = _judged(cloud)
    tree = report.provider(rp)
    assert (tree.unmapped, tree.node_gone, tree.dead,
            tree.orphaned_provider, tree.nodeless) == (
        True, False, False, False, ('host9',))
    assert tree.not_orphaned().code == 'provider.unmapped'
    assert 'host9' in str(tree.not_orphaned())
    finding = found[(early, rp)]
    assert (finding.verdict, finding.actions) == (m.PROTECTED, ())
    assert finding.reason.code == 'protected.unmapped_node'
    assert 'host9' in str(finding.reason) and node in str(finding.reason)


def test_a_service_without_a_node_keeps_every_unlisted_root_of_novas():
    """One service with no node keeps every root Nova answers 404 for,
    not only one named after it; once every service has its node, a
    root Nova answers 404 for is gone."""
    cloud = Cloud()
    dead = cloud.gone('dead')
    cloud.tag(dead)
    cloud.services['fresh'] = m.Service('fresh', 'up')
    _found, report = _judged(cloud)
    tree = report.provider(dead)
    assert (tree.unmapped, tree.orphaned_provider, tree.nodeless) == (
        True, False, ('fresh',))
    del cloud.services['fresh']
    _found, report = _judged(cloud)
    assert report.provider(dead).orphaned_provider


def test_only_a_node_nova_says_is_gone_is_an_orphaned_provider():
    cloud = Cloud()
    node = cloud.gone('dead')
    cloud.tag(node)
    _found, report = _judged(cloud)
    tree = report.provider(node)
    assert tree.orphaned_provider and tree.not_orphaned() is None
    assert (tree.service_state, tree.dead) == ('no compute node', True)


def test_a_sharing_provider_is_never_an_orphaned_provider():
    cloud = Cloud()
    ceph = cloud.sharing_provider('ceph')
    cloud.tag(ceph)
    _found, report = _judged(cloud)
    assert report.provider(ceph).not_orphaned().code == 'provider.sharing'


def test_a_host_a_policy_hides_is_unknown_and_its_server_protected():
    """``os_compute_api:os-extended-server-attributes`` denied: Nova
    leaves the host and node out; the server lives somewhere, not
    nowhere."""
    body = {'id': uid('vm'), 'name': 'vm', 'status': 'ACTIVE',
            'tenant_id': 'p', 'user_id': 'u', 'image': '',
            'flavor': {'vcpus': 1, 'ram': 512, 'disk': 1,
                       'extra_specs': {}, 'original_name': 'small'}}
    server = parse.server(body)
    assert (server.host, server.node, server.hidden) == (
        None, None, (m.EXTENDED_ATTRIBUTES_RULE,))
    cloud = Cloud()
    cloud.servers[server.uuid] = server
    cloud.allocate(server.uuid, H1)
    found, report = _judged(cloud)
    finding = found[(server.uuid, H1)]
    assert (finding.verdict, finding.actions) == (m.PROTECTED, ())
    assert m.EXTENDED_ATTRIBUTES_RULE in str(finding.reason)
    assert report.hidden == ((m.EXTENDED_ATTRIBUTES_RULE, 1),)
    assert m.EXTENDED_ATTRIBUTES_RULE in str(reasons.hidden_by_policy(report))
    shown = parse.server(dict(body, **{
        'OS-EXT-SRV-ATTR:host': 'host1',
        'OS-EXT-SRV-ATTR:hypervisor_hostname': 'host1'}))
    assert shown.hidden == ()


def test_a_resource_request_a_policy_hides_protects_the_port_allocations():
    """Neutron leaves ``resource_request`` out under its policy: no port
    seems to request anything, which would call every NIC allocation
    leaked."""
    ports = [{'id': 'p', 'name': 'p', 'device_id': 'vm',
              'binding:host_id': 'host1', 'binding:profile': {},
              'revision_number': 1}]
    with mock.patch.object(neutron, 'minimum_policies',
                           return_value={'q'}), \
            mock.patch.object(neutron, '_pages', return_value=[ports]):
        read = collect.read_ports('network')
    assert read == dict(ports=None, neutron=m.NEUTRON_HIDDEN)
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    nic = cloud.nic('host1')
    cloud.allocate(vm, H1)
    cloud.allocate(vm, nic, {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
    cloud.ports, cloud.neutron = None, m.NEUTRON_HIDDEN
    found, _report = _judged(cloud)
    assert found[(vm, nic)].verdict == m.PROTECTED
    assert found[(vm, nic)].reason.code == 'protected.neutron_hidden'


def test_a_consumer_nova_still_shows_alone_is_a_live_server():
    """Its instance actions answer (as a deleted server's do), but so
    does ``GET /servers/{id}``: a listing cut short left it out."""
    cloud = Cloud()
    vm = uid('listed-nowhere')
    cloud.allocate(vm, H1)
    snapshot = cloud.snapshot()
    body = {'id': vm, 'name': 'alive', 'status': 'ACTIVE',
            'OS-EXT-SRV-ATTR:host': 'host1',
            'OS-EXT-SRV-ATTR:hypervisor_hostname': 'host1',
            'tenant_id': 'p', 'user_id': 'u',
            'image': {'id': 'img', 'properties': {}},
            'flavor': {'vcpus': 1, 'ram': 512, 'disk': 1,
                       'extra_specs': {}, 'original_name': 'small'}}
    with mock.patch.object(nova, 'instance_known', return_value=True), \
            mock.patch.object(nova, 'server_get', return_value=body), \
            mock.patch('orphan_dashboard.api.placement.consumer_allocations',
                       return_value={'allocations': {}}):
        collect.identify(snapshot, None, None, [vm], 2, fresh={vm})
    assert vm in snapshot.servers and vm not in snapshot.known_instances
    (finding,) = classify.Auditor(snapshot, min_age=0).consumer_findings(vm)
    assert finding.verdict == m.OK


def test_a_consumer_nova_does_not_show_alone_stays_unresolved():
    cloud = Cloud()
    vm = uid('listed-nowhere')
    cloud.allocate(vm, H1)
    snapshot = cloud.snapshot()
    with mock.patch.object(nova, 'instance_known', return_value=True), \
            mock.patch.object(nova, 'server_get',
                              side_effect=ks_exc.ServiceUnavailable()):
        collect.identify(snapshot, None, None, [vm], 2, fresh={vm})
    assert vm in snapshot.unresolved and vm not in snapshot.known_instances
    (finding,) = classify.Auditor(snapshot, min_age=0).consumer_findings(vm)
    assert (finding.verdict, finding.actions) == (m.PROTECTED, ())


def test_a_servers_own_node_nova_did_not_answer_for_is_never_rewritten():
    """A live server's node left out of the listing and unanswered alone:
    what the server holds there, too much or nothing, is protected like
    any row on that node, never rewritten on a tree nobody proved."""
    cloud = Cloud()
    node = cloud.gone('quiet')
    cloud.tag(node)
    cloud.unanswered.add(node)
    vm = cloud.server('vm', 'quiet')
    cloud.allocate(vm, node, {'VCPU': 4, 'MEMORY_MB': 512, 'DISK_GB': 1})
    bare = cloud.server('bare', 'quiet')
    found, _report = _judged(cloud)
    for consumer in (vm, bare):
        finding = found[(consumer, node)]
        assert (finding.verdict, finding.actions) == (m.PROTECTED, ())
        assert finding.reason.code == 'protected.unproven_node'


def test_a_server_nova_did_not_answer_for_alone_is_protected_not_fatal():
    """A preview reads each consumer's server alone: one Nova did not
    answer for (a timeout, a 5xx: its cell slow or down) is unresolved,
    what it holds protected; the preview goes on and judges the others."""
    from orphan_dashboard.api import client
    from orphan_dashboard.api import placement
    from orphan_dashboard.reading import refresh

    cloud = Cloud()
    slow, fast = cloud.server('slow', 'host1'), cloud.server('fast', 'host1')
    for server in (slow, fast):
        cloud.allocate(server, H1, {'VCPU': 4, 'MEMORY_MB': 512,
                                    'DISK_GB': 1})
    topology = collect.topology_of(cloud.snapshot())
    bodies = {fast: {'id': fast, 'name': 'fast', 'status': 'ACTIVE',
                     'tenant_id': 'p', 'user_id': 'u', 'image': '',
                     'OS-EXT-SRV-ATTR:host': 'host1',
                     'OS-EXT-SRV-ATTR:hypervisor_hostname': 'host1',
                     'flavor': {'vcpus': 1, 'ram': 512, 'disk': 1,
                                'extra_specs': {},
                                'original_name': 'small'}}}

    def server_get(nova_client, uuid):
        if uuid == slow:
            raise ks_exc.ConnectTimeout('GET /servers/%s timed out' % uuid)
        return bodies[uuid]

    with mock.patch.object(nova, 'server_get', side_effect=server_get), \
            mock.patch.object(placement, 'consumer_allocations',
                              side_effect=lambda c, u: {
                                  'allocations': {
                                      rp: {'resources': held} for rp, held
                                      in cloud.consumers[u].allocations
                                      .items()},
                                  'consumer_generation': 1,
                                  'project_id': 'p', 'user_id': 'u'}), \
            mock.patch.object(nova, 'migration_list', return_value=[]), \
            mock.patch.object(nova, 'instance_known', return_value=True), \
            mock.patch.object(collect, 'read_ports', return_value={}), \
            mock.patch.object(collect, 'read_port_candidates',
                              return_value={}):
        snapshot = refresh.consumer_snapshot(
            client.Clients('placement', 'nova'), [slow, fast],
            topology=topology)
    assert snapshot.unresolved == {slow}
    assert slow not in snapshot.servers
    assert slow not in snapshot.known_instances
    found = {f.consumer: f for f in classify.audit(
        snapshot, min_age=0).findings}
    assert (found[slow].verdict, found[slow].reason.code) == (
        m.PROTECTED, 'protected.unresolved')
    assert found[fast].verdict == m.WRONG_AMOUNT


def test_a_preview_lists_its_servers_migrations_beside_the_topology():
    """With a cell slow, each of Nova's listings waits for it: the
    migrations of the servers a preview reads are listed while the
    topology is read, not after it (the topology's read here ends only
    once they were asked for)."""
    import threading

    from orphan_dashboard.api import client
    from orphan_dashboard.api import placement
    from orphan_dashboard.reading import refresh

    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    cloud.allocate(vm, H1, {'VCPU': 4, 'MEMORY_MB': 512, 'DISK_GB': 1})
    topology = collect.topology_of(cloud.snapshot())
    asked = threading.Event()

    def read_topology(placement_client, nova_client):
        assert asked.wait(10), 'the migrations waited for the topology'
        return topology

    def migration_list(nova_client, **query):
        assert query == {'instance_uuid': vm}
        asked.set()
        return []

    with mock.patch.object(collect, 'read_topology',
                           side_effect=read_topology), \
            mock.patch.object(nova, 'server_get', return_value={
                'id': vm, 'name': 'vm', 'status': 'ACTIVE',
                'tenant_id': 'p', 'user_id': 'u', 'image': '',
                'OS-EXT-SRV-ATTR:host': 'host1',
                'OS-EXT-SRV-ATTR:hypervisor_hostname': 'host1',
                'flavor': {'vcpus': 4, 'ram': 512, 'disk': 1,
                           'extra_specs': {}, 'original_name': 'big'}}), \
            mock.patch.object(placement, 'consumer_allocations',
                              return_value={
                                  'allocations': {H1: {'resources': {
                                      'VCPU': 4, 'MEMORY_MB': 512,
                                      'DISK_GB': 1}}},
                                  'consumer_generation': 1,
                                  'project_id': 'p', 'user_id': 'u'}), \
            mock.patch.object(nova, 'migration_list',
                              side_effect=migration_list), \
            mock.patch.object(collect, 'read_ports', return_value={}), \
            mock.patch.object(collect, 'read_port_candidates',
                              return_value={}):
        snapshot = refresh.consumer_snapshot(
            client.Clients('placement', 'nova'), [vm])
    assert asked.is_set() and set(snapshot.servers) == {vm}
    assert snapshot.consumers[vm].generation == 1


def buried_on_unmapped():
    """host9 not mapped to a cell yet (its node's provider named by its
    FQDN): a server the conductor buried in cell0 holds the scheduler's
    claim there, beside a server of host9's own."""
    cloud = Cloud()
    rp = cloud.unmapped('host9', node='host9.example.com')
    cloud.tag(rp)
    buried = cloud.server('buried', None, status=m.ERROR_STATUS)
    cloud.allocate(buried, rp)
    early = cloud.deleted('early', rp)
    return cloud, rp, buried, early


def test_a_server_buried_in_cell0_on_an_unmapped_host_is_a_leftover():
    """Nova shows the buried server alone in ERROR with no host: its
    claim on a node of a host not mapped yet is deleted now, the finding
    naming both steps; the rest of that node stays protected."""
    cloud, rp, buried, early = buried_on_unmapped()
    found, report = _judged(cloud)
    finding = found[(buried, rp)]
    assert (finding.verdict, finding.actions, finding.reason.code) == (
        m.MOVED, (m.DELETE_AND_HEAL,), 'moved.buried')
    plan = classify.Auditor(cloud.snapshot(), min_age=0).plan(
        buried, rp, m.DELETE_AND_HEAL)
    assert plan.after == {}     # nowhere to heal it onto
    text = str(finding.reason)
    assert 'discover_hosts' in text and 'host9' in text and \
        'host9.example.com' in text and 'offered now' in text
    assert found[(early, rp)].reason.code == 'protected.unmapped_node'
    assert report.provider(rp).unmapped


@pytest.mark.parametrize('change', [
    {'status': 'ACTIVE'}, {'task_state': 'spawning'}, {'host': 'host9'},
    {'status': m.ERROR_STATUS, 'hidden': ('host', 'node')}])
def test_only_a_hostless_idle_error_server_is_taken_off_an_unmapped_host(
        change):
    """A server with a status, a task or a host, or one whose host a
    policy hides, is no proof: protected as the node is."""
    cloud, rp, buried, _early = buried_on_unmapped()
    cloud.servers[buried] = dataclasses.replace(cloud.servers[buried],
                                                **change)
    found, _report = _judged(cloud)
    assert found[(buried, rp)].verdict == m.PROTECTED, found[(buried, rp)]
    assert not found[(buried, rp)].actions
