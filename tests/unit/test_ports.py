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

"""Port allocations: what a server holds on Neutron's NIC providers
against what its ports request there."""

import io
from unittest import mock

from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import plan
from orphan_dashboard.audit import reasons
from orphan_dashboard.cli import rendering
from orphan_dashboard.reading import collect
from orphan_dashboard.writing import equivalents
from tests.unit.cloud import Cloud
from tests.unit.cloud import NOW
from tests.unit.cloud import uid

pytestmark = pytest.mark.horizon

BW = 'NET_BW_EGR_KILOBIT_PER_SEC'
FLAVOR = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
PPS = 'NET_PACKET_RATE_KILOPACKET_PER_SEC'


def qos_cloud():
    """host1..3, each with its NIC; server ``web`` on host1 holding its
    flavor and 1000 kbps on host1's NIC, which its port requests."""
    cloud = Cloud()
    nics = {h: cloud.nic(h) for h in ('host1', 'host2', 'host3')}
    web = cloud.server('web', 'host1')
    cloud.allocate(web, uid('host1'))
    cloud.allocate(web, nics['host1'], {BW: 1000})
    cloud.port('web-port', web, nics['host1'])
    return cloud, nics, web


def unbound_cloud(name):
    """:func:`qos_cloud` with ``web``'s port replaced by port ``name``
    (500 kbps) whose binding places it nowhere, ``web`` holding nothing
    on a NIC: what a port attached before Stein leaves."""
    cloud, nics, web = qos_cloud()
    del cloud.ports[uid('web-port')]
    del cloud.consumers[web].allocations[nics['host1']]
    return cloud, nics, web, cloud.port(name, web, None, {BW: 500})


def findings(cloud, consumer, min_age=600, **kwargs):
    auditor = classify.Auditor(cloud.snapshot(), min_age=min_age, **kwargs)
    return auditor, {f.provider: f
                     for f in auditor.consumer_findings(consumer)}


def test_a_port_s_request_held_where_its_binding_says_is_ok():
    cloud, nics, web = qos_cloud()
    _, found = findings(cloud, web)
    assert {p: f.verdict for p, f in found.items()} == {
        uid('host1'): m.OK, nics['host1']: m.OK}
    assert 'port web-port of server web requests it' in str(
        found[nics['host1']].reason)
    report = classify.audit(cloud.snapshot(), min_age=600)
    assert not report.provider(uid('host1')).mismatched


def test_a_deleted_port_leaves_leaked_resources_released_alone():
    cloud, nics, web = qos_cloud()
    cloud.ports = {}
    auditor, found = findings(cloud, web)
    leak = found[nics['host1']]
    assert leak.verdict == m.LEAKED_PORT
    assert leak.actions == (m.RELEASE, m.DELETE_AND_HEAL)
    assert leak.action == m.RELEASE
    assert 'host1:Open vSwitch agent:br-phys' in str(leak.reason)
    assert 'NET_BW_EGR_KILOBIT_PER_SEC=1000' in str(leak.reason)
    assert found[uid('host1')].verdict == m.OK
    released = auditor.plan(web, nics['host1'], m.RELEASE)
    assert released.before == {
        uid('host1'): FLAVOR, nics['host1']: {BW: 1000}}
    assert released.after == {uid('host1'): FLAVOR}
    assert released.generation == 1
    report = classify.audit(cloud.snapshot(), min_age=600)
    tree = report.provider(uid('host1'))
    assert tree.usage == {**FLAVOR, BW: 1000}
    assert tree.needed == FLAVOR


def test_release_removes_only_what_no_port_requests():
    cloud, nics, web = qos_cloud()
    cloud.allocate(web, nics['host1'], {BW: 3000, PPS: 10})
    auditor, found = findings(cloud, web)
    assert found[nics['host1']].verdict == m.LEAKED_PORT
    assert found[nics['host1']].resources == {BW: 2000, PPS: 10}
    assert auditor.plan(web, nics['host1'], m.RELEASE).after == {
        uid('host1'): FLAVOR, nics['host1']: {BW: 1000}}
    tree = classify.audit(cloud.snapshot(), min_age=600).provider(uid('host1'))
    assert tree.needed == {**FLAVOR, BW: 1000}


