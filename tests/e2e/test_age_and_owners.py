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
the minimum age like any other (Nova may still be writing it), and the
owner of a protected migration consumer stays what Placement says across
cold reports, full sweeps and refreshes of the panel's snapshot."""

import json

import pytest

from orphan_dashboard.api import client as client_module
from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard.cli import commands as cli
from orphan_dashboard.cli import options
from orphan_dashboard.sweep import store as stores
from tests.e2e.conftest import audited
from tests.e2e.conftest import held
from tests.e2e.conftest import module_cloud
from tests.e2e.conftest import orphan_audit
from tests.e2e.conftest import owner
from tests.e2e.conftest import young_findings

pytestmark = pytest.mark.django_db(databases=['default', 'orphan_journal'])

cloud = module_cloud('unconfirmed_resize')


def findings_of(result, consumer):
    assert result.returncode in (0, 3), result.stdout + result.stderr
    return [f for f in json.loads(result.stdout)['findings']
            if f['consumer'] == consumer]


def test_a_resize_a_cut_migration_listing_dropped_stays_protected(
        cloud, tmp_path, horizon):
    """Nova behind a gateway that empties the listing of every migration,
    as Nova's one timer drops a healthy cell's records after a slow cell,
    with no marker: the source side of the resize awaiting confirmation
    is no consumer Nova does not know, for ``orphan-audit`` and for the
    panel alike.  Its host's migrations, listed by host, name it:
    protected, and neither ``apply`` nor a forged delete writes it."""
    from tests.e2e.conftest import behind_gateway
    from tests.e2e.conftest import INDEX
    from tests.integration.fault_proxy import EMPTIED

    resize = cloud.incidents['unconfirmed_resize']
    (migration,) = resize['migrations']
    source = next(e['provider'] for e in resize['expected']
                  if e['consumer'] == migration['uuid'])
    clients = cloud.clients()
    before = held(clients, migration['uuid'])
    assert before, 'the resize holds nothing on its source'
    listing = '/v2.1/os-migrations'
    with behind_gateway(cloud, 'compute', EMPTIED, listing) as (
            proxy, clouds_yaml):
        report = orphan_audit(cloud, tmp_path, 'report', '--min-age', '0',
                              '--json', clouds_yaml=clouds_yaml)
        applied = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                               '--json', '--provider', source,
                               clouds_yaml=clouds_yaml)
    assert ('GET', listing) in proxy.forwarded
    (found,) = findings_of(report, migration['uuid'])
    assert (found['verdict'], found['actions'], found['reason_code']) == (
        m.PROTECTED, [], 'protected.source_awaiting_confirm'), found
    assert applied.returncode in (0, 4), applied.stdout + applied.stderr
    assert migration['uuid'] not in {o['consumer'] for o in json.loads(
        applied.stdout)['outcomes']}

    with behind_gateway(cloud, 'compute', EMPTIED, listing) as (proxy, _):
        audited(horizon)
        page = horizon.get('%s%s/' % (INDEX, source))
        preview = horizon.get(INDEX + 'repair/', {'sel': '%s:%s:%s' % (
            migration['uuid'], source, m.DELETE)})
    assert ('GET', listing) in proxy.forwarded
    assert page.status_code == 200
    assert b'awaiting confirm or revert' in page.content
    (row,) = preview.context['rows']
    assert row.plan is None and row.error, row
    assert held(clients, migration['uuid']) == before


def test_findings_written_seconds_ago_wait_for_the_minimum_age(
        cloud, tmp_path):
    """A wrong amount and an incomplete consumer just written through the
    Placement API are protected at 600 s: ``apply`` writes neither; at
    0 s both are repaired."""
    clients = cloud.clients()
    server, _name, host3, old_style = young_findings(cloud)
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

    # Undone at once, the repair's own write is seconds old: the preview
    # still says what the restore would leave.
    entry = {o['consumer']: o['journal_entry'] for o in json.loads(
        result.stdout)['outcomes']}[server]
    undo = orphan_audit(cloud, tmp_path, 'restore', str(entry),
                        '--min-age', '600', '--json')
    assert undo.returncode == 3, undo.stdout + undo.stderr
    (plan,) = json.loads(undo.stdout)['plans']
    assert any('after the restore it would be wrong amount:' in note
               for note in plan['notes']), plan


