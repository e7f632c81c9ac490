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

"""End to end on the sandbox: the seed incidents, staged through real Nova
code paths, found with the right verdicts, repaired through the panel's
Django views (logged in through the sandbox's Keystone), checked against
Placement directly and against ``nova-manage placement audit``."""

import collections
import json
import re
from unittest import mock

import pytest

from orphan_dashboard.api import microversions as mv
from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.reading import collect
from orphan_dashboard.reading import refresh
from orphan_dashboard.writing import journal as journal_module
from tests.e2e.conftest import audited
from tests.e2e.conftest import every_allocation
from tests.e2e.conftest import INDEX
from tests.e2e.conftest import login
from tests.e2e.conftest import orphan_audit
from tests.e2e.conftest import owner

pytestmark = pytest.mark.django_db(databases=['default', 'orphan_journal'])
UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  r'[0-9a-f]{12}')


def audit(cloud):
    clients = cloud.clients()
    snapshot = collect.full_snapshot(clients.placement, clients.nova)
    return snapshot, classify.audit(snapshot, min_age=0)


def expected(cloud):
    return {(e['consumer'], e['provider']): e['verdict']
            for incident in cloud.incidents.values()
            for e in incident['expected']}


def test_every_seed_incident_gets_its_verdict_and_nothing_else(cloud):
    _, report = audit(cloud)
    found = {(f.consumer, f.provider): f.verdict for f in report.findings}
    want = expected(cloud)
    assert {k: found.get(k) for k in want} == want
    flagged = {k for k, v in found.items() if v != m.OK}
    assert flagged <= set(want), 'false positives: %s' % (flagged - set(want))
    assert {v for v in want.values()} >= {
        m.EVACUATED_SOURCE, m.MOVED, m.DELETED_INSTANCE, m.STALE_MIGRATION,
        m.MISSING, m.WRONG_AMOUNT, m.INCOMPLETE_CONSUMER, m.PROTECTED, m.OK}


def test_refresh_finds_what_a_full_sweep_finds(cloud):
    clients = cloud.clients()
    full, report = audit(cloud)
    refreshed = refresh.refresh_snapshot(clients.placement, clients.nova,
                                         full)
    again = classify.audit(refreshed, min_age=0)
    key = sorted((f.consumer, f.provider, f.verdict) for f in report.findings)
    assert sorted((f.consumer, f.provider, f.verdict)
                  for f in again.findings) == key
    # Every suspect changed (as after our own writes): each provider one
    # held is read again once; their details, their generations where they
    # were, are not.
    suspects = {f.consumer for f in report.problems}
    with mock.patch.object(api, 'provider_allocations',
                           wraps=api.provider_allocations) as read, \
            mock.patch.object(api, 'consumer_allocations',
                              wraps=api.consumer_allocations) as details:
        told = refresh.refresh_snapshot(clients.placement, clients.nova,
                                        full, touched=suspects)
    reads = collections.Counter(call.args[1] for call in read.call_args_list)
    held = {rp for u in suspects if u in full.consumers
            for rp in full.consumers[u].allocations}
    assert held and set(reads) >= held and set(reads.values()) == {1}
    assert not {call.args[1] for call in details.call_args_list} & suspects
    assert sorted((f.consumer, f.provider, f.verdict) for f in
                  classify.audit(told, min_age=0).findings) == key


def test_nova_manage_agrees_where_the_rules_overlap(cloud):
    before = cloud.control('POST', '/nova-manage/placement-audit')
    _, report = audit(cloud)
    ours = {f.consumer for f in report.problems}
    theirs = set(UUID.findall(before['output']))
    flagged_consumers = theirs & {k[0] for k in expected(cloud)}
    assert before['exit_code'] == 3, before
    assert flagged_consumers, before
    # nova-manage flags consumers whose instance is not on the node; every
    # one of them is a finding of ours, or protected with a reason.
    protected = {f.consumer for f in report.findings
                 if f.verdict == m.PROTECTED}
    assert flagged_consumers <= ours | protected


