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

"""The API layer, repair writes and the preview's osc commands against a
real Placement server (openstack-placement 16 on loopback, sqlite)."""

import dataclasses
import os
import shlex
import subprocess
import sys

from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.api import client
from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.operations import repairs
from orphan_dashboard.writing import equivalents
from orphan_dashboard.writing import write
from tests.integration.batches import write_plan

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


def test_providers_with_roots_and_sharing(placement, build):
    root = build.provider('node')
    child = build.provider('numa', parent=root)
    shared = build.provider('ceph')
    placement.put('/resource_providers/%s/traits' % shared,
                  microversion='1.6',
                  json={'resource_provider_generation': 1,
                        'traits': [api.SHARING_TRAIT]})
    providers = {p['uuid']: p for p in api.provider_list(placement)}
    assert providers[child]['root_provider_uuid'] == root
    assert providers[child]['parent_provider_uuid'] == root
    assert shared in api.sharing_provider_uuids(placement)
    assert root not in api.sharing_provider_uuids(placement)


def test_reads_carry_generation_project_user_and_age(placement, build):
    rp = build.provider('node')
    consumer = build.allocate({rp: SMALL}, project='proj', user='usr')
    by_provider = api.provider_allocations(placement, rp)
    assert by_provider[consumer] == {'resources': SMALL,
                                     'consumer_generation': 1}
    body = api.consumer_allocations(placement, consumer)
    assert (body['project_id'], body['user_id']) == ('proj', 'usr')
    assert body['consumer_generation'] == 1
    assert body['last_modified'] is not None
    unknown = api.consumer_allocations(placement, '%s' % (
        'aaaaaaaa-0000-4000-8000-000000000000'))
    assert unknown['allocations'] == {} and unknown['last_modified'] is None


def test_stale_generation_is_refused_and_nothing_changes(
        placement, build, journal):
    rp = build.provider('node')
    consumer = build.allocate({rp: SMALL})
    with pytest.raises(ks_exc.Conflict) as info:
        api.put_allocations(placement, consumer, {}, 7, 'p', 'u')
    detail, code = api.error_detail(info.value)
    assert code == api.CONCURRENT_UPDATE
    assert 'consumer generation conflict' in detail
    plan = m.Plan(m.DELETE, consumer, rp, m.DELETED_INSTANCE, '', 7, 'p',
                  'u', {rp: SMALL}, {})
    outcome = write_plan(placement, journal, plan)
    assert outcome.status == write.SKIPPED
    # In words (the consumer changed), not Placement's own.
    assert 'the consumer changed since it was read' in str(outcome.message)
    assert 'consumer generation conflict' not in str(outcome.message)
    assert api.provider_allocations(placement, rp)[consumer]['resources'] \
        == SMALL


def test_empty_put_deletes_and_generations_restart(placement, build):
    rp = build.provider('node')
    consumer = build.allocate({rp: SMALL})
    api.put_allocations(placement, consumer, {}, 1, 'p', 'u')
    assert api.consumer_allocations(placement, consumer)['allocations'] == {}
    before = parse.consumer(consumer,
                            api.consumer_allocations(placement, consumer))
    build.allocate({rp: {'VCPU': 2}}, consumer=consumer)
    after = parse.consumer(consumer,
                           api.consumer_allocations(placement, consumer))
    assert after.generation == 1 and before.allocations == {}
    # A confirm made on the first body must not pass for the second one:
    # same generation, so the whole body is compared.
    confirmed = m.Plan(m.DELETE, consumer, rp, m.DELETED_INSTANCE, '', 1,
                       'p', 'u', {rp: SMALL}, {})
    fresh = dataclasses.replace(confirmed, before=after.allocations)
    why = str(repairs._differs(fresh, confirmed, {rp: 'node'}))
    assert 'changed since the preview' in why
    # The provider by its name, as the preview showed it, not its uuid.
    assert 'it now holds node: VCPU=2' in why and rp not in why