def refresh(*args):
    """``orphan-audit refresh ARGS`` in this process (its cache is the
    panel's here): the stored report's findings."""
    code = cli.execute(options.build_parser().parse_args(
        ['--os-cloud', 'sandbox', 'refresh', '--min-age', '0', *args]))
    assert code == options.NOTHING
    return stored_findings()


def stored_findings():
    """The findings the panel shows: the stored summary's and its trees'
    (what the index, the provider pages and the exports read)."""
    store = stores.Store(client_module.cloud_for_clients(
        client_module.for_cloud('sandbox')).key)
    version = store.state()['version']
    report = store.load_report(version)
    trees = [store.load_tree(version, p.provider.uuid)
             for p in report.providers]
    return [f.as_dict() for f in report.findings] + [
        f.as_dict() for t in trees for f in t.findings]


def test_a_protected_migration_consumer_keeps_its_owner(cloud, tmp_path):
    """The source side of an unconfirmed resize names the project and
    user Placement holds it for: in a cold report, and in the panel's
    snapshot after full sweeps and refreshes, with or without an
    incomplete consumer around (whose presence makes a sweep read every
    owner)."""
    clients = cloud.clients()
    (migration,) = cloud.incidents['unconfirmed_resize']['migrations']
    consumer = migration['uuid']
    want = owner(clients, consumer)
    assert None not in want and m.INCOMPLETE not in want

    def owners(findings):
        found = {(f['project_id'], f['user_id']) for f in findings
                 if f['consumer'] == consumer}
        assert found, 'no finding on the migration consumer'
        return found

    # No incomplete consumer (the one the other test staged is repaired):
    # nothing makes a sweep read every owner.
    assert api.project_usages(clients.placement, m.INCOMPLETE) == {}
    cold = orphan_audit(cloud, tmp_path, 'report', '--min-age', '0',
                        '--json')
    assert owners(findings_of(cold, consumer)) == {want}, 'cold report'
    assert owners(refresh('--full')) == {want}, 'first full sweep'
    assert owners(refresh()) == {want}, 'refresh'
    assert owners(refresh('--full')) == {want}, 'second full sweep'
    # A sweep with an incomplete consumer around reads every owner; its
    # repair must not take them away from the next sweeps.
    legacy = cloud.control('POST', '/incidents/pre_pike_consumer')
    assert owners(refresh('--full')) == {want}, 'incomplete consumer around'
    result = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0')
    assert result.returncode == 4, result.stdout + result.stderr
    assert m.INCOMPLETE not in owner(clients, legacy['servers'][0]['uuid'])
    assert owners(refresh()) == {want}, 'refresh after the repair'
    assert owners(refresh('--full')) == {want}, 'full sweep after the repair'
    cold = orphan_audit(cloud, tmp_path, 'report', '--min-age', '0',
                        '--json')
    assert owners(findings_of(cold, consumer)) == {want}, 'cold, at last'


def test_an_image_pinned_server_keeps_its_pcpu(cloud, tmp_path, horizon):
    """A server holding PCPU as Nova allocated for the dedicated image it
    booted from, which Glance no longer shows pinned: Nova's own copy of
    the image's properties (``GET /servers/{id}`` at 2.98) makes it
    ``ok``, and neither ``apply`` nor the panel rewrites it as VCPU."""
    clients = cloud.clients()
    staged = cloud.control('POST', '/incidents/image_pinned')
    server = staged['servers'][0]['uuid']
    host1 = staged['expected'][0]['provider']
    before = held(clients, server)
    assert before == {host1: staged['checks']['held']}
    shown = clients.nova.get('/servers/%s' % server, microversion='2.98',
                             microversion_service_type='compute').json()
    assert shown['server']['image']['properties']['hw_cpu_policy'] == \
        'dedicated'
    report = orphan_audit(cloud, tmp_path, 'report', '--min-age', '0',
                          '--json')
    assert findings_of(report, server) == [], findings_of(report, server)

    never_rewritten(cloud, tmp_path, horizon, server, host1, before,
                    b'image-pinned-vm')


