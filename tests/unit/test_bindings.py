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

"""A write that gives ports a new provider: Neutron's bindings first,
then Placement, the bindings put back when Placement refuses it; an
answer that is not a refusal (a timeout, a 5xx) is read back first, and a
lost one (a timeout, a 502 or 504) until it settles: while Placement's
state is unknown, the bindings are left (the end-to-end twin, on a real
Neutron and Placement, is ``tests/e2e/test_ports.py``)."""

import dataclasses
from unittest import mock

from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.api import client
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan as planning
from orphan_dashboard.writing import write

BW = 'NET_BW_EGR_KILOBIT_PER_SEC'
BEFORE = {'vnic_type': 'normal'}
AFTER = {'vnic_type': 'normal', 'allocation': {'g1': 'nic'}}
PLAN = m.Plan(action=m.HEAL, consumer='vm', provider='nic',
              verdict=m.MISSING, reason='', generation=4,
              project_id='p', user_id='u',
              before={'node': {'VCPU': 1}},
              after={'node': {'VCPU': 1}, 'nic': {BW: 1000}},
              ports={'port1': {'name': 'web-port', 'revision': 7,
                               'before': BEFORE, 'after': AFTER}})


@pytest.fixture(autouse=True)
def no_waits(monkeypatch):
    """A lost answer's reads back, without their waits."""
    monkeypatch.setattr(write, 'SETTLE_WAITS', (0, 0, 0), raising=False)


class Recorder:
    """Placement and Neutron as one ordered log of the writes sent to
    them; ``fail`` maps a call to the error it raises.  A read back finds
    the consumer holding ``holds`` (the plan's before unless told; a list:
    what each read finds in turn, the last one again after it, a new
    generation at each change) and each port with the binding ``bound``
    gives it (``{port: (profile, revision)}``; the plan's before at its
    revision unless told)."""

    def __init__(self, fail=None, holds=None, bound=None):
        self.calls, self.fail = [], dict(fail or {})
        holds = PLAN.before if holds is None else holds
        self.reads = list(holds) if isinstance(holds, list) else [holds]
        self.generation, self.last = 5, None
        self.bound = dict(bound or {})

    def _holds(self):
        body = self.reads.pop(0) if len(self.reads) > 1 else self.reads[0]
        if self.last is not None and body != self.last:
            self.generation += 1
        self.last = body
        return body

    def put(self, path, json=None, headers=None, microversion=None):
        call = ('placement' if microversion else 'neutron', path,
                (headers or {}).get('If-Match'))
        self.calls.append(call + (json,))
        error = self.fail.get(call[:2] + (len(self.calls),)) or \
            self.fail.get(call[:2])
        if error is not None:
            raise error
        revision = 8 if len(self.calls) == 1 else 9
        return mock.Mock(json=mock.Mock(return_value={'port': {
            'revision_number': revision}}))

    def get(self, path, **kwargs):
        if path.startswith('/v2.0/ports/'):
            port = path.rsplit('/', 1)[1]
            profile, revision = self.bound.get(port, (BEFORE, 7))
            return mock.Mock(json=mock.Mock(return_value={'port': {
                'id': port, 'binding:profile': profile,
                'revision_number': revision}}))
        return mock.Mock(json=mock.Mock(return_value={
            'allocations': {rp: {'resources': r}
                            for rp, r in self._holds().items()},
            'consumer_generation': self.generation, 'project_id': 'p',
            'user_id': 'u'}), headers={})

    def order(self):
        return [(service, path, match) for service, path, match, _ in
                self.calls]


def _conflict(code=None):
    body = mock.Mock(json=lambda: {'errors': [{'detail': 'no', 'code':
                                               code}]})
    return ks_exc.Conflict(response=body)


def _write(client):
    journal = mock.Mock()
    entry = journal.begin.return_value
    outcome = write.allocations(client, journal, PLAN,
                                PLAN.selection,
                                network_client=client)
    return outcome, journal, entry


