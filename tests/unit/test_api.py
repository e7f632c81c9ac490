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

"""API helpers that need no server: paging safety, timeouts, the cloud."""

from unittest import mock

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
import pytest
import requests

from orphan_dashboard.api import client
from orphan_dashboard.api import nova
from orphan_dashboard.api import paging
from orphan_dashboard import conf
from tests.unit.fake_neutron import network_client
from tests.unit.fake_neutron import NEUTRON


NOVA = 'http://nova.test/v2.1'


def nova_adapter():
    """The adapter the panel builds, over a session ``requests_mock`` sees."""
    return adapter.Adapter(ks_session.Session(), service_type='compute',
                           auth=token_endpoint.Token(NOVA, 'token'))


def serve_pages(requests_mock, *pages, max_limit=2):
    """A Nova answering the server list with ``pages`` in turn (then empty
    ones), linking a next page after a full one as Nova does (full: as long
    as its ``max_limit``); the markers it was asked for."""
    pages = list(pages)
    markers = []

    def page(request, context):
        markers.append(request.qs.get('marker', [None])[0])
        servers = [{'id': i} for i in (pages.pop(0) if pages else [])]
        body = {'servers': servers}
        if len(servers) == max_limit:
            body['servers_links'] = [{'rel': 'next', 'href': 'ignored'}]
        return body
    requests_mock.get(NOVA + '/servers/detail', json=page)
    return markers


def test_paging_follows_novas_next_links(requests_mock):
    # Pages cut by Nova's max_limit (2) are linked to the next: read on.
    markers = serve_pages(requests_mock, ['a', 'b'], ['c'])
    assert [s['id'] for s in nova.server_list(nova_adapter())] == [
        'a', 'b', 'c']
    assert markers == [None, 'b'], 'no empty read after the short page'
    request = requests_mock.request_history[0]
    assert request.qs['all_tenants'] == ['1']
    assert request.qs['limit'] == [str(nova.PAGE)]
    assert request.headers['OpenStack-API-Version'] == 'compute 2.69'


def test_a_full_last_page_costs_one_empty_read(requests_mock):
    markers = serve_pages(requests_mock, ['a', 'b'], ['c', 'd'])
    assert len(nova.server_list(nova_adapter())) == 4
    assert markers == [None, 'b', 'd']


def test_each_page_is_told_as_it_arrives(requests_mock):
    serve_pages(requests_mock, ['a', 'b'], ['c'])
    told = []
    nova.server_list(nova_adapter(), on_page=lambda page: told.append(
        [s['id'] for s in page]))
    assert told == [['a', 'b'], ['c']]


def test_hypervisors_are_read_past_a_page_nova_shortened(requests_mock):
    """Nova leaves out a node whose service is gone, and links no next page
    after the page it shortened: the hypervisors are read up to an empty
    page, a few at a time."""
    pages = [['n1', 'n3'], ['n4'], []]      # n2's service was deleted
    asked = []

    def page(request, context):
        asked.append((request.qs.get('marker', [None])[0],
                      request.qs['limit']))
        return {'hypervisors': [{'id': n} for n in pages.pop(0)]}
    requests_mock.get(NOVA + '/os-hypervisors/detail', json=page)
    assert [h['id'] for h in nova.hypervisor_list(nova_adapter())] == [
        'n1', 'n3', 'n4']
    limit = [str(nova.HYPERVISOR_PAGE)]
    assert asked == [(None, limit), ('n3', limit), ('n4', limit)]
    assert requests_mock.last_request.headers[
        'OpenStack-API-Version'] == 'compute 2.53'