def test_a_member_can_neither_see_nor_post(cloud, keystone):
    """The sandbox's ``member`` (role member in project demo): the rows an
    admin's preview would submit, posted by the member, write nothing."""
    clients = cloud.clients()
    incident = cloud.incidents['deleted_behind_nova']
    ghost = incident['servers'][0]['uuid']
    selection = {'sel': '%s:%s:delete' % (ghost, incident['hosts']['host2'])}
    preview = login(cloud, 'admin').get(INDEX + 'repair/', selection)
    rows = preview.context['form'].initial['rows']
    before = api.consumer_allocations(clients.placement, ghost)
    assert before['allocations']

    member = login(cloud, 'member')
    for page, query in ((INDEX, {}), (INDEX + 'repair/', selection)):
        response = member.get(page, query)
        assert response.status_code in (302, 403), page
        assert b'orphan-preview' not in response.content
    response = member.post(INDEX + 'repair/', {'rows': rows})
    assert response.status_code in (302, 403)
    assert api.consumer_allocations(clients.placement, ghost) == before
    assert journal_module.entries(None, consumer=ghost)[0] == []


def test_an_admin_placements_policy_refuses_writes_nothing(
        cloud, horizon, tmp_path):
    """An admin whose Placement policy (registered in Horizon) refuses
    ``placement:allocations:update``: the confirm of a preview made while
    allowed, replayed, writes nothing to the real Placement and journals
    nothing, though the admin's token would let Placement accept it."""
    from django.conf import settings
    from django.test.utils import override_settings
    from openstack_auth import policy

    clients = cloud.clients()
    incident = cloud.incidents['deleted_behind_nova']
    ghost = incident['servers'][0]['uuid']
    selection = {'sel': '%s:%s:delete' % (ghost, incident['hosts']['host2'])}
    preview = horizon.get(INDEX + 'repair/', selection)
    rows = preview.context['form'].initial['rows']
    before = api.consumer_allocations(clients.placement, ghost)
    assert before['allocations']
    rules = tmp_path / 'placement_policy.yaml'
    rules.write_text('"placement:allocations:update": "!"\n')
    policy.reset()
    try:
        with override_settings(
                POLICY_CHECK_FUNCTION='openstack_auth.policy.check',
                POLICY_FILES=dict(settings.POLICY_FILES,
                                  placement=str(rules))):
            for response in (horizon.get(INDEX + 'repair/', selection),
                             horizon.post(INDEX + 'repair/',
                                          {'rows': rows})):
                assert response.status_code == 302
                assert response['Location'] == INDEX
    finally:
        policy.reset()
    assert api.consumer_allocations(clients.placement, ghost) == before
    assert journal_module.entries(None, consumer=ghost)[0] == []


def test_horizons_own_overviews_show_usage(cloud, horizon):
    """The staged rows (one marked deleted by hand in SQL) pass the
    tenant-usage listing that Project and Admin > Overview read."""
    for page in ('/project/', '/admin/'):
        response = horizon.get(page)
        assert response.status_code == 200, page
        errors = [str(msg) for msg in response.context['messages']
                  if 'error' in msg.tags]
        assert errors == [], (page, errors)


def test_names_links_and_exports_on_the_real_cloud(cloud, horizon):
    """Keystone's names (read by the sweep, not by the page), links to
    Horizon's instance and hypervisor pages, and the findings exported as
    the report has them."""
    audited(horizon)
    clients = cloud.clients()
    names = collect.owner_names(clients.identity)
    _, report = audit(cloud)
    evacuation = cloud.incidents['evacuation']
    host1 = evacuation['hosts']['host1']
    server = evacuation['servers'][0]['uuid']
    (finding,) = [f for f in report.provider(host1).findings
                  if f.consumer == server]
    assert names['projects'][finding.project_id] == 'admin'
    page = horizon.get(INDEX + host1 + '/')
    (row,) = [r for r in page.context['allocations_table'].get_rows()
              if r.datum.consumer == server]
    assert (row.cells['project'].data, row.cells['user'].data) == (
        'admin', 'admin')
    # The consumer links to its server, its owner under it (read at
    # 1024 px, where the Project and User columns are left out).
    link = re.search(r'<a href="([^"]+)">%s</a>' % server,
                     str(row.cells['consumer'].data))
    assert link and link.group(1) == '/admin/instances/%s/detail' % server
    assert 'admin / admin' in str(row.cells['consumer'].data)
    assert horizon.get(link.group(1)).status_code == 200
    assert horizon.get(row.cells['host'].url).status_code == 200
    exported = json.loads(b''.join(horizon.get(
        INDEX + 'findings/export/json/').streaming_content))
    assert sorted((f['consumer'], f['provider'], f['verdict'])
                  for f in exported) == sorted(
        (f.consumer, f.provider, f.verdict) for f in report.findings
        if f.verdict != m.OK)


