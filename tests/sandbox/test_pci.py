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

"""A node's devices on the sandbox started with ``--pci``: Nova's
``FakeDriverWithPciResources`` reports its PFs in Placement and Nova's
scheduler allocates them (``[filter_scheduler] pci_in_placement``); a
physical GPU and memory encryption slots are made through Placement as
Nova's libvirt driver writes them.  Each PCI incident is judged by its
consumer, the one-time-use device left ``reserved = total`` is no orphan,
every offered repair keeps the current node's devices as read, and
``orphan-audit apply`` removes only the orphans' (``doc/source/
verdicts.md``, *A node's devices*)."""

import json

import pytest

pytest.importorskip('nova')
pytest.importorskip('placement')
pytest.importorskip('keystone')

from orphan_dashboard.audit import model as m  # noqa: E402
from orphan_dashboard import conf  # noqa: E402
from orphan_dashboard.operations import repairs  # noqa: E402
from orphan_dashboard.operations import report as report_ops  # noqa: E402
from tests import clouds  # noqa: E402
from tests.e2e.conftest import held  # noqa: E402
from tests.e2e.conftest import orphan_audit  # noqa: E402

OTU = 'CUSTOM_SANDBOX_PCI_OTU'
ADDRESSES = {'0000:01:00.0': 'CUSTOM_SANDBOX_PCI_A',
             '0000:02:00.0': 'CUSTOM_SANDBOX_PCI_B', '0000:03:00.0': OTU}
"""The PFs each node's fake driver reports and their classes in the
sandbox's ``device_spec``."""
INCIDENTS = ('pci_deleted_behind_nova', 'pci_moved', 'pci_stale_migration',
             'pci_one_time_use', 'pci_removed_device', 'vgpu_and_sev_children')
REMOVED_DEVICE_REASON = ('if this device was removed from [pci] device_spec, '
                         'Nova keeps its inventory only for this allocation')
SETTINGS = conf.RunSettings(min_age=0, concurrency=4)

pytestmark = pytest.mark.topology('pci')
sb = clouds.module_sandbox(INCIDENTS)


@pytest.fixture(scope='module')
def clients(sb):
    return clouds.clients(sb)


@pytest.fixture(scope='module')
def incidents(sb):
    return sb.config['incidents']


def get(clients, path, mv='1.20'):
    return clients.placement.get(path, microversion=mv).json()


def server(incidents, name):
    return incidents[name]['servers'][0]['uuid']


def expected(incidents):
    return {(e['consumer'], e['provider']): e['verdict']
            for name in INCIDENTS for e in incidents[name]['expected']}


def test_nova_reports_each_pf_as_a_child_of_its_node(sb, clients):
    """What ``[pci] report_in_placement`` made of the fake driver's
    devices: one ``<node>_<address>`` child per PF (none for its VF),
    Nova's traits, the one-time-use PF tagged as such."""
    found = {p['name']: p for p in get(clients, '/resource_providers')[
        'resource_providers']}
    for host, root in sb.config['hosts'].items():
        for address, resource_class in ADDRESSES.items():
            device = found['%s_%s' % (host, address)]
            assert device['parent_provider_uuid'] == root
            path = '/resource_providers/%s' % device['uuid']
            inventory = get(clients, path + '/inventories')['inventories']
            assert set(inventory) == {resource_class}
            assert inventory[resource_class]['total'] == 1
            traits = set(get(clients, path + '/traits')['traits'])
            assert {'COMPUTE_MANAGED_PCI_DEVICE', 'OWNER_NOVA'} <= traits
            assert ('HW_PCI_ONE_TIME_USE' in traits) == (resource_class ==
                                                         OTU)
        assert '%s_0000:01:00.1' % host not in found


def test_each_device_is_judged_with_its_consumers_share_of_the_node(
        incidents, clients):
    """The report the panel and the CLI build: every device allocation
    gets its consumer's verdict on that node, nothing else is flagged, and
    every device held is Nova's, proven by its trait."""
    # Nova allocated one device of the flavor on the moved server's node.
    assert len(incidents['pci_moved']['checks']['current']) == 2
    report = report_ops.swept(clients, SETTINGS).report
    want = expected(incidents)
    found = {(f.consumer, f.provider): f.verdict for f in report.findings}
    assert {k: found.get(k) for k in want} == want
    flagged = {k for k, v in found.items() if v != m.OK}
    assert flagged <= set(want), 'false positives: %s' % (flagged - set(want))
    children = {c: owned for p in report.providers for c, owned in p.children}
    devices = {e['provider']: e['host'] for name in INCIDENTS
               for e in incidents[name]['expected'] if '_' in e['host']}
    assert {'host2_pci_0000_84_00_0', 'host2_amd_sev'} < set(
        devices.values())
    for device, name in devices.items():
        assert children[device].owner == 'nova', name
        assert children[device].proof == 'trait', name


def test_a_used_one_time_device_is_reserved_whole_and_no_orphan(
        incidents, clients):
    """Nova reserves a one-time-use device once allocated and never gives
    it back: after a normal delete it holds ``reserved = total`` and no
    allocation, which no repair offers to touch."""
    checks = incidents['pci_one_time_use']['checks']
    device = checks['device']
    assert checks['allocations_after_delete'] == {}
    for seen in (checks['while_used'], checks['after_delete']):
        assert seen['reserved'] == seen['total'] == 1
    report = report_ops.swept(clients, SETTINGS).report
    assert [f for f in report.findings if f.provider == device] == []
    assert device not in {f.provider for f in report.problems}