def test_with_a_cell_missing_a_short_page_of_hypervisors_is_the_last(
        requests_mock, monkeypatch):
    """Each page waits for a slow cell's database: with Nova's services
    showing a cell it did not reach, a page shorter than the limit ends
    the listing (the nodes it may hide are asked about alone), while a
    full one is still read past, and the services are asked only at a
    short page."""
    monkeypatch.setattr(nova, 'HYPERVISOR_PAGE', 2)
    pages = [['n1', 'n2'], ['n4'], []]
    asked, told = [], []

    def page(request, context):
        asked.append(request.qs.get('marker', [None])[0])
        return {'hypervisors': [{'id': n} for n in pages.pop(0)]}
    requests_mock.get(NOVA + '/os-hypervisors/detail', json=page)

    def cell_missing():
        told.append(asked[-1])
        return True
    assert [h['id'] for h in nova.hypervisor_list(
        nova_adapter(), cell_missing)] == ['n1', 'n2', 'n4']
    assert asked == [None, 'n2'] and told == ['n2']
    # Every cell answering: up to the empty page, as before.
    pages[:] = [['n1', 'n2'], ['n4'], []]
    del asked[:]
    assert len(nova.hypervisor_list(nova_adapter(), lambda: False)) == 3
    assert asked == [None, 'n2', 'n4']


def test_migrations_filter_by_novas_query_names(requests_mock):
    requests_mock.get(NOVA + '/os-migrations', json={'migrations': []})
    assert nova.migration_list(nova_adapter(), host='host1', **{
        'changes-since': '2026-11-23T00:00:00Z'}) == []
    query = requests_mock.last_request.qs
    assert (query['host'], query['changes-since']) == (
        ['host1'], ['2026-11-23t00:00:00z'])
    assert requests_mock.last_request.headers[
        'OpenStack-API-Version'] == 'compute 2.59'


def test_paging_stops_on_a_repeated_marker(requests_mock):
    """A Nova that hands back the same page would loop forever, or with a
    cap, silently cut the list: servers missing from it look orphaned."""
    serve_pages(requests_mock, ['a', 'b'], ['c', 'd'], ['c', 'd'], ['e'])
    with pytest.raises(paging.PagingError, match='repeated the page after d'):
        nova.server_list(nova_adapter())


def serve_a_listing_that_loses(requests_mock, url, key, items, lost,
                               gone, **fields):
    """A service's marker paging, two items a page, over ``items`` (each
    with ``fields``), which lose ``lost`` once the first page is read; a
    marker no longer there is answered ``gone`` (``(status, body)``).
    The markers asked."""
    asked = []

    def page(request, context):
        marker = request.qs.get('marker', [None])[0]
        asked.append(marker)
        if marker is not None and marker not in items:
            context.status_code, body = gone
            return body
        start = items.index(marker) + 1 if marker else 0
        found = items[start:start + 2]
        if len(asked) == 1:
            items.remove(lost)
        return {key: [dict(fields, id=i) for i in found],
                key + '_links': [{'rel': 'next', 'href': 'more'}]
                if len(found) == 2 else []}
    requests_mock.get(url, json=page)
    return asked


def test_nova_listing_goes_on_past_a_server_gone_meanwhile(requests_mock):
    """The server that ended a page deleted and archived before the next
    page was asked: Nova refuses its marker (400); the listing goes on
    after the server before it (here the start), each server once."""
    asked = serve_a_listing_that_loses(
        requests_mock, NOVA + '/servers/detail', 'servers',
        ['a', 'b', 'c', 'd', 'e'], 'b',
        (400, {'badRequest': {'message': 'marker [b] not found'}}))
    assert [s['id'] for s in nova.server_list(nova_adapter())] == [
        'a', 'b', 'c', 'd', 'e']
    assert asked == [None, 'b', None, 'c', 'e']


def test_neutron_listing_goes_on_past_a_port_deleted_meanwhile(
        requests_mock):
    """Neutron answers a deleted port's marker 404."""
    from orphan_dashboard.api import neutron
    asked = serve_a_listing_that_loses(
        requests_mock, NEUTRON + '/v2.0/ports', 'ports',
        ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'], 'p2',
        (404, {'NeutronError': {'type': 'PortNotFound'}}),
        resource_request={'resources': {'NET_BW_EGR_KILOBIT_PER_SEC': 1}},
        **{'binding:host_id': 'host1', 'binding:profile': {}})
    with mock.patch.object(neutron, 'minimum_policies',
                           return_value={'qos'}):
        ports = neutron.resource_ports(network_client())
    assert [p['id'] for p in ports] == ['p1', 'p2', 'p3', 'p4', 'p5', 'p6']
    assert asked == [None, 'p2', None, 'p3', 'p5']