def never_rewritten(cloud, tmp_path, horizon, server, host1, before,
                    *shown):
    """``apply`` leaves ``server``'s PCPU on ``host1`` as ``before``; the
    panel's hypervisor page shows ``shown`` of it, and refuses the rewrite
    to VCPU a forged row asks for."""
    clients = cloud.clients()
    result = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                          '--provider', host1, '--json')
    assert result.returncode in (0, 4), result.stdout + result.stderr
    assert server not in {o['consumer'] for o in json.loads(
        result.stdout)['outcomes']}
    assert held(clients, server) == before
    audited(horizon, refresh=True)
    page = horizon.get('/admin/orphaned_allocations/%s/' % host1)
    assert page.status_code == 200
    for text in shown:
        assert text in page.content, text
    preview = horizon.get('/admin/orphaned_allocations/repair/', {
        'sel': '%s:%s:%s' % (server, host1, m.DELETE_AND_HEAL)})
    (row,) = preview.context['rows']
    assert row.plan is None and row.error, row
    assert held(clients, server) == before


def test_a_volume_backed_server_keeps_the_pcpu_its_volume_pinned(
        cloud, tmp_path, horizon):
    """Booted from a volume whose image metadata pins its CPUs, through
    Nova's own boot-from-volume path: Nova allocated PCPU and shows the
    image as ``""``, with no properties.  Unknown, never "no image": the
    report protects the PCPU, ``apply`` leaves it, and the panel refuses
    the rewrite to VCPU a forged row asks for."""
    clients = cloud.clients()
    staged = cloud.control('POST', '/incidents/volume_pinned')
    server = staged['servers'][0]['uuid']
    host1 = staged['expected'][0]['provider']
    before = held(clients, server)
    assert before == {host1: staged['checks']['held']}
    assert before[host1]['PCPU'] == 1 and 'VCPU' not in before[host1]
    shown = clients.nova.get('/servers/%s' % server, microversion='2.98',
                             microversion_service_type='compute').json()
    assert shown['server']['image'] == ''
    report = orphan_audit(cloud, tmp_path, 'report', '--min-age', '0',
                          '--json')
    (found,) = findings_of(report, server)
    assert (found['verdict'], found['actions'], found['reason_code']) == (
        m.PROTECTED, [], 'protected.image_unread'), found
    assert 'boots from a volume' in found['reason'], found
    never_rewritten(cloud, tmp_path, horizon, server, host1, before,
                    b'volume-pinned-vm', b'boots from a volume')


def test_a_shelved_offloaded_server_holding_resources_is_deleted(
        cloud, tmp_path):
    """A server shelved and offloaded by Nova, whose allocation was
    written back as a failed cleanup leaves it: its own verdict, and its
    delete leaves it holding nothing (Nova allocates again on unshelve)."""
    clients = cloud.clients()
    staged = cloud.control('POST', '/incidents/shelved_offloaded')
    server = staged['servers'][0]['uuid']
    host3 = staged['expected'][0]['provider']
    assert staged['servers'][0]['status'] == 'SHELVED_OFFLOADED'
    assert staged['checks']['emptied_by_offload'] == {}
    assert held(clients, server) == staged['checks']['held']

    report = orphan_audit(cloud, tmp_path, 'report', '--min-age', '0',
                          '--json')
    (found,) = findings_of(report, server)
    assert (found['provider'], found['verdict'], found['actions'],
            found['reason_code']) == (host3, m.SHELVED_OFFLOADED,
                                      [m.DELETE], 'shelved_offloaded'), found

    result = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                          '--provider', host3, '--json')
    assert result.returncode == 4, result.stdout + result.stderr
    outcomes = {o['consumer']: (o['action'], o['status'])
                for o in json.loads(result.stdout)['outcomes']}
    assert outcomes[server] == (m.DELETE, 'done')
    assert held(clients, server) == {}


