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

"""Writes as trustworthy as the reads, on the sandbox through a real
Keystone login: wrong amounts and incomplete consumers repaired through
the panel and ``orphan-audit apply``; forged, foreign and replayed confirms
write nothing; what a consumer is comes from Nova, not from the request;
a provider deletion is previewed, journaled whole and restorable; restore
says what Nova says of a consumer now.  The journal database rolls back
after each test; Placement and Nova do not."""

import json
import uuid

from django.core import signing
from django.test.utils import override_settings
import pytest

from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard import conf
from orphan_dashboard.operations import repairs
from orphan_dashboard.writing import journal as journal_module
from tests.e2e.conftest import audited
from tests.e2e.conftest import held
from tests.e2e.conftest import INDEX
from tests.e2e.conftest import login
from tests.e2e.conftest import module_cloud
from tests.e2e.conftest import orphan_audit
from tests.e2e.conftest import over_capacity
from tests.e2e.conftest import owner
from tests.e2e.conftest import young_findings

pytestmark = pytest.mark.django_db(databases=['default', 'orphan_journal'])
REPAIR = INDEX + 'repair/'
RESTORE = INDEX + 'restore/'
DELETE_PROVIDER = INDEX + 'providers/delete/'


cloud = module_cloud('unconfirmed_resize,wrong_amount,pre_pike_consumer,'
                     'deleted_behind_nova,healthy')


def server_of(cloud, name):
    incident = cloud.incidents[name]
    return incident['servers'][0]['uuid'], incident['expected'][0][
        'provider']


def confirm(horizon, url, preview):
    assert preview.status_code == 200
    response = horizon.post(url, {'rows': preview.context['form'].initial[
        'rows']})
    assert response.status_code == 302
    return response


def test_the_panel_takes_a_put_a_gateway_sent_twice_for_done(cloud,
                                                             horizon):
    """The panel's confirm of a row, Placement behind a gateway that lost
    Placement's first answer to the PUT and sent it again (its copy meets
    the generation the first moved: 409): read back, done, and History
    has it applied with the consumer's new generation."""
    from tests.e2e.conftest import behind_gateway
    from tests.integration.fault_proxy import RETRIED

    clients = cloud.clients()
    server, _name, host3, _legacy = young_findings(cloud)
    with behind_gateway(cloud, 'placement', RETRIED, '/allocations/',
                        method='PUT') as (proxy, _clouds_yaml):
        preview = horizon.get(REPAIR, {'sel': '%s:%s:%s' % (
            server, host3, m.DELETE_AND_HEAL)})
        (row,) = preview.context['rows']
        assert row.plan is not None, row.error
        confirm(horizon, REPAIR, preview)
    assert proxy.forwarded.count(('PUT', '/allocations/%s' % server)) == 2
    now = api.consumer_allocations(clients.placement, server)
    assert now['allocations'][host3]['resources']['MEMORY_MB'] == 1024
    (entry,) = journal_module.all_entries(None, consumer=server)
    assert (entry.action, entry.status, entry.new_generation) == (
        m.DELETE_AND_HEAL, 'applied', now['consumer_generation'])


def test_a_wrong_amount_is_repaired_from_its_row(cloud, horizon):
    clients = cloud.clients()
    server, host3 = server_of(cloud, 'wrong_amount')
    assert held(clients, server)[host3]['MEMORY_MB'] == 4096
    audited(horizon)
    detail = horizon.get(INDEX + host3 + '/')
    assert b'data-verdict="wrong_amount"' in detail.content
    link = REPAIR + '?sel=%s%%3A%s%%3Adelete_and_heal' % (server, host3)
    assert link.encode() in detail.content
    confirm(horizon, REPAIR, horizon.get(link))
    assert held(clients, server) == {host3: {'VCPU': 1, 'MEMORY_MB': 1024,
                                             'DISK_GB': 10}}
    (entry,) = journal_module.entries(None, consumer=server)[0]
    assert (entry.status, entry.verdict) == ('applied', m.WRONG_AMOUNT)
    # History's filter finds it by the name its Consumer column shows
    # (the sweep's, from Nova), in any case.
    name = cloud.incidents['wrong_amount']['servers'][0]['name']
    tab = INDEX + '?tab=orphaned_allocations__history'
    horizon.post(tab, {'history__filter__q_field': 'consumer',
                       'history__filter__q': name.upper()})
    history = horizon.get(tab)
    assert ('<span title="%s">%s</span>' % (server, name)).encode() in \
        history.content


