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

"""keystoneauth adapters for Placement and Nova, from Horizon or a cloud.

The panel acts with the logged-in admin's token (:func:`for_credentials`,
one session per request with connection reuse; the panel's ``service``
reads the token and the endpoints off its request); ``orphan-audit`` uses
the usual ``OS_*`` variables or ``clouds.yaml`` (:func:`for_cloud`).  Both
return the same :class:`Clients`, so everything below them is shared.
Every session has a timeout: a hung Nova must not hang a page or a cron
job.  A read a
restarting service refused is sent again (:func:`send_read_again`).
"""

import collections
import logging
import re
import time

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
import requests

from orphan_dashboard.api import microversions as mv
from orphan_dashboard import conf

LOG = logging.getLogger(__name__)

Clients = collections.namedtuple('Clients',
                                 'placement nova identity network '
                                 'accelerator',
                                 defaults=(None, None, None))
"""Adapters; ``identity`` (Keystone's unversioned root) only serves names
and may be None; ``network`` (Neutron) and ``accelerator`` (Cyborg) are
None where the catalog has none."""

USER_AGENT = 'orphan-dashboard'
DEFAULT_TIMEOUT = conf.API_TIMEOUT.default
"""Seconds one API request of ``orphan-audit`` may take when neither
``--timeout`` nor the cloud's ``api_timeout`` says."""


class Cloud(collections.namedtuple(
        'Cloud', 'auth_url region placement_url service_id')):
    """Which cloud a journal entry was written to.

    Keyed by the Keystone URL, the region and the id of the Placement
    service in Keystone's catalog: two clouds behind the same URL (a
    re-installed lab, a sandbox) differ in that id.  The Placement URL is
    recorded, not compared: Horizon and a CLI may use different interfaces
    (public, internal) of the same cloud.
    """

    @property
    def key(self):
        return _KEY_SEPARATOR.join((_normal_url(self.auth_url),
                                    self.region or '', self.service_id or ''))


_KEY_SEPARATOR = '|'


def service_id_in(key):
    """The Placement service id a :attr:`Cloud.key` ends in."""
    return key.rsplit(_KEY_SEPARATOR, 1)[-1]


def keystone_root(url):
    """Keystone's URL without its version (``/v3``, ``/v2.0``)."""
    return re.sub(r'/v(3|2\.0)$', '', (url or '').strip().rstrip('/'))


def _normal_url(url):
    return keystone_root(url).lower()


def placement_service_id(catalog):
    """The id of the Placement service in a Keystone catalog ('' if it
    has none): what tells two clouds behind one URL apart."""
    for service in catalog or ():
        if service.get('type') == 'placement':
            return service.get('id') or ''
    return ''


READ_RETRY_DELAYS = (0.5, 1.5)
"""Seconds before each new try of a read a service refused for now."""

REFUSED_FOR_NOW = (ks_exc.ConnectFailure, ks_exc.BadGateway,
                   ks_exc.ServiceUnavailable, ks_exc.GatewayTimeout)
"""A connection refused or reset, or a 502, 503 or 504: what a service
restarting behind its load balancer answers.  Not a timeout
(``ORPHAN_AUDIT_API_TIMEOUT`` bounds each request's wait), not a 500."""


def send_read_again(send, url, method, **kwargs):
    """``send(url, method, **kwargs)``; a read (``GET``) sent again, after
    each of :data:`READ_RETRY_DELAYS`, while it is :data:`REFUSED_FOR_NOW`.

    A full sweep of a large cloud reads thousands of times for minutes:
    one service restarting meanwhile must not fail it.  A write is sent
    once: its outcome is unknown, and the writing layer reads it back.
    """
    if method.upper() == 'GET':
        for delay in READ_RETRY_DELAYS:
            try:
                return send(url, method, **kwargs)
            except REFUSED_FOR_NOW as exc:
                LOG.warning('%s %s: %s; sent again in %g s', method, url,
                            exc, delay)
                time.sleep(delay)
    return send(url, method, **kwargs)


class ServiceAdapter(adapter.Adapter):
    """An adapter whose refused reads are sent again
    (:func:`send_read_again`)."""

    listing_timeout = None
    """Seconds one page of a listing that reaches every Nova cell may
    take (``api.nova``'s listings); None: the session's timeout."""
    cell_timeout = None
    """Seconds Nova gives the cells of one listing (its ``CELL_TIMEOUT``):
    a listing that answered within it dropped nothing; None: Nova's
    default."""

    def request(self, url, method, **kwargs):
        return send_read_again(super().request, url, method, **kwargs)


def service_adapter(session, service_type, listing_timeout=None,
                    cell_timeout=None, **kwargs):
    """The adapter every client of the panel and ``orphan-audit`` is;
    its listings wait ``listing_timeout``, or the session's timeout if
    that is longer; Nova's cells answer within ``cell_timeout``."""
    service = ServiceAdapter(session, service_type=service_type,
                             user_agent=USER_AGENT, **kwargs)
    if listing_timeout is not None:
        service.listing_timeout = max(float(listing_timeout),
                                      session.timeout or 0)
    if cell_timeout is not None:
        service.cell_timeout = float(cell_timeout)
    return service


