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

"""Decommission on the sandbox: host4 died holding an evacuated server's
leftover, a server deleted behind Nova's back, the leaked source side of a
cold migration and a consumer of another service; host1 died holding an
evacuation leftover.  ``orphan-audit decommission`` previews, refuses what
it must, and carries the whole flow out; a service delete Nova refuses is
reported and loses nothing; a decommission is restorable but for its
compute service; a provider added since the preview stops the confirm;
another service's providers (a Neutron segment, Blazar's child of host3)
are never orphaned nor deleted.  Placement and Nova are checked after
each step."""

import json

import pytest

from orphan_dashboard.api import client as client_module
from orphan_dashboard.api import microversions as mv
from orphan_dashboard.api import nova as nova_api
from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.reading import collect
from orphan_dashboard.writing import journal as journal_module
from orphan_dashboard.writing import write
from tests.e2e.conftest import audited
from tests.e2e.conftest import decommissioned
from tests.e2e.conftest import INDEX
from tests.e2e.conftest import module_cloud
from tests.e2e.conftest import orphan_audit
from tests.e2e.conftest import over_capacity
from tests.integration.fault_proxy import EMPTIED
from tests.integration.fault_proxy import FaultProxy

pytestmark = pytest.mark.django_db(databases=['orphan_journal'])
DECOMMISSION = INDEX + 'decommission/'
DELETE_PROVIDER = INDEX + 'providers/delete/'


cloud = module_cloud('evacuation,retired_host,foreign_providers,healthy')


@pytest.fixture(scope='module')
def journal_dir(tmp_path_factory):
    return tmp_path_factory.mktemp('journal')


def held(clients, consumer):
    body = api.consumer_allocations(clients.placement, consumer)
    return {rp: a['resources'] for rp, a in body['allocations'].items()}


def services(clients, host):
    return clients.nova.get('/os-services?binary=nova-compute&host=%s' %
                            host, microversion=mv.SERVICES).json()[
        'services']


def leftovers(cloud):
    retired = cloud.incidents['retired_host']
    return retired, {e['verdict']: e['consumer'] for e in retired['expected']
                     if e['host'] == 'host4'}


def test_the_preview_names_every_blocker(cloud, journal_dir):
    retired, on_host4 = leftovers(cloud)
    result = orphan_audit(cloud, journal_dir, 'decommission', 'host4',
                          '--min-age', '0', '--json')
    assert result.returncode == 3, result.stderr
    plan = json.loads(result.stdout)
    assert plan['service']['forced_down'] is True
    assert plan['providers'] == [retired['hosts']['host4']]
    steps = {s['consumer']: s for s in plan['steps']}
    assert set(steps) == set(on_host4.values())
    assert steps[on_host4['evacuated_source']]['action'] == m.TRIM
    assert steps[on_host4['deleted_instance']]['action'] == m.DELETE
    assert steps[on_host4['stale_migration']]['action'] == m.DELETE
    unknown = steps[on_host4['unknown_consumer']]
    assert unknown['optional'] is True
    # Its owner is no Keystone project: the ids, as the panel shows them.
    assert unknown['owner'] == {
        'project_id': 'another-service', 'project_name': None,
        'user_id': 'another-service', 'user_name': None}
    assert any(on_host4['unknown_consumer'] in b for b in plan['blockers'])
    delete_service = ('openstack --os-compute-api-version %s compute '
                      'service delete %s' % (mv.SERVICES,
                                             plan['service']['uuid']))
    delete_provider = ('openstack resource provider delete %s' %
                       retired['hosts']['host4'])
    assert plan['service_commands'] == [delete_service]
    assert plan['provider_commands'] == [delete_provider]
    text = orphan_audit(cloud, journal_dir, 'decommission', 'host4',
                        '--min-age', '0')
    assert 'deleted only with --delete-unknown %s' % on_host4[
        'unknown_consumer'] in text.stdout
    assert 'project another-service, user another-service' in text.stdout
    assert 'a restore does not re-create the service' in text.stdout
    assert 'plan: %s\n' % delete_service in text.stdout
    assert 'plan: %s\n' % delete_provider in text.stdout


