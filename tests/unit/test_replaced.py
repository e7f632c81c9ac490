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

"""A hypervisor reinstalled under its old name (Nova bug 1817833): the old
provider keeps the name, Nova's new compute node gets no provider."""

import io

import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import decommission
from orphan_dashboard.audit import model as m
from orphan_dashboard.cli import rendering
from tests.unit.cloud import uid
from tests.unit.staged import FQDN
from tests.unit.staged import reinstalled


def _judged(cloud):
    report = classify.audit(cloud.snapshot(), min_age=0)
    return {(f.consumer, f.provider): f for f in report.findings}, report


def test_a_provider_nova_made_a_new_node_in_place_of_is_replaced():
    """Nova answers 404 for the old node and lists a node of its name
    under another uuid, with no provider: the old provider is a dead
    node's, its leftover deleted, itself deletable once empty, and the
    finding says nova-compute then creates the new one."""
    cloud, old, new, ghost = reinstalled()
    found, report = _judged(cloud)
    tree = report.provider(old)
    assert (tree.service_state, tree.replaced_by.uuid, tree.unmapped,
            tree.node_gone, tree.dead, tree.needs_attention) == (
        'replaced', new, False, True, True, True)
    assert tree.not_orphaned() is None
    note = tree.replacement
    assert note.code == 'provider.replaced'
    assert new in str(note) and FQDN in str(note) and \
        'next periodic update' in str(note)
    finding = found[(ghost, old)]
    assert (finding.verdict, finding.action) == (m.DELETED_INSTANCE,
                                                 m.DELETE)


def test_before_discover_hosts_it_is_a_host_to_map_not_a_replacement():
    """Between the restart and ``discover_hosts`` Nova lists the service
    but not its new node: the old provider may still be that host's,
    protected, the advice the mapping."""
    cloud, old, new, ghost = reinstalled()
    del cloud.hypervisors[new]
    found, report = _judged(cloud)
    tree = report.provider(old)
    assert (tree.replaced_by, tree.unmapped, tree.orphaned_provider) == (
        None, True, False)
    assert found[(ghost, old)].reason.code == 'protected.unmapped_node'


def test_a_service_of_another_host_without_a_node_does_not_hide_it():
    """Another compute service Nova lists no node for (a host not mapped
    yet) makes every gone root unmapped, but not one whose name Nova's
    new node carries."""
    cloud, old, _new, ghost = reinstalled()
    cloud.services['fresh'] = m.Service('fresh', 'up')
    found, report = _judged(cloud)
    assert (report.provider(old).service_state,
            report.provider(old).unmapped) == ('replaced', False)
    assert found[(ghost, old)].action == m.DELETE


def test_only_a_new_node_without_a_provider_and_a_404_replace_it():
    """A new node that has a provider of its own, a node of another name,
    or an old node Nova did not answer for alone: no replacement."""
    cloud, old, new, _ghost = reinstalled()
    cloud.providers[new] = m.Provider(new, 'host6-new', 1, new)
    _found, report = _judged(cloud)
    assert report.provider(old).replaced_by is None
    assert report.provider(old).service_state == 'no compute node'

    cloud, old, new, _ghost = reinstalled()
    cloud.hypervisors[new] = m.Hypervisor(new, 'host7.example.com',
                                          host='host6', state='up')
    _found, report = _judged(cloud)
    assert report.provider(old).replaced_by is None

    cloud, old, new, ghost = reinstalled()
    cloud.unanswered.add(old)
    found, report = _judged(cloud)
    assert report.provider(old).replaced_by is None
    assert found[(ghost, old)].reason.code == 'protected.unproven_node'


@pytest.mark.horizon
def test_its_decommission_takes_the_old_tree_alone_and_keeps_the_service():
    """Named by the host or by the old provider: the old tree only, the
    live service and its new node kept (nothing blocks it once the
    leftover is cleared); the whole service only when asked for."""
    cloud, old, new, ghost = reinstalled()
    snapshot = cloud.snapshot()
    for name in ('host6', FQDN, old):
        plan = decommission.plan(snapshot, name, min_age=0)
        assert (plan.host, plan.roots, plan.providers) == (
            'host6', [old], [old]), name
        assert plan.keeps_service and not plan.deletes_service, name
        assert plan.service.host == 'host6' and plan.up, name
        assert [(s.consumer, s.plan.action) for s in plan.steps] == [
            (ghost, m.DELETE)], name
        assert plan.blockers() == [] and plan.actionable(), name
        assert [n.code for n in plan.replacements()] == [
            'provider.replaced'], name
    out = io.StringIO()
    rendering.print_decommission(plan, set(), out)
    text = out.getvalue()
    assert 'next periodic update' in text and 'also serves' not in text
    assert 'openstack --os-compute-api-version 2.53 compute service delete' \
        not in text
    whole = decommission.plan(snapshot, 'host6', min_age=0,
                              whole_service=True)
    assert whole.deletes_service and whole.replaced == {}
    assert set(whole.roots) == {old, new}
    assert any('compute service host6 is up' in str(b)
               for b in whole.blockers())


def test_a_provider_another_service_tags_is_never_deleted_for_it():
    """Placement's names are unique, so whatever holds the name blocks
    Nova's new provider; a provider another service's trait claims is
    still never ours to delete: it is refused, and said whose."""
    cloud, old, _new, _ghost = reinstalled(tagged=False)
    cloud.tag(old, 'OWNER_CYBORG')
    plan = decommission.plan(cloud.snapshot(), 'host6', min_age=0)
    assert [b.code for b in plan.refusals()] == ['blocker.not_nova']
    assert not plan.actionable()
    _found, report = _judged(cloud)
    assert report.provider(old).not_orphaned().code == 'blocker.not_nova'


@pytest.mark.horizon
def test_the_report_says_what_to_do():
    cloud, old, new, _ghost = reinstalled()
    _found, report = _judged(cloud)
    out = io.StringIO()
    rendering.print_text(report, out)
    lines = out.getvalue().splitlines()
    head = lines.index('%s %s (replaced) orphaned provider' % (FQDN, old))
    assert new in lines[head + 1] and 'NOTE' in lines[head + 1]
    assert rendering.report_json(report)['providers'][
        [p.provider.uuid for p in report.providers].index(old)][
        'replaced_by'] == new


def test_servers_on_the_new_node_wait_for_its_provider():
    """A server Nova places on the new node while it has no provider:
    its allocation on the old provider is not moved anywhere yet."""
    cloud, old, new, _ghost = reinstalled()
    vm = cloud.server('vm', FQDN)
    cloud.allocate(vm, old)
    found, _report = _judged(cloud)
    assert found[(vm, old)].verdict == m.PROTECTED
    assert found[(vm, old)].reason.code == 'protected.no_provider'
    assert uid('vm') == vm