def test_the_binding_goes_to_neutron_before_the_allocation_to_placement():
    client = Recorder()
    outcome, journal, entry = _write(client)
    assert outcome.status == write.DONE
    assert client.order() == [
        ('neutron', '/v2.0/ports/port1', 'revision_number=7'),
        ('placement', '/allocations/vm', None)]
    assert client.calls[0][3] == {'port': {'binding:profile': AFTER}}
    # The journal is asked first, with the plan carrying both befores.
    journal.begin.assert_called_once_with(PLAN, restores=None)
    journal.finish.assert_called_once()
    assert journal.finish.call_args[0][1] == entry.APPLIED


def test_placement_s_refusal_puts_the_binding_back():
    client = Recorder(fail={('placement', '/allocations/vm'): _conflict(
        'placement.concurrent_update')})
    outcome, journal, entry = _write(client)
    assert outcome.status == write.SKIPPED
    assert client.order() == [
        ('neutron', '/v2.0/ports/port1', 'revision_number=7'),
        ('placement', '/allocations/vm', None),
        ('neutron', '/v2.0/ports/port1', 'revision_number=8')]
    assert client.calls[2][3] == {'port': {'binding:profile': BEFORE}}
    assert str(outcome.message) == (
        'Placement refused it: the consumer changed since it was read, so '
        'nothing was written; review it again; the binding of port port1 '
        'was put back in Neutron')
    assert journal.finish.call_args[0][1] == entry.REFUSED


def test_a_conflict_on_a_write_that_landed_is_done_and_keeps_the_binding():
    """A gateway sent the PUT again after Placement applied it: the
    retry's 409 is its own write's.  Read back, the consumer holds the
    plan: done, journaled with its new generation, the binding kept."""
    client = Recorder(fail={('placement', '/allocations/vm'): _conflict(
        'placement.concurrent_update')}, holds=PLAN.after)
    outcome, journal, entry = _write(client)
    assert outcome.status == write.DONE, str(outcome.message)
    assert client.order() == [
        ('neutron', '/v2.0/ports/port1', 'revision_number=7'),
        ('placement', '/allocations/vm', None)]
    assert 'holds what this change writes' in str(outcome.message)
    assert journal.finish.call_args[0][1] == entry.APPLIED
    assert journal.finish.call_args[1]['new_generation'] == 5
    journal.discard.assert_not_called()


@pytest.mark.parametrize('generation,status', [
    (PLAN.generation + 1, write.SKIPPED),     # one write, not this one
    (PLAN.generation + 3, write.UNKNOWN),     # this one, then others?
])
def test_a_conflict_on_a_consumer_holding_something_else(generation, status):
    """Read back after a 409, the consumer holds neither the before nor
    the plan.  One write past the generation the plan read is another's:
    refused, the binding put back.  More may be this one changed again:
    unknown, restorable, the binding left with its command."""
    other = {'node': {'VCPU': 2}}
    client = Recorder(fail={('placement', '/allocations/vm'): _conflict(
        'placement.concurrent_update')}, holds=other)
    client.generation = generation
    outcome, journal, entry = _write(client)
    assert outcome.status == status, str(outcome.message)
    if status == write.SKIPPED:
        assert client.order()[-1] == (
            'neutron', '/v2.0/ports/port1', 'revision_number=8')
        assert journal.finish.call_args[0][1] == entry.REFUSED
    else:
        assert len(client.calls) == 2
        assert 'VCPU=2' in str(outcome.message)
        assert 'openstack port unset --binding-profile allocation port1' \
            in str(outcome.message)
        assert journal.finish.call_args[0][1] == entry.UNKNOWN


def test_a_binding_changed_since_the_read_writes_nothing():
    client = Recorder(fail={('neutron', '/v2.0/ports/port1'):
                            ks_exc.PreconditionFailed()})
    outcome, journal, entry = _write(client)
    assert outcome.status == write.SKIPPED
    assert client.order() == [
        ('neutron', '/v2.0/ports/port1', 'revision_number=7')]
    assert 'port port1 changed since it was read' in str(outcome.message)
    assert journal.finish.call_args[0][1] == entry.REFUSED