def test_a_step_placement_may_refuse_for_capacity_is_noted(
        cloud, horizon, journal_dir):
    """host4's evacuated leftover is trimmed: its server's share on the
    host it runs on stays as it is, and that host's memory reserved whole
    leaves it over capacity.  A Placement older than 14.0.0 refuses any
    write onto it (bug 2104040): the decommission's previews, the
    command line's and the panel's, say so on that step, as a repair's
    does."""

    retired, on_host4 = leftovers(cloud)
    evacuated = on_host4['evacuated_source']
    clients = cloud.clients()
    host4 = retired['hosts']['host4']
    (runs_on,) = [rp for rp in held(clients, evacuated) if rp != host4]
    with over_capacity(clients, runs_on, 'MEMORY_MB'):
        result = orphan_audit(cloud, journal_dir, 'decommission', 'host4',
                              '--min-age', '0', '--json')
        steps = {s['consumer']: s for s in json.loads(result.stdout)[
            'steps']}
        (note,) = steps[evacuated]['notes']
        assert note.startswith('Placement older than 14.0.0 (2025.2) '
                               'refuses this write with 400 (bug 2104040)'), \
            note
        assert 'in MEMORY_MB' in note
        assert steps[on_host4['deleted_instance']]['notes'] == []
        text = orphan_audit(cloud, journal_dir, 'decommission', 'host4',
                            '--min-age', '0')
        assert 'note: %s\n' % note in text.stdout, text.stdout
        audited(horizon)
        page = horizon.get(DECOMMISSION, {'provider': host4})
        assert page.status_code == 200
        assert b'class="text-warning orphan-note"' in page.content, \
            page.content
        assert b'bug 2104040' in page.content
    # The inventory back: no note.
    result = orphan_audit(cloud, journal_dir, 'decommission', 'host4',
                          '--min-age', '0', '--json')
    assert all(s['notes'] == [] for s in json.loads(result.stdout)['steps'])


def test_a_host_still_running_servers_is_refused(cloud, journal_dir):
    clients = cloud.clients()
    healthy = [s for s in cloud.incidents['healthy']['servers']
               if s['host'] == 'host3']
    cloud.control('POST', '/computes/host3/stop')
    try:
        before = {s['uuid']: held(clients, s['uuid']) for s in healthy}
        result = orphan_audit(cloud, journal_dir, 'decommission', 'host3',
                              '--min-age', '0', '--apply')
        assert result.returncode == 1
        for server in healthy:
            assert server['uuid'] in result.stderr
        assert {u: held(clients, u) for u in before} == before
        assert services(clients, 'host3')
    finally:
        cloud.control('POST', '/computes/host3/start')


def test_an_unchosen_unknown_consumer_stops_it_before_any_write(
        cloud, journal_dir):
    clients = cloud.clients()
    _, on_host4 = leftovers(cloud)
    before = {c: held(clients, c) for c in on_host4.values()}
    result = orphan_audit(cloud, journal_dir, 'decommission', 'host4',
                          '--min-age', '0', '--apply')
    assert result.returncode == 1
    assert 'nothing written' in result.stdout
    assert {c: held(clients, c) for c in before} == before
    history = orphan_audit(cloud, journal_dir, 'history', '--json')
    assert json.loads(history.stdout) == []


