"""keystoneauth adapters for Placement and Nova, from Horizon or a cloud.

The panel uses the logged-in admin's token (:func:`for_request`, one
session per request with connection reuse); ``orphan-audit`` uses the usual
``OS_*`` variables or ``clouds.yaml`` (:func:`for_cloud`).  Both return the
same pair, so everything below them is shared.
"""

import collections

from keystoneauth1 import adapter
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint

Clients = collections.namedtuple('Clients', 'placement nova')

USER_AGENT = 'orphan-dashboard'


def _adapter(session, service_type, **kwargs):
    return adapter.Adapter(session, service_type=service_type,
                           user_agent=USER_AGENT, **kwargs)


def for_request(request):
    """Adapters acting as the Horizon user, memoized on the request."""
    clients = getattr(request, '_orphan_clients', None)
    if clients is not None:
        return clients
    from django.conf import settings
    from openstack_dashboard.api import base

    verify = True
    if settings.OPENSTACK_SSL_NO_VERIFY:
        verify = False
    elif settings.OPENSTACK_SSL_CACERT:
        verify = settings.OPENSTACK_SSL_CACERT
    session = ks_session.Session(verify=verify)
    token = request.user.token.id
    clients = Clients(*(
        _adapter(session, service_type, auth=token_endpoint.Token(
            base.url_for(request, service_type), token))
        for service_type in ('placement', 'compute')))
    request._orphan_clients = clients
    return clients


def for_cloud(cloud=None, **overrides):
    """Adapters from ``clouds.yaml`` / ``OS_*`` (as ``openstack`` reads)."""
    import openstack.config

    region = openstack.config.OpenStackConfig().get_one(
        cloud=cloud, **overrides)
    session = region.get_session()
    kwargs = dict(region_name=region.region_name,
                  interface=region.get_interface())
    return Clients(_adapter(session, 'placement', **kwargs),
                   _adapter(session, 'compute', **kwargs))
