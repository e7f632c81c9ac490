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

"""Faults between preview and submit, on the real sandbox: the row is
skipped with a reason and Placement is left exactly as it was."""

import time
import uuid

import pytest

from orphan_dashboard.api import client as client_module
from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard import conf
from orphan_dashboard.operations import repairs
from orphan_dashboard.writing import journal as journal_module
from orphan_dashboard.writing import write
from tests.e2e.conftest import module_cloud
from tests.integration.fault_proxy import FaultProxy
from tests.integration.fault_proxy import LOST

CLOUD = client_module.Cloud('sandbox', 'RegionOne', '', 'e2e')
UNPROTECTED = conf.RunSettings(min_age=0)

pytestmark = pytest.mark.django_db(databases=['orphan_journal'])


cloud = module_cloud('evacuation,deleted_behind_nova,healthy')


@pytest.fixture
def journal():
    return journal_module.Journal('test', CLOUD, user_name='tester')


def _held(clients, consumer):
    return api.consumer_allocations(clients.placement, consumer)


def _preview(clients, selection):
    (row,) = repairs.preview(clients, [selection], UNPROTECTED)
    assert row.plan is not None, row.error
    return row


def _previewed(cloud, incident, host, action):
    """``action`` of ``incident``'s first server on ``host``, previewed
    now: ``(clients, server, provider, row)``."""
    clients = cloud.clients()
    staged = cloud.incidents[incident]
    server, provider = staged['servers'][0]['uuid'], staged['hosts'][host]
    return clients, server, provider, _preview(
        clients, m.Selection(server, provider, action))


def _apply(clients, journal, row):
    """Confirm exactly what ``row`` previewed."""
    (outcome,) = repairs.apply(clients, journal, [row.plan], UNPROTECTED)
    return outcome


def test_another_write_between_preview_and_submit(cloud, journal):
    clients, ghost, rp, row = _previewed(cloud, 'deleted_behind_nova',
                                         'host2', m.DELETE)
    before = _held(clients, ghost)
    # Another admin rewrites it unchanged: only the generation moves.
    api.put_allocations(
        clients.placement, ghost,
        {p: a['resources'] for p, a in before['allocations'].items()},
        before['consumer_generation'], before['project_id'],
        before['user_id'])
    bumped = _held(clients, ghost)
    outcome = _apply(clients, journal, row)
    assert outcome.status == write.SKIPPED
    assert 'changed since the preview' in str(outcome.message)
    # What it holds now, by the hypervisor's name, not its uuid.
    assert 'host2: ' in str(outcome.message)
    assert rp not in str(outcome.message)
    assert _held(clients, ghost) == bumped
    assert journal_module.entries(None, consumer=ghost)[0] == []


def test_migration_started_between_preview_and_submit(cloud, journal):
    clients, server, _host1, row = _previewed(cloud, 'evacuation',
                                              'host1', m.TRIM)
    clients.nova.post('/servers/%s/action' % server,
                      json={'migrate': {'host': 'host3'}},
                      microversion='2.56')
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = clients.nova.get('/servers/%s' % server).json()[
            'server']['status']
        if status == 'VERIFY_RESIZE':
            break
        time.sleep(0.5)
    assert status == 'VERIFY_RESIZE'
    held = _held(clients, server)
    outcome = _apply(clients, journal, row)
    assert outcome.status == write.SKIPPED
    # Nova moved all the server's allocations (the leftover on host1
    # included) to the migration consumer: the confirm re-plans, finds
    # nothing of the server's left there, and writes nothing.
    assert 'no longer holds anything on host1' in str(outcome.message)
    assert _held(clients, server) == held
    assert journal_module.entries(None, consumer=server)[0] == []


def test_consumer_of_another_provider_is_refused(cloud, journal):
    clients = cloud.clients()
    healthy = cloud.incidents['healthy']['servers'][0]['uuid']
    ghost_rp = cloud.incidents['deleted_behind_nova']['hosts']['host2']
    elsewhere = [rp for rp in cloud.incidents['evacuation']['hosts'].values()
                 if rp not in _held(clients, healthy)['allocations']]
    held = _held(clients, healthy)
    for rp in elsewhere + [ghost_rp]:
        selection = m.Selection(healthy, rp, m.DELETE)
        (row,) = repairs.preview(clients, [selection], UNPROTECTED)
        assert row.plan is None
        assert str(row.error).startswith('Nothing to delete: '), row.error
    # Even a confirmed plan made up to delete it (as a forged confirm
    # would carry) is re-planned and refused: a live server's allocation
    # is never deleted.
    forged = m.Plan(m.DELETE, healthy, ghost_rp, m.DELETED_INSTANCE, '',
                    held['consumer_generation'], held['project_id'],
                    held['user_id'], {rp: a['resources'] for rp, a in
                                      held['allocations'].items()}, {})
    (outcome,) = repairs.apply(clients, journal, [forged], UNPROTECTED)
    assert outcome.status == write.SKIPPED
    assert _held(clients, healthy) == held
    assert journal_module.entries(None, consumer=healthy)[0] == []