def test_a_migration_a_compute_crash_left_is_moved_back(
        cloud, tmp_path, horizon):
    """Nova's own crash: host1's compute restarts while its driver's
    ``migrate_disk_and_power_off`` never returns; ``_init_instance``
    leaves the server ACTIVE on host1, the migration ``migrating`` for
    ever, its consumer holding host1 and the server's holding host2.
    ``orphan-audit`` finds both rows stuck and moves them back in one
    write, journaled twice; restored, the panel previews both consumers
    and moves them back again."""
    from tests.e2e.conftest import INDEX

    clients = cloud.clients()
    staged = cloud.control('POST', '/incidents/stuck_migration')
    server = staged['servers'][0]['uuid']
    migration = staged['checks']['migration']
    assert staged['checks']['migration_status'] == 'migrating'
    rows = {e['consumer']: e['provider'] for e in staged['expected']}
    host1, host2 = rows[migration], rows[server]
    before = {migration: held(clients, migration),
              server: held(clients, server)}
    assert set(before[migration]) == {host1}
    assert set(before[server]) == {host2}
    report = orphan_audit(cloud, tmp_path, 'report', '--min-age', '0',
                          '--json')
    for consumer in (server, migration):
        (found,) = findings_of(report, consumer)
        assert (found['verdict'], found['actions'], found['reason_code']) \
            == (m.STUCK_MIGRATION, [m.MOVE_BACK],
                'stuck_migration.back'), found
        assert 'will never move this migration on' in found['reason']

    result = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                          '--only', m.STUCK_MIGRATION, '--json')
    assert result.returncode == 4, result.stdout + result.stderr
    (outcome,) = json.loads(result.stdout)['outcomes']
    assert (outcome['action'], outcome['status']) == (m.MOVE_BACK, 'done')
    assert held(clients, server) == before[migration]
    assert held(clients, migration) == {}
    history = json.loads(orphan_audit(cloud, tmp_path, 'history',
                                      '--json').stdout)
    entries = [e for e in history if e['consumer'] in (server, migration)]
    assert sorted((e['consumer'], e['action'], e['status'])
                  for e in entries) == sorted(
        (c, m.MOVE_BACK, 'applied') for c in (server, migration))
    restored = orphan_audit(cloud, tmp_path, 'restore', '--apply',
                            *[str(e['id']) for e in entries])
    assert restored.returncode == 4, restored.stdout + restored.stderr
    assert {c: held(clients, c) for c in before} == before

    audited(horizon, refresh=True)
    preview = horizon.get(INDEX + 'repair/', {
        'sel': '%s:%s:%s' % (migration, host1, m.MOVE_BACK)})
    (row,) = preview.context['rows']
    assert row.plan is not None, row.error
    assert row.plan.partner['consumer'] == server
    assert server.encode() in preview.content
    assert b'In the same write, consumer' in preview.content
    done = horizon.post(INDEX + 'repair/', {
        'rows': preview.context['form'].initial['rows']})
    assert done.status_code == 302
    assert held(clients, server) == before[migration]
    assert held(clients, migration) == {}


def test_a_server_buried_in_cell0_on_an_unmapped_host_is_deleted_now(
        cloud, tmp_path, horizon):
    """Nova's ``_bury_in_cell0`` after the scheduler's claim
    (``buried_in_cell0``): host7 not mapped to a cell, a server forced
    there is buried in cell0, ERROR with no host, its claim left on
    host7's node.  The finding names both steps (map the host; the
    allocation is a leftover whatever the node) and ``orphan-audit``
    deletes it; restored, the panel previews and deletes it again.  What
    else host7 holds stays protected while it is unmapped."""
    from tests.e2e.conftest import INDEX

    clients = cloud.clients()
    staged = cloud.control('POST', '/incidents/buried_in_cell0')
    server = staged['servers'][0]['uuid']
    (host7,) = {e['provider'] for e in staged['expected']}
    before = held(clients, server)
    assert list(before) == [host7]
    stranger = '9b7f6a52-0c3e-4d1b-8f2a-6e5d4c3b2a17'
    clients.placement.put('/allocations/%s' % stranger, json={
        'allocations': {host7: {'resources': {'VCPU': 1}}},
        'consumer_generation': None, 'project_id': 'p', 'user_id': 'u'},
        microversion='1.28')
    report = orphan_audit(cloud, tmp_path, 'report', '--min-age', '0',
                          '--json')
    (found,) = findings_of(report, server)
    assert (found['verdict'], found['reason_code'], found['actions']) == (
        m.MOVED, 'moved.buried', [m.DELETE_AND_HEAL]), found
    assert 'discover_hosts' in found['reason'] and \
        'host7' in found['reason'], found['reason']
    (kept,) = findings_of(report, stranger)
    assert (kept['verdict'], kept['reason_code']) == (
        m.PROTECTED, 'protected.unmapped_node'), kept

    result = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                          '--provider', host7, '--json')
    assert result.returncode == 4, result.stdout + result.stderr
    (outcome,) = json.loads(result.stdout)['outcomes']
    assert (outcome['consumer'], outcome['status']) == (server, 'done')
    assert held(clients, server) == {}
    assert held(clients, stranger) == {host7: {'VCPU': 1}}
    history = json.loads(orphan_audit(cloud, tmp_path, 'history',
                                      '--json').stdout)
    (entry,) = [e for e in history if e['consumer'] == server]
    restored = orphan_audit(cloud, tmp_path, 'restore', '--apply',
                            str(entry['id']))
    assert restored.returncode == 4, restored.stdout + restored.stderr
    assert held(clients, server) == before

    audited(horizon, refresh=True)
    preview = horizon.get(INDEX + 'repair/', {
        'sel': '%s:%s:%s' % (server, host7, m.DELETE_AND_HEAL)})
    (row,) = preview.context['rows']
    assert row.plan is not None and row.plan.after == {}, row.error
    assert b'discover_hosts' in preview.content
    done = horizon.post(INDEX + 'repair/', {
        'rows': preview.context['form'].initial['rows']})
    assert done.status_code == 302
    assert held(clients, server) == {}
    refused = horizon.get(INDEX + 'repair/', {
        'sel': '%s:%s:%s' % (stranger, host7, m.DELETE)})
    (row,) = refused.context['rows']
    assert row.plan is None and held(clients, stranger) == {
        host7: {'VCPU': 1}}