def test_a_marker_refused_twice_is_an_error(requests_mock):
    """A service that refused every marker would restart the listing for
    ever: a marker refused again is no item gone, and its error stands."""
    page = {'json': {'servers': [{'id': 'a'}, {'id': 'b'}],
                     'servers_links': [{'rel': 'next', 'href': 'more'}]}}
    refused = {'status_code': 400,
               'json': {'badRequest': {'message': 'no'}}}
    requests_mock.get(NOVA + '/servers/detail',
                      [page, refused, page, refused, page])
    with pytest.raises(ks_exc.BadRequest):
        nova.server_list(nova_adapter())
    assert requests_mock.call_count == 4


@pytest.mark.parametrize('status,body,error', [
    (403, {'forbidden': {'message': 'no'}}, ks_exc.Forbidden),
    (409, {'conflictingRequest': {'message': 'busy'}}, ks_exc.Conflict),
    # Bodies novaclient's own parser fails on (a proxy, a gateway).
    (409, {'errors': [{'status': 409, 'detail': 'busy'}]}, ks_exc.Conflict),
    (502, {'errors': ['upstream']}, ks_exc.BadGateway),
    (503, '<html>down</html>', ks_exc.ServiceUnavailable)])
def test_novas_errors_are_keystoneauths(requests_mock, status, body, error):
    """Callers handle Nova's and Placement's errors alike."""
    content = {'json': body} if isinstance(body, dict) else {'text': body}
    requests_mock.delete(NOVA + '/os-services/s1', status_code=status,
                         **content)
    with pytest.raises(error) as raised:
        nova.delete_service(nova_adapter(), 's1')
    assert type(raised.value) is error


@pytest.mark.horizon
def test_the_panel_session_has_a_timeout(settings):
    from orphan_dashboard.content.orphaned_allocations import service
    settings.ORPHAN_AUDIT_API_TIMEOUT = 7
    request = mock.Mock(spec=['user'])
    request.user.token.id = 'token'
    request.user.endpoint = 'http://keystone.test:5000/v3/'
    with mock.patch('openstack_dashboard.api.base.url_for',
                    return_value='http://placement'):
        clients = service._clients(request)
    assert clients.placement.session.timeout == 7
    assert clients.nova.session is clients.placement.session
    # Nova's listings wait past Nova's own 60 s for a cell; nothing else.
    assert clients.nova.listing_timeout == \
        conf.NOVA_LISTING_TIMEOUT.default > 60
    assert clients.placement.listing_timeout is None
    # Nova's cells answer within its CELL_TIMEOUT, the setting says.
    settings.ORPHAN_AUDIT_NOVA_CELL_TIMEOUT = 4
    del request._orphan_clients
    with mock.patch('openstack_dashboard.api.base.url_for',
                    return_value='http://placement'):
        clients = service._clients(request)
    assert (clients.nova.cell_timeout, clients.placement.cell_timeout) == (
        4, None)
    # Keystone (for names) at its unversioned root: paths name /v3.
    assert clients.identity.session is clients.placement.session
    assert clients.identity.auth.endpoint == 'http://keystone.test:5000'


def test_the_cli_session_has_a_timeout(monkeypatch):
    for name, value in (('OS_AUTH_TYPE', 'admin_token'),
                        ('OS_ENDPOINT', 'http://placement.test'),
                        ('OS_TOKEN', 'x')):
        monkeypatch.setenv(name, value)
    assert client.for_cloud().placement.session.timeout == \
        client.DEFAULT_TIMEOUT
    assert client.for_cloud(timeout=3).nova.session.timeout == 3