def test_consumer_type_at_138_and_why_we_write_at_128(placement, build):
    rp = build.provider('node')
    consumer = build.allocate({rp: SMALL})
    body = placement.get('/allocations/%s' % consumer,
                         microversion='1.38').json()
    assert body['consumer_type'] == 'unknown'
    with pytest.raises(ks_exc.BadRequest):
        placement.put('/allocations/%s' % consumer, microversion='1.38',
                      json={'allocations': {rp: {'resources': SMALL}},
                            'consumer_generation': 1, 'project_id': 'p',
                            'user_id': 'u', 'consumer_type': 'unknown'})
    api.put_allocations(placement, consumer, {rp: {'VCPU': 1}}, 1, 'p', 'u')
    assert api.consumer_allocations(placement, consumer)[
        'allocations'][rp]['resources'] == {'VCPU': 1}


def _snapshot(placement, consumer, server=None, hypervisors=()):
    providers = {p['uuid']: parse.provider(p)
                 for p in api.provider_list(placement)}
    return m.Snapshot(
        providers=providers,
        consumers={consumer: parse.consumer(
            consumer, api.consumer_allocations(placement, consumer))},
        servers={server.uuid: server} if server else {},
        migrations={}, services={},
        hypervisors={h: m.Hypervisor(h, providers[h].name, host='h')
                     for h in hypervisors},
        known_instances=frozenset() if server else frozenset({consumer}))


def _replay(placement_url, command):
    args = shlex.split(command)
    assert args[0] == 'openstack'
    openstack = os.path.join(os.path.dirname(sys.executable), 'openstack')
    subprocess.run([openstack, '--os-auth-type', 'admin_token',
                    '--os-endpoint', placement_url, '--os-token', 'admin'] +
                   args[1:], check=True, capture_output=True)


@pytest.mark.parametrize('action', [m.TRIM, m.DELETE_AND_HEAL, m.DELETE])
def test_osc_commands_leave_the_promised_state(placement, placement_url,
                                               build, action):
    old = build.provider('old')
    new = build.provider('new')
    gpu = build.provider('gpu', parent=new)
    placement.put('/resource_classes/CUSTOM_GPU', microversion='1.7')
    placement.put('/resource_providers/%s/inventories' % gpu, json={
        'resource_provider_generation': 1,
        'inventories': {'CUSTOM_GPU': {'total': 4}}})
    consumer = build.allocate({old: SMALL, new: SMALL,
                               gpu: {'CUSTOM_GPU': 1}})
    server = m.Server(consumer, name='vm', status='ACTIVE',
                      node=api.provider_list(placement, uuid=new)[0]['name'],
                      project_id='p', user_id='u', image_ref='img',
                      flavor=m.Flavor(1, 512, 1, extra_specs={
                          'resources1:CUSTOM_GPU': '1'}))
    snapshot = _snapshot(placement, consumer,
                         server if action != m.DELETE else None, [old, new])
    plan = classify.Auditor(snapshot, min_age=600).plan(consumer, old, action)
    for command in equivalents.for_plan(plan):
        _replay(placement_url, command)
    now = parse.consumer(consumer,
                         api.consumer_allocations(placement, consumer))
    assert now.allocations == plan.after


@pytest.mark.parametrize('action', [m.TRIM, m.DELETE_AND_HEAL])
def test_repair_write_applies_the_plan(placement, build, journal, action):
    old = build.provider('old')
    new = build.provider('new')
    consumer = build.allocate({old: SMALL, new: SMALL})
    server = m.Server(consumer, name='vm', status='ACTIVE',
                      node=api.provider_list(placement, uuid=new)[0]['name'],
                      project_id='p', user_id='u', image_ref='img',
                      flavor=m.Flavor(1, 512, 1, extra_specs={}))
    snapshot = _snapshot(placement, consumer, server, [old, new])
    auditor = classify.Auditor(snapshot, min_age=600)
    assert auditor.finding(consumer, old).verdict == m.MOVED
    plan = auditor.plan(consumer, old, action)
    outcome = write_plan(placement, journal, plan)
    assert outcome.status == write.DONE, outcome.message
    body = api.consumer_allocations(placement, consumer)
    assert parse.consumer(consumer, body).allocations == plan.after
    assert body['consumer_generation'] == 2