def test_refresh_after_our_own_trim_matches_a_full_sweep(cloud, journal):
    """A PUT that drops a provider bumps no generation of that provider,
    only of the one it keeps: a refresh reads that one whole and then the
    consumer, its generation moved and its old picture a problem, whole
    again; told the write (``touched``), it reads the dropped provider
    too.  Both find what a full sweep finds."""
    from orphan_dashboard.audit import classify
    from orphan_dashboard.reading import collect
    from orphan_dashboard.reading import refresh

    def findings(snapshot):
        return sorted((f.consumer, f.provider, f.verdict)
                      for f in classify.audit(snapshot, min_age=0).findings)

    clients = cloud.clients()
    server = cloud.incidents['healthy']['servers'][0]['uuid']
    held = _held(clients, server)
    (home,) = held['allocations']
    other = next(rp for rp in cloud.incidents['evacuation']['hosts'].values()
                 if rp != home)
    resources = {rp: a['resources'] for rp, a in held['allocations'].items()}
    api.put_allocations(clients.placement, server,
                        dict(resources, **{other: resources[home]}),
                        held['consumer_generation'], held['project_id'],
                        held['user_id'])
    # Out of the refresh's changes-since window of the writes above.
    time.sleep(refresh.CLOCK_MARGIN.total_seconds() + 1)
    before = collect.full_snapshot(clients.placement, clients.nova)
    assert other in before.consumers[server].allocations

    selection = m.Selection(server, other, m.TRIM)
    outcome = _apply(clients, journal, _preview(clients, selection))
    assert outcome.status == write.DONE, outcome.message
    assert set(_held(clients, server)['allocations']) == {home}

    swept = findings(collect.full_snapshot(clients.placement, clients.nova))
    for touched in ((), {server}):
        told = refresh.refresh_snapshot(clients.placement, clients.nova,
                                        before, touched=touched)
        assert set(told.consumers[server].allocations) == {home}
        assert findings(told) == swept


def test_four_confirms_of_one_preview_write_once_and_record_it_once(cloud):
    """Four confirms of one preview, each re-reading before any of them
    wrote (a double click, four tabs): Placement is written once, and
    History holds that one change: the three writes that lost the race to
    an identical one changed nothing and refused nothing."""
    from unittest import mock

    clients = cloud.clients()
    incident = cloud.incidents['deleted_behind_nova']
    ghost = incident['servers'][0]['uuid']
    rp = incident['hosts']['host2']
    row = _preview(clients, m.Selection(ghost, rp, m.DELETE))
    journals = [journal_module.Journal('test', CLOUD, user_name='t%d' % i)
                for i in range(4)]
    waiting = list(journals[1:])
    outcomes = []
    put = api.put_allocations

    def racing_put(*args, **kwargs):
        # Each confirm's write goes out only once the next confirm has
        # re-read the consumer and sent its own.
        if waiting:
            outcomes.append(_apply(clients, waiting.pop(0), row))
        return put(*args, **kwargs)

    with mock.patch.object(api, 'put_allocations', racing_put):
        outcomes.append(_apply(clients, journals[0], row))
    assert sorted(o.status for o in outcomes) == [
        write.DONE, write.SKIPPED, write.SKIPPED, write.SKIPPED]
    assert _held(clients, ghost)['allocations'] == {}
    entries = list(journal_module.all_entries(CLOUD, consumer=ghost))
    assert [e.status for e in entries] == ['applied'], [
        (e.status, e.message) for e in entries]
    for outcome in outcomes:
        if outcome.status == write.SKIPPED:
            text = str(outcome.message)
            assert 'already' in text and 'conflict' not in text, text


