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

"""What a refresh keeps, re-reads and merges (:mod:`audit.refresh`),
decided apart from the reads."""

import copy
import dataclasses

from orphan_dashboard.audit import refresh
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid

H1, H2 = uid('host1'), uid('host2')
SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


# -- refresh -----------------------------------------------------------------

def test_suspects_are_problems_and_migrations_whatever_their_age():
    cloud = Cloud()
    fine = cloud.server('fine', 'host1')
    cloud.allocate(fine, H1)
    stray = uid('stray')
    cloud.allocate(stray, H2)
    owner = cloud.server('owner', 'host2')
    cloud.allocate(owner, H2)
    moving = cloud.migration('moving', owner, 'running')
    cloud.allocate(moving, H1)
    snapshot = cloud.snapshot()
    assert refresh.suspects(snapshot, [fine, stray, moving]) == {
        stray, moving}


def test_carried_over_keeps_only_the_providers_still_listed():
    cloud = Cloud()
    kept, gone = uid('kept'), uid('gone')
    cloud.allocate(kept, H1)
    cloud.allocate(kept, uid('vanished'))
    cloud.allocate(gone, uid('vanished'))
    old = cloud.snapshot()
    consumers = refresh.carried_over(old, {H1: None, H2: None})
    assert consumers[kept].allocations == {H1: SMALL}
    assert gone not in consumers


def test_moved_are_the_providers_whose_generation_moved_and_new_ones():
    cloud = Cloud()
    cloud.allocate(uid('vm'), H1)
    cloud.allocate(uid('vm'), H2)
    old = cloud.snapshot()
    new = uid('new')
    bumped = old.providers[H2].generation + 1
    now = {H1: old.providers[H1],
           H2: dataclasses.replace(old.providers[H2], generation=bumped),
           new: dataclasses.replace(old.providers[H1], uuid=new)}
    assert sorted(refresh.moved(old, now)) == sorted([H2, new])


def test_held_are_the_providers_a_changed_consumer_held_before():
    """A DELETE, or a PUT that leaves a provider, bumps no generation of
    the providers it empties: those a changed consumer held are read
    again."""
    cloud = Cloud()
    vm, other = uid('vm'), uid('other')
    cloud.allocate(vm, H1)
    cloud.allocate(other, H2)
    old = cloud.snapshot()
    assert refresh.held(old, [vm, uid('created since')]) == {H1}


def test_merged_keeps_an_owner_only_while_the_generation_holds():
    cloud = Cloud()
    same, written, gone = uid('same'), uid('written'), uid('gone')
    cloud.allocate(same, H1, generation=3, owner=('p1', 'u1'))
    cloud.allocate(written, H1, generation=3, owner=('p2', 'u2'))
    cloud.allocate(written, H2, generation=3, owner=('p2', 'u2'))
    cloud.allocate(gone, H1)
    cloud.allocate(uid('elsewhere'), H2, owner=('p3', 'u3'))
    old = cloud.snapshot()
    as_read = copy.deepcopy(old.consumers)
    providers = {H1: None, H2: None}
    consumers = refresh.carried_over(old, providers)
    merged = refresh.merged(old, consumers, {H1: {
        same: {'resources': SMALL, 'consumer_generation': 3},
        written: {'resources': SMALL, 'consumer_generation': 4}}})
    assert (merged[same].project_id, merged[same].generation) == ('p1', 3)
    assert merged[written].project_id is None
    assert merged[written].allocations == {H1: SMALL, H2: SMALL}
    assert gone not in merged
    assert merged[uid('elsewhere')] is old.consumers[uid('elsewhere')]
    assert old.consumers == as_read


# -- which consumers a refresh judges again ----------------------------------

def _two_of(cloud, change):
    """``cloud``'s snapshot before and after ``change(cloud)``, apart as
    two sweeps' are: nothing the change writes in place shows in both."""
    old = copy.deepcopy(cloud.snapshot())
    change(cloud)
    return old, cloud.snapshot()


def _cloud_with_a_migration():
    cloud = Cloud()
    vm = cloud.server('vm', 'host1')
    cloud.allocate(vm, H1)
    other = cloud.server('other', 'host2')
    cloud.allocate(other, H2)
    resize = cloud.migration('resize', vm, 'confirmed', kind='resize')
    cloud.allocate(resize, H2)
    return cloud, vm, other, resize


def test_nothing_changed_nothing_is_judged_again():
    cloud, *_ = _cloud_with_a_migration()
    assert refresh.reconsidered(cloud.snapshot(), cloud.snapshot()) == set()


def test_a_consumer_whose_allocations_changed_is_judged_again():
    cloud, vm, other, resize = _cloud_with_a_migration()
    old, new = _two_of(cloud, lambda c: c.allocate(
        other, H2, {'VCPU': 2, 'MEMORY_MB': 512, 'DISK_GB': 1}))
    assert refresh.reconsidered(old, new) == {other}


