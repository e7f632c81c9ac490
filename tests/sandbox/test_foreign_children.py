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

"""Other services' providers with the real Neutron: a dead host whose tree
holds Neutron's agent and NIC providers is decommissioned only with them
ticked; the routed segment's provider reads as Neutron's and is offered
no delete; Blazar's and a PCI device's children held by servers keep
their verdicts, refuse a trim naming them, and Blazar's blocks a
decommission naming Blazar; Cyborg's GPU named as Nova names a PCI
device blocks a decommission naming Cyborg.  Placement, Nova and Neutron
are read back after each step."""

import json
import time

from django.test.utils import override_settings
from keystoneauth1 import exceptions as ks_exc
import pytest

pytest.importorskip('nova')
pytest.importorskip('neutron')

from orphan_dashboard.audit import classify  # noqa: E402
from orphan_dashboard.audit import model as m  # noqa: E402
from orphan_dashboard.audit import ownership  # noqa: E402
from orphan_dashboard.audit import plan as planning  # noqa: E402
from orphan_dashboard import conf  # noqa: E402
from orphan_dashboard.operations import decommission as decommission_ops  # noqa: E402,E501
from orphan_dashboard.operations import repairs  # noqa: E402
from orphan_dashboard.reading import collect  # noqa: E402
from tests import clouds  # noqa: E402
from tests.e2e.conftest import audited  # noqa: E402
from tests.e2e.conftest import INDEX  # noqa: E402
from tests.e2e.conftest import login  # noqa: E402
from tests.e2e.conftest import orphan_audit  # noqa: E402

AGENT = '%s:Open vSwitch agent'
DECOMMISSION = INDEX + 'decommission/'
NIC = '%s:Open vSwitch agent:br-phys'


pytestmark = pytest.mark.topology('neutron')
# The segment is staged first: Neutron's segments plugin puts every mapped
# host (host1 included) in its Nova aggregate.
sb = clouds.module_sandbox(('routed_segment',))


@pytest.fixture(scope='module')
def clients(sb):
    return clouds.clients(sb)


@pytest.fixture(scope='module')
def journal_dir(tmp_path_factory):
    return tmp_path_factory.mktemp('journal')


def providers(clients):
    return {p['uuid']: p for p in clients.placement.get(
        '/resource_providers', microversion='1.14').json()[
            'resource_providers']}


def services(clients, host):
    return clients.nova.get(
        '/os-services?binary=nova-compute&host=%s' % host,
        microversion='2.53').json()['services']


def kill(sb, clients, host):
    """``host`` dies: its compute stopped, its service forced down."""
    sb.stop_compute(host)
    (service,) = services(clients, host)
    clients.nova.put('/os-services/%s' % service['id'],
                     json={'forced_down': True}, microversion='2.53')


def test_neutrons_providers_read_as_neutrons_and_offer_no_delete(
        sb, clients):
    staged = sb.incidents_manifest()['routed_segment']
    segment = staged['checks']['segment']
    snapshot = collect.full_snapshot(clients.placement, clients.nova)
    report = classify.audit(snapshot, min_age=0)
    found = report.provider(segment)
    assert found.owner == 'neutron'
    # What the panel offers Delete provider and Decommission on.
    assert not found.orphaned_provider and not found.dead
    for host in ('host2', 'host3'):
        nic = sb.config['neutron']['nics'][host]
        agent = snapshot.providers[nic].parent_uuid
        for provider in (nic, agent):
            assert ownership.provider_ownership(
                snapshot, provider).owner == 'neutron'
    # The provider delete, asked for the segment or for a NIC (a forged
    # request: the panel offers neither), refuses every row.
    nic = sb.config['neutron']['nics']['host2']
    rows = repairs.preview_provider_delete(clients, [segment, nic])
    assert len(rows) == 2 and all(row.plan is None for row in rows)
    assert "%s (%s) is not Nova's (likely neutron's)" % (
        staged['checks']['segment_name'], segment) in str(rows[0].error)
    assert segment in providers(clients) and nic in providers(clients)


@pytest.fixture
def horizon(sb):
    """The panel (a Django test client) logged in through the sandbox's
    Keystone as the admin."""
    with override_settings(
            OPENSTACK_KEYSTONE_URL=sb.config['auth_url'],
            AVAILABLE_REGIONS=[], OPENSTACK_KEYSTONE_DEFAULT_DOMAIN='Default',
            OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT=False,
            ORPHAN_AUDIT_MIN_AGE=0):
        yield login(sb, 'admin')