def test_a_write_left_over_capacity_is_previewed_as_placement_takes_it(
        cloud, horizon, tmp_path):
    """host3's memory reserved whole: the wrong amount's heal leaves it
    over capacity, no worse.  A Placement older than 14.0.0 refuses that
    (bug 2104040): both previews say so before the click, unless the
    release setting names 14.0.0 or newer, or name it refused where it
    names an older one.  This Placement (newer) takes the write."""
    clients = cloud.clients()
    server, name, host3, _legacy = young_findings(cloud)
    link = {'sel': '%s:%s:%s' % (server, host3, m.DELETE_AND_HEAL)}
    with over_capacity(clients, host3, 'MEMORY_MB'):
        dry = orphan_audit(cloud, tmp_path, 'apply', '--dry-run',
                           '--provider', host3, '--min-age', '0')
        assert dry.returncode == 3, dry.stdout + dry.stderr
        assert 'note: Placement older than 14.0.0 (2025.2) refuses this ' \
            'write with 400 (bug 2104040): host3' in dry.stdout, dry.stdout
        assert 'in MEMORY_MB (it holds ' in dry.stdout
        # Each plan named as report names it: server, host, verdict.
        assert 'repair: delete and heal server %s (%s) on host3 (%s): ' \
            'wrong amount\n' % (name, server, host3) in dry.stdout, \
            dry.stdout
        with override_settings(ORPHAN_AUDIT_PLACEMENT_RELEASE='2025.2'):
            (row,) = horizon.get(REPAIR, link).context['rows']
            assert row.plan is not None and row.notes == (), row
        with override_settings(ORPHAN_AUDIT_PLACEMENT_RELEASE='13.0.0'):
            (row,) = horizon.get(REPAIR, link).context['rows']
            assert [n.code for n in row.notes] == [
                'capacity.excess_refused'], row.notes
        preview = horizon.get(REPAIR, link)
        assert b'class="text-warning orphan-note"' in preview.content
        assert b'bug 2104040' in preview.content
        confirm(horizon, REPAIR, preview)
        assert held(clients, server)[host3]['MEMORY_MB'] == 1024
    (entry,) = journal_module.entries(None, consumer=server)[0]
    assert (entry.status, entry.action) == ('applied', m.DELETE_AND_HEAL)


def test_an_incomplete_consumer_gets_its_owner_from_the_batch_action(
        cloud, horizon):
    clients = cloud.clients()
    server, host2 = server_of(cloud, 'pre_pike_consumer')
    assert owner(clients, server) == (m.INCOMPLETE, m.INCOMPLETE)
    before = held(clients, server)
    audited(horizon)
    batch = horizon.post(INDEX + host2 + '/', {
        'action': 'allocations__set_owner_selected',
        'object_ids': ['%s:%s' % (server, host2)]})
    assert batch.status_code == 302
    confirm(horizon, REPAIR, horizon.get(batch['location']))
    nova = clients.nova.get('/servers/%s' % server).json()['server']
    assert owner(clients, server) == (nova['tenant_id'], nova['user_id'])
    assert held(clients, server) == before, 'resources left alone'
    # Restorable like any repair: the placeholders come back.
    (entry,) = journal_module.entries(None, consumer=server)[0]
    assert (entry.before_project, entry.consumer_project) == (
        m.INCOMPLETE, nova['tenant_id'])
    confirm(horizon, RESTORE, horizon.get(RESTORE, {'entry': entry.id}))
    assert owner(clients, server) == (m.INCOMPLETE, m.INCOMPLETE)


