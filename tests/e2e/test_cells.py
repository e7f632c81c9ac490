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

"""One cell of two down, on the sandbox (``up --cells 2``): Nova's own
``DownCellFixture`` on cell2, whose host5 holds a server, a server deleted
behind Nova's back and a leftover of a cell1 server; cell1's host2 holds a
server deleted behind Nova's back too.  The audit and the repair go on in
cell1 and leave everything of host5 as it was."""

from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.api import nova
from tests.e2e.cells import cell2_warning
from tests.e2e.cells import healthy_cell_repaired
from tests.e2e.cells import straddler
from tests.e2e.conftest import audited
from tests.e2e.conftest import module_cloud

pytestmark = [pytest.mark.django_db(databases=['default', 'orphan_journal']),
              pytest.mark.topology('two_cells')]

cloud = module_cloud('evacuation,second_cell,deleted_behind_nova')
INDEX = '/admin/orphaned_allocations/'


@pytest.fixture(scope='module')
def cell2_down(cloud):
    cloud.control('POST', '/cells/cell2/down')
    yield cloud.incidents['second_cell']
    cloud.control('POST', '/cells/cell2/up')


def test_the_index_warns_of_the_down_cell(cloud, cell2_down, horizon):
    page = audited(horizon, refresh=True)
    assert page.status_code == 200
    cell2_warning(page)
    # Partial reads as partial: host5, which the audit could not judge, is
    # listed (its allocations protected) without *Show all*, and counted.
    listed = {r.provider.name: r for r in page.context['providers_table'].data}
    assert listed['host5'].unjudged, listed
    assert b'could not be judged' in page.content


def test_the_preview_keeps_the_share_on_the_down_cell(cloud, cell2_down,
                                                      horizon):
    """The wrong amount on host2 is repaired from its row; the server's
    share on host5, protected, is kept as read and the preview says so."""
    server, host2 = straddler(cell2_down)
    host5 = cell2_down['hosts']['host5']
    preview = horizon.get(INDEX + 'repair/', {
        'sel': '%s:%s:delete_and_heal' % (server, host2)})
    assert preview.status_code == 200
    (row,) = preview.context['rows']
    assert row.plan is not None, row.error
    assert row.plan.after[host5] == row.plan.before[host5]
    assert row.plan.kept == [host5]
    shown = ' '.join(preview.content.decode().split())
    kept = shown[shown.index('Kept as read'):][:60]
    assert kept.startswith('Kept as read, its row is protected: host5'), \
        kept


def test_nova_shows_a_healthy_cells_node_one_by_one(cloud, cell2_down):
    """Nova's hypervisor listing fails while cell2 is down, but it still
    shows a node of cell1 by its uuid: what the sweep asks for the nodes
    nothing else proves (an Ironic node's).  The down cell's node gets a
    500, no 404: it proves nothing gone."""
    clients = cloud.clients()
    host2 = cloud.incidents['deleted_behind_nova']['hosts']['host2']
    shown = nova.hypervisor_get(clients.nova, host2)
    assert (shown['id'], shown['service']['host']) == (host2, 'host2')
    with pytest.raises(ks_exc.InternalServerError):
        nova.hypervisor_get(clients.nova, cell2_down['hosts']['host5'])


def test_the_cli_audits_and_repairs_the_healthy_cell_only(cloud, cell2_down,
                                                          tmp_path):
    # host3 holds nothing and no server of cell1: while Nova's hypervisor
    # listing fails, no read of its own confirms its node (its name, like
    # a host's, proves nothing), and nothing on it waits for a verdict.
    healthy_cell_repaired(cloud, cell2_down, tmp_path,
                          unconfirmed=['host3'])