def test_neutron_s_policy_refusal_writes_nothing_and_says_whose():
    body = mock.Mock(json=lambda: {'NeutronError': {'message': 'denied'}})
    client = Recorder(fail={('neutron', '/v2.0/ports/port1'):
                            ks_exc.Forbidden(response=body)})
    outcome, _journal, _entry = _write(client)
    assert outcome.status == write.SKIPPED
    assert len(client.calls) == 1
    assert "Neutron refused to write port port1's binding (denied)" in str(
        outcome.message)
    assert 'service role' in str(outcome.message)


def test_a_binding_that_cannot_be_put_back_fails_with_the_command():
    client = Recorder(fail={
        ('placement', '/allocations/vm'): ks_exc.InternalServerError(),
        ('neutron', '/v2.0/ports/port1', 3): ks_exc.ConnectFailure()})
    outcome, journal, entry = _write(client)
    assert outcome.status == write.FAILED
    assert len(client.calls) == 3
    message = str(outcome.message)
    assert 'the binding of port port1 could not be put back' in message
    assert 'put it back with openstack port unset --binding-profile ' \
        'allocation port1' in message
    assert journal.finish.call_args[0][1] == entry.FAILED
    # Placement is as it was, but Neutron is not: not "changed nothing".
    assert journal.finish.call_args[1]['new_generation'] is None


def test_placement_failing_after_applying_the_write_keeps_the_binding():
    """Placement took the allocation but its answer was a 5xx: the
    binding stays written and the write is done, and restorable."""
    client = Recorder(fail={('placement', '/allocations/vm'):
                            ks_exc.InternalServerError()},
                      holds=PLAN.after)
    outcome, journal, entry = _write(client)
    assert client.order() == [
        ('neutron', '/v2.0/ports/port1', 'revision_number=7'),
        ('placement', '/allocations/vm', None)]
    assert outcome.status == write.DONE, str(outcome.message)
    assert 'holds what this change writes' in str(outcome.message)
    assert journal.finish.call_args[0][1] == entry.APPLIED
    assert journal.finish.call_args[1]['new_generation'] == 5


def test_placement_answering_an_error_without_the_write_puts_it_back():
    """An error answer ended the write: read back holding the plan's
    before, the binding is put back and the entry changed nothing."""
    client = Recorder(fail={('placement', '/allocations/vm'):
                            ks_exc.InternalServerError()})
    outcome, journal, entry = _write(client)
    assert client.order()[-1] == (
        'neutron', '/v2.0/ports/port1', 'revision_number=8')
    assert client.calls[-1][3] == {'port': {'binding:profile': BEFORE}}
    assert outcome.status == write.FAILED
    assert 'the binding of port port1 was put back' in str(outcome.message)
    assert journal.finish.call_args[0][1] == entry.FAILED
    assert journal.finish.call_args[1]['new_generation'] == PLAN.generation


def test_placement_timing_out_leaves_the_binding_while_unknown():
    """No answer, and the consumer still as it was after the wait: the
    write may yet land, so the binding is not put back (the outcome
    gives the command for when it does not) and the entry is unknown,
    restorable."""
    client = Recorder(fail={('placement', '/allocations/vm'):
                            ks_exc.ConnectTimeout()})
    outcome, journal, entry = _write(client)
    assert client.order() == [
        ('neutron', '/v2.0/ports/port1', 'revision_number=7'),
        ('placement', '/allocations/vm', None)]
    assert outcome.status == 'unknown', str(outcome.message)
    message = str(outcome.message)
    assert 'no clear answer' in message and 'may yet land' in message
    assert 'was left as written' in message, message
    assert 'openstack port unset --binding-profile allocation port1' in \
        message
    assert journal.finish.call_args[0][1] == entry.UNKNOWN
    assert journal.finish.call_args[1]['new_generation'] is None


def test_placement_landing_during_the_wait_keeps_the_binding():
    """A gateway's 504 while Placement still applies the PUT: the first
    reads find the consumer as it was, a later one the plan's after.
    Done, the binding kept."""
    client = Recorder(fail={('placement', '/allocations/vm'):
                            ks_exc.GatewayTimeout()},
                      holds=[PLAN.before, PLAN.before, PLAN.after])
    outcome, journal, entry = _write(client)
    assert len(client.calls) == 2
    assert outcome.status == write.DONE, str(outcome.message)
    assert journal.finish.call_args[0][1] == entry.APPLIED
    assert journal.finish.call_args[1]['new_generation'] == 6


