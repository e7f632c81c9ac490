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

What Neutron really wrote, read back from Placement and Neutron: the
agents and their NIC providers.
"""
import pytest

pytest.importorskip('nova')
pytest.importorskip('neutron')

from sandbox import harness  # noqa: E402

BANDWIDTH = 'NET_BW_EGR_KILOBIT_PER_SEC'
HOSTS = ('host1', 'host2', 'host3')


@pytest.fixture(scope='module')
def sb():
    yield from harness.sandbox_fixture(timeout=300, neutron=True)


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