def test_a_clouds_yaml_endpoint_override_is_taken(monkeypatch, tmp_path):
    """``placement_endpoint_override`` (a gateway of Placement's own, as
    ``openstack`` takes it): the adapter goes there, the others to their
    catalog's."""
    config = tmp_path / 'clouds.yaml'
    config.write_text(
        'clouds:\n  gw:\n    auth_type: admin_token\n    auth:\n'
        '      endpoint: http://nova.test\n      token: x\n'
        '    placement_endpoint_override: http://gateway.test:8780\n')
    monkeypatch.setenv('OS_CLIENT_CONFIG_FILE', str(config))
    clients = client.for_cloud('gw')
    assert clients.placement.endpoint_override == 'http://gateway.test:8780'
    assert clients.nova.endpoint_override is None


@pytest.mark.parametrize('api,listing,waits', [
    (3, None, None), (3, 90, 90), (120, 90, 120)])
def test_a_listing_waits_the_longer_of_both_timeouts(monkeypatch, api,
                                                     listing, waits):
    for name, value in (('OS_AUTH_TYPE', 'admin_token'),
                        ('OS_ENDPOINT', 'http://placement.test'),
                        ('OS_TOKEN', 'x')):
        monkeypatch.setenv(name, value)
    clients = client.for_cloud(timeout=api, listing_timeout=listing)
    assert clients.nova.listing_timeout == waits
    assert clients.nova.session.timeout == api


def test_novas_listings_and_only_they_wait_the_listing_timeout(
        requests_mock):
    """A listing reaches every cell, and Nova waits up to 60 s for each:
    it waits the adapter's listing timeout; a read of one item keeps the
    session's."""
    nova_client = nova_adapter()
    nova_client.listing_timeout = 90
    sent = []
    real = requests.Session.send

    def send(session, request, **kwargs):
        sent.append((request.path_url.split('?')[0], kwargs.get('timeout')))
        return real(session, request, **kwargs)

    requests_mock.get(NOVA + '/servers/detail', json={'servers': []})
    requests_mock.get(NOVA + '/servers', json={'servers': []})
    requests_mock.get(NOVA + '/os-services', json={'services': []})
    requests_mock.get(NOVA + '/servers/s1', json={'server': {'id': 's1'}})
    with mock.patch.object(requests.Session, 'send', send):
        nova.server_list(nova_client)
        nova.down_cell_servers(nova_client)
        nova.service_list(nova_client)
        nova.server_get(nova_client, 's1')
    assert sent == [('/v2.1/servers/detail', 90), ('/v2.1/servers', 90),
                    ('/v2.1/os-services', 90), ('/v2.1/servers/s1', None)]


@pytest.mark.parametrize('status,known', [
    (200, True), (404, False), (403, None), (500, None)])
def test_whether_nova_knew_a_consumer(requests_mock, status, known):
    """None when policy forbids reading a deleted server's instance
    actions, or when its cell is down (Nova answers 500): nobody can tell,
    so the consumer is protected."""
    body = ({'instanceActions': []} if status == 200 else
            {'error': {'message': 'no', 'code': status}})
    requests_mock.get(NOVA + '/servers/uuid/os-instance-actions',
                      status_code=status, json=body)
    assert nova.instance_known(nova_adapter(), 'uuid') is known
    # Below 2.27 Nova reads only its legacy microversion header.
    assert requests_mock.last_request.headers[
        'X-OpenStack-Nova-API-Version'] == '2.21'


@pytest.mark.parametrize('status,shown', [
    (200, True), (404, False), (500, None)])