def test_the_cli_decommissions_host4_and_a_restore_brings_it_back(
        cloud, journal_dir):
    clients = cloud.clients()
    retired, on_host4 = leftovers(cloud)
    host4 = retired['hosts']['host4']
    evacuated = on_host4['evacuated_source']
    result = orphan_audit(cloud, journal_dir, 'decommission', 'host4',
                          '--min-age', '0', '--apply', '--json',
                          '--delete-unknown', on_host4['unknown_consumer'])
    assert result.returncode == 4, result.stdout + result.stderr
    outcomes = json.loads(result.stdout)['outcomes']
    assert [o['action'] for o in outcomes][-2:] == [
        m.DELETE_SERVICE, m.DELETE_PROVIDER]
    assert {o['status'] for o in outcomes} == {'done'}
    # Nova and Placement: the service and the provider are gone, every
    # leftover with them, the evacuated server keeps its new host.
    assert services(clients, 'host4') == []
    assert api.provider_record(clients.placement, host4) is None
    for verdict, consumer in on_host4.items():
        assert host4 not in held(clients, consumer), verdict
    assert held(clients, evacuated) == {
        retired['hosts']['host3']: {'VCPU': 1, 'MEMORY_MB': 1024,
                                    'DISK_GB': 10}}
    again = orphan_audit(cloud, journal_dir, 'decommission', 'host4')
    assert again.returncode == 0
    assert 'already gone' in again.stdout

    # The journal has it all, in one batch: a restore brings back the
    # provider and the allocations, not the compute service.
    listed = orphan_audit(cloud, journal_dir, 'history', '--json')
    history = json.loads(listed.stdout)
    assert history, listed.stderr
    (batch,) = {e['batch'] for e in history}
    assert {e['action'] for e in history} == {
        m.TRIM, m.DELETE, m.DELETE_SERVICE, m.DELETE_PROVIDER}
    # Each entry names its host, gone now, as its journaled record does:
    # by name beside the uuid, in the JSON and in the text.
    assert {e['provider_name'] for e in history
            if e['provider'] == host4} == {'host4'}
    lines = orphan_audit(cloud, journal_dir, 'history').stdout
    assert 'on host4 (%s) by ' % host4 in lines
    assert 'provider host4 (%s) by ' % host4 in lines
    restored = orphan_audit(cloud, journal_dir, 'restore', '--batch',
                            batch, '--apply', '--json')
    assert restored.returncode == 4, restored.stdout + restored.stderr
    plans = json.loads(restored.stdout)['plans']
    assert any('not re-create it' in (p['error'] or '') for p in plans)
    record = api.provider_record(clients.placement, host4)
    assert record['name'] == 'host4'
    for verdict, consumer in on_host4.items():
        assert host4 in held(clients, consumer), verdict
    assert services(clients, 'host4') == []


@pytest.mark.django_db(databases=['default', 'orphan_journal'])
def test_a_provider_added_since_the_preview_stops_the_confirm(
        cloud, horizon):
    """A child provider created in host1's tree between the panel's
    preview and its confirm: nothing is repaired, nothing deleted."""
    import uuid
    clients = cloud.clients()
    evacuation = cloud.incidents['evacuation']
    host1 = evacuation['hosts']['host1']
    server = evacuation['servers'][0]['uuid']
    before = held(clients, server)
    preview = horizon.get(DECOMMISSION, {'provider': host1})
    assert b'value="Decommission"' in preview.content
    child = str(uuid.uuid4())
    clients.placement.post('/resource_providers', json={
        'uuid': child, 'name': 'host1_pci_0000_81_00_0',
        'parent_provider_uuid': host1}, microversion='1.14')
    journaled = len(list(journal_module.all_entries(None)))
    try:
        response = horizon.post(DECOMMISSION, {
            'rows': preview.context['form'].initial['rows']}, follow=True)
        said = [str(m) for m in response.context['messages']]
        assert any('nothing written: providers were added: '
                   'host1_pci_0000_81_00_0 (%s)' % child in m
                   for m in said), said
        assert held(clients, server) == before
        assert len(list(journal_module.all_entries(None))) == journaled
        assert services(clients, 'host1')
        assert api.provider_record(clients.placement, host1) is not None
        assert api.provider_record(clients.placement, child) is not None
    finally:
        clients.placement.delete('/resource_providers/%s' % child,
                                 microversion='1.14')


