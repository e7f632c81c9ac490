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

"""Decommissioning as data: what blocks deleting a dead hypervisor and the
writes that clear it."""

import io

import pytest

from orphan_dashboard.api import client
from orphan_dashboard.audit import decommission
from orphan_dashboard.audit import model as m
from orphan_dashboard.cli import handlers
from orphan_dashboard.cli import options
from orphan_dashboard.cli import rendering
from orphan_dashboard import conf
from orphan_dashboard.writing import write
from tests.unit.cloud import Cloud
from tests.unit.cloud import read_topology
from tests.unit.cloud import uid
from tests.unit.staged import cyborg_host3
from tests.unit.staged import dead_host1
from tests.unit.staged import ironic

pytestmark = pytest.mark.horizon

H1, H2, H3 = uid('host1'), uid('host2'), uid('host3')

CLIENTS = client.Clients('placement', 'nova')
UNPROTECTED = conf.RunSettings(min_age=0)


def test_every_leftover_gets_the_write_that_clears_it():
    cloud, who = dead_host1()
    plan = decommission.plan(cloud.snapshot(), 'host1', min_age=0)
    assert (plan.host, plan.roots) == ('host1', [H1])
    assert plan.providers == [who['nic'], H1]     # children first
    assert not plan.up and not plan.servers and not plan.gone
    steps = {s.consumer: s for s in plan.steps}
    assert set(steps) == {who['evacuated'], who['ghost'], who['stale'],
                          who['stranger']}
    assert steps[who['evacuated']].plan.action == m.TRIM
    assert steps[who['ghost']].plan.action == m.DELETE
    assert steps[who['stale']].plan.action == m.DELETE
    assert steps[who['stranger']].optional
    for step in plan.steps:
        assert not set(step.plan.after) & {H1, who['nic']}
    # The unknown consumer goes only by choice.
    assert who['stranger'] not in {p.consumer for p in plan.plans()}
    assert [b for b in plan.blockers() if who['stranger'] in str(b)]
    # Neutron's NIC goes only by choice too.
    assert plan.foreign_children == {who['nic']: 'neutron'}
    assert plan.blockers({who['stranger']}) == [
        plan.child_blocker(who['nic'])]
    assert plan.blockers({who['stranger']}, {who['nic']}) == []
    assert plan.actionable()
    assert who['stranger'] in {p.consumer
                               for p in plan.plans({who['stranger']})}


def test_found_by_host_hypervisor_or_provider():
    cloud, _ = dead_host1()
    snapshot = cloud.snapshot()
    for name in ('host1', 'HOST1', H1, H1.upper()):
        assert decommission.resolve(snapshot, name)[0] == 'host1', name
        assert decommission.resolve(snapshot, name)[2] == [H1], name


def test_servers_still_there_and_a_live_service_block_it():
    cloud, _ = dead_host1()
    stuck = cloud.server('stuck', 'host1', status='SHUTOFF')
    cloud.allocate(stuck, H1)
    plan = decommission.plan(cloud.snapshot(), 'host1', min_age=0)
    assert [s.uuid for s in plan.servers] == [stuck]
    assert stuck not in {s.consumer for s in plan.steps}
    assert any('servers still on it' in b and stuck in b
               for b in map(str, plan.blockers()))
    live = decommission.plan(cloud.snapshot(), 'host3', min_age=0)
    assert live.up
    assert any('compute service host3 is up' in str(b)
               for b in live.blockers())


def test_a_consumer_nothing_would_clear_blocks_it():
    cloud, who = dead_host1()
    moving = cloud.server('moving', 'host2', task_state='migrating')
    cloud.allocate(moving, H1)
    bandwidth = cloud.server('bandwidth', 'host2')
    cloud.allocate(bandwidth, H2)
    cloud.allocate(bandwidth, who['nic'], {'NET_BW_EGR_KILOBIT_PER_SEC': 9})
    plan = decommission.plan(cloud.snapshot(), 'host1', min_age=0)
    steps = {s.consumer: s for s in plan.steps}
    assert str(steps[moving].error).startswith('not now: task migrating')
    assert 'heal_allocations --instance %s' % bandwidth in \
        str(steps[bandwidth].error)
    assert len([b for b in plan.blockers() if 'consumer' in str(b)]) >= 2