def test_one_compute_node_is_asked_for_by_its_uuid(requests_mock, status,
                                                   shown):
    """Nova shows a compute node from the first cell that has it, even
    while another cell is down; a 404 says it has none; a 500 (the down
    cell in the way) says nothing: its error stands."""
    node = '5f6bb6f5-0000-4000-8000-000000000001'
    body = ({'hypervisor': {
        'id': node, 'hypervisor_hostname': node, 'state': 'up',
        'status': 'enabled', 'service': {'host': 'ironic-1', 'id': 's'}}}
        if status == 200 else {'error': {'message': 'no', 'code': status}})
    requests_mock.get(NOVA + '/os-hypervisors/' + node, status_code=status,
                      json=body)
    if shown is None:
        with pytest.raises(ks_exc.InternalServerError):
            nova.hypervisor_get(nova_adapter(), node)
        return
    got = nova.hypervisor_get(nova_adapter(), node)
    assert (got['service']['host'] if shown else got) == (
        'ironic-1' if shown else None)
    assert requests_mock.last_request.headers[
        'X-OpenStack-Nova-API-Version'] == '2.53'


def test_services_are_listed_with_down_cells_hosts(requests_mock):
    """At 2.69 os-services lists a down cell's compute hosts (status
    UNKNOWN) instead of leaving them out."""
    requests_mock.get(NOVA + '/os-services', json={'services': [
        {'binary': 'nova-compute', 'host': 'host5', 'status': 'UNKNOWN'}]})
    assert nova.service_list(nova_adapter()) == [
        {'binary': 'nova-compute', 'host': 'host5', 'status': 'UNKNOWN'}]
    assert requests_mock.last_request.headers[
        'OpenStack-API-Version'] == 'compute 2.69'


def _in_flight_server(count):
    """A local HTTP server that answers only once ``count`` requests are
    in flight: each then holds a connection of its own."""
    import http.server
    import threading

    barrier = threading.Barrier(count, timeout=10)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def do_GET(self):
            barrier.wait()
            body = b'{}'
            self.send_response(200)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _discarded(clients, count, caplog):
    """The connections urllib3 discarded after ``count`` GETs at once."""
    import concurrent.futures

    caplog.clear()
    with caplog.at_level('WARNING', logger='urllib3.connectionpool'), \
            concurrent.futures.ThreadPoolExecutor(count) as pool:
        list(pool.map(lambda _: clients.placement.get('/'), range(count)))
    return [r for r in caplog.records
            if 'Connection pool is full' in r.getMessage()]


def test_a_sweeps_requests_in_flight_keep_their_connections(caplog):
    """requests keeps 10 connections per host and warns for each one
    returned past them; a sweep has more in flight, so its session keeps
    as many as the sweep holds (the panel's, the CLI's and the plugin's
    session alike)."""
    count = 16
    server = _in_flight_server(count)
    url = 'http://127.0.0.1:%d' % server.server_address[1]
    try:
        credentials = client.Credentials('token', url, url, None, True)
        assert _discarded(client.for_credentials(credentials, 10), count,
                          caplog)
        clients = client.for_credentials(credentials, 10)
        client.hold_connections(clients.placement, count)
        assert _discarded(clients, count, caplog) == []
        plugin = client.for_session(
            ks_session.Session(auth=token_endpoint.Token(url, 'token')),
            None, 'public', None)
        client.hold_connections(plugin.nova, count)
        assert _discarded(plugin, count, caplog) == []
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def slept(monkeypatch):
    """The waits before each new try, recorded instead of slept."""
    waits = []
    monkeypatch.setattr(client.time, 'sleep', waits.append)
    return waits


def service():
    """The adapter every client is, over Nova at ``NOVA``."""
    return client.service_adapter(ks_session.Session(), 'compute',
                                  auth=token_endpoint.Token(NOVA, 'token'))


@pytest.mark.parametrize('refusal', [
    {'status_code': 503, 'text': '<html>restarting</html>'},
    {'status_code': 502, 'json': {'errors': ['upstream']}},
    {'status_code': 504, 'text': 'gateway timeout'},
    {'exc': requests.exceptions.ConnectionError('reset by peer')}])