@pytest.mark.django_db(databases=['default', 'orphan_journal'])
def test_another_services_providers_are_never_orphaned_nor_deleted(
        cloud, horizon, journal_dir):
    """A Neutron segment provider and Blazar's child of host3, made
    through the Placement API: shown as theirs, refused by the CLI and by
    the panel's delete and decommission URLs, still there after."""
    staged = cloud.incidents['foreign_providers']['checks']
    segment, name, blazar = (staged['segment'], staged['segment_name'],
                             staged['blazar'])
    clients = cloud.clients()
    done = orphan_audit(cloud, journal_dir, 'decommission', name, '--apply')
    assert done.returncode == 1, done.stdout + done.stderr
    assert "is not Nova's (likely neutron's)" in done.stderr
    assert api.provider_record(clients.placement, segment) is not None

    snapshot = collect.full_snapshot(clients.placement, clients.nova)
    report = classify.audit(snapshot, min_age=0)
    found = report.provider(segment)
    assert (found.orphaned_provider, found.service_state) == (
        False, 'not a compute node')
    assert found.owner == 'neutron'
    assert report.names[blazar] == 'blazar_host3'
    assert all(p.owner == 'nova' for p in report.providers
               if p.provider.uuid != segment)
    # Nova 34 tags its own compute nodes.
    assert set(cloud.incidents['evacuation']['hosts'].values()) <= {
        u for u, traits in snapshot.owner_traits.items()
        if 'OWNER_NOVA' in traits}

    preview = horizon.get(DELETE_PROVIDER, {'provider': segment})
    assert "is not Nova&#x27;s" in preview.content.decode()
    assert b'value="Delete"' not in preview.content
    assert 'rows' not in preview.context['form'].initial
    preview = horizon.get(DECOMMISSION, {'provider': segment})
    assert "is not Nova&#x27;s" in preview.content.decode()
    assert b'value="Decommission"' not in preview.content
    assert 'rows' not in preview.context['form'].initial
    for rp in (segment, blazar):
        assert api.provider_record(clients.placement, rp) is not None


def test_a_root_only_its_inventory_calls_a_compute_node_needs_a_tick(
        cloud, horizon, journal_dir):
    """A root made through the Placement API as OpenStack Zun's compute
    agent registers its hosts (VCPU, MEMORY_MB, DISK_GB, no trait) with a
    container's consumer: nobody proven owns it (no record of Nova's
    names it), so it is no orphaned provider, the panel's delete refuses
    it, and a decommission deletes it only when it and the consumer are
    ticked by name."""
    import uuid
    clients = cloud.clients()
    root, container = str(uuid.uuid4()), str(uuid.uuid4())
    name = 'zun-container-host-1'
    clients.placement.post('/resource_providers', json={
        'uuid': root, 'name': name}, microversion='1.14')
    clients.placement.put('/resource_providers/%s/inventories' % root, json={
        'resource_provider_generation': 0, 'inventories': {
            'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 8192},
            'DISK_GB': {'total': 100}}})
    clients.placement.put('/allocations/%s' % container, json={
        'allocations': {root: {'resources': {'VCPU': 1, 'MEMORY_MB': 512}}},
        'project_id': 'zun', 'user_id': 'zun', 'consumer_generation': None},
        microversion='1.28')
    try:
        report = orphan_audit(cloud, journal_dir, 'report', '--min-age', '0',
                              '--json')
        tree = next(p for p in json.loads(report.stdout)['providers']
                    if p['uuid'] == root)
        assert (tree['owner'], tree['owner_proof'],
                tree['orphaned_provider']) == (None, 'inventory', False), tree
        preview = horizon.get(DELETE_PROVIDER, {'provider': root})
        assert b'value="Delete"' not in preview.content
        assert b'by an explicit tick' in preview.content
        refused = orphan_audit(cloud, journal_dir, 'decommission', name,
                               '--min-age', '0', '--apply',
                               '--delete-unknown', container)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert 'delete it here with --delete-foreign-child' in \
            refused.stdout, refused.stdout
        assert api.provider_record(clients.placement, root) is not None
        done = orphan_audit(cloud, journal_dir, 'decommission', name,
                            '--min-age', '0', '--apply', '--json',
                            '--delete-unknown', container,
                            '--delete-foreign-child', name)
        assert done.returncode == 4, done.stdout + done.stderr
        assert [(o['provider'], o['action'], o['status']) for o in json.loads(
            done.stdout)['outcomes']] == [(root, m.DELETE, 'done'),
                                          (root, m.DELETE_PROVIDER, 'done')]
        assert api.provider_record(clients.placement, root) is None
    finally:
        if api.provider_record(clients.placement, root) is not None:
            clients.placement.delete('/allocations/%s' % container)
            clients.placement.delete('/resource_providers/%s' % root)


