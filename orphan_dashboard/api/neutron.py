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

"""Neutron calls the audit needs: the ports that request resources.

Only a QoS policy with a minimum rule (bandwidth, packet rate) gives a port
a ``resource_request``.  Neutron refuses ``qos_policy_id`` as a filter of
ports and networks (400, "invalid attribute for filtering"), so the read is
the policies first (no minimum rule anywhere, no port is read), then the
ports listed with only the fields the audit reads; every listing follows
Neutron's next links.
The one write is a port's ``binding:profile``, compare-and-swap on its
``revision_number`` where Neutron has them.  Errors leave this module as
keystoneauth's exceptions.
"""

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import paging
from orphan_dashboard.api import trace

PAGE = 1000
MINIMUM_RULES = frozenset({'minimum_bandwidth', 'minimum_packet_rate'})
PORT_FIELDS = ('id', 'name', 'device_id', 'binding:host_id',
               'binding:profile', 'resource_request', 'revision_number')
HIDEABLE = ('binding:host_id', 'binding:profile', 'resource_request')
"""The fields Neutron leaves out of a port where its policy
(``get_port:<field>``) denies them to the user."""


class FieldsHidden(Exception):
    """Neutron left out of a port a field its policy hides: what it says
    is unknown, and no port can be judged without it."""


def _shown(ports):
    """``ports``, or :class:`FieldsHidden` where one lacks a field of
    :data:`HIDEABLE`."""
    for port in ports:
        hidden = [f for f in HIDEABLE if f not in port]
        if hidden:
            raise FieldsHidden(', '.join(hidden))
    return ports


def _get(client, path, **params):
    return client.get('/v2.0' + path, params=params).json()


def _pages(client, path, key, **params):
    """The pages of a Neutron listing while Neutron links a next one: it
    does whenever a page is full, whether ``limit`` or its
    ``pagination_max_limit`` cut it, so a page shorter than asked is not
    always the last."""
    return paging.pages(lambda query: _get(client, path, **query),
                        dict(params, limit=PAGE), key, 'Neutron')


@trace
def minimum_policies(client):
    """Ids of the QoS policies with a minimum rule; empty where Neutron
    has no QoS extension."""
    found = set()
    try:
        for page in _pages(client, '/qos/policies', 'policies',
                           fields=['id', 'rules']):
            found.update(p['id'] for p in page
                         if any(r.get('type') in MINIMUM_RULES
                                for r in p.get('rules') or ()))
    except ks_exc.NotFound:
        return set()
    return found


@trace
def resource_ports(client):
    """Every port with a ``resource_request``, as plain dicts holding
    :data:`PORT_FIELDS`, page by page.  Every port is listed: a port with
    no policy of its own requests what its network's asks
    (``qos_network_policy_id``), and any port of any network can carry a
    policy of its own, which no filter finds."""
    if not minimum_policies(client):
        return []
    return [p for page in _pages(client, '/ports', 'ports',
                                 fields=list(PORT_FIELDS))
            for p in _shown(page) if p.get('resource_request')]


@trace
def server_ports(client, server_uuids):
    """The ports with a ``resource_request`` attached to these servers:
    what a preview or a submit re-reads (``device_id`` is a filter)."""
    uuids = sorted(set(server_uuids))
    found = []
    for start in range(0, len(uuids), 50):
        found.extend(p for page in _pages(client, '/ports', 'ports',
                                          fields=list(PORT_FIELDS),
                                          device_id=uuids[start:start + 50])
                     for p in _shown(page) if p.get('resource_request'))
    return found


@trace
def port_get(client, port_id):
    """One port with :data:`PORT_FIELDS`, or None when it is gone."""
    try:
        return _get(client, '/ports/%s' % port_id,
                    fields=list(PORT_FIELDS))['port']
    except ks_exc.NotFound:
        return None


@trace
def update_binding_profile(client, port_id, profile, revision):
    """Write the port's ``binding:profile`` only while its revision is
    still ``revision`` (``If-Match``; 412 otherwise; no condition where
    Neutron reports no revisions); the port as Neutron answers it."""
    headers = ({'If-Match': 'revision_number=%d' % revision}
               if revision is not None else {})
    return client.put('/v2.0/ports/%s' % port_id,
                      json={'port': {'binding:profile': profile}},
                      headers=headers).json()['port']


def error_detail(exc):
    """Neutron's own words from an HttpError (its ``NeutronError``
    message), else the error as keystoneauth says it."""
    try:
        return exc.response.json()['NeutronError']['message']
    except Exception:
        return str(exc)
