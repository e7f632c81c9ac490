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

"""The sandbox with a real Neutron (``up --neutron``).

What Neutron and Nova really wrote, read back from Placement and Neutron:
the agents' NIC providers, servers booted on QoS ports, and each staged
port incident.  The audit's verdicts and repairs on them are
``tests/e2e/test_ports.py``'s.
"""
import pytest

pytest.importorskip('nova')
pytest.importorskip('neutron')

from tests import clouds  # noqa: E402

BANDWIDTH = 'NET_BW_EGR_KILOBIT_PER_SEC'
HOSTS = ('host1', 'host2', 'host3')


pytestmark = pytest.mark.topology('neutron')
sb = clouds.module_sandbox()


@pytest.fixture(scope='module')
def sess(sb):
    return sb.admin_session()


def placement(sess, sb, path, mv='1.28'):
    r = sess.get(sb.placement_url + path, raise_exc=False,
                 headers={'OpenStack-API-Version': 'placement ' + mv})
    assert r.status_code == 200, r.text
    return r.json()


def neutron(sess, sb, path, ok=200):
    r = sess.get(sb.neutron_url + '/v2.0' + path, raise_exc=False)
    assert r.status_code == ok, r.text
    return r.json() if r.content else None


def allocs(sess, sb, consumer):
    body = placement(sess, sb, '/allocations/%s' % consumer)
    return {rp: a['resources'] for rp, a in body['allocations'].items()}


def port_request(port):
    """{resource class: amount} the port's resource_request asks."""
    out = {}
    for group in port['resource_request']['request_groups']:
        for rc, amount in group['resources'].items():
            out[rc] = out.get(rc, 0) + amount
    return out


def test_catalog_and_agents(sb, sess):
    cfg = sb.config
    assert cfg['neutron']['url'].startswith('http://127.0.0.1:')
    nics = cfg['neutron']['nics']
    assert set(nics) == set(HOSTS)
    agents = neutron(sess, sb, '/agents')['agents']
    assert sorted((a['host'], a['agent_type'], a['alive'])
                  for a in agents) == [
        (h, 'Open vSwitch agent', True) for h in HOSTS]
    catalog = sess.auth.get_access(sess).service_catalog
    assert catalog.url_for(service_type='network',
                           interface='public') == cfg['neutron']['url']


def test_nic_providers_nested_under_compute_nodes(sb, sess):
    rps = {p['uuid']: p for p in placement(
        sess, sb, '/resource_providers', mv='1.14')['resource_providers']}
    for host in HOSTS:
        nic = rps[sb.config['neutron']['nics'][host]]
        assert nic['name'] == '%s:Open vSwitch agent:br-phys' % host
        agent = rps[nic['parent_provider_uuid']]
        assert agent['name'] == '%s:Open vSwitch agent' % host
        assert agent['parent_provider_uuid'] == sb.config['hosts'][host]
        assert nic['root_provider_uuid'] == sb.config['hosts'][host]
        inv = placement(sess, sb, '/resource_providers/%s/inventories'
                        % nic['uuid'])['inventories']
        assert inv[BANDWIDTH]['total'] == 10000000
        assert inv['NET_BW_IGR_KILOBIT_PER_SEC']['total'] == 10000000
        traits = placement(sess, sb, '/resource_providers/%s/traits'
                           % nic['uuid'], mv='1.6')['traits']
        assert 'CUSTOM_PHYSNET_PHYSNET0' in traits


def test_qos_ports_healthy(sb, sess):
    entry = sb.stage('qos_ports_healthy')
    nics = sb.config['neutron']['nics']
    assert len(entry['servers']) == len(HOSTS)
    for server in entry['servers']:
        host = server['host']
        assert server['status'] == 'ACTIVE'
        port = neutron(sess, sb, '/ports/%s'
                       % entry['checks']['ports'][server['uuid']])['port']
        assert port_request(port) == {BANDWIDTH: 1000}
        assert port['binding:host_id'] == host
        assert list(port['binding:profile']['allocation'].values()) == [
            nics[host]]
        held = allocs(sess, sb, server['uuid'])
        assert held[nics[host]] == {BANDWIDTH: 1000}
        assert held[sb.config['hosts'][host]] == {
            'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}
        assert len(held) == 2


def test_routed_segment_provider(sb, sess):
    entry = sb.stage('routed_segment')
    segment = entry['checks']['segment']
    rp = placement(sess, sb, '/resource_providers/%s' % segment,
                   mv='1.14')
    assert rp['name'] == entry['checks']['segment_name']
    assert rp['parent_provider_uuid'] is None
    inv = placement(sess, sb, '/resource_providers/%s/inventories'
                    % segment)['inventories']
    assert inv['IPV4_ADDRESS']['total'] == 254
    aggs = placement(sess, sb, '/resource_providers/%s/aggregates'
                     % segment, mv='1.19')['aggregates']
    assert len(aggs) == 1
    seg = neutron(sess, sb, '/segments/%s' % segment)['segment']
    assert seg['physical_network'] == 'physnet0'


def test_port_deleted_in_neutron_leaves_bandwidth(sb, sess):
    entry = sb.stage('port_deleted_in_neutron')
    server = entry['servers'][0]
    checks = entry['checks']
    neutron(sess, sb, '/ports/%s' % checks['port'], ok=404)
    assert neutron(sess, sb, '/ports?device_id=%s'
                   % server['uuid'])['ports'] == []
    held = allocs(sess, sb, server['uuid'])
    assert held[checks['nic']] == {BANDWIDTH: 1000}


def test_port_allocation_removed(sb, sess):
    entry = sb.stage('port_allocation_removed')
    server = entry['servers'][0]
    checks = entry['checks']
    held = allocs(sess, sb, server['uuid'])
    assert checks['nic'] not in held
    assert list(held) == [sb.config['hosts']['host3']]
    port = neutron(sess, sb, '/ports/%s' % checks['port'])['port']
    assert list(port['binding:profile']['allocation'].values()) == [
        checks['nic']]
    assert port_request(port) == {BANDWIDTH: 1000}


def test_qos_rule_changed(sb, sess):
    entry = sb.stage('qos_rule_changed')
    server = entry['servers'][0]
    checks = entry['checks']
    # Neutron 29 refuses the rule update under a bound port.
    assert checks['rule_update_status'] == 501
    port = neutron(sess, sb, '/ports/%s' % checks['port'])['port']
    assert port_request(port) == {BANDWIDTH: 2000}
    assert list(port['binding:profile']['allocation'].values()) == [
        checks['nic']]
    assert allocs(sess, sb, server['uuid'])[checks['nic']] == {
        BANDWIDTH: 1000}


def test_port_migrated_left(sb, sess):
    entry = sb.stage('port_migrated_left')
    server = entry['servers'][0]
    checks = entry['checks']
    assert server['host'] == 'host2'
    assert entry['migrations'][0]['status'] == 'confirmed'
    port = neutron(sess, sb, '/ports/%s' % checks['port'])['port']
    assert port['binding:host_id'] == 'host2'
    assert list(port['binding:profile']['allocation'].values()) == [
        checks['nic']]
    held = allocs(sess, sb, server['uuid'])
    assert held[checks['nic']] == {BANDWIDTH: 1000}
    assert held[checks['old_nic']] == {BANDWIDTH: 1000}
    assert sb.config['hosts']['host3'] not in held