def to_write(cloud, journal_dir):
    """``orphan-audit report``'s consumers with a recommended repair, and
    every consumer it lists a finding of."""
    report = orphan_audit(cloud, journal_dir, 'report', '--json',
                          '--min-age', '0')
    assert report.returncode == 3, report.stderr
    findings = json.loads(report.stdout)['findings']
    return ({f['consumer'] for f in findings if f['action']},
            {f['consumer'] for f in findings})


@pytest.mark.parametrize('limit', [('--max-writes', '1'),
                                   ('--max-share', '1')])
def test_apply_past_its_limit_writes_nothing_and_exits_6(
        cloud, tmp_path, limit):
    """Several consumers to repair, one allowed: the run is held, says
    what it would have written, of which verdicts, and Placement and the
    journal are as they were."""
    clients = cloud.clients()
    repaired, consumers = to_write(cloud, tmp_path)
    assert len(repaired) > 1
    before = every_allocation(clients)
    held = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                        '--json', *limit)
    assert held.returncode == 6, held.stdout + held.stderr
    found = json.loads(held.stdout)
    assert found['outcomes'] == []
    assert found['held']['exceeded'] == limit[0][2:].replace('-', '_')
    assert found['held']['writes'] == len(repaired)
    assert found['held']['consumers'] >= len(consumers)
    assert sum(found['held']['verdicts'].values()) == len(repaired)
    assert {m.DELETED_INSTANCE, m.EVACUATED_SOURCE} <= set(
        found['held']['verdicts'])
    assert every_allocation(clients) == before
    assert json.loads(orphan_audit(cloud, tmp_path, 'history',
                                   '--json').stdout) == []

    text = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0', *limit)
    assert text.returncode == 6, text.stdout + text.stderr
    assert text.stdout.startswith(
        'held, nothing written: the run would write %d of ' % len(repaired))
    assert every_allocation(clients) == before


def test_the_cron_recipe_holds_a_run_past_its_share(
        cloud, tmp_path, monkeypatch):
    """``operations.md``'s recipe, limits from the settings: four
    verdicts' leftovers are more than 5 % of the sandbox's consumers."""
    clients = cloud.clients()
    before = every_allocation(clients)
    monkeypatch.setenv('ORPHAN_AUDIT_MAX_WRITES', '50')
    monkeypatch.setenv('ORPHAN_AUDIT_MAX_SHARE', '5')
    held = orphan_audit(
        cloud, tmp_path, 'apply', '--min-age', '0', '--json', '--only',
        'evacuated_source,moved,deleted_instance,stale_migration')
    assert held.returncode == 6, held.stdout + held.stderr
    found = json.loads(held.stdout)['held']
    assert (found['exceeded'], found['limit']) == ('max_share', 5)
    assert set(found['verdicts']) <= {
        m.EVACUATED_SOURCE, m.MOVED, m.DELETED_INSTANCE, m.STALE_MIGRATION}
    assert every_allocation(clients) == before


def test_apply_dry_run_prints_the_commands_and_writes_nothing(
        cloud, tmp_path):
    """Every consumer apply would repair is in a command (or says why it
    cannot be); Placement and the journal are as they were."""
    clients = cloud.clients()
    repaired, _consumers = to_write(cloud, tmp_path)
    before = every_allocation(clients)
    dry = orphan_audit(cloud, tmp_path, 'apply', '--dry-run', '--min-age',
                       '0')
    assert dry.returncode == 3, dry.stdout + dry.stderr
    lines = dry.stdout.splitlines()
    commands = [line[len('plan: '):] for line in lines
                if line.startswith('plan: ')]
    assert any(' resource provider allocation unset ' in c
               for c in commands), lines
    assert any(' resource provider allocation set ' in c
               for c in commands), lines
    assert all(c.startswith('openstack ') for c in commands)
    assert {u for u in repaired if not any(u in line for line in lines)} \
        == set()
    assert every_allocation(clients) == before
    assert json.loads(orphan_audit(cloud, tmp_path, 'history',
                                   '--json').stdout) == []


