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

"""The write core: one write journaled, sent once, read back, its outcome.

Every write to Placement goes through :func:`journaled`: a consumer's
allocations with its ports' bindings (:func:`allocations`), a provider
deleted or re-created (:func:`provider`).  A refusal (a 4xx) wrote
nothing; after any other error of Placement, a consumer is read back to
tell where the write left it (:func:`settle`).
"""

import dataclasses
import logging
import typing

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import neutron
from orphan_dashboard.api import placement
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.writing import commands

LOG = logging.getLogger(__name__)

DONE = 'done'
SKIPPED = 'skipped'
FAILED = 'failed'

BEFORE = 'before'
AFTER = 'after'
OTHER = 'other'
UNREAD = 'unread'
"""Where a write that got no clear answer left its subject, read back."""


@dataclasses.dataclass
class Outcome:
    selection: typing.Any
    """The row written (:class:`~writing.repair.Selection`)."""
    status: str
    message: typing.Any
    """Text, or the engine's :class:`~reasons.Reason` for a skipped row."""
    plan: typing.Any = None
    entry_id: typing.Optional[int] = None


class WriteFailed(Exception):
    """A write that did not go through as sent, as its sender found it.

    ``status``: :data:`SKIPPED` (refused) or :data:`FAILED`; ``reason``:
    why, with what became of the bindings;
    ``landed``: where the journal's subject stands (:data:`BEFORE`
    proves it unchanged, :data:`AFTER` with a refusal that an identical
    write got there first); ``bindings``: the ports whose binding may be
    left changed in Neutron.
    """

    def __init__(self, status, reason, landed=None, bindings=()):
        super().__init__(str(reason))
        self.status = status
        self.reason = reason
        self.landed = landed
        self.bindings = tuple(bindings)


def journaled(journal, selection, plan, begin, send):
    """``begin`` a journal entry, ``send`` the write, record the outcome.

    ``send`` returns ``(reason, new generation or None)`` of a write done,
    or raises :class:`WriteFailed`.  A write the journal could not record
    first is not sent; one whose outcome it could not record stays
    ``pending`` in the journal, and the outcome says to look there.  A
    refusal whose subject already holds the after lost the race to an
    identical write, whose entry says it all: this one is dropped.  A
    failure that left the subject as it was, no binding changed, records
    its generation unchanged, so it never stands in the way of a restore.
    The journal's own errors are logged, never shown.
    """
    try:
        entry = begin()
    except Exception:
        LOG.exception('the journal could not record a write first')
        return Outcome(selection, FAILED,
                       reasons.reason('write.journal_before'), plan)
    try:
        said, generation = send()
    except WriteFailed as exc:
        LOG.warning('journal entry %s: %s', entry.id, exc)
        outcome = Outcome(selection, exc.status, exc.reason, plan)
        if exc.status == SKIPPED and exc.landed == AFTER:
            return _drop(journal, entry, outcome)
        unchanged = exc.status == FAILED and exc.landed == BEFORE and \
            not exc.bindings
        return _finish(journal, entry, entry.REFUSED
                       if exc.status == SKIPPED else entry.FAILED, outcome,
                       str(exc.reason),
                       new_generation=plan.generation if unchanged else None)
    except Exception:
        LOG.exception('journal entry %s: unexpected error writing', entry.id)
        outcome = Outcome(selection, FAILED, reasons.reason(
            'write.unexpected', entry=entry.id), plan)
        return _finish(journal, entry, entry.FAILED, outcome,
                       'an unexpected error interrupted it after it was '
                       'sent: it may be partly written (see the logs)')
    return _finish(journal, entry, entry.APPLIED,
                   Outcome(selection, DONE, said, plan),
                   new_generation=generation)


def _drop(journal, entry, outcome):
    """Forget the entry of a write that changed nothing (a conflict with
    our own identical write): a refusal in History would be noise."""
    try:
        journal.discard(entry)
    except Exception:
        LOG.exception('journal entry %s could not be dropped', entry.id)
        return _finish(journal, entry, entry.REFUSED, outcome,
                       str(outcome.message))
    return outcome


def _finish(journal, entry, status, outcome, message='', new_generation=None):
    outcome.entry_id = entry.id
    try:
        journal.finish(entry, status, message, new_generation=new_generation)
    except Exception:
        LOG.exception('journal entry %s could not be updated', entry.id)
        outcome.message = reasons.reason(
            'write.journal_after', outcome=outcome.message, entry=entry.id)
    return outcome


# -- reading back ------------------------------------------------------------

def refused(exc):
    """The error is a definite refusal (a 4xx, or no endpoint to send
    to): nothing was written.  A timeout, a lost connection or a 5xx do
    not say whether the write was applied; only reading it back does."""
    return isinstance(exc, (ks_exc.HTTPClientError, ks_exc.CatalogException))


