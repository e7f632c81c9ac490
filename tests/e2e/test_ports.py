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

"""Port allocations on the sandbox with a real Neutron: the port incidents
Neutron and Nova really wrote, found with the right verdicts, repaired from
a row, by *Fix recommended* and by ``orphan-audit apply``, checked in
Placement and in Neutron, and restored."""

import types
import uuid

import pytest

pytest.importorskip('neutron')

from orphan_dashboard.api import client as client_module  # noqa: E402
from orphan_dashboard.api import paging  # noqa: E402
from orphan_dashboard.api import placement as api  # noqa: E402
from orphan_dashboard.audit import classify  # noqa: E402
from orphan_dashboard.audit import model as m  # noqa: E402
from orphan_dashboard import conf  # noqa: E402
from orphan_dashboard.operations import repairs  # noqa: E402
from orphan_dashboard.operations import restore  # noqa: E402
from orphan_dashboard.reading import collect  # noqa: E402
from orphan_dashboard.writing import journal as journal_module  # noqa: E402
from orphan_dashboard.writing import write  # noqa: E402
from tests.e2e.conftest import audited  # noqa: E402
from tests.e2e.conftest import held  # noqa: E402
from tests.e2e.conftest import INDEX  # noqa: E402
from tests.e2e.conftest import module_cloud  # noqa: E402
from tests.e2e.conftest import orphan_audit  # noqa: E402
from tests.integration.fault_proxy import FaultProxy  # noqa: E402
from tests.integration.fault_proxy import LATE  # noqa: E402
from tests.integration.fault_proxy import LOST  # noqa: E402

pytestmark = [pytest.mark.django_db(databases=['default', 'orphan_journal']),
              pytest.mark.topology('neutron')]
BW = 'NET_BW_EGR_KILOBIT_PER_SEC'
cloud = module_cloud(
    'qos_ports_healthy,port_deleted_in_neutron,port_allocation_removed,'
    'qos_rule_changed,port_migrated_left,routed_segment,port_binding_lost')
JOURNAL_CLOUD = client_module.Cloud('sandbox', 'RegionOne', '', 'e2e')
UNPROTECTED = conf.RunSettings(min_age=0)


def audit(cloud):
    clients = cloud.clients()
    snapshot = collect.full_snapshot(clients.placement, clients.nova,
                                     network_client=clients.network)
    return snapshot, classify.audit(snapshot, min_age=0)


def server(cloud, incident):
    return cloud.incidents[incident]['servers'][0]['uuid']


def neutron_ports(clients, server_uuid):
    """The server's ports as Neutron lists them now."""
    return clients.network.get('/v2.0/ports', params={
        'device_id': server_uuid}).json()['ports']


def requested(port):
    wanted = {}
    for group in port['resource_request']['request_groups']:
        provider = port['binding:profile']['allocation'][group['id']]
        for rc, amount in group['resources'].items():
            wanted.setdefault(provider, {})[rc] = amount
    return wanted


def test_every_port_incident_gets_its_verdict_and_nothing_else(cloud):
    snapshot, report = audit(cloud)
    assert snapshot.neutron == m.NEUTRON_READ
    assert len(snapshot.ports) == 7
    want = {(e['consumer'], e['provider']): e['verdict']
            for incident in cloud.incidents.values()
            for e in incident['expected']}
    found = {(f.consumer, f.provider): f.verdict for f in report.findings}
    assert {k: found.get(k) for k in want} == want
    flagged = {k for k, v in found.items() if v != m.OK}
    assert flagged <= set(want), 'false positives: %s' % (flagged - set(want))
    assert {f.action for f in report.problems} == {
        m.RELEASE, m.HEAL, m.DELETE_AND_HEAL, m.TRIM}
    segment = report.provider(cloud.incidents['routed_segment']['checks'][
        'segment'])
    assert segment.owner == 'neutron'
    assert not segment.orphaned_provider and not segment.needs_attention


