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

"""The sweep's port read against a fake Neutron that answers as Neutron 29
does: a port's ``resource_request`` from its own QoS policy or else its
network's, ``qos_policy_id`` refused as a filter, pages cut at ``limit``
or ``pagination_max_limit`` with a next link whenever a page is full."""

import uuid

import pytest

from orphan_dashboard.api import neutron
from orphan_dashboard.api import paging
from orphan_dashboard.reading import collect
from tests.unit.fake_neutron import FakeNeutron
from tests.unit.fake_neutron import network_client
from tests.unit.fake_neutron import NEUTRON


@pytest.fixture
def fake(requests_mock):
    return FakeNeutron(requests_mock)


def test_no_minimum_rule_anywhere_reads_no_port(fake):
    limit = fake.policy('bandwidth_limit', 'dscp_marking')
    fake.port(fake.network(limit), limit)
    assert neutron.resource_ports(network_client()) == []
    assert fake.asked_for('ports') == []


def test_ports_requesting_through_their_own_or_their_networks_policy(fake):
    minimum = fake.policy('minimum_bandwidth')
    limit = fake.policy('bandwidth_limit')
    on_min_net = fake.network(minimum)
    plain_net = fake.network()
    wanted = {fake.port(plain_net, minimum, 'own policy'),
              fake.port(on_min_net, name="network's policy"),
              fake.port(on_min_net, minimum, 'both')}
    fake.port(plain_net, name='no policy')
    fake.port(on_min_net, limit, 'own policy overrides the network')
    fake.port(plain_net, limit, 'no minimum rule')
    found = neutron.resource_ports(network_client())
    assert {p['id'] for p in found} == wanted
    for port in found:
        assert set(port) <= set(neutron.PORT_FIELDS)
        assert port['resource_request']['request_groups']
    query, = fake.asked_for('ports')
    assert query['fields'] == list(neutron.PORT_FIELDS)
    assert 'qos_policy_id' not in query, 'Neutron refuses it (400)'


def test_the_fake_refuses_qos_policy_id_as_neutron_does(fake):
    minimum = fake.policy('minimum_bandwidth')
    response = network_client().get('/v2.0/ports', params={
        'qos_policy_id': minimum}, raise_exc=False)
    assert response.status_code == 400


@pytest.mark.parametrize('max_limit', [-1, 2, 3])
def test_every_page_is_read_whatever_cuts_it(requests_mock, monkeypatch,
                                             max_limit):
    # A page cut by Neutron's pagination_max_limit (2, 3) is shorter than
    # asked (4) but not the last: the next link says so.
    monkeypatch.setattr(neutron, 'PAGE', 4)
    fake = FakeNeutron(requests_mock, max_limit=max_limit)
    minimum = fake.policy('minimum_bandwidth')
    for _ in range(3):
        fake.policy('bandwidth_limit')
    net = fake.network()
    wanted = {fake.port(net, minimum) for _ in range(7)}
    for _ in range(5):
        fake.port(net)
    assert neutron.minimum_policies(network_client()) == {minimum}
    assert {p['id'] for p in neutron.resource_ports(network_client())} == \
        wanted
    size = min(4, max_limit) if max_limit > 0 else 4
    # 12 ports: full pages only, the last one followed by an empty read.
    assert len(fake.asked_for('ports')) == 12 // size + 1


def test_a_preview_reads_every_page_of_its_servers_ports(requests_mock):
    """A server's ports, re-read by device id for a preview or a submit,
    follow the next links too."""
    fake = FakeNeutron(requests_mock, max_limit=2)
    minimum = fake.policy('minimum_bandwidth')
    net = fake.network()
    wanted = {fake.port(net, minimum, device='vm') for _ in range(3)}
    fake.port(net, minimum, device='other')
    found = neutron.server_ports(network_client(), ['vm'])
    assert {p['id'] for p in found} == wanted
    assert len(fake.asked_for('ports')) == 2


def test_a_repeated_page_is_an_error_not_a_short_listing(requests_mock):
    minimum = str(uuid.uuid4())
    requests_mock.get(NEUTRON + '/v2.0/qos/policies', json={'policies': [
        {'id': minimum, 'rules': [{'type': 'minimum_bandwidth'}]}]})
    requests_mock.get(NEUTRON + '/v2.0/ports', json={
        'ports': [{'id': 'a', 'resource_request': None,
                   'binding:host_id': '', 'binding:profile': {}}],
        'ports_links': [{'rel': 'next', 'href': 'ignored'}]})
    with pytest.raises(paging.PagingError):
        neutron.resource_ports(network_client())
    assert collect.read_ports(network_client())['ports'] is None


def test_the_sweep_reads_what_the_fake_requests(fake):
    minimum = fake.policy('minimum_packet_rate', 'minimum_bandwidth')
    port = fake.port(fake.network(minimum))
    read = collect.read_ports(network_client())
    assert set(read['ports']) == {port}
    assert read['ports'][port].requests