def test_a_refused_read_is_sent_again(requests_mock, slept, refusal):
    """A read refused for now (a restart behind a load balancer) is sent
    again, twice at most, after a short wait; then its error stands."""
    nova_ = service()
    requests_mock.get(NOVA + '/os-services', [
        refusal, refusal, {'json': {'services': [{'id': 's1'}]}}])
    assert nova_.get('/os-services').json() == {'services': [{'id': 's1'}]}
    assert requests_mock.call_count == 3
    assert slept == list(client.READ_RETRY_DELAYS)
    requests_mock.get(NOVA + '/os-services', [refusal] * 4)
    with pytest.raises(client.REFUSED_FOR_NOW):
        nova_.get('/os-services')
    assert requests_mock.call_count == 6


@pytest.mark.parametrize('answer', [
    {'status_code': 500, 'json': {'computeFault': {'message': 'cell'}}},
    {'status_code': 404, 'json': {'itemNotFound': {'message': 'no'}}},
    {'exc': requests.exceptions.ReadTimeout('60 s')}])
def test_a_read_that_failed_otherwise_is_sent_once(requests_mock, slept,
                                                   answer):
    """A 500 says something (a cell down), a 404 an answer, a timeout
    that ``ORPHAN_AUDIT_API_TIMEOUT`` was waited: none is sent again."""
    requests_mock.get(NOVA + '/os-services', [answer])
    with pytest.raises(ks_exc.ClientException):
        service().get('/os-services')
    assert requests_mock.call_count == 1 and slept == []


@pytest.mark.parametrize('method', ['PUT', 'POST', 'DELETE'])
def test_a_refused_write_is_sent_once(requests_mock, slept, method):
    """A write's outcome behind a 502 is unknown: the writing layer reads
    it back, the adapter never sends it again."""
    requests_mock.register_uri(method, NOVA + '/os-services/s1',
                               status_code=502, json={'errors': ['lost']})
    with pytest.raises(ks_exc.BadGateway):
        service().request('/os-services/s1', method)
    assert requests_mock.call_count == 1 and slept == []


def test_a_refused_nova_read_is_sent_again(requests_mock, slept):
    """Nova's listings go through novaclient's own HTTP client: its
    refused reads are sent again too."""
    requests_mock.get(NOVA + '/servers/detail', [
        {'status_code': 503, 'text': '<html>restarting</html>'},
        {'json': {'servers': [{'id': 'a'}]}}])
    assert [s['id'] for s in nova.server_list(nova_adapter())] == ['a']
    assert slept == [client.READ_RETRY_DELAYS[0]]


def test_a_server_is_read_with_the_image_nova_booted_it_from(requests_mock):
    """``GET /servers/{id}`` at 2.98 shows ``image.properties``; a Nova
    older than 2.98 refuses the microversion (406): the read falls back
    to the listing's microversion, once per client, and shows none."""
    vm = '5f6bb6f5-0000-4000-8000-0000000000aa'
    shown = {'server': {'id': vm, 'image': {
        'id': 'img', 'properties': {'hw_cpu_policy': 'dedicated'}}}}

    def answer(request, context):
        version = request.headers['OpenStack-API-Version']
        if version == 'compute 2.98' and old:
            context.status_code = 406
            return {'computeFault': {'message': 'Version 2.98 is not '
                                     'supported by the API.'}}
        return shown
    old = False
    requests_mock.get(NOVA + '/servers/' + vm, json=answer)
    assert nova.server_get(nova_adapter(), vm)['image']['properties'] == {
        'hw_cpu_policy': 'dedicated'}
    assert requests_mock.last_request.headers[
        'X-OpenStack-Nova-API-Version'] == '2.98'
    old = True
    adapter = nova_adapter()
    for _ in range(2):
        nova.server_get(adapter, vm)
    assert [r.headers['OpenStack-API-Version']
            for r in requests_mock.request_history[1:]] == [
        'compute 2.98', 'compute 2.69', 'compute 2.69']
    requests_mock.get(NOVA + '/servers/' + vm, status_code=404,
                      json={'itemNotFound': {'message': 'gone'}})
    assert nova.server_get(adapter, vm) is None