def test_without_neutron_port_allocations_are_protected(cloud):
    clients = cloud.clients()
    nic = cloud.incidents['port_deleted_in_neutron']['checks']['nic']
    vm = server(cloud, 'port_deleted_in_neutron')
    snapshot = collect.full_snapshot(clients.placement, clients.nova,
                                     network_client=None)
    assert snapshot.neutron == m.NEUTRON_ABSENT
    finding = classify.Auditor(snapshot, min_age=0).finding(vm, nic)
    assert finding.verdict == m.PROTECTED
    assert 'Neutron is not in the catalog' in str(finding.reason)


def test_a_leak_released_from_its_row_then_restored(cloud, horizon):
    clients = cloud.clients()
    checks = cloud.incidents['port_deleted_in_neutron']['checks']
    vm = server(cloud, 'port_deleted_in_neutron')
    host2 = cloud.config['hosts']['host2']
    audited(horizon)
    before = held(clients, vm)
    preview = horizon.get(INDEX + 'repair/', {
        'sel': '%s:%s:%s' % (vm, checks['nic'], m.RELEASE)})
    assert preview.status_code == 200
    (row,) = preview.context['rows']
    assert row.plan.after == {host2: before[host2]}
    assert b'host2:Open vSwitch agent:br-phys' in preview.content
    done = horizon.post(INDEX + 'repair/',
                        {'rows': preview.context['form'].initial['rows']})
    assert done.status_code == 302
    assert held(clients, vm) == {host2: before[host2]}
    assert neutron_ports(clients, vm) == []

    (entry,) = journal_module.entries(None, consumer=vm)[0]
    assert entry.action == m.RELEASE and entry.before == before
    preview = horizon.get(INDEX + 'restore/', {'entry': entry.id})
    assert preview.status_code == 200
    done = horizon.post(INDEX + 'restore/',
                        {'rows': preview.context['form'].initial['rows']})
    assert done.status_code == 302
    assert held(clients, vm) == before


def test_fix_recommended_heals_a_changed_qos_amount_to_the_rule(
        cloud, horizon):
    clients = cloud.clients()
    vm = server(cloud, 'qos_rule_changed')
    checks = cloud.incidents['qos_rule_changed']['checks']
    host2 = cloud.config['hosts']['host2']
    audited(horizon, refresh=True)
    batch = horizon.post(INDEX, {'action': 'providers__fix_recommended',
                                 'object_ids': [host2]})
    assert batch.status_code == 302
    preview = horizon.get(batch['location'])
    rows = {r.selection.consumer: r for r in preview.context['rows']}
    assert rows[vm].plan.action == m.DELETE_AND_HEAL
    assert rows[server(cloud, 'port_deleted_in_neutron')].plan.action == \
        m.RELEASE
    done = horizon.post(INDEX + 'repair/',
                        {'rows': preview.context['form'].initial['rows']})
    assert done.status_code == 302
    (port,) = neutron_ports(clients, vm)
    assert held(clients, vm)[checks['nic']] == {BW: checks['kbps']}
    assert requested(port) == {checks['nic']: {BW: checks['kbps']}}


def binding(clients, port):
    """The port's ``binding:profile`` allocation in Neutron now."""
    body = clients.network.get('/v2.0/ports/%s' % port).json()['port']
    return body['binding:profile'].get('allocation')