def test_a_service_delete_nova_refuses_is_reported_and_loses_nothing(
        cloud):
    """Through a proxy answering Nova's DELETE /os-services with 409:
    host1's leftover is trimmed (journaled, restorable), the refusal is
    the last outcome, the compute service and the provider are kept."""
    clients = cloud.clients()
    evacuation = cloud.incidents['evacuation']
    host1 = evacuation['hosts']['host1']
    server = evacuation['servers'][0]['uuid']
    proxy = FaultProxy(cloud.config['nova']['url'])
    proxy.inject('DELETE', '/os-services/', 1, 409)
    try:
        cloud_id = client_module.Cloud('sandbox', 'RegionOne', '', 'e2e')
        journal = journal_module.Journal('test', cloud_id, user_name='t')
        outcomes = decommissioned(proxy.clients(clients, 'nova'), journal,
                                  'host1')
    finally:
        proxy.close()
    assert [o.status for o in outcomes] == [write.DONE, write.FAILED]
    assert 'Nova did not delete compute service host1' in \
        str(outcomes[-1].message)
    assert services(clients, 'host1')
    assert api.provider_record(clients.placement, host1) is not None
    assert host1 not in held(clients, server)
    entries = {e.action: e for e in journal_module.all_entries(cloud_id)}
    assert entries[m.TRIM].status == 'applied'
    assert entries[m.DELETE_SERVICE].status == 'refused'
    assert entries[m.DELETE_PROVIDER].status == 'refused'
    # Asked again without the fault, it carries on from where it stopped.
    outcomes = decommissioned(clients, journal, 'host1')
    assert [o.status for o in outcomes] == [write.DONE, write.DONE]
    assert services(clients, 'host1') == []
    assert api.provider_record(clients.placement, host1) is None


def test_a_provider_tree_without_compute_node_goes_children_first(
        cloud, journal_dir):
    """No compute service to delete: the tree itself, journaled whole."""
    import uuid
    clients = cloud.clients()
    root, child = str(uuid.uuid4()), str(uuid.uuid4())
    clients.placement.post('/resource_providers', json={
        'uuid': root, 'name': 'gone-node'}, microversion='1.14')
    clients.placement.post('/resource_providers', json={
        'uuid': child, 'name': 'gone-node_pci_0000_84_00_0',
        'parent_provider_uuid': root}, microversion='1.14')
    # Made by Nova 34 (its trait): only a provider of Nova's may go.
    clients.placement.put('/resource_providers/%s/traits' % root, json={
        'resource_provider_generation': 0, 'traits': ['OWNER_NOVA']},
        microversion='1.6')
    preview = orphan_audit(cloud, journal_dir, 'decommission', root,
                           '--json')
    assert preview.returncode == 3
    assert json.loads(preview.stdout)['providers'] == [child, root]
    done = orphan_audit(cloud, journal_dir, 'decommission', root, '--apply',
                        '--json')
    assert done.returncode == 4, done.stdout + done.stderr
    assert [(o['provider'], o['action']) for o in json.loads(
        done.stdout)['outcomes']] == [(child, m.DELETE_PROVIDER),
                                      (root, m.DELETE_PROVIDER)]
    for rp in (root, child):
        assert api.provider_record(clients.placement, rp) is None


def test_only_a_host_nova_or_the_journal_knew_is_already_gone(
        cloud, journal_dir, tmp_path):
    """A typo is no success: a name nothing knows is exit 2 naming what
    comes close; "already gone" is said of a host Nova or the journal
    knew (gone-node, decommissioned above, only the journal knows)."""
    for typo, close in (('nosuchhost', 'host'), ('hots3', 'host3')):
        result = orphan_audit(cloud, journal_dir, 'decommission', typo)
        assert result.returncode == 2, result.stdout + result.stderr
        (line,) = result.stderr.splitlines()
        assert typo in line and 'did you mean %s' % close in line, line
        assert 'already gone' not in result.stdout
    gone = orphan_audit(cloud, journal_dir, 'decommission', 'gone-node')
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert 'gone-node is already gone' in gone.stdout
    forgotten = orphan_audit(cloud, tmp_path, 'decommission', 'gone-node')
    assert forgotten.returncode == 2, forgotten.stdout + forgotten.stderr


def _rename(clients, provider, name):
    """Rename ``provider`` in Placement (as libvirt names a node by the
    hypervisor's FQDN while the service's host is the short name)."""
    record = api.provider_record(clients.placement, provider)
    clients.placement.put('/resource_providers/%s' % provider, json={
        'name': name,
        'parent_provider_uuid': record.get('parent_provider_uuid')},
        microversion='1.14')


