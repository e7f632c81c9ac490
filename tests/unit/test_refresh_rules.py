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

from orphan_dashboard.audit import refresh
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid

H1, H2 = uid('host1'), uid('host2')
SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


# -- refresh -----------------------------------------------------------------

def _body(allocations, generation=2, project='p', user='u'):
    return {'allocations': {rp: {'resources': r}
                            for rp, r in allocations.items()},
            'consumer_generation': generation, 'project_id': project,
            'user_id': user}


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


def test_carried_over_keeps_listed_providers_and_takes_the_changed():
    cloud = Cloud()
    kept, moved, emptied = uid('kept'), uid('moved'), uid('emptied')
    cloud.allocate(kept, H1)
    cloud.allocate(kept, uid('vanished'))
    cloud.allocate(moved, H1)
    cloud.allocate(emptied, H1)
    old = cloud.snapshot()
    consumers = refresh.carried_over(old, {H1: None, H2: None}, {
        moved: _body({H2: SMALL}), emptied: _body({})})
    assert consumers[kept].allocations == {H1: SMALL}
    assert consumers[moved].allocations == {H2: SMALL}
    assert consumers[moved].generation == 2
    assert emptied not in consumers


def test_to_reread_are_providers_whose_usages_disagree_and_new_ones():
    cloud = Cloud()
    vm = uid('vm')
    cloud.allocate(vm, H1)
    old = cloud.snapshot()
    new = uid('new')
    providers = {H1: None, H2: None, new: None}
    consumers = refresh.carried_over(old, providers, {})
    assert refresh.to_reread(old, providers, consumers, {
        H1: dict(SMALL), H2: {}}) == {new}
    assert refresh.to_reread(old, providers, consumers, {
        H1: dict(SMALL, VCPU=2)}) == {H1, new}


def test_merged_keeps_an_owner_only_while_the_generation_holds():
    cloud = Cloud()
    same, written, gone = uid('same'), uid('written'), uid('gone')
    cloud.allocate(same, H1, generation=3, owner=('p1', 'u1'))
    cloud.allocate(written, H1, generation=3, owner=('p2', 'u2'))
    cloud.allocate(written, H2, generation=3, owner=('p2', 'u2'))
    cloud.allocate(gone, H1)
    old = cloud.snapshot()
    providers = {H1: None, H2: None}
    consumers = refresh.carried_over(old, providers, {})
    merged = refresh.merged(old, consumers, {H1: {
        same: {'resources': SMALL, 'consumer_generation': 3},
        written: {'resources': SMALL, 'consumer_generation': 4}}})
    assert (merged[same].project_id, merged[same].generation) == ('p1', 3)
    assert merged[written].project_id is None
    assert merged[written].allocations == {H1: SMALL, H2: SMALL}
    assert gone not in merged