def test_a_deleted_provider_comes_back_whole(placement, build):
    """What Restore of a provider deletion relies on: the record holds
    everything Placement loses, and re-creating from it gives it back."""
    root = build.provider('dead-node')
    child = build.provider('dead-node-nic', parent=root)
    placement.put('/traits/CUSTOM_RACK_7', microversion='1.6')
    generation = placement.get('/resource_providers/%s' % child,
                               microversion='1.19').json()['generation']
    placement.put('/resource_providers/%s/traits' % child,
                  microversion='1.6', json={
                      'resource_provider_generation': generation,
                      'traits': ['CUSTOM_RACK_7', 'HW_CPU_X86_AVX2']})
    generation += 1
    aggregate = '4c0f8a10-7e4e-4b3e-9e7a-0d8c1a9b2f31'
    placement.put('/resource_providers/%s/aggregates' % child,
                  microversion='1.19', json={
                      'resource_provider_generation': generation,
                      'aggregates': [aggregate]})
    records = [api.provider_record(placement, rp) for rp in (child, root)]
    assert records[0]['parent_provider_uuid'] == root
    assert records[0]['traits'] == ['CUSTOM_RACK_7', 'HW_CPU_X86_AVX2']
    assert records[0]['aggregates'] == [aggregate]
    assert records[0]['inventories']['VCPU']['total'] == 64
    for rp in (child, root):
        api.delete_provider(placement, rp)
    assert api.provider_record(placement, child) is None
    for record in reversed(records):
        api.create_provider(placement, record)
    again = [api.provider_record(placement, rp) for rp in (child, root)]
    for before, after in zip(records, again):
        assert {k: v for k, v in after.items() if k != 'generation'} == \
            {k: v for k, v in before.items() if k != 'generation'}


def test_ownership_reads_and_the_delete_refusal(placement, build):
    """Against a real Placement: the OWNER_* traits it knows, the
    OWNER_NOVA listing, the 400 an unknown trait gets (what the fallback
    relies on), and a provider delete that refuses a Neutron segment
    provider while it accepts a tagged node."""
    from unittest import mock

    from orphan_dashboard.api import nova

    node = build.provider('node')
    placement.put('/resource_providers/%s/traits' % node, microversion='1.6',
                  json={'resource_provider_generation': 1,
                        'traits': ['OWNER_NOVA']})
    segment = build.provider('segment')
    placement.put('/resource_providers/%s/inventories' % segment, json={
        'resource_provider_generation': 1,
        'inventories': {'IPV4_ADDRESS': {'total': 253}}})
    placement.put('/resource_providers/%s' % segment, microversion='1.14',
                  json={'name': 'Neutron segment id %s' % segment})
    owners = api.owner_traits(placement)
    assert {'OWNER_CYBORG', 'OWNER_NOVA'} <= set(owners)
    assert all(t.startswith('OWNER_') for t in owners)
    assert node in api.trait_holders(placement, 'OWNER_NOVA')
    assert segment not in api.trait_holders(placement, 'OWNER_NOVA')
    assert api.trait_holders(placement, 'OWNER_CYBORG') == set()
    assert api.trait_exists(placement, 'OWNER_NOVA')
    assert not api.trait_exists(placement, 'CUSTOM_NEVER_MADE')
    with pytest.raises(ks_exc.BadRequest):
        api.provider_list(placement, required='CUSTOM_NEVER_MADE')
    with mock.patch.object(nova, 'hypervisor_list', return_value=[]), \
            mock.patch.object(nova, 'service_list', return_value=[]), \
            mock.patch.object(nova, 'hypervisor_get', return_value=None):
        (refused,) = repairs.preview_provider_delete(
            client.Clients(placement, None), [segment])
        (accepted,) = repairs.preview_provider_delete(
            client.Clients(placement, None), [node])
    assert refused.plan is None
    assert "is not Nova's (likely neutron's)" in str(refused.error)
    assert accepted.plan is not None and not accepted.error
    # Nova not answering for the node alone, or listing a compute service
    # of its name (a host not mapped to a cell), proves nothing gone.
    for answers, said in (
            (dict(side_effect=ks_exc.InternalServerError()),
             'it may still be alive'),
            (dict(return_value=None), 'cell_v2 discover_hosts')):
        services = [{'host': api.provider_record(placement, node)['name'],
                     'state': 'up', 'status': 'enabled'}] \
            if 'discover' in said else []
        with mock.patch.object(nova, 'hypervisor_list', return_value=[]), \
                mock.patch.object(nova, 'service_list',
                                  return_value=services), \
                mock.patch.object(nova, 'hypervisor_get', **answers):
            (kept,) = repairs.preview_provider_delete(
                client.Clients(placement, None), [node])
        assert kept.plan is None and said in str(kept.error), kept.error