def test_a_host_already_gone():
    cloud, _ = dead_host1()
    plan = decommission.plan(cloud.snapshot(), 'host9', min_age=0)
    assert plan.gone and plan.blockers() == []


def test_a_host_with_thousands_of_servers_is_printed_whole():
    """An Ironic compute service places thousands of servers: the CLI's
    preview names every one, as text and as JSON."""
    cloud = Cloud()
    cloud.host('ironic', state='down', forced_down=True)
    nodes = [cloud.server('node-%d' % i, 'ironic') for i in range(5000)]
    plan = decommission.plan(cloud.snapshot(), 'ironic', min_age=0)
    assert len(plan.servers) == 5000
    out = io.StringIO()
    rendering.print_decommission(plan, set(), out)
    (blocker,) = [line for line in out.getvalue().splitlines()
                  if 'servers still on it' in line]
    assert all('node-%d (%s)' % (i, u) in blocker
               for i, u in enumerate(nodes))
    listed = rendering.decommission_json(plan, set())['blockers']
    assert [b for b in listed if nodes[-1] in b]


def test_a_host_of_a_down_cell_is_never_decommissioned():
    """host5's cell is down: Nova lists its service UNKNOWN (no state) and
    no compute node; its empty provider could be a live node there."""
    cloud = Cloud()
    down = uid('host5')
    cloud.providers[down] = m.Provider(down, 'host5', 1, down)
    cloud.services['host5'] = m.Service('host5', '', status='UNKNOWN')
    snapshot = cloud.snapshot()
    snapshot.hypervisors_listed = False
    plan = decommission.plan(snapshot, 'host5', min_age=0)
    assert plan.roots == [down] and plan.steps == []
    [blocker] = plan.blockers()
    assert 'host5' in str(blocker) and 'cannot reach' in str(blocker)


def test_an_unconfirmed_provider_is_never_decommissioned():
    cloud = Cloud()
    unsure = uid('node9')
    cloud.providers[unsure] = m.Provider(unsure, 'node9', 1, unsure)
    cloud.tag(unsure)
    snapshot = cloud.snapshot()
    snapshot.hypervisors_listed = False
    [blocker] = decommission.plan(snapshot, 'node9', min_age=0).blockers()
    assert 'node9' in str(blocker) and 'could be' in str(blocker)


def test_one_node_of_a_multi_node_service_never_takes_the_service():
    cloud, (a, b, c) = ironic()
    plan = decommission.plan(cloud.snapshot(), b, min_age=0)
    assert plan.roots == [b] and plan.providers == [b]
    assert plan.other_nodes == sorted([a, c])
    assert not plan.deletes_service
    assert any('Nova still has compute node %s' % b in str(x)
               for x in plan.blockers())
    whole = decommission.plan(cloud.snapshot(), b, min_age=0,
                              whole_service=True)
    assert whole.roots == sorted([a, b, c]) and whole.deletes_service
    assert whole.blockers() == []


def test_naming_a_multi_node_host_needs_the_whole_service_choice():
    cloud, (a, b, c) = ironic()
    plan = decommission.plan(cloud.snapshot(), 'conductor', min_age=0)
    assert not plan.deletes_service
    assert any('serves 3 nodes' in str(x) for x in plan.blockers())
    whole = decommission.plan(cloud.snapshot(), 'conductor', min_age=0,
                              whole_service=True)
    assert whole.deletes_service and whole.blockers() == []


def test_a_node_nova_dropped_goes_alone_and_keeps_its_service():
    cloud, (a, b, c) = ironic()
    del cloud.hypervisors[a]
    cloud.tag(a)
    ghost = cloud.deleted('ghost-on-a', a, {'CUSTOM_BAREMETAL_GOLD': 1})
    plan = decommission.plan(cloud.snapshot(), a, min_age=0)
    assert plan.roots == [a] and not plan.deletes_service
    assert plan.blockers() == []
    assert [p.consumer for p in plan.plans()] == [ghost]