def test_a_host_not_mapped_to_a_cell_is_said_and_never_deleted(
        cloud, horizon, journal_dir):
    """host2's host mapping deleted, as for a compute added before
    ``nova-manage cell_v2 discover_hosts``, and its node's provider named
    ``host2.example.com`` as libvirt names it by the FQDN: Nova's
    hypervisor listing leaves its node out and answers 404 for it alone,
    while os-services lists its service, which has no node.  No name
    matches a host, and still the report calls it not mapped, protects
    what it holds, and neither the CLI nor the panel deletes it."""
    clients = cloud.clients()
    host2 = next(p['uuid'] for p in api.provider_list(clients.placement)
                 if p['name'] == 'host2')
    before = {c: a['resources'] for c, a in api.provider_allocations(
        clients.placement, host2).items()}
    assert before, 'host2 holds nothing to protect'
    cloud.control('POST', '/computes/host2/unmap')
    _rename(clients, host2, 'host2.example.com')
    try:
        listed = {h['id'] for h in nova_api.hypervisor_list(clients.nova)}
        assert host2 not in listed
        assert nova_api.hypervisor_get(clients.nova, host2) is None
        assert services(clients, 'host2')
        report = orphan_audit(cloud, journal_dir, 'report', '--min-age', '0',
                              '--json')
        assert report.returncode in (0, 3), report.stdout + report.stderr
        tree = next(p for p in json.loads(report.stdout)['providers']
                    if p['uuid'] == host2)
        assert (tree['service_state'], tree['orphaned_provider']) == (
            'not mapped to a cell', False), tree
        found = [f for f in json.loads(report.stdout)['findings']
                 if f['provider'] == host2]
        assert found and all(f['verdict'] == m.PROTECTED and
                             f['reason_code'] == 'protected.unmapped_node'
                             for f in found), found
        done = orphan_audit(cloud, journal_dir, 'apply', '--min-age', '0',
                            '--provider', host2, '--json')
        assert done.returncode in (0, 4), done.stdout + done.stderr
        assert json.loads(done.stdout)['outcomes'] == []
        refused = orphan_audit(cloud, journal_dir, 'decommission', host2,
                               '--apply')
        assert refused.returncode == 1, refused.stdout + refused.stderr

        preview = horizon.get(DELETE_PROVIDER, {'provider': host2})
        assert b'cell_v2 discover_hosts' in preview.content
        assert b'value="Delete"' not in preview.content
        assert api.provider_record(clients.placement, host2) is not None
        assert {c: a['resources'] for c, a in api.provider_allocations(
            clients.placement, host2).items()} == before
        assert b'host2' in preview.content
    finally:
        _rename(clients, host2, 'host2')
        cloud.control('POST', '/computes/host2/map')
    assert host2 in {h['id'] for h in nova_api.hypervisor_list(clients.nova)}


def test_a_listing_nova_cut_short_deletes_nothing_alive(cloud, horizon,
                                                        journal_dir):
    """Nova's hypervisor listing answers its first page empty, with no
    next link (its rows filtered after the page was cut): the sweep asks
    for each compute node alone, Nova shows them, and no live node is
    called gone.  A sharing provider holding DISK_GB for its aggregate is
    refused by the panel's delete URL, typed in, and by the CLI."""
    import uuid

    clients = cloud.clients()
    proxy = FaultProxy(cloud.config['nova']['url'])
    proxy.inject('GET', '/os-hypervisors/detail', 1, EMPTIED)
    try:
        snapshot = collect.full_snapshot(
            clients.placement, proxy.clients(clients, 'nova').nova)
    finally:
        proxy.close()
    assert ('GET', '/os-hypervisors/detail') in proxy.forwarded
    report = classify.audit(snapshot, min_age=0)
    live = {h['id'] for h in nova_api.hypervisor_list(clients.nova)}
    assert live and live <= set(snapshot.hypervisors)
    for node in live:
        assert not report.provider(node).node_gone, node

    ceph = str(uuid.uuid4())
    clients.placement.post('/resource_providers', json={
        'uuid': ceph, 'name': 'ceph-pool'}, microversion='1.14')
    clients.placement.put('/resource_providers/%s/inventories' % ceph, json={
        'resource_provider_generation': 0,
        'inventories': {'DISK_GB': {'total': 10000}}})
    clients.placement.put('/resource_providers/%s/traits' % ceph, json={
        'resource_provider_generation': 1,
        'traits': ['MISC_SHARES_VIA_AGGREGATE']}, microversion='1.6')
    try:
        preview = horizon.get(DELETE_PROVIDER, {'provider': ceph})
        assert b'is a sharing provider of its aggregate' in preview.content
        assert b'value="Delete"' not in preview.content
        done = orphan_audit(cloud, journal_dir, 'decommission', ceph,
                            '--apply')
        assert done.returncode == 1, done.stdout + done.stderr
        assert api.provider_record(clients.placement, ceph) is not None
    finally:
        clients.placement.delete('/resource_providers/%s' % ceph)