def test_placement_changing_through_the_wait_is_unknown():
    """The consumer read back never the same twice: unknown, the binding
    left."""
    other = {'node': {'VCPU': 2}}
    client = Recorder(fail={('placement', '/allocations/vm'):
                            ks_exc.BadGateway()},
                      holds=[PLAN.before, other, PLAN.before, other])
    outcome, journal, entry = _write(client)
    assert len(client.calls) == 2
    assert outcome.status == 'unknown', str(outcome.message)
    assert 'kept changing' in str(outcome.message)
    assert journal.finish.call_args[0][1] == entry.UNKNOWN


def test_placement_holding_something_else_leaves_the_binding_written():
    """Neither before nor after: the binding is not put back blindly,
    and the outcome says what Placement holds and the command."""
    client = Recorder(fail={('placement', '/allocations/vm'):
                            ks_exc.InternalServerError()},
                      holds={'node': {'VCPU': 2}})
    outcome, journal, entry = _write(client)
    assert len(client.calls) == 2
    message = str(outcome.message)
    assert outcome.status == write.FAILED
    assert 'VCPU' in message and 'was left as written' in message, message
    assert 'openstack port unset --binding-profile allocation port1' in \
        message
    assert journal.finish.call_args[0][1] == entry.FAILED
    assert journal.finish.call_args[1]['new_generation'] is None


def test_placement_unreadable_after_a_timeout_leaves_the_binding_written():
    class Gone(Recorder):
        def get(self, path, **kwargs):
            if path.startswith('/allocations/'):
                raise ks_exc.ConnectFailure('placement is down')
            return super().get(path, **kwargs)

    client = Gone(fail={('placement', '/allocations/vm'):
                        ks_exc.ConnectTimeout()})
    outcome, journal, entry = _write(client)
    assert len(client.calls) == 2
    message = str(outcome.message)
    assert outcome.status == 'unknown', message
    assert 'could not be read back' in message, message
    assert 'was left as written' in message, message
    assert journal.finish.call_args[0][1] == entry.UNKNOWN


def test_neutron_failing_after_writing_the_binding_puts_it_back():
    """Neutron applied the binding but answered 5xx: not a refusal.  The
    port is re-read, put back on its new revision, and the entry failed
    naming it; Placement is never asked."""
    client = Recorder(fail={('neutron', '/v2.0/ports/port1', 1):
                            ks_exc.BadGateway()},
                      bound={'port1': (AFTER, 8)})
    outcome, journal, entry = _write(client)
    assert client.order() == [
        ('neutron', '/v2.0/ports/port1', 'revision_number=7'),
        ('neutron', '/v2.0/ports/port1', 'revision_number=8')]
    assert client.calls[-1][3] == {'port': {'binding:profile': BEFORE}}
    assert outcome.status == write.FAILED
    message = str(outcome.message)
    assert 'nothing was written' not in message, message
    assert 'the binding of port port1 was put back' in message
    assert journal.finish.call_args[0][1] == entry.FAILED


def test_neutron_answering_an_error_without_the_binding_puts_nothing_back():
    client = Recorder(fail={('neutron', '/v2.0/ports/port1'):
                            ks_exc.InternalServerError()})
    outcome, journal, entry = _write(client)
    assert len(client.calls) == 1
    assert outcome.status == write.FAILED
    assert 'put back' not in str(outcome.message)
    assert journal.finish.call_args[0][1] == entry.FAILED
    # Neither Neutron nor Placement holds anything of it.
    assert journal.finish.call_args[1]['new_generation'] == PLAN.generation