def test_what_a_preview_showed_is_bound():
    cloud, _ = dead_host1()
    cloud.services['host1'] = m.Service('host1', 'down', forced_down=True,
                                        uuid=uid('host1-svc'))
    shown = decommission.plan(cloud.snapshot(), 'host1', min_age=0)
    assert shown.binding() == {
        'service': uid('host1-svc'), 'providers': sorted(shown.providers),
        'whole_service': False}
    assert shown.changed_since(shown.binding()) is None
    cloud.services['host1'] = m.Service('host1', 'down', forced_down=True,
                                        uuid=uid('host1-svc-again'))
    again = decommission.plan(cloud.snapshot(), 'host1', min_age=0)
    assert 'compute service host1 is now %s' % uid('host1-svc-again') in \
        str(again.changed_since(shown.binding()))
    cloud.services['host1'] = shown.service
    new = cloud.child(H1, 'host1_pci_0000_81_00_0')
    grown = decommission.plan(cloud.snapshot(), 'host1', min_age=0)
    assert 'host1_pci_0000_81_00_0 (%s)' % new in \
        str(grown.changed_since(shown.binding()))


def test_a_provider_added_during_the_repairs_stops_the_deletes():
    """Checked again after the repairs, just before the deletes: a child
    created meanwhile keeps the service and every provider."""
    from unittest import mock

    from orphan_dashboard.api import nova
    from orphan_dashboard.api import placement
    from orphan_dashboard.operations import decommission as flow

    cloud, who = dead_host1()
    cloud.services['host1'] = m.Service('host1', 'down', forced_down=True,
                                        uuid=uid('host1-svc'))
    shown = decommission.plan(cloud.snapshot(), 'host1', min_age=0)
    chosen = {who['stranger']}
    late = uid('late-child')
    listed = [{'uuid': p, 'root_provider_uuid': H1}
              for p in shown.providers + [late]]
    done = [write.Outcome(p.selection, write.DONE, 'done')
            for p in shown.plans(chosen)]
    with mock.patch.object(flow, 'preview', return_value=shown), \
            mock.patch.object(flow.repairs, 'apply', return_value=done), \
            mock.patch.object(flow, '_held', return_value={}), \
            mock.patch.object(placement, 'provider_list',
                              return_value=listed), \
            mock.patch.object(nova, 'service_list', return_value=[
                {'host': 'host1', 'id': uid('host1-svc')}]), \
            mock.patch.object(nova, 'delete_service') as delete_service, \
            mock.patch.object(placement, 'delete_provider') as delete:
        outcomes = flow.apply(CLIENTS, mock.Mock(), 'host1',
                              shown.plans(chosen), chosen, UNPROTECTED,
                              bound=shown.binding(), children={who['nic']})
    delete_service.assert_not_called()
    delete.assert_not_called()
    assert outcomes[-1].status == write.SKIPPED
    assert 'providers %s' % late in str(outcomes[-1].message)
    assert 'the compute service and the providers are kept' in \
        str(outcomes[-1].message)


def test_another_services_child_blocks_it_naming_its_owner_and_command():
    """Neutron's agent and NIC, Blazar's host, a Cyborg device and a
    child nobody proves are blockers until ticked; Nova's own PCI and vGPU
    children go with the tree."""
    cloud = Cloud()
    cloud.host('host1', state='down', forced_down=True)
    agent = cloud.child(H1, 'host1:Open vSwitch agent')
    nic = cloud.child(agent, 'host1:Open vSwitch agent:br-phys')
    blazar = cloud.child(H1, 'blazar_host1')
    device = cloud.child(H1, 'fpga-7')
    stranger = cloud.child(H1, 'something')
    pci = cloud.child(H1, 'host1_0000:81:00.0')
    vgpu = cloud.child(H1, 'host1_pci_0000_84_00_0')
    gone = cloud.server('gone', 'host2')
    cloud.known.add(gone)
    cloud.allocate(gone, device, {'FPGA': 1})
    plan = decommission.plan(cloud.snapshot(), 'host1', min_age=0)
    assert plan.foreign_children == {
        agent: 'neutron', nic: 'neutron', blazar: 'blazar',
        device: 'cyborg', stranger: None}
    assert {pci, vgpu} <= set(plan.providers)
    said = {c: str(plan.child_blocker(c)) for c in plan.foreign_children}
    for child in (agent, nic):
        assert "is Neutron's, not Nova's" in said[child]
        assert ('openstack network agent list --host host1; openstack '
                'network agent delete <agent ID>') in said[child]
    assert "is Blazar's" in said[blazar]
    assert 'openstack reservation host delete host1' in said[blazar]
    assert "is Cyborg's" in said[device]
    assert 'host1' in said[device]
    assert 'no owner is proven' in said[stranger]
    assert 'something (%s)' % stranger in said[stranger]
    blockers = set(map(str, plan.blockers()))
    assert set(said.values()) <= blockers
    # Ticking some leaves the others blocking.
    left = set(map(str, plan.blockers((), {agent, nic, blazar})))
    assert left >= {said[device], said[stranger]}
    assert not left & {said[agent], said[nic], said[blazar]}
    assert not set(map(str, plan.blockers(
        (), set(plan.foreign_children)))) & set(said.values())
    # Named by name or uuid, any case, for the command lines.
    picked, unmatched = plan.pick_children(
        ['BLAZAR_HOST1', nic.upper(), 'nope'])
    assert (picked, unmatched) == ({blazar, nic}, {'nope'})