def test_a_changed_server_takes_its_migrations_along():
    """A migration's verdict names its server, and a server's verdict
    reads its migrations: a change to either judges both again."""
    cloud, vm, other, resize = _cloud_with_a_migration()
    old, new = _two_of(cloud, lambda c: c.servers.update({
        vm: dataclasses.replace(c.servers[vm], name='renamed')}))
    assert refresh.reconsidered(old, new) == {vm, resize}
    old, new = _two_of(cloud, lambda c: c.migrations.update({
        resize: dataclasses.replace(c.migrations[resize], status='error')}))
    assert refresh.reconsidered(old, new) == {vm, resize}


def test_a_server_nova_no_longer_lists_is_judged_again():
    cloud, vm, other, resize = _cloud_with_a_migration()
    old, new = _two_of(cloud, lambda c: c.servers.pop(other))
    assert refresh.reconsidered(old, new) == {other}


def test_what_nova_says_of_a_deleted_instance_judges_it_again():
    cloud, vm, other, resize = _cloud_with_a_migration()
    gone = uid('gone')
    cloud.allocate(gone, H1)
    old, new = _two_of(cloud, lambda c: c.known.add(gone))
    assert refresh.reconsidered(old, new) == {gone}


def test_a_changed_port_judges_its_server_again():
    cloud, vm, other, resize = _cloud_with_a_migration()
    nic = cloud.nic('host2')
    port = cloud.port('qos', other, nic)
    cloud.allocate(other, nic, {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
    old, new = _two_of(cloud, lambda c: c.ports.update({
        port: dataclasses.replace(c.ports[port], revision=4)}))
    assert refresh.reconsidered(old, new) == {other}


def test_a_change_to_what_all_are_judged_against_judges_all_again():
    """The trees, Nova's nodes and services, the owners, and the classes
    held on a child (which say whose it is)."""
    changes = [
        lambda c: c.services.update(
            host2=dataclasses.replace(c.services['host2'], state='down')),
        lambda c: c.providers.update({H2: dataclasses.replace(
            c.providers[H2], name='host2-renamed')}),
        lambda c: c.tag(H1, 'OWNER_CYBORG'),
        lambda c: c.hypervisors.pop(H2),
        # Cyborg's class on a child named as Nova names a PCI device: the
        # device is not Nova's, nor the deleted server's reason there.
        lambda c: c.allocate(uid('stranger'), c.device_uuid,
                             {'FPGA': 1}),
    ]
    for change in changes:
        cloud, *_ = _cloud_with_a_migration()
        cloud.device_uuid = cloud.device('host1')
        cloud.allocate(uid('deleted'), cloud.device_uuid,
                       {'CUSTOM_PCI_8086_154D': 1})
        cloud.known.add(uid('deleted'))
        old, new = _two_of(cloud, change)
        assert refresh.reconsidered(old, new) == set(new.consumers)


def test_a_provider_generation_alone_judges_nobody_again():
    cloud, *_ = _cloud_with_a_migration()
    old, new = _two_of(cloud, lambda c: c.providers.update({
        H1: dataclasses.replace(c.providers[H1], generation=9)}))
    assert refresh.reconsidered(old, new) == set()


def test_a_refresh_judges_again_when_nova_no_longer_proves_a_node_gone():
    """A full sweep found a consumer Nova never knew on a provider whose
    node Nova answered 404 for: ``unknown_consumer``, delete offered.  At
    the refresh Nova answers that read with a 500: nothing proves the
    node gone now, so the refresh's report protects the consumer, as a
    whole audit does, instead of keeping the delete."""
    from orphan_dashboard.audit import classify
    from orphan_dashboard.audit import model as m
    from orphan_dashboard.audit import report as assembly

    cloud = Cloud()
    node = cloud.gone('dead')
    cloud.tag(node)
    stranger = uid('stranger')
    cloud.allocate(stranger, node)
    old = cloud.snapshot()
    new = copy.deepcopy(old)
    new.nodes_gone = frozenset()
    before = assembly.report(classify.Auditor(old, min_age=0))
    (found,) = [f for f in before.findings if f.consumer == stranger]
    assert (found.verdict, found.actions) == (m.UNKNOWN_CONSUMER, (m.DELETE,))
    assert stranger in refresh.reconsidered(old, new)
    known = refresh.reusable(old, new, lambda: before.findings)
    assert stranger not in known
    (now,) = [f for f in classify.audit(new, min_age=0, known=known).findings
              if f.consumer == stranger]
    assert (now.verdict, now.actions) == (m.PROTECTED, ())