def test_neutron_timing_out_on_the_binding_is_unknown():
    """No answer from Neutron, and the binding still as it was: it may
    yet be written, so the entry is no "changed nothing"; Placement is
    never asked, and the outcome gives the command that puts the binding
    back."""
    client = Recorder(fail={('neutron', '/v2.0/ports/port1'):
                            ks_exc.ConnectTimeout()})
    outcome, journal, entry = _write(client)
    assert len(client.calls) == 1
    assert outcome.status == 'unknown', str(outcome.message)
    assert 'openstack port unset --binding-profile allocation port1' in \
        str(outcome.message)
    assert journal.finish.call_args[0][1] == entry.UNKNOWN
    assert journal.finish.call_args[1]['new_generation'] is None


def test_a_second_binding_refused_puts_the_first_back():
    """Two ports to rebind: Neutron takes the first, refuses the second;
    the first is put back and Placement is never asked."""
    plan = dataclasses.replace(PLAN, ports=dict(PLAN.ports, port2=dict(
        PLAN.ports['port1'], name='db-port')))
    client = Recorder(fail={('neutron', '/v2.0/ports/port2'):
                            ks_exc.PreconditionFailed()})
    journal = mock.Mock()
    outcome = write.allocations(client, journal, plan,
                                plan.selection,
                                network_client=client)
    assert outcome.status == write.SKIPPED
    assert client.order() == [
        ('neutron', '/v2.0/ports/port1', 'revision_number=7'),
        ('neutron', '/v2.0/ports/port2', 'revision_number=7'),
        ('neutron', '/v2.0/ports/port1', 'revision_number=8')]
    assert str(outcome.message) == (
        'Neutron refused it: port port2 changed since it was read, so '
        'nothing was written; review it again; the binding of port port1 '
        'was put back in Neutron')


def test_a_restore_puts_back_the_binding_and_the_allocations_together():
    entry = mock.Mock(id=12, consumer='vm', provider='nic', verdict='missing',
                      before=PLAN.before, after=PLAN.after,
                      before_project=None, before_user=None,
                      consumer_project='p', consumer_user='u',
                      ports=PLAN.ports)
    consumer = m.Consumer('vm', 5, PLAN.after, 'p', 'u')
    now = {'port1': m.Port('port1', 'web-port', profile=AFTER, revision=8)}
    restore = planning.restore_plan(entry, consumer, now)
    assert (restore.before, restore.after) == (PLAN.after, PLAN.before)
    assert restore.ports == {'port1': {'name': 'web-port', 'revision': 8,
                                       'before': AFTER, 'after': BEFORE}}
    # A binding changed since (another heal, an operator) is refused.
    moved = {'port1': m.Port('port1', profile={'allocation': {'g1': 'x'}},
                             revision=9)}
    try:
        planning.restore_plan(entry, consumer, moved)
    except planning.CannotRepair as exc:
        assert 'port port1 changed since this repair' in str(exc.reason)
    else:
        raise AssertionError('a changed binding was restored over')


@pytest.mark.horizon
def test_a_restore_whose_neutron_cannot_be_read_is_refused_in_words():
    from orphan_dashboard.models import JournalEntry
    from orphan_dashboard.operations import restore as restore_ops
    entry = JournalEntry(id=12, kind=JournalEntry.ALLOCATIONS, subject='vm',
                         consumer='vm', provider='nic', action=m.HEAL,
                         status=JournalEntry.APPLIED, before=PLAN.before,
                         after=PLAN.after, ports=PLAN.ports)

    class Down(Recorder):
        def get(self, path, **kwargs):
            if path.startswith('/v2.0/'):
                raise ks_exc.ConnectFailure('no route to neutron')
            return super().get(path, **kwargs)

    ((_entry, row),) = restore_ops.fresh_plans(
        client.Clients(Down(), None, None, Down()), [entry], {'vm': {12}})
    assert row.plan is None
    # (keystoneauth's own words for the error: Horizon's test setup
    # changes them.)
    said = str(row.error)
    assert said.startswith('Neutron could not be read (')
    assert said.endswith("the ports' bindings it also wrote cannot be "
                         'checked now')
    ((_entry, row),) = restore_ops.fresh_plans(
        client.Clients(Down(), None), [entry], {'vm': {12}})
    assert "which is not in this catalog" in str(row.error)