def test_archived_instances_are_deleted_all_at_once_when_counted(
        cloud, tmp_path, horizon):
    """Nova's own ``archive_deleted_rows --purge`` (``archived_instances``):
    three servers' leftovers on host2 become unknown consumers.  ``apply``
    leaves them alone, refuses ``--only unknown_consumer`` without
    ``--yes-unknown``, holds them past ``--max-writes`` and deletes them
    with it; restored, the panel previews the three, counted and summed,
    refuses a wrong count and deletes them on the right one."""
    from tests.e2e.conftest import INDEX

    clients = cloud.clients()
    staged = cloud.control('POST', '/incidents/archived_instances')
    consumers = sorted(e['consumer'] for e in staged['expected'])
    (host2,) = {e['provider'] for e in staged['expected']}
    before = {c: held(clients, c) for c in consumers}
    assert all(list(b) == [host2] for b in before.values()), before
    report = orphan_audit(cloud, tmp_path, 'report', '--min-age', '0',
                          '--json')
    for consumer in consumers:
        (found,) = findings_of(report, consumer)
        assert (found['verdict'], found['action']) == (
            m.UNKNOWN_CONSUMER, None), found

    refused = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                           '--only', m.UNKNOWN_CONSUMER)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    held_back = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                             '--only', m.UNKNOWN_CONSUMER, '--yes-unknown',
                             '--max-writes', '2')
    assert held_back.returncode == 6, held_back.stdout + held_back.stderr
    assert {c: held(clients, c) for c in consumers} == before
    done = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                        '--only', m.UNKNOWN_CONSUMER, '--yes-unknown',
                        '--json')
    assert done.returncode == 4, done.stdout + done.stderr
    assert sorted(o['consumer'] for o in json.loads(done.stdout)[
        'outcomes'] if o['status'] == 'done') == consumers
    assert all(held(clients, c) == {} for c in consumers)
    history = json.loads(orphan_audit(cloud, tmp_path, 'history',
                                      '--json').stdout)
    entries = [str(e['id']) for e in history if e['consumer'] in consumers]
    assert len(entries) == 3
    restored = orphan_audit(cloud, tmp_path, 'restore', '--apply', *entries)
    assert restored.returncode == 4, restored.stdout + restored.stderr
    assert {c: held(clients, c) for c in consumers} == before

    audited(horizon, refresh=True)
    url = INDEX + 'unknown/delete/?provider=' + host2
    preview = horizon.get(url)
    assert preview.status_code == 200
    assert sorted(r.selection.consumer for r in preview.context['rows']
                  if r.plan) == consumers
    assert b'3 unknown consumers are deleted, freeing' in \
        b' '.join(preview.content.split())
    rows = preview.context['form'].initial['rows']
    wrong = horizon.post(url, {'rows': rows, 'count': '30'})
    assert b'Type 3, the number of unknown consumers shown' in wrong.content
    assert {c: held(clients, c) for c in consumers} == before
    confirmed = horizon.post(url, {'rows': rows, 'count': '3'})
    assert confirmed.status_code == 302
    assert all(held(clients, c) == {} for c in consumers)