def test_a_port_allocation_removed_from_placement_is_healed():
    cloud, nics, web = qos_cloud()
    del cloud.consumers[web].allocations[nics['host1']]
    auditor, found = findings(cloud, web)
    missing = found[nics['host1']]
    assert missing.verdict == m.MISSING
    assert missing.resources == {BW: 1000}
    assert missing.actions[0] == m.HEAL
    assert 'web-port' in str(missing.reason)
    healed = auditor.plan(web, nics['host1'], m.HEAL)
    assert healed.after == {uid('host1'): FLAVOR, nics['host1']: {BW: 1000}}
    report = classify.audit(cloud.snapshot(), min_age=600)
    assert report.provider(uid('host1')).needed == {**FLAVOR, BW: 1000}


def test_a_changed_qos_rule_is_a_wrong_amount_healed_to_the_rule():
    cloud, nics, web = qos_cloud()
    cloud.port('web-port', web, nics['host1'], {BW: 2000})
    auditor, found = findings(cloud, web)
    wrong = found[nics['host1']]
    assert wrong.verdict == m.WRONG_AMOUNT
    assert 'requests NET_BW_EGR_KILOBIT_PER_SEC=2000' in str(wrong.reason)
    assert wrong.actions == (m.DELETE_AND_HEAL,)
    assert auditor.plan(web, nics['host1'], m.DELETE_AND_HEAL).after == {
        uid('host1'): FLAVOR, nics['host1']: {BW: 2000}}


def test_a_moved_server_s_ports_are_rebuilt_on_its_new_nic():
    """Cold-migrated to host2, its port bound there, but the NIC allocation
    left on host1's and none on host2's: trim no longer refuses."""
    cloud, nics, web = qos_cloud()
    cloud.servers[web] = m.Server(**{**cloud.servers[web].__dict__,
                                     'host': 'host2', 'node': 'host2'})
    cloud.allocate(web, uid('host2'))
    cloud.port('web-port', web, nics['host2'])
    auditor, found = findings(cloud, web)
    assert found[nics['host1']].verdict == m.MOVED
    assert found[nics['host2']].verdict == m.MISSING
    assert found[nics['host1']].action == m.TRIM
    assert auditor.plan(web, nics['host1'], m.TRIM).after == {
        uid('host2'): FLAVOR, nics['host2']: {BW: 1000}}
    assert auditor.plan(web, uid('host1'), m.DELETE_AND_HEAL).after == {
        uid('host2'): FLAVOR, nics['host2']: {BW: 1000}}


def test_a_moved_server_left_holding_both_nics_is_trimmed():
    cloud, nics, web = qos_cloud()
    cloud.servers[web] = m.Server(**{**cloud.servers[web].__dict__,
                                     'host': 'host2', 'node': 'host2'})
    cloud.allocate(web, uid('host2'))
    cloud.allocate(web, nics['host2'], {BW: 1000})
    del cloud.consumers[web].allocations[uid('host1')]
    cloud.port('web-port', web, nics['host2'])
    auditor, found = findings(cloud, web)
    assert found[nics['host1']].verdict == m.MOVED
    assert found[nics['host2']].verdict == m.OK
    assert auditor.plan(web, nics['host1'], m.TRIM).after == {
        uid('host2'): FLAVOR, nics['host2']: {BW: 1000}}


def test_a_port_placed_nowhere_with_no_candidate_is_refused_naming_why():
    cloud, nics, web = qos_cloud()
    cloud.port('new-port', web, None, {BW: 500})
    _, found = findings(cloud, web)
    missing = found[uid('host1')]
    assert missing.verdict == m.MISSING
    assert missing.actions == ()
    assert 'Placement offers no allocation candidate there' in str(
        missing.reason)
    assert 'new-port' in str(missing.blocked)
    assert 'no allocation candidate' in str(missing.blocked)


def test_a_port_whose_candidates_placement_did_not_give_is_left_for_later():
    cloud, nics, web = qos_cloud()
    cloud.port('new-port', web, None, {BW: 500})
    cloud.candidates[web] = None
    _, found = findings(cloud, web)
    missing = found[uid('host1')]
    assert missing.verdict == m.MISSING and missing.actions == ()
    assert 'Placement did not answer for its allocation candidates' in str(
        missing.blocked)


