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


"""The sandbox's staging calls to Neutron: an internal error is an unknown
outcome, read back before anything is asked again (a blind second create
once staged an eighth port, and the port audit then counted it)."""

from keystoneauth1 import session as ks_session

from sandbox import rest

NEUTRON = 'http://neutron.test:9696'
PORT = {'id': 'p1', 'name': 'qos-vm-host2-port', 'network_id': 'n1'}


def api():
    return rest.Api(ks_session.Session(), 'http://nova.test',
                    'http://placement.test', NEUTRON)


def test_a_create_applied_behind_a_500_is_read_back_not_made_twice(
        requests_mock, monkeypatch):
    monkeypatch.setattr(rest.time, 'sleep', lambda s: None)
    post = requests_mock.post(NEUTRON + '/v2.0/ports', status_code=500,
                              text='database is locked')
    listed = requests_mock.get(NEUTRON + '/v2.0/ports',
                               json={'ports': [PORT]})
    made = api().neutron('POST', '/ports', {'port': {
        'network_id': 'n1', 'name': 'qos-vm-host2-port',
        'qos_policy_id': 'q1'}})
    assert made == {'port': PORT}
    assert post.call_count == 1
    assert listed.last_request.qs == {'name': ['qos-vm-host2-port']}


def test_a_create_that_left_nothing_is_asked_again(requests_mock,
                                                   monkeypatch):
    monkeypatch.setattr(rest.time, 'sleep', lambda s: None)
    rules = NEUTRON + '/v2.0/qos/policies/q1/minimum_bandwidth_rules'
    made_rule = {'minimum_bandwidth_rule': {'id': 'r1'}}
    post = requests_mock.post(rules, [
        {'status_code': 500, 'text': 'locked'},
        {'status_code': 201, 'json': made_rule}])
    listed = requests_mock.get(rules, json={'minimum_bandwidth_rules': []})
    made = api().neutron(
        'POST', '/qos/policies/q1/minimum_bandwidth_rules',
        {'minimum_bandwidth_rule': {'min_kbps': 1000,
                                    'direction': 'egress'}})
    assert made == made_rule
    assert post.call_count == 2
    assert listed.last_request.qs == {'min_kbps': ['1000'],
                                      'direction': ['egress']}


def test_a_delete_done_behind_a_500_is_done(requests_mock, monkeypatch):
    monkeypatch.setattr(rest.time, 'sleep', lambda s: None)
    requests_mock.delete(NEUTRON + '/v2.0/ports/p1', [
        {'status_code': 500, 'text': 'locked'}, {'status_code': 404}])
    assert api().neutron('DELETE', '/ports/p1') is None


def test_a_refusal_is_not_asked_again(requests_mock):
    post = requests_mock.post(NEUTRON + '/v2.0/ports', status_code=409,
                              text='conflict')
    try:
        api().neutron('POST', '/ports', {'port': {'name': 'x'}})
    except rest.ApiError as exc:
        assert exc.status == 409
    else:
        raise AssertionError('a 409 was taken for a success')
    assert post.call_count == 1
