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

"""One cell of two slow rather than down, on the sandbox (``up --cells
2``): each transaction on cell2's database waits past Nova's
``CELL_TIMEOUT``, shortened by the sandbox, and the panel's and
``orphan-audit``'s API timeout is set to that same timeout, as Nova's and
ours are both 60 s out of the box.  Nova then gives up on cell2 in its
scatter-gathers, but its listings answer only after that: the audit and
the repair must go on in cell1 and leave host5 as it was, as with a down
cell (``test_cells.py``, the same incidents)."""

from django.test.utils import override_settings
import pytest

from tests.e2e.cells import cell2_warning
from tests.e2e.cells import healthy_cell_repaired
from tests.e2e.conftest import audited
from tests.e2e.conftest import INDEX
from tests.e2e.conftest import module_cloud

pytestmark = [pytest.mark.django_db(databases=['default', 'orphan_journal']),
              pytest.mark.topology('two_cells')]

cloud = module_cloud('evacuation,second_cell,deleted_behind_nova')


@pytest.fixture(scope='module')
def cell2_slow(cloud):
    slow = cloud.control('POST', '/cells/cell2/slow')
    assert slow['delay'] > slow['cell_timeout'], slow
    yield dict(cloud.incidents['second_cell'],
               cell_timeout=slow['cell_timeout'])
    cloud.control('POST', '/cells/cell2/up')


def test_the_index_shows_the_slow_cell_and_never_waits_for_it(
        cloud, cell2_slow, horizon):
    """The sweep takes the slow cell's time; the index answers meanwhile
    from what it had, then warns of the cell and of Nova's wait."""
    with override_settings(ORPHAN_AUDIT_API_TIMEOUT=cell2_slow[
            'cell_timeout']):
        first = horizon.get(INDEX)
        assert first.status_code == 200
        assert horizon.get(INDEX + 'sweep/').json()['sweeping']
        assert horizon.get(INDEX).status_code == 200
        assert horizon.get(INDEX + 'sweep/').json()['sweeping']
        page = audited(horizon, timeout=120)
    failure = page.context.get('sweep_failure')
    assert not failure, failure
    warning = cell2_warning(page, 'slow')
    waited = warning[warning.index('answered without'):]
    seconds = int(waited.split(' after ')[1].split(' s')[0])
    assert seconds >= cell2_slow['cell_timeout'], waited


def test_the_cli_audits_and_repairs_the_healthy_cell_only(cloud, cell2_slow,
                                                          tmp_path):
    healthy_cell_repaired(
        cloud, cell2_slow, tmp_path, '--timeout',
        str(cell2_slow['cell_timeout']), waited=cell2_slow['cell_timeout'])