def test_a_child_of_another_service_is_never_taken_without_its_tick():
    """The preview offers the tick; a confirm without it is refused by the
    same plan the writes are checked with."""
    cloud = Cloud()
    cloud.host('host1', state='down', forced_down=True)
    blazar = cloud.child(H1, 'blazar_host1')
    plan = decommission.plan(cloud.snapshot(), 'host1', min_age=0)
    assert plan.actionable()
    assert [str(b) for b in plan.blockers()] == [
        str(plan.child_blocker(blazar))]
    assert plan.blockers((), {blazar}) == []
    assert plan.providers == [blazar, H1]


def test_the_writes_refuse_a_foreign_child_not_ticked():
    """Enforced where the writes are: without its tick, nothing is
    repaired or deleted; with it, the child is deleted with the tree."""
    from unittest import mock

    from orphan_dashboard.api import nova
    from orphan_dashboard.api import placement
    from orphan_dashboard.operations import decommission as flow
    from orphan_dashboard.writing import providers as provider_writes

    cloud = Cloud()
    cloud.host('host1', state='down', forced_down=True)
    cloud.services['host1'] = m.Service('host1', 'down', forced_down=True,
                                        uuid=uid('host1-svc'))
    blazar = cloud.child(H1, 'blazar_host1')
    shown = decommission.plan(cloud.snapshot(), 'host1', min_age=0)
    listed = [{'uuid': p, 'root_provider_uuid': H1} for p in shown.providers]

    def record(_client, uuid):
        return {'uuid': uuid, 'name': shown.names[uuid], 'generation': 1}

    def attempt(children):
        with mock.patch.object(flow, 'preview', return_value=shown), \
                mock.patch.object(flow.repairs, 'apply') as repairs, \
                mock.patch.object(flow, '_held', return_value={}), \
                mock.patch.object(placement, 'provider_list',
                                  return_value=listed), \
                mock.patch.object(placement, 'provider_record',
                                  side_effect=record), \
                mock.patch.object(nova, 'service_list', return_value=[
                    {'host': 'host1', 'id': uid('host1-svc')}]), \
                mock.patch.object(nova, 'delete_service') as service, \
                mock.patch.object(
                    provider_writes, 'delete_provider', return_value=(
                        write.Outcome(m.Selection('', blazar, 'x'),
                                      write.DONE, 'deleted'))) as delete:
            outcomes = flow.apply(CLIENTS, mock.Mock(), 'host1', [], (),
                                  UNPROTECTED, bound=shown.binding(),
                                  children=children)
        return outcomes, repairs, service, delete

    outcomes, repairs, service, delete = attempt(set())
    repairs.assert_not_called()
    service.assert_not_called()
    delete.assert_not_called()
    (outcome,) = outcomes
    assert outcome.status == write.SKIPPED
    assert "blazar_host1 (%s) is Blazar's" % blazar in str(outcome.message)
    assert 'openstack reservation host delete host1' in str(outcome.message)

    outcomes, repairs, service, delete = attempt({blazar})
    service.assert_called_once()
    deleted = [c.args[2].provider for c in delete.call_args_list]
    assert deleted[0] == blazar