def test_a_port_bound_nowhere_is_healed_neutron_first_then_restored(
        cloud, horizon):
    """Issue 22 item 4 on the panel's path: the heal's preview shows the
    binding and the allocation it writes, the confirm writes Neutron
    first, then Placement; History's restore puts both back."""
    clients = cloud.clients()
    vm = server(cloud, 'port_binding_lost')
    checks = cloud.incidents['port_binding_lost']['checks']
    port, nic = checks['port'], checks['nic']
    audited(horizon, refresh=True)
    before = held(clients, vm)
    assert nic not in before and binding(clients, port) is None
    preview = horizon.get(INDEX + 'repair/', {
        'sel': '%s:%s:%s' % (vm, nic, m.HEAL)})
    assert preview.status_code == 200
    (row,) = preview.context['rows']
    group = row.plan.ports[port]['after']['allocation']
    assert list(group.values()) == [nic]
    assert row.plan.after[nic] == {BW: checks['kbps']}
    assert b'First, in Neutron: the binding of port' in preview.content
    assert b'openstack port set --binding-profile' in preview.content
    assert preview.content.index(b'openstack port set') < \
        preview.content.index(b'resource provider allocation set')
    done = horizon.post(INDEX + 'repair/',
                        {'rows': preview.context['form'].initial['rows']})
    assert done.status_code == 302
    assert binding(clients, port) == group
    assert held(clients, vm) == dict(before, **{nic: {BW: checks['kbps']}})

    (entry,) = journal_module.entries(None, consumer=vm)[0]
    assert entry.action == m.HEAL and entry.before == before
    assert entry.ports[port]['before'].get('allocation') is None
    assert entry.ports[port]['after']['allocation'] == group
    preview = horizon.get(INDEX + 'restore/', {'entry': entry.id})
    assert preview.status_code == 200
    assert b'First, in Neutron: the binding of port' in preview.content
    done = horizon.post(INDEX + 'restore/',
                        {'rows': preview.context['form'].initial['rows']})
    assert done.status_code == 302
    assert held(clients, vm) == before
    assert binding(clients, port) is None


class Interloper:
    """Placement as another admin shares it: just before our write of
    ``consumer``, that admin rewrites it as it is, which moves its
    generation under ours."""

    def __init__(self, placement, consumer):
        self.placement, self.consumer, self.done = placement, consumer, False

    def __getattr__(self, name):
        return getattr(self.placement, name)

    def put(self, path, **kwargs):
        if path == '/allocations/%s' % self.consumer and not self.done:
            self.done = True
            body = api.consumer_allocations(self.placement, self.consumer)
            api.put_allocations(
                self.placement, self.consumer,
                {rp: a['resources'] for rp, a in body['allocations'].items()},
                body['consumer_generation'], body['project_id'],
                body['user_id'])
        return self.placement.put(path, **kwargs)


def test_placement_refusing_the_heal_puts_the_binding_back(cloud):
    clients = cloud.clients()
    vm = server(cloud, 'port_binding_lost')
    checks = cloud.incidents['port_binding_lost']['checks']
    port, nic = checks['port'], checks['nic']
    selection = m.Selection(vm, nic, m.HEAL)
    (row,) = repairs.preview(clients, [selection], UNPROTECTED)
    assert port in row.plan.ports
    before = held(clients, vm)
    journal = journal_module.Journal('test', JOURNAL_CLOUD,
                                     user_name='tester')
    (outcome,) = repairs.apply(
        clients._replace(placement=Interloper(clients.placement, vm)),
        journal, [row.plan], UNPROTECTED)
    assert outcome.status == write.SKIPPED, outcome.message
    assert 'the binding of port %s was put back in Neutron' % port in str(
        outcome.message)
    assert binding(clients, port) is None
    assert held(clients, vm) == before
    entry = journal_module.get(JOURNAL_CLOUD, outcome.entry_id)
    assert entry.status == entry.REFUSED


def _heal_plan(cloud, clients):
    """The heal of the port bound nowhere, as the preview plans it:
    ``(plan, port, group)``."""
    vm = server(cloud, 'port_binding_lost')
    checks = cloud.incidents['port_binding_lost']['checks']
    (row,) = repairs.preview(clients,
                             [m.Selection(vm, checks['nic'], m.HEAL)],
                             UNPROTECTED)
    port = checks['port']
    return row.plan, port, row.plan.ports[port]['after']['allocation']


def _heal_with_a_fault(cloud, clients, service, fault, timeout=None):
    """The heal of :func:`_heal_plan` confirmed with ``service``
    (``placement`` or ``network``) behind a proxy answering its first
    ``fault`` (``(method, path prefix, fault)``): its plan, port and
    group, what the consumer held before, the journal, the outcome and
    the proxy."""
    plan, port, group = _heal_plan(cloud, clients)
    healed = types.SimpleNamespace(
        plan=plan, port=port, group=group,
        before=held(clients, plan.consumer),
        journal=journal_module.Journal('test', JOURNAL_CLOUD,
                                       user_name='tester'),
        proxy=FaultProxy(cloud.config[
            'neutron' if service == 'network' else service]['url']))
    method, prefix, answer = fault
    healed.proxy.inject(method, prefix, 1, answer)
    try:
        (healed.outcome,) = repairs.apply(
            healed.proxy.clients(clients, service, timeout), healed.journal,
            [plan], UNPROTECTED)
    finally:
        healed.proxy.close()
    return healed