@pytest.mark.django_db(databases=['default', 'orphan_journal'])
def test_a_dead_host_with_neutrons_providers_goes_only_with_them_ticked(
        sb, clients, journal_dir, horizon):
    """host1 dies with Neutron's agent and NIC and Cyborg's device (its
    fake driver's, which no trait proves Cyborg's) in its tree: the CLI
    and the panel refuse naming Neutron and its command, writing nothing;
    the panel's confirm with the three ticked deletes the service and the
    tree."""
    host1 = sb.config['hosts']['host1']
    nic = sb.config['neutron']['nics']['host1']
    device = sb.config['cyborg']['devices']['host1']
    agent = providers(clients)[nic]['parent_provider_uuid']
    assert providers(clients)[agent]['name'] == AGENT % 'host1'
    kill(sb, clients, 'host1')

    refused = orphan_audit(sb, journal_dir, 'decommission', 'host1',
                           '--min-age', '0', '--apply')
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert 'nothing written' in refused.stdout
    for name in (AGENT % 'host1', NIC % 'host1'):
        assert "provider %s (" % name in refused.stdout
        assert 'deleted only with --delete-foreign-child %s' % name in \
            refused.stdout
    assert "is Neutron's, not Nova's" in refused.stdout
    assert 'openstack network agent delete <agent ID>' in refused.stdout

    audited(horizon, refresh=True)
    preview = horizon.get(DECOMMISSION, {'provider': host1})
    assert preview.status_code == 200
    page = preview.content.decode()
    assert '%s (Neutron)' % (NIC % 'host1') in page
    assert 'openstack network agent delete &lt;agent ID&gt;' in page
    assert preview.context['plan'].foreign_children == {
        agent: 'neutron', nic: 'neutron', device: None}
    rows = preview.context['form'].initial['rows']
    unticked = horizon.post(DECOMMISSION, {'rows': rows,
                                           'delete_foreign': [nic]})
    assert 'delete_foreign' in unticked.context['form'].errors
    assert {host1, agent, nic} <= set(providers(clients))
    assert services(clients, 'host1')

    done = horizon.post(DECOMMISSION, {
        'rows': rows, 'delete_foreign': [agent, nic, device]}, follow=True)
    said = [str(message) for message in done.context['messages']]
    assert any('Decommission of host1' in text and 'journaled' in text
               for text in said), said
    assert not {host1, agent, nic, device} & set(providers(clients))
    assert services(clients, 'host1') == []
    # Only Placement was written: Neutron still lists the agent.
    agents = sb.admin_session().get(
        sb.neutron_url + '/v2.0/agents?host=host1').json()['agents']
    assert [a['agent_type'] for a in agents] == ['Open vSwitch agent']


def test_blazar_and_pci_children_held_by_servers(sb, clients):
    staged = sb.stage('held_children')
    checks = staged['checks']
    blazar, pci = checks['blazar'], checks['pci']
    kept, moved = checks['kept'], checks['moved']
    held = clients.placement.get('/allocations/%s' % kept,
                                 microversion='1.28').json()['allocations']
    assert held[blazar]['resources'] == {checks['reservation']: 1}
    assert held[pci]['resources'] == {checks['pci_class']: 1}

    snapshot = collect.full_snapshot(clients.placement, clients.nova)
    assert ownership.provider_ownership(snapshot, blazar).owner == 'blazar'
    assert ownership.provider_ownership(snapshot, pci).owner == 'nova'
    auditor = classify.Auditor(snapshot, min_age=0)
    assert {f.verdict for f in auditor.consumer_findings(kept)} == {m.OK}
    host2 = sb.config['hosts']['host2']
    verdicts = {f.provider: f.verdict
                for f in auditor.consumer_findings(moved)}
    assert verdicts[host2] == m.MOVED
    for action in (m.TRIM, m.DELETE_AND_HEAL):
        with pytest.raises(planning.CannotRepair) as refused:
            auditor.plan(moved, host2, action)
        said = str(refused.value.reason)
        assert 'which no flavor can rebuild' in said
        assert 'on host2_0000:81:00.0' in said
        assert 'on blazar_host2' in said

    kill(sb, clients, 'host2')
    plan = decommission_ops.preview(clients, 'host2',
                                    conf.RunSettings(min_age=0))
    nic = sb.config['neutron']['nics']['host2']
    assert plan.foreign_children == {
        blazar: 'blazar', nic: 'neutron',
        providers(clients)[nic]['parent_provider_uuid']: 'neutron',
        sb.config['cyborg']['devices']['host2']: None}
    assert pci in plan.providers and pci not in plan.foreign_children
    said = [str(b) for b in plan.blockers()]
    assert any("blazar_host2 (%s) is Blazar's" % blazar in b and
               'openstack reservation host delete host2' in b
               for b in said), said
    assert {blazar, pci} <= set(providers(clients))