def test_the_sweep_goes_on_when_placement_gives_no_candidates():
    """A 400 (a trait Placement does not know) is no candidate; any other
    error is no answer, and the rest of the sweep is read as usual."""
    cloud, nics, web = qos_cloud()
    port = cloud.port('new-port', web, None, {BW: 500})
    snapshot = cloud.snapshot()
    for error, said in ((ks_exc.BadRequest(), ()),
                        (ks_exc.ServiceUnavailable(), None)):
        with mock.patch.object(collect.placement, 'port_candidates',
                               side_effect=error):
            assert collect.read_port_candidates('placement', snapshot) == {
                web: said}
    group, = cloud.ports[port].requests
    with mock.patch.object(collect.placement, 'port_candidates',
                           return_value=[{group: nics['host1']}]) as asked:
        assert collect.read_port_candidates('placement', snapshot) == {
            web: ({group: nics['host1']},)}
    asked.assert_called_once_with('placement', {group: (
        {BW: 500}, ('CUSTOM_PHYSNET_PHYSNET0',))}, uid('host1'))


def test_a_port_placed_nowhere_with_several_candidates_names_them():
    cloud, nics, web = qos_cloud()
    port = cloud.port('new-port', web, None, {BW: 500})
    second = cloud.child(cloud.providers[nics['host1']].parent_uuid,
                         'host1:Open vSwitch agent:br-ex')
    cloud.offer(web, port, nics['host1'], second)
    _, found = findings(cloud, web)
    missing = found[uid('host1')]
    assert missing.verdict == m.MISSING and missing.actions == ()
    assert ('several allocation candidates there (host1:Open vSwitch '
            'agent:br-phys, host1:Open vSwitch agent:br-ex)') in str(
        missing.blocked)


def test_a_port_placed_nowhere_is_healed_on_its_one_candidate_neutron_first():
    """A port made before Stein, the server holding nothing for it:
    ``heal_allocations``' rule, exactly one candidate in the node's tree;
    the port's binding is written to name it, then Placement."""
    cloud, nics, web, port = unbound_cloud('new-port')
    cloud.offer(web, port, nics['host1'])
    auditor, found = findings(cloud, web)
    nic = found[nics['host1']]
    assert nic.verdict == m.MISSING
    assert "Placement's one allocation candidate there is host1:Open " \
        'vSwitch agent:br-phys' in str(nic.reason)
    assert 'new-port' in str(nic.reason)
    assert nic.action == m.HEAL
    planned = auditor.plan(web, nics['host1'], m.HEAL)
    assert planned.after == {uid('host1'): FLAVOR,
                             nics['host1']: {BW: 500}}
    group, = cloud.ports[port].requests
    assert planned.ports == {port: {
        'name': 'new-port', 'revision': 3, 'before': {},
        'after': {'allocation': {group: nics['host1']}}}}
    commands_ = equivalents.for_plan(planned)
    assert commands_[0].startswith(
        "openstack port set --binding-profile '{\"allocation\": ")
    assert commands_[0].endswith(port)
    assert 'resource provider allocation set' in commands_[1]


def test_a_moved_server_whose_binding_stayed_behind_is_trimmed_and_rebound():
    """The binding still names the old host's NIC (Neutron's update after
    the move failed): the trim places the port on the one candidate of
    the new host's tree and rewrites its binding."""
    cloud, nics, web = qos_cloud()
    cloud.servers[web] = m.Server(**{**cloud.servers[web].__dict__,
                                     'host': 'host2', 'node': 'host2'})
    cloud.allocate(web, uid('host2'))
    del cloud.consumers[web].allocations[uid('host1')]
    port = uid('web-port')
    cloud.offer(web, port, nics['host2'])
    auditor, found = findings(cloud, web)
    assert found[nics['host1']].verdict == m.MOVED
    assert found[nics['host2']].verdict == m.MISSING
    planned = auditor.plan(web, nics['host1'], m.TRIM)
    assert planned.after == {uid('host2'): FLAVOR,
                             nics['host2']: {BW: 1000}}
    group, = cloud.ports[port].requests
    assert planned.ports[port]['before'] == {
        'allocation': {group: nics['host1']}}
    assert planned.ports[port]['after'] == {
        'allocation': {group: nics['host2']}}