@pytest.mark.django_db(databases=['default', 'orphan_journal'])
def test_a_host_reinstalled_under_its_old_name_gets_its_provider_back(
        cloud, horizon, journal_dir):
    """Nova bug 1817833 staged through Nova (``reinstalled_host``): host6's
    compute service deleted while its provider held a leftover, then
    started again with a new compute node uuid, whose provider
    nova-compute fails to create.  The report calls the old provider
    replaced, not a host to map; the CLI's preview takes the old tree
    alone and keeps the live service; the panel's decommission repairs
    the leftover and deletes the old provider; host6's next periodic
    update creates its new provider."""
    staged = cloud.control('POST', '/incidents/reinstalled_host')
    old = staged['checks']['old_provider']
    new = staged['checks']['new_node']
    ghost = staged['servers'][0]['uuid']
    clients = cloud.clients()
    assert api.provider_record(clients.placement, new) is None
    report = orphan_audit(cloud, journal_dir, 'report', '--min-age', '0',
                          '--json')
    assert report.returncode in (0, 3), report.stdout + report.stderr
    body = json.loads(report.stdout)
    tree = next(p for p in body['providers'] if p['uuid'] == old)
    assert (tree['service_state'], tree['replaced_by'],
            tree['orphaned_provider']) == ('replaced', new, True), tree
    assert [(f['verdict'], f['action']) for f in body['findings']
            if f['provider'] == old] == [(m.DELETED_INSTANCE, m.DELETE)]

    preview = orphan_audit(cloud, journal_dir, 'decommission', 'host6',
                           '--min-age', '0')
    assert preview.returncode == 3, preview.stdout + preview.stderr
    assert 'next periodic update' in preview.stdout, preview.stdout
    assert 'compute service delete' not in preview.stdout.replace(
        'compute service deleted', '')

    # From the index, as an operator reaches it: the audit shown names
    # the old provider (a uuid no audit saw is "no such provider").
    audited(horizon, refresh=True)
    page = horizon.get(DECOMMISSION, {'provider': old})
    assert b'value="Decommission"' in page.content, page.content
    assert b'its new node are kept' in page.content
    response = horizon.post(DECOMMISSION, {
        'rows': page.context['form'].initial['rows']}, follow=True)
    said = [str(s) for s in response.context['messages']]
    assert api.provider_record(clients.placement, old) is None, said
    assert held(clients, ghost) == {}
    assert services(clients, 'host6'), 'the live service was deleted'

    cloud.control('POST', '/periodic/host6')
    record = api.provider_record(clients.placement, new)
    assert record is not None and record['name'] == 'host6', record
    after = classify.audit(collect.full_snapshot(clients.placement,
                                                 clients.nova), min_age=0)
    assert after.provider(new).service_state == 'up'
    assert old not in {p.provider.uuid for p in after.providers}

    # Its restore cannot bring the old provider back: the name is the new
    # node's provider's now, and Placement refuses a second provider of
    # one name (409).  The preview says so; the leftover's restore (onto
    # the provider not restored) is refused too, and nothing is written.
    entries = journal_module.entries(None, provider=old)[0]
    (deleted,) = [e for e in entries if e.action == m.DELETE_PROVIDER]
    preview = horizon.get(INDEX + 'restore/', {'batch': deleted.batch})
    assert preview.status_code == 200
    refused = {entry.action: str(row.error)
               for entry, row in preview.context['rows'] if not row.plan}
    assert "its name host6 is provider %s's now" % new in refused[
        m.DELETE_PROVIDER], refused
    assert api.provider_record(clients.placement, old) is None
    assert held(clients, ghost) == {}