def test_forged_foreign_and_replayed_confirms_write_nothing(cloud,
                                                            horizon):
    clients = cloud.clients()
    ghost, host2 = server_of(cloud, 'deleted_behind_nova')
    before = held(clients, ghost)
    preview = horizon.get(REPAIR, {'sel': '%s:%s:delete' % (ghost, host2)})
    signed = preview.context['form'].initial['rows']
    plan = signing.loads(signed, salt=_salt(preview))['plans'][0]
    unsigned = json.dumps({'plans': [plan]})
    other_admin = login(cloud, 'admin')
    for client, rows in ((horizon, unsigned),
                         (horizon, signed[:-2] + 'xx'),
                         (other_admin, signed),
                         (horizon, json.dumps([['%s:%s:delete:' % (
                             ghost, host2), '0123456789abcdef']]))):
        response = client.post(REPAIR, {'rows': rows})
        assert response.status_code == 200
        assert response.context['form'].non_field_errors()
    assert held(clients, ghost) == before
    assert journal_module.entries(None, consumer=ghost)[0] == []

    confirm(horizon, REPAIR, preview)
    assert held(clients, ghost) == {}
    replay = horizon.post(REPAIR, {'rows': signed}, follow=True)
    assert b'skipped' in replay.content
    assert held(clients, ghost) == {}
    (entry,) = journal_module.entries(None, consumer=ghost)[0]
    assert entry.status == 'applied'

    # Restore says what Nova says of the consumer now.
    preview = horizon.get(RESTORE, {'entry': entry.id})
    (row,) = [row for _entry, row in preview.context['rows']]
    assert row.plan is not None
    assert any('server %s is deleted' % ghost in str(note)
               for note in row.notes)
    # The verdict it would have by its label, not its internal key.
    shown = ' '.join(preview.content.decode().split())
    assert 'after the restore it would be deleted instance:' in shown, [
        str(note) for note in row.notes]
    assert 'deleted_instance' not in shown


def _salt(preview):
    from orphan_dashboard.content.orphaned_allocations import forms
    return forms._salt(preview.wsgi_request, 'repair')


def test_a_migration_consumer_is_what_nova_says(cloud, horizon):
    """The unconfirmed resize's migration consumer, selected with nothing
    but its id: Nova's migrations on its host say it is in progress."""
    clients = cloud.clients()
    incident = cloud.incidents['unconfirmed_resize']
    migration = incident['migrations'][0]['uuid']
    source = next(e['provider'] for e in incident['expected']
                  if e['consumer'] == migration)
    before = held(clients, migration)
    preview = horizon.get(REPAIR, {'sel': '%s:%s:delete' % (migration,
                                                            source)})
    (row,) = preview.context['rows']
    assert row.plan is None
    assert str(row.error).startswith('Not now: source side of resize'), \
        row.error
    assert 'awaiting confirm or revert' in str(row.error)
    # The engine alone, with no hint from any snapshot, says the same.
    (row,) = repairs.preview(clients, [
        m.Selection(migration, source, m.DELETE)],
        conf.RunSettings(min_age=0))
    assert row.finding.verdict == m.PROTECTED
    # The old fourth field naming the migration's server is refused.
    response = horizon.get(REPAIR, {'sel': '%s:%s:delete:%s' % (
        migration, source, uuid.uuid4())})
    assert response.status_code == 302
    assert held(clients, migration) == before


def _tree(clients):
    """A provider tree Nova does not know: a retired node (Nova 34 tagged
    it ``OWNER_NOVA``: its inventory alone would prove nobody's) and a PCI
    device Nova reported under it (a child proven Nova's by its name: a
    NIC would be Neutron's, never deleted)."""
    placement = clients.placement
    root, child = str(uuid.uuid4()), str(uuid.uuid4())
    placement.post('/resource_providers', json={
        'uuid': root, 'name': 'retired-node'}, microversion='1.14')
    placement.post('/resource_providers', json={
        'uuid': child, 'name': 'retired-node_0000:81:00.0',
        'parent_provider_uuid': root}, microversion='1.14')
    placement.put('/resource_providers/%s/inventories' % root, json={
        'resource_provider_generation': 0,
        'inventories': {'VCPU': {'total': 32, 'allocation_ratio': 4.0}}})
    placement.put('/traits/CUSTOM_RACK_9', microversion='1.6')
    placement.put('/resource_providers/%s/traits' % root, json={
        'resource_provider_generation': 1,
        'traits': ['CUSTOM_RACK_9', 'OWNER_NOVA']}, microversion='1.6')
    placement.put('/resource_providers/%s/aggregates' % child, json={
        'resource_provider_generation': 0,
        'aggregates': [str(uuid.uuid4())]}, microversion='1.19')
    return root, child


