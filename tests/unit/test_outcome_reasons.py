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

"""What a write or a decommission says comes back as a Reason: English
from str(), translated by the panel."""

from unittest import mock

from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons
from orphan_dashboard import conf
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write

PLAN = repair.ProviderPlan(m.DELETE_PROVIDER, 'rp', 'host9', 3,
                           {'uuid': 'rp', 'name': 'host9'})


def _outcome(error=None):
    """A provider delete through the write core, Placement answering
    ``error`` (None: 204)."""
    client = mock.Mock()
    client.delete.side_effect = error
    journal = mock.Mock()
    return write.provider(client, journal, PLAN, lambda: journal.entry)


def test_a_write_says_done_or_failed_in_a_reason():
    done = _outcome()
    assert isinstance(done.message, reasons.Reason)
    assert (done.status, str(done.message)) == (write.DONE, 'done')
    # Placement's own error body, as it answers: a keystoneauth error's
    # str() is not ours to rely on (Horizon's test setup changes it).
    body = mock.Mock(json=lambda: {'errors': [{'detail': 'boom',
                                               'code': None}]})
    failed = _outcome(ks_exc.BadRequest(response=body))
    assert isinstance(failed.message, reasons.Reason)
    assert failed.status == write.FAILED
    assert str(failed.message) == 'Placement failed: boom'
    assert failed.message.render(
        {'Placement failed: %(detail)s': 'Échec : %(detail)s'}.get) == \
        'Échec : boom'


@pytest.mark.horizon
def test_a_decommission_of_nothing_says_so_in_a_reason():
    from orphan_dashboard.operations import decommission as decommission_ops

    gone = mock.Mock(gone=True, roots=[])
    with mock.patch.object(decommission_ops, 'preview', return_value=gone):
        (outcome,) = decommission_ops.apply(None, mock.Mock(), 'host9', [],
                                            (), conf.RunSettings())
    assert isinstance(outcome.message, reasons.Reason)
    assert str(outcome.message) == 'host9 is already gone'