def test_cyborgs_device_named_as_novas_pci_device_blocks_it():
    """A Cyborg GPU ``host3_0000:81:00.0`` (``OWNER_CYBORG``) under dead
    host3 is a foreign child, deleted only when ticked; Nova's tagged PCI
    device beside it goes with the tree."""
    cloud, rp = cyborg_host3()
    snapshot, _placement = read_topology(cloud)
    plan = decommission.plan(snapshot, 'host3', min_age=0)
    assert plan.foreign_children == {rp['gpu']: 'cyborg'}
    assert {rp['gpu'], rp['pci']} <= set(plan.providers)
    (blocker,) = plan.blockers()
    assert "host3_0000:81:00.0 (%s) is Cyborg's" % rp['gpu'] in str(blocker)
    assert plan.blockers((), {rp['gpu']}) == []


def test_a_child_providers_name_is_refused_not_its_hosts_tree():
    """``decommission blazar_host1`` names Blazar's child, not host1: the
    child is refused by itself, and host1's tree is not taken."""
    cloud = Cloud()
    cloud.host('host1', state='down', forced_down=True)
    blazar = cloud.child(H1, 'blazar_host1')
    for name in ('blazar_host1', blazar):
        plan = decommission.plan(cloud.snapshot(), name, min_age=0)
        assert plan.roots == [] and plan.providers == [], name
        assert plan.service is None and not plan.gone, name
        (refusal,) = plan.refusals()
        assert 'blazar_host1 (%s) is a child provider of host1 (%s)' % (
            blazar, H1) in str(refusal), name
        assert plan.blockers() == [refusal]


def test_the_command_line_refuses_a_child_providers_name():
    import argparse
    from unittest import mock

    from orphan_dashboard.operations import decommission as ops

    cloud = Cloud()
    cloud.host('host1', state='down', forced_down=True)
    cloud.child(H1, 'blazar_host1')
    plan = decommission.plan(cloud.snapshot(), 'blazar_host1', min_age=0)
    args = argparse.Namespace(
        host='blazar_host1', delete_unknown=[], whole_service=False,
        delete_foreign_child=[], apply=True, json=False, min_age=0)
    err = io.StringIO()
    with mock.patch.object(ops, 'preview', return_value=plan), \
            mock.patch.object(ops, 'apply', return_value=[]) as apply, \
            mock.patch.object(handlers, 'setup_django'), \
            mock.patch.object(handlers.journal.Journal, 'for_clients'), \
            mock.patch('sys.stderr', err):
        code = handlers.cmd_decommission(args, None, io.StringIO())
    apply.assert_not_called()
    assert code == options.ERROR
    assert 'is a child provider of host1' in err.getvalue()


@pytest.mark.parametrize('listed,status', [
    ([{'host': 'host1', 'id': uid('host1-svc')}], 'unknown'),
    ([], write.DONE),
])
def test_a_service_delete_whose_answer_was_lost_is_read_back(
        monkeypatch, listed, status):
    """A gateway's 504 to the compute service delete: Nova may still be
    deleting it.  Read back gone, it is deleted; still listed after the
    wait, its outcome and its entries (its providers' too) are unknown,
    never "kept: the delete did not go through"."""
    from unittest import mock

    from keystoneauth1 import exceptions as ks_exc

    from orphan_dashboard.api import nova
    from orphan_dashboard.operations import decommission as flow

    monkeypatch.setattr(write, 'SETTLE_WAITS', (0, 0, 0), raising=False)
    service = m.Service('host1', 'down', forced_down=True,
                        uuid=uid('host1-svc'))
    fresh = mock.Mock(service=service, roots=[H1])
    journal = mock.Mock()
    entry = journal.begin_service.return_value
    with mock.patch.object(nova, 'delete_service',
                           side_effect=ks_exc.GatewayTimeout()), \
            mock.patch.object(nova, 'service_list', return_value=listed):
        outcome, entries = flow._delete_service(
            None, journal, fresh, [{'uuid': H1, 'name': 'host1'}])
    assert outcome.status == status, str(outcome.message)
    finished = [c.args[1] for c in journal.finish.call_args_list]
    if status == write.DONE:
        assert finished == [entry.APPLIED]
        assert set(entries) == {H1}
        return
    text = str(outcome.message)
    assert 'no clear answer' in text and 'host1' in text, text
    assert 'did not delete' not in text and 'are kept' not in text, text
    assert finished == [entry.UNKNOWN, entry.UNKNOWN]
    assert entries == {}
