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

"""On the sandbox: a server-level finding written seconds ago waits for
the minimum age like any other (Nova may still be writing it)."""

import json

import pytest

from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from tests.e2e.conftest import module_cloud
from tests.e2e.conftest import orphan_audit

pytestmark = pytest.mark.django_db(databases=['default', 'orphan_journal'])

cloud = module_cloud('unconfirmed_resize')


def held(clients, consumer):
    body = api.consumer_allocations(clients.placement, consumer)
    return {rp: a['resources'] for rp, a in body['allocations'].items()}


def owner(clients, consumer):
    body = api.consumer_allocations(clients.placement, consumer)
    return body.get('project_id'), body.get('user_id')


def findings_of(result, consumer):
    assert result.returncode in (0, 3), result.stdout + result.stderr
    return [f for f in json.loads(result.stdout)['findings']
            if f['consumer'] == consumer]


def test_findings_written_seconds_ago_wait_for_the_minimum_age(cloud,
                                                              tmp_path):
    """A wrong amount and an incomplete consumer just written through the
    Placement API are protected at 600 s: ``apply`` writes neither; at
    0 s both are repaired."""
    clients = cloud.clients()
    wrong = cloud.control('POST', '/incidents/wrong_amount')
    legacy = cloud.control('POST', '/incidents/pre_pike_consumer')
    server, host3 = wrong['servers'][0]['uuid'], wrong['expected'][0][
        'provider']
    old_style = legacy['servers'][0]['uuid']
    before = held(clients, server), held(clients, old_style)
    assert before[0][host3]['MEMORY_MB'] == 4096
    assert owner(clients, old_style) == (m.INCOMPLETE, m.INCOMPLETE)

    report = orphan_audit(cloud, tmp_path, 'report', '--min-age', '600',
                          '--json')
    for consumer in (server, old_style):
        found = findings_of(report, consumer)
        assert found, consumer
        assert [(f['verdict'], f['actions']) for f in found] == [
            (m.PROTECTED, [])] * len(found), found
        assert all('younger than the 600 s protection' in f['reason']
                   for f in found), found

    result = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '600',
                          '--json')
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)['outcomes'] == []
    assert (held(clients, server), held(clients, old_style)) == before
    assert owner(clients, old_style) == (m.INCOMPLETE, m.INCOMPLETE)

    result = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                          '--json')
    assert result.returncode == 4, result.stdout + result.stderr
    outcomes = {o['consumer']: (o['action'], o['status'])
                for o in json.loads(result.stdout)['outcomes']}
    assert outcomes[server] == (m.DELETE_AND_HEAL, 'done')
    assert outcomes[old_style] == (m.SET_OWNER, 'done')
    assert held(clients, server)[host3]['MEMORY_MB'] == 1024
    assert m.INCOMPLETE not in owner(clients, old_style)

