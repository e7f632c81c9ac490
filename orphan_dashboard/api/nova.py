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

"""Nova calls the audit needs, at the cheapest microversion that carries it.

Raw REST over a keystoneauth ``Adapter`` rather than novaclient objects:
listing thousands of servers is the most expensive call of a sweep.
"""

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import microversions as mv
from orphan_dashboard.api import trace

PAGE = 1000


class PagingError(Exception):
    """Nova's paging went round in circles."""


def _paged(client, path, key, version, on_page=None, **params):
    """Follow ``limit``/``marker`` paging to the end; ``on_page(count)``
    after each page.

    Stops on the absence of a ``next`` link, not on a short page: Nova's
    ``[api] max_limit`` may cut pages below what we asked for.
    """
    params = dict(params, limit=PAGE)
    items = []
    markers = set()
    while True:
        body = client.get(path, microversion=version, params=params).json()
        page = body[key]
        items.extend(page)
        if on_page is not None:
            on_page(len(page))
        links = body.get(key + '_links') or []
        if not page or not any(link.get('rel') == 'next' for link in links):
            return items
        marker = page[-1]['uuid' if key == 'migrations' else 'id']
        if marker in markers:
            # A listing cut short would turn live servers into orphans.
            raise PagingError('Nova repeated the page after %s while '
                              'listing %s: the listing is incomplete' %
                              (marker, path))
        markers.add(marker)
        params['marker'] = marker


@trace
def server_list(client, on_page=None, **filters):
    """All servers of all projects (admin), including down-cell partials."""
    return _paged(client, '/servers/detail', 'servers', mv.SERVERS,
                  on_page=on_page, all_tenants=1, **filters)


@trace
def server_get(client, server_id):
    """One server, or None when Nova answers 404."""
    try:
        return client.get('/servers/%s' % server_id,
                          microversion=mv.SERVERS).json()['server']
    except ks_exc.NotFound:
        return None


@trace
def instance_known(client, server_id):
    """Whether Nova still has instance actions for ``server_id``.

    True for a server deleted the Nova way or marked deleted by hand in the
    database; False once it is archived or never existed; None when policy
    forbids asking (then nobody can tell).
    """
    try:
        client.get('/servers/%s/os-instance-actions' % server_id,
                   microversion=mv.INSTANCE_ACTIONS)
        return True
    except ks_exc.NotFound:
        return False
    except ks_exc.Forbidden:
        return None


@trace
def migration_list(client, on_page=None, **filters):
    return _paged(client, '/os-migrations', 'migrations', mv.MIGRATIONS,
                  on_page=on_page, **filters)


@trace
def hypervisor_list(client):
    """Hypervisors with their service host; id is the provider uuid."""
    return client.get('/os-hypervisors/detail',
                      microversion=mv.HYPERVISORS).json()['hypervisors']


@trace
def service_list(client, binary='nova-compute'):
    return client.get('/os-services', microversion=mv.SERVICES,
                      params={'binary': binary}).json()['services']


@trace
def delete_service(client, service_uuid):
    """Delete a compute service; Nova deletes its compute nodes' provider
    trees with it (and refuses while it hosts servers or migrations)."""
    client.delete('/os-services/%s' % service_uuid, microversion=mv.SERVICES)