def test_repair_everything_through_the_views(cloud, horizon):
    clients = cloud.clients()
    incidents = cloud.incidents
    host1 = incidents['evacuation']['hosts']['host1']
    evacuated = incidents['evacuation']['servers'][0]['uuid']

    page = audited(horizon)
    assert page.status_code == 200
    listed = {r.provider.uuid for r in page.context['providers_table'].data}
    assert host1 in listed
    detail = horizon.get(INDEX + host1 + '/')
    assert b'evacuated_source' in detail.content

    # Trim the evacuation leftover from its row.
    preview = horizon.get(INDEX + 'repair/', {
        'sel': '%s:%s:trim' % (evacuated, host1)})
    assert preview.status_code == 200
    assert b'resource provider allocation unset' in preview.content
    rows = preview.context['form'].initial['rows']
    done = horizon.post(INDEX + 'repair/', {'rows': rows})
    assert done.status_code == 302
    held = api.consumer_allocations(clients.placement, evacuated)
    assert host1 not in held['allocations']
    assert held['allocations'], 'the server kept its current host'

    # The bandwidth a port left on host3's NIC: neither trim nor delete and
    # heal would rebuild it, so both refuse and say what heals it.
    bandwidth = incidents['port_bandwidth_left']
    server = bandwidth['servers'][0]['uuid']
    host2, host3 = bandwidth['hosts']['host2'], bandwidth['hosts']['host3']
    for action in ('trim', 'delete_and_heal'):
        preview = horizon.get(INDEX + 'repair/', {
            'sel': '%s:%s:%s' % (server, host3, action)})
        assert preview.status_code == 200
        (row,) = preview.context['rows']
        assert row.plan is None
        assert 'NET_BW_EGR_KILOBIT_PER_SEC=1000 on host3:br-phys' in \
            str(row.error)
        assert 'heal_allocations --instance %s' % server in str(row.error)
        assert 'rows' not in preview.context['form'].initial
    # The operator moves the bandwidth to host2's NIC by hand (what Neutron
    # and heal_allocations would do); then the leftover can be trimmed.
    nics = bandwidth['checks']['nics']
    held = api.consumer_allocations(clients.placement, server)
    moved = {rp: a['resources'] for rp, a in held['allocations'].items()
             if rp != nics['host3:br-phys']}
    moved[nics['host2:br-phys']] = {'NET_BW_EGR_KILOBIT_PER_SEC': 1000}
    api.put_allocations(clients.placement, server, moved,
                        held['consumer_generation'], held['project_id'],
                        held['user_id'])

    # Everything else recommended, through "Fix recommended" on all rows,
    # once Refresh has seen the change made by hand.
    page = audited(horizon, refresh=True)
    ids = [r.provider.uuid for r in page.context['providers_table'].data]
    batch = horizon.post(INDEX, {'action': 'providers__fix_recommended',
                                 'object_ids': ids})
    assert batch.status_code == 302
    preview = horizon.get(batch['location'])
    assert preview.status_code == 200
    done = horizon.post(INDEX + 'repair/',
                        {'rows': preview.context['form'].initial['rows']})
    assert done.status_code == 302

    # What is left on the two dead hosts: host4's consumer of another
    # service, deleted by an explicit choice as host4 is decommissioned,
    # and nothing on host1; both go through the panel's decommission.
    retired = incidents['retired_host']
    host4 = retired['hosts']['host4']
    (stranger,) = [e['consumer'] for e in retired['expected']
                   if e['verdict'] == m.UNKNOWN_CONSUMER]
    for provider, chosen in ((host4, [stranger]), (host1, [])):
        preview = horizon.get(INDEX + 'decommission/',
                              {'provider': provider})
        assert preview.status_code == 200
        steps = preview.context['plan'].steps
        assert [s.consumer for s in steps if s.optional] == chosen
        assert not preview.context['plan'].blockers(chosen)
        done = horizon.post(INDEX + 'decommission/', {
            'rows': preview.context['form'].initial['rows'],
            'delete_unknown': chosen})
        assert done.status_code == 302
    for host, provider in (('host1', host1), ('host4', host4)):
        assert clients.nova.get(
            '/os-services?binary=nova-compute&host=%s' % host,
            microversion=mv.SERVICES).json()['services'] == []
        assert api.provider_record(clients.placement, provider) is None
    assert api.consumer_allocations(clients.placement, stranger)[
        'allocations'] == {}

    _, report = audit(cloud)
    assert report.problems == []
    assert [f for f in report.findings if f.verdict == m.PROTECTED]
    after = cloud.control('POST', '/nova-manage/placement-audit')
    assert after['exit_code'] == 0, after

    statuses = {e.status for e in journal_module.all_entries(None)}
    assert statuses == {'applied'}
    held = api.consumer_allocations(clients.placement, server)['allocations']
    assert set(held) == {host2, nics['host2:br-phys']}
    wrong = incidents['wrong_amount']['servers'][0]['uuid']
    assert api.consumer_allocations(clients.placement, wrong)[
        'allocations'][incidents['wrong_amount']['hosts']['host3']][
        'resources']['MEMORY_MB'] == 1024
    legacy = api.consumer_allocations(
        clients.placement, incidents['pre_pike_consumer']['servers'][0][
            'uuid'])
    assert m.INCOMPLETE not in (legacy['project_id'], legacy['user_id'])

    # Restore puts the deleted instance's leftover back, from the History.
    ghost = incidents['deleted_behind_nova']['servers'][0]['uuid']
    (entry,) = journal_module.entries(None, consumer=ghost)[0]
    history = horizon.get(INDEX + '?tab=orphaned_allocations__history')
    assert ghost.encode() in history.content
    preview = horizon.get(INDEX + 'restore/', {'entry': entry.id})
    assert preview.status_code == 200
    done = horizon.post(INDEX + 'restore/',
                        {'rows': preview.context['form'].initial['rows']})
    assert done.status_code == 302
    held = api.consumer_allocations(clients.placement, ghost)
    assert {rp: a['resources'] for rp, a in held['allocations'].items()} \
        == entry.before
    assert journal_module.entries(None, consumer=ghost)[0][0].restores_id \
        == entry.id