def test_a_provider_deleted_while_a_sweep_reads_it(cloud, monkeypatch):
    """Placement deletes only a provider that holds nothing: one deleted
    between a sweep's listing and its read of that provider's allocations
    held none.  A full sweep and a refresh read it so and go on with the
    rest of the cloud; the refresh keeps nothing of what the last
    snapshot saw held there."""
    from orphan_dashboard.reading import collect
    from orphan_dashboard.reading import refresh

    clients = cloud.clients()
    healthy = cloud.incidents['healthy']['servers'][0]['uuid']
    doomed, gone, consumer = [], [], str(uuid.uuid4())
    read = api.provider_allocations

    def deleted_first(client, provider):
        if provider in doomed and provider not in gone:
            clients.placement.delete('/resource_providers/%s' % provider)
            gone.append(provider)
        return read(client, provider)

    def provider():
        doomed.append(str(uuid.uuid4()))
        clients.placement.post('/resource_providers', json={
            'uuid': doomed[-1], 'name': 'deleted-while-read-' +
            doomed[-1][:8]}, microversion='1.20')
        return doomed[-1]

    def held_on(snapshot, rp):
        return {u for u, c in snapshot.consumers.items()
                if rp in c.allocations}

    try:
        emptied = provider()
        clients.placement.put(
            '/resource_providers/%s/inventories' % emptied, json={
                'resource_provider_generation': 0,
                'inventories': {'VCPU': {'total': 8}}})
        clients.placement.put('/allocations/%s' % consumer, json={
            'allocations': {emptied: {'resources': {'VCPU': 1}}},
            'consumer_generation': None, 'project_id': 'p',
            'user_id': 'u'}, microversion='1.28')
        before = collect.full_snapshot(clients.placement, clients.nova)
        assert held_on(before, emptied) == {consumer}
        clients.placement.delete('/allocations/%s' % consumer)
        monkeypatch.setattr(api, 'provider_allocations', deleted_first)
        refreshed = refresh.refresh_snapshot(
            clients.placement, clients.nova, before, touched={consumer})
        full = (provider(), collect.full_snapshot(clients.placement,
                                                  clients.nova))
    finally:
        clients.placement.delete('/allocations/%s' % consumer,
                                 raise_exc=False)
        for rp in set(doomed) - set(gone):
            clients.placement.delete('/resource_providers/%s' % rp,
                                     raise_exc=False)
    assert gone == doomed
    for rp, snapshot in ((emptied, refreshed), full):
        assert not held_on(snapshot, rp)
        assert snapshot.consumers[healthy].allocations == \
            before.consumers[healthy].allocations
    assert consumer not in refreshed.consumers


def test_orphan_audit_takes_a_put_a_gateway_sent_twice_for_done(
        cloud, tmp_path):
    """``orphan-audit apply`` behind a gateway in front of Placement that
    lost Placement's first answer to a PUT and sent it again: the retry
    meets the generation its own first copy moved (409).  Read back, the
    consumer holds the repair: done, and History has it, applied and
    restorable (it was "wrote nothing", its entry dropped)."""
    import json

    import yaml

    from tests.e2e.conftest import orphan_audit
    from tests.e2e.conftest import young_findings
    from tests.integration.fault_proxy import RETRIED

    server, _name, host3, _legacy = young_findings(cloud)
    clients = cloud.clients()
    with open(cloud.config['clouds_yaml']) as f:
        config = yaml.safe_load(f)
    proxy = FaultProxy(cloud.config['placement']['url'])
    proxy.inject('PUT', '/allocations/', 1, RETRIED)
    config['clouds']['sandbox']['placement_endpoint_override'] = proxy.url
    clouds_yaml = tmp_path / 'clouds.yaml'
    clouds_yaml.write_text(yaml.safe_dump(config))
    try:
        done = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                            '--provider', host3, '--only', m.WRONG_AMOUNT,
                            '--json', clouds_yaml=clouds_yaml)
    finally:
        proxy.close()
    assert done.returncode in (0, 4), done.stdout + done.stderr
    (outcome,) = [o for o in json.loads(done.stdout)['outcomes']
                  if o['consumer'] == server]
    assert outcome['status'] == write.DONE, outcome
    assert 'conflict' in outcome['message'], outcome
    assert proxy.forwarded.count(('PUT', '/allocations/%s' % server)) == 2
    assert _held(clients, server)['allocations'][host3]['resources'][
        'MEMORY_MB'] == 1024
    history = json.loads(orphan_audit(
        cloud, tmp_path, 'history', '--consumer', server, '--json',
        clouds_yaml=clouds_yaml).stdout)
    assert [(e['action'], e['status']) for e in history] == [
        (m.DELETE_AND_HEAL, 'applied')], history


def test_a_sweep_sends_again_the_reads_a_restarting_service_refused(cloud):
    """A load balancer answers 503 while Placement restarts, a gateway
    502 while Nova does: the sweep sends each refused read again (the same
    read a third time after two refusals) and sees what a sweep without
    them sees."""
    from keystoneauth1 import session
    from orphan_dashboard.reading import collect

    clients = cloud.clients()
    direct = collect.full_snapshot(clients.placement, clients.nova)
    host1 = cloud.incidents['evacuation']['hosts']['host1']
    allocations = '/resource_providers/%s/allocations' % host1
    placement = FaultProxy(cloud.config['placement']['url'])
    nova = FaultProxy(cloud.config['nova']['url'])
    placement.inject('GET', allocations, 1, 503)
    placement.inject('GET', allocations[:-1], 1, 503)
    nova.inject('GET', '/servers/detail', 1, LOST)
    proxied = session.Session(auth=clients.placement.session.auth)
    try:
        swept = collect.full_snapshot(
            client_module.service_adapter(proxied, 'placement',
                                          endpoint_override=placement.url),
            client_module.service_adapter(proxied, 'compute',
                                          endpoint_override=nova.url))
    finally:
        placement.close()
        nova.close()
    assert placement.seen[('GET', allocations)] == 3
    assert nova.seen[('GET', '/servers/detail')] >= 2
    assert swept.consumers == direct.consumers
    assert swept.servers == direct.servers
