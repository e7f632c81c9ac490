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

"""A Neutron answering through ``requests_mock``: networks, QoS policies
and ports, and the adapter the audit reads it with."""

import urllib.parse
import uuid

from keystoneauth1 import adapter
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint

NEUTRON = 'http://neutron.test'
BW = 'NET_BW_EGR_KILOBIT_PER_SEC'


class FakeNeutron:
    """Networks, QoS policies and ports; the requests it answered."""

    def __init__(self, requests_mock, max_limit=-1):
        self.max_limit = max_limit
        self.policies = {}       # id -> rules
        self.networks = {}       # id -> policy id or None
        self.ports = []
        self.asked = []
        requests_mock.get(NEUTRON + '/v2.0/qos/policies', json=self.answer(
            'policies', lambda: [{'id': p, 'rules': r}
                                 for p, r in self.policies.items()]))
        requests_mock.get(NEUTRON + '/v2.0/ports', json=self.answer(
            'ports', lambda: [self.port_body(p) for p in self.ports]))

    def policy(self, *rules):
        uid = str(uuid.uuid4())
        self.policies[uid] = [dict(type=rule, id=str(uuid.uuid4()))
                              for rule in rules]
        return uid

    def network(self, policy=None):
        uid = str(uuid.uuid4())
        self.networks[uid] = policy
        return uid

    def port(self, network, policy=None, name='', device=None):
        self.ports.append(dict(id=str(uuid.uuid4()), network_id=network,
                               qos_policy_id=policy, name=name,
                               device_id=device or str(uuid.uuid4())))
        return self.ports[-1]['id']

    def port_body(self, port):
        """What Neutron's QoS plugin shows: the port's own policy, else its
        network's; a request only for a minimum rule."""
        policy = port['qos_policy_id'] or self.networks[port['network_id']]
        body = dict(port, qos_network_policy_id=self.networks[
            port['network_id']], resource_request=None)
        body.update({'binding:host_id': 'host1', 'binding:profile': {},
                     'mac_address': 'fa:16:3e:00:00:01'})
        rules = [r for r in self.policies.get(policy, ())
                 if r['type'] == 'minimum_bandwidth']
        if rules:
            group = str(uuid.uuid5(uuid.UUID(port['id']), rules[0]['id']))
            body['resource_request'] = {
                'request_groups': [{'id': group, 'resources': {BW: 1000},
                                    'required': ['CUSTOM_PHYSNET_PHYSNET0']}],
                'same_subtree': [group]}
        return body

    def answer(self, key, items):
        def respond(request, context):
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(
                request.url).query)
            self.asked.append((key, query))
            if 'qos_policy_id' in query:
                context.status_code = 400
                return {'NeutronError': {
                    'type': 'HTTPBadRequest', 'detail': '',
                    'message': "['qos_policy_id'] is invalid attribute "
                               "for filtering"}}
            listed = sorted(items(), key=lambda item: item['id'])
            if 'device_id' in query:
                listed = [i for i in listed
                          if i['device_id'] in query['device_id']]
            marker = query.get('marker', [None])[0]
            if marker:
                listed = [i for i in listed if i['id'] > marker]
            limit = int(query.get('limit', [0])[0])
            if self.max_limit > 0:
                limit = min(limit, self.max_limit) or self.max_limit
            page = listed[:limit] if limit else listed
            fields = query.get('fields')
            body = {key: [{f: v for f, v in i.items()
                           if not fields or f in fields} for i in page]}
            if limit and len(page) == limit:
                body[key + '_links'] = [{'rel': 'next', 'href': 'ignored'}]
            return body
        return respond

    def asked_for(self, key):
        return [query for k, query in self.asked if k == key]


def network_client():
    return adapter.Adapter(ks_session.Session(), service_type='network',
                           auth=token_endpoint.Token(NEUTRON, 'token'))