def settle(read, place):
    """Where a write with no clear answer left its subject: ``(where,
    found)``.  ``read()`` gives the subject as it is now (raising when it
    cannot: :data:`UNREAD`), ``place(found)`` says where that stands:
    :data:`AFTER`, :data:`BEFORE` or :data:`OTHER`."""
    try:
        found = read()
    except Exception:
        LOG.exception('a write with no clear answer could not be read back')
        return UNREAD, None
    return place(found), found


# -- a consumer's allocations, after its ports' bindings ---------------------

def allocations(placement_client, journal, plan, selection, restores=None,
                network_client=None):
    """Journal, then one generation-checked PUT (after the plan's port
    bindings, see :func:`_send`), then journal the outcome with the
    consumer's new generation."""
    return journaled(journal, selection, plan,
                     lambda: journal.begin(plan, restores=restores),
                     lambda: _send(placement_client, network_client, plan))


def _send(placement_client, network_client, plan):
    """The plan's port bindings to Neutron first, then the allocations to
    Placement, as ``heal_allocations`` orders them.  When Placement does
    not take them, the bindings are put back only once the consumer is
    known to hold the plan's before (:func:`_placement_failed`)."""
    written = _write_bindings(network_client, plan)
    try:
        placement.put_allocations(
            placement_client, plan.consumer, plan.after, plan.generation,
            plan.project_id, plan.user_id)
    except ks_exc.ClientException as exc:
        return _placement_failed(placement_client, network_client, plan,
                                 written, exc)
    return why('write.done'), _generation(placement_client, plan.consumer)


def _refusal(exc):
    """What Placement's 409 says: a generation moved, or no room."""
    if placement.error_detail(exc)[1] == placement.CONCURRENT_UPDATE:
        return why('write.refused_changed')
    return why('write.refused')


def _placement_failed(placement_client, network_client, plan, written, exc):
    """``(reason, new generation)`` when the consumer read back after
    Placement's error ``exc`` holds the plan's after; else raises
    :class:`WriteFailed`: the bindings ``written`` put back where it is
    known to hold the before, left as written (with the commands that put
    them back) where it holds something else or cannot be read."""
    detail = placement.error_detail(exc)[0]
    conflict = isinstance(exc, ks_exc.Conflict)
    if refused(exc) and not conflict:
        raise _rolled_back(network_client, plan, written, FAILED,
                           why('write.failed', detail=detail),
                           landed=BEFORE if isinstance(
                               exc, ks_exc.HttpError) else None)
    where, found = settle(lambda: _consumer(placement_client, plan.consumer),
                          _consumer_place(plan))
    if conflict:
        if where == AFTER and not plan.ports:
            raise WriteFailed(SKIPPED, why('write.already_done'), AFTER)
        raise _rolled_back(network_client, plan, written, SKIPPED,
                           _refusal(exc))
    if where == AFTER:
        return why('write.done_unanswered', detail=detail), found.generation
    if where == BEFORE:
        raise _rolled_back(network_client, plan, written, FAILED,
                           why('write.failed', detail=detail),
                           landed=BEFORE if isinstance(
                               exc, ks_exc.HttpError) else None)
    if where == OTHER:
        raise _left(plan, written, FAILED, why(
            'write.failed_other', detail=detail,
            now=reasons.format_allocations(found.allocations)), where)
    raise _left(plan, written, FAILED, why('write.failed_unread',
                                           detail=detail), where)


def _consumer_place(plan):
    """Where a consumer read back stands against ``plan``."""
    before = (plan.before, plan.before_project or plan.project_id,
              plan.before_user or plan.user_id)
    after = (plan.after, plan.project_id, plan.user_id)

    def place(consumer):
        if _holds(consumer, *after):
            return AFTER
        return BEFORE if _holds(consumer, *before) else OTHER
    return place


def _holds(consumer, allocations_, project_id, user_id):
    return consumer.allocations == allocations_ and (
        not allocations_ or
        (consumer.project_id, consumer.user_id) == (project_id, user_id))


def _consumer(placement_client, consumer):
    """The consumer as Placement holds it now."""
    return parse.consumer(consumer, placement.consumer_allocations(
        placement_client, consumer))


def _generation(placement_client, consumer):
    try:
        return placement.consumer_allocations(
            placement_client, consumer).get('consumer_generation')
    except ks_exc.ClientException:
        return None