def test_a_device_removed_from_device_spec_is_held_by_a_deleted_server(
        incidents, clients):
    """Nova bug 2115905 staged through nova-compute itself: host3 restarted
    with a ``device_spec`` without its server's device keeps the device's
    provider, its inventory adjusted up to the allocation; the server
    deleted behind Nova's back and a periodic update later, Nova has freed
    the device but the inventory stays, held by the leftover, and the next
    update of host3 fails.  The audit calls it ``deleted_instance`` and
    says the inventory goes with it."""
    staged = incidents['pci_removed_device']
    checks = staged['checks']
    device = checks['device']
    assert checks['adjusted'], 'Nova never adjusted the inventory'
    assert checks['update_failed'], 'Nova deleted the held provider'
    for seen in ('while_held', 'after_delete', 'after_next_update'):
        assert checks[seen]['total'] == checks[seen]['used'] == 1, seen
    gone = server(incidents, 'pci_removed_device')
    assert device in held(clients, gone)
    report = report_ops.swept(clients, SETTINGS).report
    found = {f.provider: f for f in report.findings if f.consumer == gone}
    assert {f.verdict for f in found.values()} == {m.DELETED_INSTANCE}
    assert found[device].actions == (m.DELETE,)
    assert REMOVED_DEVICE_REASON in str(found[device].reason)
    assert '2115905' in str(found[device].reason)
    root = staged['hosts']['host3']
    assert REMOVED_DEVICE_REASON not in str(found[root].reason)


def test_every_offered_repair_keeps_the_current_nodes_devices_as_read(
        incidents, clients):
    """Each repair a row offers, previewed as the panel previews it:
    what stays on the server's current node, root and devices, is what
    was read; an orphan's devices go with its share."""
    report = report_ops.swept(clients, SETTINGS).report
    moved = server(incidents, 'pci_moved')
    children = server(incidents, 'vgpu_and_sev_children')
    kept = {moved: incidents['pci_moved']['checks']['current'],
            children: incidents['vgpu_and_sev_children']['checks'][
                'devices']}
    gone = {server(incidents, 'pci_deleted_behind_nova'),
            incidents['pci_stale_migration']['migrations'][0]['uuid']}
    chosen = [m.Selection(f.consumer, f.provider, action)
              for f in report.problems if f.consumer in set(kept) | gone
              for action in f.actions]
    assert {s.action for s in chosen} >= {m.TRIM, m.DELETE,
                                          m.DELETE_AND_HEAL}
    _, hints = repairs.recommended(report)
    rows = repairs.preview(clients, chosen, SETTINGS, hints)
    for row in rows:
        assert row.plan is not None, (row.selection, row.error)
        consumer = row.selection.consumer
        if consumer in gone:
            assert row.plan.after == {}, row.selection
            continue
        for provider, resources in kept[consumer].items():
            assert row.plan.after[provider] == resources, row.selection


def test_orphan_audit_apply_removes_only_the_orphans_devices(
        sb, incidents, clients, tmp_path):
    """``orphan-audit apply --json``: its report names each device row's
    verdict, its repairs are done, and Placement then holds the current
    node's devices exactly as read and none of the orphans'."""
    run = orphan_audit(sb, tmp_path, 'apply', '--json', '--min-age', '0')
    assert run.returncode == 4, run.stdout + run.stderr
    said = json.loads(run.stdout)
    rows = {(f['consumer'], f['provider']): f['verdict']
            for f in said['findings']}
    want = {k: v for k, v in expected(incidents).items() if v != m.OK}
    assert rows == want
    assert {o['status'] for o in said['outcomes']} == {'done'}, \
        said['outcomes']
    ghost = incidents['pci_removed_device']['checks']['device']
    (reason,) = [f['reason'] for f in said['findings']
                 if f['provider'] == ghost]
    assert REMOVED_DEVICE_REASON in reason

    for orphan in (server(incidents, 'pci_deleted_behind_nova'),
                   incidents['pci_stale_migration']['migrations'][0][
                       'uuid']):
        assert held(clients, orphan) == {}
    moved = incidents['pci_moved']['checks']
    assert held(clients, server(incidents, 'pci_moved')) == moved['current']
    stayed = incidents['pci_stale_migration']
    assert held(clients, server(incidents, 'pci_stale_migration')) == \
        stayed['allocations'][stayed['servers'][0]['uuid']]
    devices = incidents['vgpu_and_sev_children']
    now = held(clients, server(incidents, 'vgpu_and_sev_children'))
    for provider, resources in devices['checks']['devices'].items():
        assert now[provider] == resources
    assert now[sb.config['hosts']['host2']]['MEMORY_MB'] == 1024
    otu = incidents['pci_one_time_use']['checks']['device']
    inventory = get(clients, '/resource_providers/%s/inventories' % otu)[
        'inventories'][OTU]
    assert inventory['reserved'] == inventory['total'] == 1
    assert report_ops.swept(clients, SETTINGS).report.problems == []
    assert held(clients, server(incidents, 'pci_removed_device')) == {}
    sb.run_periodic('host3')
    assert clients.placement.get(
        '/resource_providers/%s' % ghost, microversion='1.20',
        raise_exc=False).status_code == 404, 'Nova kept the ghost device'