def test_a_provider_deletion_is_previewed_journaled_and_restorable(
        cloud, horizon):
    clients = cloud.clients()
    root, child = _tree(clients)
    records = {rp: api.provider_record(clients.placement, rp)
               for rp in (root, child)}
    preview = horizon.get(DELETE_PROVIDER, {'provider': root})
    rows = preview.context['rows']
    assert [r.selection.provider for r in rows] == [child, root]
    assert all(r.plan for r in rows)
    assert b'CUSTOM_RACK_9' in preview.content
    confirm(horizon, DELETE_PROVIDER, preview)
    assert api.provider_record(clients.placement, root) is None
    assert api.provider_record(clients.placement, child) is None
    entries = {e.provider: e for e in journal_module.all_entries(None)
               if e.kind == e.PROVIDER}
    assert set(entries) == {root, child}
    for rp, entry in entries.items():
        assert (entry.action, entry.status) == (m.DELETE_PROVIDER,
                                                'applied')
        assert entry.before == records[rp]
    # Restore both: the parent comes back first, whatever the order asked.
    preview = horizon.get(RESTORE, {'entry': [entries[child].id,
                                              entries[root].id]})
    confirm(horizon, RESTORE, preview)
    for rp, record in records.items():
        again = api.provider_record(clients.placement, rp)
        assert {k: v for k, v in again.items() if k != 'generation'} == \
            {k: v for k, v in record.items() if k != 'generation'}


def test_a_provider_nova_still_has_is_not_deleted(cloud, horizon):
    host3 = cloud.incidents['healthy']['expected'][1]['provider']
    preview = horizon.get(DELETE_PROVIDER, {'provider': host3})
    (row,) = preview.context['rows']
    assert row.plan is None and 'Nova still has compute node' in str(row.error)
    assert b'value="Delete"' not in preview.content
    assert api.provider_record(cloud.clients().placement, host3)


def test_orphan_audit_apply_repairs_both_again(cloud, tmp_path):
    clients = cloud.clients()
    server, name, host3, old_style = young_findings(cloud)
    assert owner(clients, old_style) == (m.INCOMPLETE, m.INCOMPLETE)
    result = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                          '--json')
    assert result.returncode == 4, result.stdout + result.stderr
    outcomes = {o['consumer']: o for o in json.loads(result.stdout)[
        'outcomes']}
    assert outcomes[server]['action'] == m.DELETE_AND_HEAL
    assert outcomes[old_style]['action'] == m.SET_OWNER
    assert {o['status'] for o in outcomes.values()} == {'done'}
    assert held(clients, server)[host3]['MEMORY_MB'] == 1024
    assert m.INCOMPLETE not in owner(clients, old_style)
    again = orphan_audit(cloud, tmp_path, 'report', '--min-age', '0',
                         '--json')
    assert again.returncode == 0, again.stdout
    unknown = orphan_audit(cloud, tmp_path, 'report', '--provider',
                           'no-such-host')
    assert unknown.returncode == 2
    assert 'no resource provider no-such-host' in unknown.stderr
    history = orphan_audit(cloud, tmp_path, 'history', '--json')
    assert {e['consumer'] for e in json.loads(history.stdout)} >= {
        server, old_style}
    # Found again by the names history prints (read from Nova and
    # Placement): the server's, in any case, and its hypervisor's.
    by_name = orphan_audit(cloud, tmp_path, 'history', '--consumer',
                           'WRONG-AMOUNT-VM', '--json')
    assert by_name.returncode == 0, by_name.stderr
    found = {e['consumer']: e for e in json.loads(by_name.stdout)}
    entry = found[server]
    assert entry['consumer_name'] == name
    assert old_style not in found
    assert all('wrong-amount-vm' in e['consumer_name']
               for e in found.values())
    by_host = orphan_audit(cloud, tmp_path, 'history', '--provider',
                           entry['provider_name'], '--json')
    assert server in {e['consumer'] for e in json.loads(by_host.stdout)}
    assert old_style not in {e['consumer'] for e in json.loads(
        by_host.stdout)}
