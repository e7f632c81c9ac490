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

"""Nova calls the audit needs, at the cheapest microversion that carries it,
through python-novaclient (what Horizon's own ``api.nova`` is built on).

Going through novaclient costs the sweep's Nova listings next to nothing
over raw REST reads (``doc/source/benchmark.md`` has the figures).  The
two listings read the bodies of novaclient's own HTTP client: its managers
drop the ``*_links`` that say whether a next page exists, and without them
every listing ends on an empty page, one request more per listing.

Errors leave this module as keystoneauth's exceptions, the ones Placement's
calls raise, so callers handle both services alike.
"""

import urllib.parse

from keystoneauth1 import exceptions as ks_exc
from novaclient import client as novaclient

from orphan_dashboard.api import client as api_client
from orphan_dashboard.api import microversions as mv
from orphan_dashboard.api import paging
from orphan_dashboard.api import trace

PAGE = 1000

HYPERVISOR_PAGE = 200
"""Nova looks each compute node's service up one by one: a page's time
grows with the page, not the cloud, and stays within the panel's
timeout."""


class _SessionClient(novaclient.SessionClient):
    """novaclient's HTTP client raising keystoneauth's exception for an
    error status: keystoneauth reads any error body (novaclient's own
    parser fails on one it does not expect, e.g. a proxy's); its refused
    reads are sent again as every client's are
    (:func:`api_client.send_read_again`); each request waits ``timeout``
    where given, else the session's timeout."""

    def __init__(self, *args, timeout=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.timeout = timeout

    def request(self, url, method, raise_exc=True, **kwargs):
        if self.timeout is not None:
            kwargs.setdefault('timeout', self.timeout)

        def send(url, method, **kwargs):
            response, body = super(_SessionClient, self).request(
                url, method, raise_exc=False, **kwargs)
            if raise_exc and response.status_code >= 400:
                raise ks_exc.from_response(response, method, url)
            return response, body
        return api_client.send_read_again(send, url, method, **kwargs)


def _nova(client, version, listing=False):
    """A novaclient at ``version`` over the keystoneauth adapter ``client``
    (its session, token, region, interface and endpoint), one per adapter,
    version and kind of read.  A ``listing`` reaches every cell: Nova
    waits up to its ``CELL_TIMEOUT`` for each, and for the whole of a slow
    cell's query when it lists servers, so it waits the adapter's
    ``listing_timeout`` (see :class:`api_client.ServiceAdapter`)."""
    clients = client.__dict__.setdefault('_orphan_novaclients', {})
    if (version, listing) not in clients:
        nova = novaclient.Client(version, session=client.session)
        nova.client = _SessionClient(
            api_version=nova.api_version, session=client.session,
            auth=client.auth, endpoint_override=client.endpoint_override,
            interface=client.interface, region_name=client.region_name,
            service_type='compute', user_agent=client.user_agent,
            timeout=getattr(client, 'listing_timeout', None)
            if listing else None)
        clients[version, listing] = nova
    return clients[version, listing]


def _paged(client, version, path, key, marker_key, query, on_page=None,
           limit=PAGE, linked=True, short_ends=lambda: False):
    """Every item of a Nova listing, as plain dicts, page by page while Nova
    links a next one: it does whenever a page is full, whether ``limit`` or
    its ``[api] max_limit`` cut it, so a short page is the last and costs
    no empty read after it (not ``linked``: up to an empty page, or a
    short page where ``short_ends()``; see :func:`paging.pages`).
    ``on_page(items)`` with each page's."""
    http = _nova(client, version, listing=True).client

    def read(query):
        return http.get('%s?%s' % (path, urllib.parse.urlencode(query)))[1]

    items = []
    for page in paging.pages(read, dict(query, limit=limit), key, 'Nova',
                             marker_key, linked, short_ends):
        items.extend(page)
        if on_page is not None:
            on_page(page)
    return items


@trace
def server_list(client, on_page=None, **filters):
    """All servers of all projects (admin) in the cells Nova reaches (a
    paged listing leaves a down cell's out: see :func:`down_cell_servers`);
    ``filters`` by Nova's query names (``changes-since``, ``host``)."""
    return _paged(client, mv.SERVERS, '/servers/detail', 'servers', 'id',
                  dict(filters, all_tenants=1), on_page)


@trace
def down_cell_servers(client):
    """The partial records (status ``UNKNOWN``) of the servers of cells
    Nova cannot reach.  Nova returns them only to an unpaged, unfiltered
    listing at 2.69 (``limit``, ``marker``, a sort or any filter but
    ``all_tenants`` leaves them out), first, up to its ``[api]
    max_limit``: the brief listing of that first page."""
    _, body = _nova(client, mv.SERVERS, listing=True).client.get(
        '/servers?all_tenants=1')
    return [s for s in body['servers'] if s.get('status') == 'UNKNOWN']


@trace
def server_get(client, server_id):
    """One server, or None when Nova answers 404, with the properties of
    the image Nova booted it from (:data:`~mv.SERVER_IMAGE`).  A Nova
    older than that refuses the microversion (406): it is then asked at
    :data:`~mv.SERVERS`, once per client, and its answer shows no image
    properties."""
    versions = client.__dict__.setdefault('_orphan_server_versions',
                                          [mv.SERVER_IMAGE])
    while True:
        version = versions[0]
        try:
            # The adapter itself: novaclient refuses a version newer than
            # it knows (2.96).
            return client.get('/servers/%s' % server_id,
                              microversion=version,
                              microversion_service_type='compute').json()[
                                  'server']
        except ks_exc.NotFound:
            return None
        except ks_exc.NotAcceptable:
            if version == mv.SERVERS:
                raise
            versions[:] = [mv.SERVERS]


@trace
def instance_known(client, server_id):
    """Whether Nova still has instance actions for ``server_id``.

    True for a server deleted the Nova way or marked deleted by hand in the
    database; False once it is archived or never existed; None when policy
    forbids asking or its cell is down (Nova answers 500): then nobody can
    tell.
    """
    try:
        _nova(client, mv.INSTANCE_ACTIONS).instance_action.list(server_id)
        return True
    except ks_exc.NotFound:
        return False
    except (ks_exc.Forbidden, ks_exc.InternalServerError):
        return None


@trace
def migration_list(client, on_page=None, **filters):
    """Migrations of all projects; ``filters`` by Nova's query names
    (``host``, ``instance_uuid``, ``changes-since``), as for servers."""
    return _paged(client, mv.MIGRATIONS, '/os-migrations', 'migrations',
                  'uuid', filters, on_page)


@trace
def flavor_list(client):
    """Every flavor, public and private (admin), with its extra specs."""
    return _paged(client, mv.FLAVORS, '/flavors/detail', 'flavors', 'id',
                  {'is_public': 'None'})


@trace
def hypervisor_list(client, cell_missing=lambda: False):
    """Hypervisors with their service host; id is the provider uuid.  Nova
    answers 500 when any cell is down (it walks every cell's database).

    Paged (:data:`HYPERVISOR_PAGE`) up to an empty page, whatever Nova
    links: it leaves out a node whose service is gone, and then links no
    next page after the page that node shortened.  But a short page is
    the last where ``cell_missing()`` (Nova's services show a cell it did
    not reach): every page then waits for the slow cell's database, and
    the nodes a shortened page would hide are roots it does not list,
    each asked about alone (:func:`collect.confirm_nodes`)."""
    return _paged(client, mv.HYPERVISORS, '/os-hypervisors/detail',
                  'hypervisors', 'id', {}, limit=HYPERVISOR_PAGE,
                  linked=False, short_ends=cell_missing)


@trace
def hypervisor_get(client, node_uuid):
    """One compute node by its uuid (the provider's), or None when Nova
    answers 404.  Nova looks for it cell by cell and answers from the
    first that has it: an answer proves the node a reachable cell's even
    while another cell is down (the listing then answers 500), whereas a
    404 proves it gone only while every cell answers.  Any other error
    (a 500: a down cell in the way) is raised: it proves nothing."""
    try:
        return _nova(client, mv.HYPERVISORS).hypervisors.get(
            node_uuid).to_dict()
    except ks_exc.NotFound:
        return None


@trace
def service_list(client, binary='nova-compute'):
    """Compute services, a down cell's as ``{host, binary, status:
    UNKNOWN}``."""
    return [s.to_dict() for s in _nova(
        client, mv.SERVICE_LIST, listing=True).services.list(binary=binary)]


@trace
def delete_service(client, service_uuid):
    """Delete a compute service; Nova deletes its compute nodes' provider
    trees with it (and refuses while it hosts servers or migrations)."""
    _nova(client, mv.SERVICES).services.delete(service_uuid)