def delete_server(clients, uuid, timeout=60):
    """Delete server ``uuid`` through Nova and wait until it is gone."""
    clients.nova.delete('/servers/%s' % uuid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            clients.nova.get('/servers/%s' % uuid)
        except ks_exc.NotFound:
            return
        time.sleep(0.2)
    raise TimeoutError('server %s is not deleted' % uuid)


def cyborg_provider(clients, name, inventory, parent=None):
    """A provider made through Placement's API as Cyborg makes its
    devices: ``inventory``, tagged ``OWNER_CYBORG``."""
    body = dict(name=name, **({'parent_provider_uuid': parent}
                              if parent else {}))
    made = clients.placement.post('/resource_providers', json=body,
                                  microversion='1.20').json()
    path = '/resource_providers/%s' % made['uuid']
    stocked = clients.placement.put(path + '/inventories', json={
        'resource_provider_generation': made['generation'],
        'inventories': {rc: {'total': n} for rc, n in inventory.items()}},
        microversion='1.20').json()
    clients.placement.put(path + '/traits', json={
        'resource_provider_generation':
            stocked['resource_provider_generation'],
        'traits': ['OWNER_CYBORG']}, microversion='1.20')
    return made['uuid']


@pytest.fixture(scope='module')
def cyborg(sb, clients):
    """Cyborg's GPU under host3, named as Nova names a PCI device, and a
    root of Cyborg's with a compute node's classes."""
    return dict(
        gpu=cyborg_provider(clients, 'host3_0000:81:00.0', {'PGPU': 1},
                            sb.config['hosts']['host3']),
        root=cyborg_provider(clients, 'accel-node1', {
            'VCPU': 8, 'MEMORY_MB': 4096, 'DISK_GB': 100}))


def test_cyborgs_providers_are_read_as_cyborgs(sb, clients, cyborg,
                                               journal_dir):
    """The sweep reads ``OWNER_CYBORG``: the PCI-named GPU and the
    compute-shaped root are Cyborg's, the root offered no delete; the
    GPU's name is refused as a decommission by itself."""
    snapshot = collect.full_snapshot(clients.placement, clients.nova)
    assert ownership.provider_ownership(
        snapshot, cyborg['gpu']).owner == 'cyborg'
    found = classify.audit(snapshot, min_age=0).provider(cyborg['root'])
    assert found.owner == 'cyborg'
    assert not found.orphaned_provider
    refused = orphan_audit(sb, journal_dir, 'decommission',
                           'host3_0000:81:00.0', '--min-age', '0', '--apply')
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert 'is a child provider of host3 (%s)' % sb.config['hosts'][
        'host3'] in refused.stderr
    assert {cyborg['gpu'], cyborg['root']} <= set(providers(clients))


def test_a_dead_host_holding_cyborgs_gpu_keeps_it_until_ticked(
        sb, clients, cyborg, journal_dir, horizon):
    """host3 dies with Cyborg's GPU beside Neutron's agent and NIC:
    ``decommission --json`` lists the GPU as Cyborg's blocker, and an
    ``--apply`` ticking only Neutron's children writes nothing."""
    host3, gpu = sb.config['hosts']['host3'], cyborg['gpu']
    for server in clients.nova.get(
            '/servers/detail?all_tenants=1&host=host3').json()['servers']:
        delete_server(clients, server['id'])
    kill(sb, clients, 'host3')
    shown = orphan_audit(sb, journal_dir, 'decommission', 'host3',
                         '--min-age', '0', '--json')
    listed = json.loads(shown.stdout)
    children = {c['uuid']: c for c in listed['foreign_children']}
    assert gpu in children, listed['foreign_children']
    assert children[gpu]['owner'] == 'cyborg'
    assert "host3_0000:81:00.0 (%s) is Cyborg's" % gpu in \
        children[gpu]['blocker']
    assert children[gpu]['blocker'] in listed['blockers']

    applied = orphan_audit(
        sb, journal_dir, 'decommission', 'host3', '--min-age', '0',
        '--apply', '--json', '--delete-foreign-child', AGENT % 'host3',
        '--delete-foreign-child', NIC % 'host3')
    assert applied.returncode == 1, applied.stdout + applied.stderr
    assert json.loads(applied.stdout)['outcomes'][0]['status'] == 'skipped'
    nic = sb.config['neutron']['nics']['host3']
    assert {host3, gpu, nic} <= set(providers(clients))
    assert services(clients, 'host3')

    # The panel names the GPU as Cyborg's and keeps it unless ticked.
    audited(horizon, refresh=True)
    preview = horizon.get(DECOMMISSION, {'provider': host3})
    assert preview.status_code == 200
    assert preview.context['plan'].foreign_children[gpu] == 'cyborg'
    assert 'host3_0000:81:00.0 (Cyborg)' in preview.content.decode()
    agent = providers(clients)[nic]['parent_provider_uuid']
    unticked = horizon.post(DECOMMISSION, {
        'rows': preview.context['form'].initial['rows'],
        'delete_foreign': [agent, nic]})
    assert 'delete_foreign' in unticked.context['form'].errors
    assert {host3, gpu, nic} <= set(providers(clients))
    assert services(clients, 'host3')