def unnamed_cloud():
    """:func:`qos_cloud` with ``web-port``'s binding stripped of its
    ``allocation`` while Placement kept the 1000 kbps on host1's NIC."""
    cloud, nics, web = qos_cloud()
    port = uid('web-port')
    cloud.ports[port] = m.Port(**{**cloud.ports[port].__dict__,
                                  'allocation': {}, 'profile': {}})
    return cloud, nics, web, port


def test_a_binding_that_lost_its_allocation_where_placement_kept_it_is_ok():
    """Not a leak beside a port placed nowhere: the NIC holds, for the
    server, what the port requests and no binding claims, whatever
    Placement's candidates say of a second share there."""
    cloud, nics, web, port = unnamed_cloud()
    second = cloud.child(cloud.providers[nics['host1']].parent_uuid,
                         'host1:Open vSwitch agent:br-ex')
    for offered in ((), (nics['host1'], second)):
        cloud.offer(web, port, *offered)
        _, found = findings(cloud, web)
        assert {p: f.verdict for p, f in found.items()} == {
            uid('host1'): m.OK, nics['host1']: m.OK}
        reason = str(found[nics['host1']].reason)
        assert 'web-port' in reason
        assert 'its binding in Neutron names no provider of host1, but ' \
            'this one holds it for the server' in reason
    with mock.patch.object(collect.placement, 'port_candidates') as asked:
        assert collect.read_port_candidates('placement',
                                            cloud.snapshot()) == {}
    asked.assert_not_called()


def test_a_repair_of_that_server_writes_the_binding_it_lacks():
    cloud, nics, web, port = unnamed_cloud()
    cloud.allocate(web, uid('host1'), {'VCPU': 2, 'MEMORY_MB': 512,
                                       'DISK_GB': 1})
    auditor, found = findings(cloud, web)
    assert found[uid('host1')].verdict == m.WRONG_AMOUNT
    planned = auditor.plan(web, uid('host1'), m.DELETE_AND_HEAL)
    assert planned.after == {uid('host1'): FLAVOR,
                             nics['host1']: {BW: 1000}}
    group, = cloud.ports[port].requests
    assert planned.ports[port]['before'] == {}
    assert planned.ports[port]['after'] == {
        'allocation': {group: nics['host1']}}


def test_what_two_nics_could_hold_is_not_taken_for_a_port_s():
    """Held spare on two NICs of the tree: which one the port's is cannot
    be told, so Placement's candidates decide as before (none here)."""
    cloud, nics, web, port = unnamed_cloud()
    second = cloud.child(cloud.providers[nics['host1']].parent_uuid,
                         'host1:Open vSwitch agent:br-ex')
    cloud.allocate(web, second, {BW: 1000})
    _, found = findings(cloud, web)
    assert found[uid('host1')].verdict == m.MISSING
    assert 'no allocation candidate' in str(found[uid('host1')].blocked)


def test_a_second_port_placed_nowhere_makes_its_nic_short_and_rebuilt():
    cloud, nics, web = qos_cloud()
    port = cloud.port('new-port', web, None, {BW: 500})
    cloud.offer(web, port, nics['host1'])
    auditor, found = findings(cloud, web)
    nic = found[nics['host1']]
    assert nic.verdict == m.WRONG_AMOUNT
    assert 'a binding among them places its request on no provider of ' \
        'host1' in str(nic.reason)
    planned = auditor.plan(web, nics['host1'], m.DELETE_AND_HEAL)
    assert planned.after[nics['host1']] == {BW: 1500}
    assert list(planned.ports) == [port]


def test_an_older_neutron_s_single_request_is_rebound_as_one_uuid():
    cloud, nics, web, port = unbound_cloud('old-port')
    cloud.ports[port] = m.Port(port, 'old-port', web, '',
                               {port: {BW: 500}}, {}, {port: ()},
                               {'vnic_type': 'normal'}, None, grouped=False)
    cloud.candidates[web] = ({port: nics['host1']},)
    auditor, _ = findings(cloud, web)
    planned = auditor.plan(web, nics['host1'], m.HEAL)
    assert planned.ports[port]['after'] == {'vnic_type': 'normal',
                                            'allocation': nics['host1']}
    assert planned.ports[port]['revision'] is None