def test_apply_only_repairs_that_verdicts_rows(cloud, tmp_path):
    """Last: it stages a fresh wrong amount and a fresh incomplete
    consumer beside what the tests above left; ``--only
    incomplete_consumer`` sets that consumer's owner and touches nothing
    else, the wrong amount included."""
    clients = cloud.clients()
    wrong = cloud.control('POST', '/incidents/wrong_amount')
    legacy = cloud.control('POST', '/incidents/pre_pike_consumer')
    server = wrong['servers'][0]['uuid']
    old_style = legacy['servers'][0]['uuid']
    assert owner(clients, old_style) == (m.INCOMPLETE, m.INCOMPLETE)
    repaired, _consumers = to_write(cloud, tmp_path)
    assert {server, old_style} <= repaired
    before = every_allocation(clients)

    done = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0',
                        '--json', '--only', m.INCOMPLETE_CONSUMER)
    assert done.returncode == 4, done.stdout + done.stderr
    assert [(o['consumer'], o['action'], o['status'])
            for o in json.loads(done.stdout)['outcomes']] == [
        (old_style, m.SET_OWNER, 'done')]
    assert m.INCOMPLETE not in owner(clients, old_style)
    after = every_allocation(clients)
    assert {rp: {c: a for c, a in allocations.items() if c != old_style}
            for rp, (_, allocations) in after.items()} == {
        rp: {c: a for c, a in allocations.items() if c != old_style}
        for rp, (_, allocations) in before.items()}
    report = json.loads(orphan_audit(cloud, tmp_path, 'report', '--json',
                                     '--min-age', '0').stdout)
    assert (server, m.WRONG_AMOUNT) in {
        (f['consumer'], f['verdict']) for f in report['findings']}
    assert old_style not in {f['consumer'] for f in report['findings']
                             if f['verdict'] != m.OK}