def test_placement_s_answer_lost_after_the_heal_keeps_the_binding(cloud):
    """Issue 32 item 4: Placement applied the heal but its answer was
    lost (a 502 after forwarding): the binding stays written, the write
    is done, and its restore puts both back."""
    clients = cloud.clients()
    healed = _heal_with_a_fault(cloud, clients, 'placement',
                                ('PUT', '/allocations/', LOST))
    plan, port, outcome, journal, proxy = (
        healed.plan, healed.port, healed.outcome, healed.journal,
        healed.proxy)
    assert ('PUT', '/allocations/%s' % plan.consumer) in proxy.forwarded
    assert outcome.status == write.DONE, outcome.message
    assert binding(clients, port) == healed.group
    assert held(clients, plan.consumer) == plan.after
    entry = journal_module.get(JOURNAL_CLOUD, outcome.entry_id)
    assert entry.status == entry.APPLIED
    restorable = journal_module.restorable(JOURNAL_CLOUD, [entry.subject])
    (restored,) = restore.restore(
        clients, journal, [entry],
        {entry.id: restore.fresh_plans(
            clients, [entry], restorable)[0][1].plan},
        restorable)
    assert restored.status == write.DONE, restored.message
    assert held(clients, plan.consumer) == healed.before
    assert binding(clients, port) is None


def test_neutron_s_answer_lost_after_the_binding_puts_it_back(cloud):
    """Issue 32 item 5: Neutron wrote the binding but no answer came in
    time (a 5xx is the unit tests'): not a refusal.  The port is read back
    and put back, Placement is not written, and the entry failed changing
    nothing."""
    clients = cloud.clients()
    healed = _heal_with_a_fault(cloud, clients, 'network',
                                ('PUT', '/v2.0/ports/', LATE), timeout=3)
    plan, port, outcome, proxy = (healed.plan, healed.port, healed.outcome,
                                  healed.proxy)
    assert proxy.forwarded.count(('PUT', '/v2.0/ports/%s' % port)) == 2
    assert outcome.status == write.FAILED, outcome.message
    message = str(outcome.message)
    assert 'nothing was written' not in message, message
    assert 'the binding of port %s was put back in Neutron' % port in \
        message, message
    assert binding(clients, port) is None
    assert held(clients, plan.consumer) == healed.before
    entry = journal_module.get(JOURNAL_CLOUD, outcome.entry_id)
    assert entry.status == entry.FAILED and entry.changed_nothing


def test_orphan_audit_apply_heals_and_trims_the_rest(cloud, tmp_path):
    clients = cloud.clients()
    run = orphan_audit(cloud, tmp_path, 'apply', '--min-age', '0')
    assert run.returncode == 4, run.stdout + run.stderr   # repairs applied
    assert run.stdout.count(': done') == 3, run.stdout
    assert 'plan: openstack port set --binding-profile' in run.stdout
    for incident in ('port_allocation_removed', 'port_migrated_left',
                     'port_binding_lost'):
        vm = server(cloud, incident)
        (port,) = neutron_ports(clients, vm)
        now = held(clients, vm)
        for provider, resources in requested(port).items():
            assert now[provider] == resources, incident
    old_nic = cloud.incidents['port_migrated_left']['checks']['old_nic']
    assert old_nic not in held(clients, server(cloud, 'port_migrated_left'))
    _, report = audit(cloud)
    assert report.problems == []
    assert api.consumer_allocations(clients.placement, server(
        cloud, 'qos_ports_healthy'))['allocations']