def _write_bindings(network_client, plan):
    """Write each port's binding ``after``, compare-and-swap on the
    revision the plan read; ``{port: revision after}``.  When Neutron does
    not take one, Placement is not written and :func:`_binding_failed`
    says why."""
    written = {}
    for port, change in sorted(plan.ports.items()):
        try:
            if network_client is None:
                raise ks_exc.EndpointNotFound('network')
            answer = neutron.update_binding_profile(
                network_client, port, change['after'], change['revision'])
        except ks_exc.ClientException as exc:
            raise _binding_failed(network_client, plan, port, written, exc)
        written[port] = answer.get('revision_number')
    return written


def _binding_failed(network_client, plan, port, written, exc):
    """The :class:`WriteFailed` of ``port``'s binding, which Neutron did
    not take: the bindings ``written`` before it are put back (Placement
    was not written), and this one too when read back written."""
    detail = neutron.error_detail(exc)
    if isinstance(exc, ks_exc.PreconditionFailed):
        return _rolled_back(network_client, plan, written, SKIPPED,
                            why('write.binding_changed', port=port))
    if refused(exc):
        return _rolled_back(network_client, plan, written, SKIPPED,
                            why('write.binding_refused', port=port,
                                detail=detail))
    written = dict(written)
    failed = _binding_landed(network_client, plan, port, written)
    return _rolled_back(network_client, plan, written, FAILED,
                        why('write.binding_failed', port=port,
                            detail=detail), failed)


def _binding_landed(network_client, plan, port, written):
    """Read back a binding write Neutron gave no clear answer to: written,
    it joins ``written`` at its new revision (to be put back); ``{port:
    why not}`` when it cannot be read or names something else."""
    change = plan.ports[port]
    try:
        body = neutron.port_get(network_client, port)
    except ks_exc.ClientException as exc:
        return {port: neutron.error_detail(exc)}
    if body is None:
        return {}
    profile = _profile(body)
    if profile == change['after']:
        written[port] = body.get('revision_number')
    elif profile != change['before']:
        return {port: why('write.binding_now', allocation=str(
            profile.get('allocation') or '-'))}
    return {}


def _profile(body):
    return dict(body.get('binding:profile') or {})


def _rolled_back(network_client, plan, written, status, reason, failed=None,
                 landed=BEFORE):
    """A :class:`WriteFailed` that left Placement as it was: the bindings
    ``written`` are put back, said with ``reason``.  ``failed``: ``{port:
    why}`` of bindings already known not to be put back."""
    failed = dict(failed or {}, **_put_back(network_client, plan, written))
    for port, detail in sorted(failed.items()):
        return WriteFailed(FAILED, why(
            'write.rollback_failed', outcome=reason, port=port, detail=detail,
            command=commands.binding(port, plan.ports[port]['before'])),
            landed, failed)
    if written:
        reason = why('write.rolled_back', outcome=reason,
                     ports=', '.join(sorted(written)))
    return WriteFailed(status, reason, landed)


def _left(plan, written, status, reason, where):
    """A :class:`WriteFailed` whose consumer holds something other than
    the plan's before, or may yet change: the bindings ``written`` are
    left as written, with the commands that put them back."""
    if written:
        reason = why('write.bindings_left', outcome=reason,
                     ports=', '.join(sorted(written)),
                     commands=' ; '.join(commands.binding(
                         port, plan.ports[port]['before'])
                         for port in sorted(written)))
    return WriteFailed(status, reason, where, written)


def _put_back(network_client, plan, written):
    """The bindings ``written`` put back as they were: ``{port: error}``
    of those Neutron would not take back."""
    failed = {}
    for port, revision in sorted(written.items()):
        try:
            neutron.update_binding_profile(
                network_client, port, plan.ports[port]['before'], revision)
        except Exception as exc:
            LOG.exception('the binding of port %s could not be put back',
                          port)
            failed[port] = str(exc)
    return failed


# -- a provider, deleted or re-created ---------------------------------------

def provider(placement_client, journal, plan, begin):
    """Delete the provider of ``plan`` (a
    :class:`~writing.repair.ProviderPlan`), or re-create it from its
    record for a restore, journaled by ``begin``."""
    return journaled(journal, plan.selection, plan, begin,
                     lambda: _send_provider(placement_client, plan))


def _send_provider(placement_client, plan):
    """The provider's delete or re-creation."""
    try:
        if plan.action == m.DELETE_PROVIDER:
            placement.delete_provider(placement_client, plan.provider)
        else:
            placement.create_provider(placement_client, plan.record)
    except ks_exc.Conflict as exc:
        raise WriteFailed(SKIPPED, _refusal(exc), BEFORE)
    except ks_exc.ClientException as exc:
        raise WriteFailed(FAILED, why(
            'write.failed', detail=placement.error_detail(exc)[0]))
    return why('write.done'), None