class Credentials(collections.namedtuple(
        'Credentials',
        'token placement compute identity verify network accelerator',
        defaults=(None, None))):
    """What acting as the Horizon user takes: the token, the endpoints of
    Placement, Nova, Keystone, Neutron and Cyborg (None where the catalog
    has none), and how to verify TLS.  Plain data, so a background sweep in a
    process of its own can be handed it."""


def for_credentials(credentials, timeout, listing_timeout=None,
                    cell_timeout=None):
    """Adapters acting with a token at fixed endpoints, one session;
    Nova's listings wait ``listing_timeout``, its cells answer within
    ``cell_timeout`` (:func:`service_adapter`)."""
    session = ks_session.Session(verify=credentials.verify, timeout=timeout)
    nova = dict(listing_timeout=listing_timeout, cell_timeout=cell_timeout)
    return Clients(*(
        service_adapter(session, service_type, auth=token_endpoint.Token(
            url, credentials.token), **(
                nova if service_type == 'compute' else {})) if url else None
        for service_type, url in (('placement', credentials.placement),
                                  ('compute', credentials.compute),
                                  ('identity', credentials.identity),
                                  ('network', credentials.network),
                                  ('accelerator', credentials.accelerator))))


def for_cloud(cloud=None, timeout=None, listing_timeout=None,
              cell_timeout=None, **overrides):
    """Adapters from ``clouds.yaml`` / ``OS_*`` (as ``openstack`` reads,
    a service's ``<type>_endpoint_override`` included: a gateway of its
    own); ``timeout`` defaults to the cloud's ``api_timeout``, else
    :data:`DEFAULT_TIMEOUT`."""
    import openstack.config

    region = openstack.config.OpenStackConfig().get_one(
        cloud=cloud, **overrides)
    return for_session(region.get_session(), region.region_name,
                       region.get_interface(),
                       region.config.get('auth', {}).get('auth_url'),
                       timeout or region.config.get('api_timeout'),
                       listing_timeout, cell_timeout, endpoints={
                           service: region.config.get(
                               '%s_endpoint_override' % service)
                           for service in ('placement', 'compute',
                                           'network', 'accelerator')})


def for_session(session, region_name, interface, auth_url, timeout=None,
                listing_timeout=None, cell_timeout=None, endpoints=None):
    """Adapters on a keystoneauth ``session`` someone else authenticated
    (``openstack``'s own, for its plugin); ``timeout`` defaults to
    :data:`DEFAULT_TIMEOUT`; ``endpoints``: ``{service type: URL}`` that
    override the catalog's."""
    session.timeout = float(timeout or DEFAULT_TIMEOUT)
    kwargs = dict(region_name=region_name, interface=interface)
    endpoints = endpoints or {}

    def at(service):
        return dict(kwargs, endpoint_override=endpoints.get(service))
    return Clients(service_adapter(session, 'placement', **at('placement')),
                   service_adapter(session, 'compute',
                                   listing_timeout=listing_timeout,
                                   cell_timeout=cell_timeout,
                                   **at('compute')),
                   service_adapter(session, 'identity', **dict(
                       kwargs, endpoint_override=keystone_root(auth_url)))
                   if auth_url else None,
                   service_adapter(session, 'network', **at('network')),
                   service_adapter(session, 'accelerator',
                                   **at('accelerator')))


def hold_connections(client, count):
    """Have ``client``'s session keep ``count`` connections per host.

    requests keeps 10 and discards, with a "Connection pool is full"
    warning, each connection returned past them: a sweep with more
    requests in flight would warn and reconnect all along.  The pool only
    grows; a client without a keystoneauth session (a test's) is left as
    it is.
    """
    http = getattr(getattr(client, 'session', None), 'session', None)
    if not isinstance(http, requests.Session):
        return
    for scheme in ('https://', 'http://'):
        if getattr(http.get_adapter(scheme), '_pool_maxsize', 0) < count:
            http.mount(scheme, ks_session.TCPKeepAliveAdapter(
                pool_maxsize=count))


def validate_token(clients):
    """One cheap authenticated request to each service, one after the
    other: a new token is then validated once by each service's
    keystonemiddleware, not once per concurrent request of a sweep.  Nova
    is asked for one flavor: its API database answers, no cell's, so a
    slow cell does not make this wait."""
    clients.placement.get('/resource_classes/VCPU',
                          microversion=mv.TOKEN_CHECK)
    clients.nova.get('/flavors', params={'limit': 1})


def cloud_for_clients(clients):
    """The :class:`Cloud` of :func:`for_cloud` adapters (authenticates).

    An admin token with a fixed endpoint (``OS_AUTH_TYPE=admin_token``)
    has no Keystone and no catalog: the endpoint stands for the cloud.
    """
    placement = clients.placement
    auth = placement.auth or placement.session.auth
    get_access = getattr(auth, 'get_access', None)
    catalog = (get_access(placement.session).service_catalog.catalog
               if get_access else None)
    return Cloud(getattr(auth, 'auth_url', None) or
                 getattr(auth, 'endpoint', None) or '',
                 placement.region_name or '',
                 placement.get_endpoint() or '',
                 placement_service_id(catalog))