def fill(clients, provider, rc, reserved=None):
    """Reserve all of ``provider``'s ``rc`` but what is used (or set its
    reserved back to ``reserved``); its inventory as it was."""
    path = '/resource_providers/%s/inventories' % provider
    body = clients.placement.get(path, microversion='1.26').json()
    was = body['inventories'][rc]
    if reserved is None:
        used = clients.placement.get(
            '/resource_providers/%s/usages' % provider).json()[
                'usages'].get(rc, 0)
        reserved = was['total'] - int(used / was['allocation_ratio'])
    clients.placement.put(path + '/' + rc, microversion='1.26', json=dict(
        was, reserved=reserved,
        resource_provider_generation=body['resource_provider_generation']))
    return was


def test_a_binding_stripped_where_placement_kept_its_share_is_rewritten(
        cloud):
    """A binding that lost its allocation in Neutron while Placement kept
    the bandwidth, on a NIC with no room for a second share: read as the
    port's share where it is held (not a leak beside a port placed
    nowhere), and the next repair of the server writes the binding naming
    it, Placement's NIC part untouched."""
    clients = cloud.clients()
    checks = cloud.incidents['qos_ports_healthy']['checks']
    vm, port = sorted(checks['ports'].items())[0]
    body = clients.network.get('/v2.0/ports/%s' % port).json()['port']
    group = body['binding:profile']['allocation']
    (nic,) = set(group.values())
    clients.network.put('/v2.0/ports/%s' % port, json={'port': {
        'binding:profile': {k: v for k, v in body['binding:profile'].items()
                            if k != 'allocation'}}})
    assert binding(clients, port) is None
    current = api.consumer_allocations(clients.placement, vm)
    root, = [rp for rp, a in current['allocations'].items()
             if 'VCPU' in a['resources']]
    grown = {rp: dict(a['resources']) for rp, a in
             current['allocations'].items()}
    grown[root]['VCPU'] += 1
    api.put_allocations(clients.placement, vm, grown,
                        current['consumer_generation'],
                        current['project_id'], current['user_id'])
    was = fill(clients, nic, BW)
    try:
        assert api.port_candidates(clients.placement, {'1': (
            {BW: checks['kbps']}, ())}, root) == []
        _stripped_binding_rewritten(cloud, clients, vm, port, nic, root,
                                    group, grown)
    finally:
        fill(clients, nic, BW, was['reserved'])


def _stripped_binding_rewritten(cloud, clients, vm, port, nic, root, group,
                                grown):
    _, report = audit(cloud)
    found = {f.provider: f for f in report.findings if f.consumer == vm}
    assert found[nic].verdict == m.OK
    assert 'its binding in Neutron names no provider' in str(
        found[nic].reason)
    assert found[root].verdict == m.WRONG_AMOUNT
    (row,) = repairs.preview(
        clients, [m.Selection(vm, root, m.DELETE_AND_HEAL)], UNPROTECTED)
    assert row.plan.ports[port]['after']['allocation'] == group
    journal = journal_module.Journal('test', JOURNAL_CLOUD,
                                     user_name='tester')
    (outcome,) = repairs.apply(clients, journal, [row.plan], UNPROTECTED)
    assert outcome.status == write.DONE, outcome.message
    assert binding(clients, port) == group
    grown[root]['VCPU'] -= 1
    assert held(clients, vm) == grown
    _, report = audit(cloud)
    assert [f for f in report.findings
            if f.consumer == vm and f.verdict != m.OK] == []


def test_neutron_and_nova_refuse_the_marker_of_an_item_gone(cloud):
    """What ``paging.MARKER_GONE`` is built on, asked of the real
    services: a page after a port, or a compute node, that is no more."""
    clients = cloud.clients()
    gone = str(uuid.uuid4())
    with pytest.raises(paging.MARKER_GONE) as neutron_said:
        clients.network.get('/v2.0/ports', params={'marker': gone,
                                                   'limit': 1})
    with pytest.raises(paging.MARKER_GONE) as nova_said:
        clients.nova.get('/os-hypervisors/detail', microversion='2.53',
                         params={'marker': gone, 'limit': 1})
    assert (neutron_said.value.http_status,
            nova_said.value.http_status) == (404, 400)
    assert gone in nova_said.value.response.text
