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

"""One answer each, in the engine, to questions the shell used to answer
again: the order a tree is deleted in, whether a host is dead, whether a
decommission may be confirmed."""

import dataclasses

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import decommission
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import topology
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid

H1 = uid('host1')


# -- topology ----------------------------------------------------------------

def test_children_first_is_one_order_for_every_caller():
    cloud = Cloud()
    nic = cloud.child(H1, 'host1:nic')
    port = cloud.child(nic, 'host1:nic:port')
    snapshot = cloud.snapshot()
    order = [port, nic, H1]
    assert topology.children_first(snapshot.providers.values(),
                                   [H1]) == order
    assert classify.Topology(snapshot).children_first([H1]) == order
    assert decommission.plan(snapshot, 'host1', min_age=0).providers == \
        order


def test_a_decommission_orders_a_deep_chain_without_recursing():
    # Python's recursion limit is 1,000 frames: a chain deeper than that
    # must still be ordered (the CLI's decommission printed a traceback).
    cloud = Cloud()
    chain = [H1]
    for level in range(5000):
        chain.append(cloud.child(chain[-1], 'host1:deep:%d' % level))
    plan = decommission.plan(cloud.snapshot(), 'host1', min_age=0)
    assert plan.providers == chain[::-1]


# -- is the host dead --------------------------------------------------------

def _report(cloud, root):
    return next(p for p in classify.audit(cloud.snapshot(), min_age=0)
                .providers if p.provider.uuid == root)


def test_a_dead_host_is_read_from_the_fields_not_the_words():
    cloud = Cloud(hosts=())
    up, down, forced = (cloud.host('up'), cloud.host('down', 'down'),
                        cloud.host('forced', forced_down=True))
    disabled = cloud.host('disabled', 'down')
    cloud.services['disabled'] = dataclasses.replace(
        cloud.services['disabled'], status='disabled')
    gone = cloud.gone('gone')
    cloud.tag(gone)
    assert [_report(cloud, rp).dead for rp in (
        up, down, forced, disabled, gone)] == [False, True, True, True, True]
    assert _report(cloud, disabled).service_state == 'down (disabled)'
    assert m.Service('h', 'down').down and not m.Service('h', 'up').down
    assert m.Service('h', 'up', forced_down=True).down


def test_a_dead_service_is_never_up_to_a_decommission():
    cloud = Cloud()
    cloud.host('host1', forced_down=True)
    assert not decommission.plan(cloud.snapshot(), 'host1', min_age=0).up
    assert decommission.plan(cloud.snapshot(), 'host2', min_age=0).up


def test_actionable_is_nothing_blocking_but_the_ticked_unknowns():
    cloud = Cloud()
    cloud.host('host1', 'down', forced_down=True)
    stranger = uid('stranger')
    cloud.allocate(stranger, H1)
    plan = decommission.plan(cloud.snapshot(), 'host1', min_age=0)
    assert plan.optional == [stranger]
    assert plan.blockers() and plan.actionable()
    assert not decommission.plan(cloud.snapshot(), 'host2',
                                 min_age=0).actionable()
    assert not decommission.plan(cloud.snapshot(), 'host9',
                                 min_age=0).actionable()
