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

"""A decommission broken after it wrote something, on the sandbox: a read
failing after the repairs, Nova's answer to the compute service delete
lost (a read timeout: read back, it is done), the journal failing around
that delete.  The outcome says what is known and points to History, never
"nothing was written" nor the database's own words."""

import pytest

from orphan_dashboard.api import client as client_module
from orphan_dashboard.api import microversions as mv
from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard import conf
from orphan_dashboard.operations import decommission as decommission_ops
from orphan_dashboard.writing import journal as journal_module
from orphan_dashboard.writing import write
from tests.e2e.conftest import decommissioned
from tests.e2e.conftest import module_cloud
from tests.integration.fault_proxy import FaultProxy
from tests.integration.fault_proxy import LATE

READ_TIMEOUT = 10
UNPROTECTED = conf.RunSettings(min_age=0)

pytestmark = pytest.mark.django_db(databases=['orphan_journal'])

cloud = module_cloud('evacuation,retired_host')


def services(clients, host):
    return clients.nova.get('/os-services?binary=nova-compute&host=%s' %
                            host, microversion=mv.SERVICES).json()[
        'services']


def _journal(name):
    return journal_module.Journal(
        'test', client_module.Cloud('sandbox', 'RegionOne', '', name),
        user_name='t')


def test_a_read_timeout_on_the_service_delete_is_read_back_done(cloud):
    """Nova deleted the service (and its provider) but its answer came
    too late: read back, the service is gone, so the delete is done and
    journaled so, and the decommission carries on; never "Nova did not
    delete it"."""
    clients = cloud.clients()
    host1 = cloud.incidents['evacuation']['hosts']['host1']
    proxy = FaultProxy(cloud.config['nova']['url'])
    proxy.inject('DELETE', '/os-services/', 1, LATE)
    journal = _journal('timeout')
    try:
        # The client gives up on the held answer after READ_TIMEOUT; every
        # other call answers well within it.
        outcomes = decommissioned(
            proxy.clients(clients, 'nova', timeout=READ_TIMEOUT), journal,
            'host1')
    finally:
        proxy.close()
    assert {o.status for o in outcomes} == {write.DONE}, [
        (o.status, str(o.message)) for o in outcomes]
    (step,) = [o for o in outcomes
               if o.selection.action == m.DELETE_SERVICE]
    assert str(step.message) == 'compute service host1 deleted'
    entries = {e.action: e for e in journal_module.all_entries(
        journal.cloud)}
    assert entries[m.DELETE_SERVICE].status == 'applied'
    assert entries[m.DELETE_PROVIDER].status == 'applied'
    assert services(clients, 'host1') == []
    assert api.provider_record(clients.placement, host1) is None


class FailingJournal:
    """The real journal, whose database goes away when the compute
    service's entry is to be opened (``begin``) or closed (``finish``)."""

    def __init__(self, journal, when):
        self.journal = journal
        self.when = when

    def __getattr__(self, name):
        return getattr(self.journal, name)

    def begin_service(self, *args, **kwargs):
        if self.when == 'begin':
            raise RuntimeError('database is locked')
        return self.journal.begin_service(*args, **kwargs)

    def finish(self, entry, *args, **kwargs):
        if self.when == 'finish' and entry.kind == entry.SERVICE:
            raise RuntimeError('database is locked')
        return self.journal.finish(entry, *args, **kwargs)


def _service_step(outcomes):
    (step,) = [o for o in outcomes if o.selection.action == m.DELETE_SERVICE]
    texts = [str(o.message) for o in outcomes]
    assert not any('database is locked' in t for t in texts), texts
    assert not any('nothing was written' in t for t in texts), texts
    return step.status, str(step.message)


def test_a_journal_failing_around_the_service_delete_says_what_was_done(
        cloud):
    """Placement fails a read after the repairs: they are reported done,
    then the interruption.  The journal fails before the delete: the
    delete is not sent, and the outcome says so; it fails after Nova
    deleted the service: the outcome says it was deleted.  None says
    "nothing was written" nor quotes the database."""
    clients = cloud.clients()
    retired = cloud.incidents['retired_host']
    unknown = {e['consumer'] for e in retired['expected']
               if e['host'] == 'host4' and
               e['verdict'] == 'unknown_consumer'}
    host4 = retired['hosts']['host4']
    journal = _journal('journal')
    plan = decommission_ops.preview(clients, 'host4', UNPROTECTED)
    # Placement fails the read that follows the repairs: they are written,
    # and the outcome says what was done, not "nothing was written".
    proxy = FaultProxy(cloud.config['placement']['url'])
    proxy.inject('GET', '/resource_providers/%s/allocations' % host4, 2,
                 500)
    try:
        outcomes = decommission_ops.apply(
            proxy.clients(clients, 'placement'), journal, 'host4',
            plan.plans(unknown), unknown, UNPROTECTED)
    finally:
        proxy.close()
    assert [o.status for o in outcomes[:-1]] == [write.DONE] * (
        len(outcomes) - 1) and len(outcomes) > 1
    assert outcomes[-1].status == write.FAILED
    text = str(outcomes[-1].message)
    assert 'interrupted' in text and 'History' in text, text
    assert 'injected failure' not in text, text
    assert services(clients, 'host4')

    plan = decommission_ops.preview(clients, 'host4', UNPROTECTED)
    outcomes = decommission_ops.apply(
        clients, FailingJournal(journal, 'begin'), 'host4',
        plan.plans(unknown), unknown, UNPROTECTED)
    status, text = _service_step(outcomes)
    assert status == write.FAILED
    assert 'not attempted' in text and 'not sent' in text, text
    assert services(clients, 'host4')

    outcomes = decommission_ops.apply(
        clients, FailingJournal(journal, 'finish'), 'host4', [], unknown,
        UNPROTECTED)
    status, text = _service_step(outcomes)
    assert status == write.DONE
    assert 'compute service host4 was deleted' in text, text
    assert 'History' in text, text
    assert services(clients, 'host4') == []