def test_neutron_unread_protects_port_allocations_not_the_rest():
    cloud, nics, web = qos_cloud()
    cloud.ports, cloud.neutron = None, m.NEUTRON_DOWN
    gone = cloud.deleted('gone', uid('host2'))
    _, found = findings(cloud, web)
    assert found[nics['host1']].verdict == m.PROTECTED
    assert 'Neutron did not answer' in str(found[nics['host1']].reason)
    assert found[uid('host1')].verdict == m.OK
    _, found = findings(cloud, gone)
    assert found[uid('host2')].verdict == m.DELETED_INSTANCE
    for fault, words in ((m.NEUTRON_ABSENT, 'not in the catalog'),
                         (m.NEUTRON_FORBIDDEN, 'refused to list ports')):
        cloud.neutron = fault
        _, found = findings(cloud, web)
        assert words in str(found[nics['host1']].reason)


def test_a_young_consumer_s_leak_is_protected():
    cloud, nics, web = qos_cloud()
    cloud.ports = {}
    cloud.consumers[web].modified = NOW
    _, found = findings(cloud, web)
    assert found[nics['host1']].verdict == m.PROTECTED
    assert found[nics['host1']].actions == ()


def test_what_no_flavor_or_port_rebuilds_still_refuses_a_trim():
    """A PCI device of Nova's on the old host: kept, refused by name."""
    cloud, nics, web = qos_cloud()
    pci = cloud.child(uid('host1'), 'host1_0000:81:00.0')
    cloud.allocate(web, pci, {'CUSTOM_PCI_8086_1563': 1})
    cloud.servers[web] = m.Server(**{**cloud.servers[web].__dict__,
                                     'host': 'host2', 'node': 'host2'})
    cloud.allocate(web, uid('host2'))
    cloud.port('web-port', web, nics['host2'])
    auditor, found = findings(cloud, web)
    assert found[pci].verdict == m.MOVED
    assert found[pci].actions == ()
    assert 'host1_0000:81:00.0' in str(found[pci].blocked)
    try:
        auditor.plan(web, pci, m.TRIM)
    except plan.CannotRepair as exc:
        assert 'CUSTOM_PCI_8086_1563' in str(exc.reason)
    else:
        raise AssertionError('a trim dropping a PCI device was planned')


def test_a_port_parsed_from_request_groups_or_the_older_single_request():
    grouped = parse.port({
        'id': 'p1', 'name': 'web-port', 'device_id': 'vm',
        'binding:host_id': 'host1',
        'binding:profile': {'allocation': {'g1': 'nic1'}},
        'resource_request': {'request_groups': [
            {'id': 'g1', 'required': ['CUSTOM_PHYSNET_PHYSNET0'],
             'resources': {BW: 1000}},
            {'id': 'g2', 'resources': {PPS: 10}}],
            'same_subtree': ['g1', 'g2']}})
    assert grouped == m.Port('p1', 'web-port', 'vm', 'host1',
                             {'g1': {BW: 1000}, 'g2': {PPS: 10}},
                             {'g1': 'nic1'},
                             {'g1': ('CUSTOM_PHYSNET_PHYSNET0',), 'g2': ()},
                             {'allocation': {'g1': 'nic1'}}, None, True)
    single = parse.port({
        'id': 'p2', 'device_id': 'vm', 'binding:profile': {
            'allocation': 'nic2'},
        'resource_request': {'required': [], 'resources': {BW: 500}}})
    assert (single.requests, single.allocation) == ({'p2': {BW: 500}},
                                                    {'p2': 'nic2'})
    assert not single.grouped
    assert single.allocation_value({'p2': 'nic3'}) == 'nic3'
    unbound = parse.port({'id': 'p3', 'binding:profile': {},
                          'resource_request': {'resources': {BW: 1}}})
    assert unbound.allocation == {}


class _Network:
    def __init__(self, error=None, pages=()):
        self.error, self.pages, self.asked = error, list(pages), []

    def get(self, path, params=None):
        self.asked.append((path, params))
        if self.error is not None:
            raise self.error
        body = self.pages.pop(0)
        return mock.Mock(json=mock.Mock(return_value=body))


def test_neutron_s_faults_are_states_never_errors():
    for error, state in (
            (ks_exc.EndpointNotFound(), m.NEUTRON_ABSENT),
            (ks_exc.Forbidden(), m.NEUTRON_FORBIDDEN),
            (ks_exc.ConnectFailure(), m.NEUTRON_DOWN),
            (ks_exc.InternalServerError(), m.NEUTRON_DOWN)):
        assert collect.read_ports(_Network(error)) == dict(
            ports=None, neutron=state), error
    assert collect.read_ports(None) == dict(ports=None,
                                            neutron=m.NEUTRON_ABSENT)


def test_without_a_minimum_rule_no_port_is_listed():
    network = _Network(pages=[{'policies': [
        {'id': 'limit', 'rules': [{'type': 'bandwidth_limit'}]}]}])
    assert collect.read_ports(network) == dict(ports={},
                                               neutron=m.NEUTRON_READ)
    assert [path for path, _ in network.asked] == ['/v2.0/qos/policies']


def test_ports_are_listed_with_their_few_fields_and_kept_with_a_request():
    network = _Network(pages=[
        {'policies': [{'id': 'q', 'rules': [{'type': 'minimum_bandwidth'}]}]},
        {'ports': [
            {'id': 'p1', 'device_id': 'vm', 'binding:profile': {},
             'binding:host_id': 'host1',
             'resource_request': {'resources': {BW: 1}}},
            {'id': 'p2', 'device_id': 'vm', 'resource_request': None,
             'binding:profile': {}, 'binding:host_id': ''}]}])
    read = collect.read_ports(network)
    assert list(read['ports']) == ['p1']
    path, params = network.asked[1]
    assert path == '/v2.0/ports'
    assert set(params['fields']) == {
        'id', 'name', 'device_id', 'binding:host_id', 'binding:profile',
        'resource_request', 'revision_number'}


def test_the_report_says_when_neutron_was_not_read():
    cloud, nics, web = qos_cloud()
    assert reasons.neutron_unread(
        classify.audit(cloud.snapshot(), min_age=600)) is None
    cloud.ports, cloud.neutron = None, m.NEUTRON_FORBIDDEN
    report = classify.audit(cloud.snapshot(), min_age=600)
    assert report.neutron == m.NEUTRON_FORBIDDEN
    out = io.StringIO()
    rendering.print_text(report, out)
    assert out.getvalue().startswith(
        'NOTE: Neutron refused to list ports: the allocations on NIC '
        'providers are protected')
    assert rendering.report_json(report)['neutron'] == m.NEUTRON_FORBIDDEN


def test_while_neutron_is_unread_a_trim_keeping_the_nic_goes_ahead():
    """The old host trimmed, the current NIC's protected bandwidth left as
    it is: the Nova part of the repair is not held up."""
    cloud, nics, web = qos_cloud()
    cloud.servers[web] = m.Server(**{**cloud.servers[web].__dict__,
                                     'host': 'host2', 'node': 'host2'})
    cloud.allocate(web, uid('host2'))
    cloud.allocate(web, nics['host2'], {BW: 1000})
    del cloud.consumers[web].allocations[nics['host1']]
    cloud.ports, cloud.neutron = None, m.NEUTRON_ABSENT
    auditor, found = findings(cloud, web)
    assert found[nics['host2']].verdict == m.PROTECTED
    assert found[uid('host1')].action == m.TRIM
    assert auditor.plan(web, uid('host1'), m.TRIM).after == {
        uid('host2'): FLAVOR, nics['host2']: {BW: 1000}}


def test_neutron_unread_is_said_only_where_it_protected_something():
    cloud = Cloud()
    web = cloud.server('web', 'host1')
    cloud.allocate(web, uid('host1'))
    cloud.neutron = m.NEUTRON_ABSENT
    report = classify.audit(cloud.snapshot(), min_age=600)
    assert (report.neutron, report.ports_unjudged) == (m.NEUTRON_ABSENT, 0)
    assert reasons.neutron_unread(report) is None
    cloud, nics, web = qos_cloud()
    cloud.ports, cloud.neutron = None, m.NEUTRON_ABSENT
    report = classify.audit(cloud.snapshot(), min_age=600)
    assert report.ports_unjudged == 1
    assert 'Neutron is not in the catalog' in str(
        reasons.neutron_unread(report))
