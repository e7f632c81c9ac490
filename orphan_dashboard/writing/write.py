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
nothing.  An error answer ended the write: one read says where it left
its subject.  A lost answer (:func:`lost`) may belong to a write the
service is still applying: the subject is read until it settles
(:func:`settle`), and without proof either way the outcome is
:data:`UNKNOWN`, its journal entry kept restorable.
"""

import dataclasses
import logging
import time
import typing

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import neutron
from orphan_dashboard.api import placement
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.writing import equivalents

LOG = logging.getLogger(__name__)

DONE = 'done'
SKIPPED = 'skipped'
FAILED = 'failed'
UNKNOWN = 'unknown'
"""An outcome's status; unknown: the write may have landed, or may yet."""

BEFORE = 'before'
AFTER = 'after'
OTHER = 'other'
UNREAD = 'unread'
UNSETTLED = 'unsettled'
"""Where a write that got no clear answer left its subject, read back."""

SETTLE_WAITS = (0.5, 1, 2)
"""Seconds between the reads back of a write whose answer was lost."""

LOST = (ks_exc.ConnectionError, ks_exc.BadGateway, ks_exc.GatewayTimeout)
"""A timeout, a connection lost or refused, a gateway's 502 or 504: the
service may have the write, and may still be applying it."""


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

    ``status``: :data:`SKIPPED` (refused), :data:`FAILED` or
    :data:`UNKNOWN`; ``reason``: why, with what became of the bindings;
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
    conflict whose subject holds the after is done, unless an identical
    write is journaled applied: this one lost the race to it, whose entry
    says it all, and is dropped.  A
    failure that left the subject as it was, no binding changed, records
    its generation unchanged, so it never stands in the way of a restore;
    an unknown outcome is recorded as such, restorable.  The journal's own
    errors are logged, never shown.
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
        unchanged = exc.status == FAILED and exc.landed == BEFORE and \
            not exc.bindings
        return _finish(journal, entry, {
            SKIPPED: entry.REFUSED, UNKNOWN: entry.UNKNOWN}.get(
                exc.status, entry.FAILED), outcome, str(exc.reason),
            new_generation=plan.generation if unchanged else None)
    except Exception:
        LOG.exception('journal entry %s: unexpected error writing', entry.id)
        outcome = Outcome(selection, FAILED, reasons.reason(
            'write.unexpected', entry=entry.id), plan)
        return _finish(journal, entry, entry.FAILED, outcome,
                       'an unexpected error interrupted it after it was '
                       'sent: it may be partly written (see the logs)')
    if getattr(said, 'code', None) == 'write.done_after_conflict' and \
            not plan.ports and _twin_applied(journal, entry):
        return _drop(journal, entry, Outcome(
            selection, SKIPPED, why('write.already_done'), plan))
    return _finish(journal, entry, entry.APPLIED,
                   Outcome(selection, DONE, said, plan),
                   new_generation=generation)


def _twin_applied(journal, entry):
    """The journal records as applied an identical write of the same
    consumer (another confirm of the same preview): the one that landed,
    whose entry says it all.  A write with port bindings has none: its
    bindings' revision check lets one through."""
    try:
        return journal.applied_twin(entry)
    except Exception:
        LOG.exception('journal entry %s: its twins could not be read',
                      entry.id)
        return False


def _drop(journal, entry, outcome):
    """Forget the entry of a write that changed nothing (it met its
    identical twin's write, already journaled): a second entry for one
    change would be noise."""
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
    to): nothing was written.  Any other error does not say; only reading
    it back does."""
    return isinstance(exc, (ks_exc.HTTPClientError, ks_exc.CatalogException))


def lost(exc):
    """The error lost the write's answer (:data:`LOST`): the write may
    yet land, so a read showing it has not is no proof it will not."""
    return isinstance(exc, LOST)


def settle(read, place, lost_answer):
    """Where a write with no clear answer left its subject: ``(where,
    found)``.

    ``read()`` gives the subject as it is now (raising when it cannot),
    ``place(found)`` says where that stands: :data:`AFTER`,
    :data:`BEFORE` or :data:`OTHER`.  An error answer ended the write: one
    read tells.  A ``lost_answer`` may belong to a write still being
    applied: the subject is read again after each of
    :data:`SETTLE_WAITS` until it holds the after, which only this write
    (or one identical) leaves; else its last two reads must agree, both
    generation and body: :data:`UNSETTLED` when they do not,
    :data:`UNREAD` when the last read failed.
    """
    found, where = _placed(read, place)
    for wait in SETTLE_WAITS if lost_answer else ():
        if where == AFTER:
            break
        time.sleep(wait)
        previous = (found, where)
        found, where = _placed(read, place)
        if where not in (AFTER, UNREAD) and (found, where) != previous:
            where = UNSETTLED
    return where, found


def _placed(read, place):
    try:
        found = read()
    except Exception:
        LOG.exception('a write with no clear answer could not be read back')
        return None, UNREAD
    return found, place(found)


def state(where):
    """How a subject read back (:func:`settle`) leaves a write's outcome
    unknown, as a clause."""
    seconds = sum(SETTLE_WAITS)
    if where == BEFORE:
        return why('unknown.before', seconds=seconds)
    if where == OTHER:
        return why('unknown.other', seconds=seconds)
    if where == UNREAD:
        return why('unknown.unread')
    return why('unknown.unsettled', seconds=seconds)


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
        if plan.partner:
            partner = plan.partner
            placement.post_allocations(placement_client, {
                plan.consumer: (plan.after, plan.generation, plan.project_id,
                                plan.user_id),
                partner['consumer']: (partner['after'], partner['generation'],
                                      partner['project_id'],
                                      partner['user_id'])})
        else:
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
    them back) where it holds something else or may yet change."""
    detail = placement.error_detail(exc)[0]
    conflict = isinstance(exc, ks_exc.Conflict)
    if refused(exc) and not conflict:
        raise _rolled_back(network_client, plan, written, FAILED,
                           why('write.failed', detail=detail))
    where, found = settle(lambda: _subject(placement_client, plan),
                          _consumer_place(plan), lost(exc))
    if conflict:
        return _conflicted(network_client, plan, written, exc, where, found)
    if where == AFTER:
        return why('write.done_unanswered', detail=detail), found.generation
    if where == BEFORE and not lost(exc):
        raise _rolled_back(network_client, plan, written, FAILED,
                           why('write.failed', detail=detail))
    if where == OTHER:
        raise _left(plan, written, FAILED, why(
            'write.failed_other', detail=detail,
            now=reasons.format_allocations(found.allocations)), where)
    raise _left(plan, written, UNKNOWN, why(
        'write.unknown', detail=detail, state=state(where)), where)


def _conflicted(network_client, plan, written, exc, where, found):
    """``(reason, new generation)`` of a write Placement answered with a
    409 whose consumer, read back, holds the plan's after: a gateway
    that retried the PUT after Placement applied it (nginx's
    ``proxy_next_upstream`` retries an idempotent PUT) meets its own
    write, so this is no refusal; :func:`journaled` drops it only for an
    identical write already journaled.  A consumer holding the before,
    or whose generation moved exactly once to something else
    (:func:`_other_write_only`), was refused: the bindings are put back.
    Anything else may be this write changed again since: unknown,
    restorable, the bindings left."""
    if where == AFTER:
        return why('write.done_after_conflict'), found.generation
    if where == BEFORE or _other_write_only(plan, found):
        raise _rolled_back(network_client, plan, written, SKIPPED,
                           _refusal(exc))
    now = reasons.format_allocations(found.allocations) if found else '-'
    raise _left(plan, written, UNKNOWN, why(
        'write.unknown_conflict', detail=placement.error_detail(exc)[0],
        now=now), where)


def _other_write_only(plan, found):
    """``found`` (the consumer read back, holding neither the before nor
    the after) is one write past the generation the plan read: that one
    write was not this one, which would have left the after.  Only for a
    plan that leaves the consumer holding something: emptying it deletes
    it, and a consumer written again starts its generations anew."""
    return (found is not None and plan.after and not plan.partner and
            plan.generation is not None and
            found.generation == plan.generation + 1)


class _Pair(typing.NamedTuple):
    """The two consumers of a plan with a partner, read back: the plan's
    own first, as a single consumer's read back is."""

    own: typing.Any
    partner: typing.Any

    @property
    def generation(self):
        return self.own.generation

    @property
    def allocations(self):
        return self.own.allocations


def _subject(placement_client, plan):
    """What a write of ``plan`` changes, as Placement holds it now."""
    own = _consumer(placement_client, plan.consumer)
    if not plan.partner:
        return own
    return _Pair(own, _consumer(placement_client,
                                plan.partner['consumer']))


def _consumer_place(plan):
    """Where a consumer (with its partner's, :class:`_Pair`) read back
    stands against ``plan``: the after or the before only where both
    stand there."""
    before = (plan.before, plan.before_project or plan.project_id,
              plan.before_user or plan.user_id)
    after = (plan.after, plan.project_id, plan.user_id)
    partner = plan.partner
    if partner:
        owner = (partner['project_id'], partner['user_id'])
        partner_after = (partner['after'],) + owner
        partner_before = (partner['before'],) + owner

    def place(found):
        if not partner:
            if _holds(found, *after):
                return AFTER
            return BEFORE if _holds(found, *before) else OTHER
        if _holds(found.own, *after) and _holds(found.partner,
                                                *partner_after):
            return AFTER
        if _holds(found.own, *before) and _holds(found.partner,
                                                 *partner_before):
            return BEFORE
        return OTHER
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
    was not written), and this one too when read back written.  One whose
    lost answer leaves it unknown is left, with the command that puts it
    back."""
    detail = neutron.error_detail(exc)
    if isinstance(exc, ks_exc.PreconditionFailed):
        return _rolled_back(network_client, plan, written, SKIPPED,
                            why('write.binding_changed', port=port))
    if refused(exc):
        return _rolled_back(network_client, plan, written, SKIPPED,
                            why('write.binding_refused', port=port,
                                detail=detail))
    change = plan.ports[port]
    where, body = settle(lambda: neutron.port_get(network_client, port),
                         lambda found: _port_place(found, change),
                         lost(exc))
    failure = why('write.binding_failed', port=port, detail=detail)
    if where == AFTER:
        written = dict(written, **{port: body.get('revision_number')})
    elif where == OTHER:
        return _rolled_back(network_client, plan, written, FAILED, failure,
                            {port: why('write.binding_now', allocation=str(
                                _profile(body).get('allocation') or '-'))})
    elif where != BEFORE or (lost(exc) and body is not None):
        return _rolled_back(network_client, plan, written, UNKNOWN, why(
            'write.binding_unknown', port=port, detail=detail,
            state=state(where), command=equivalents.binding(
                port, change['before'])), left=(port,))
    return _rolled_back(network_client, plan, written, FAILED, failure)


def _port_place(body, change):
    """Where a port read back stands against its ``change``; a port gone
    holds no binding."""
    if body is None:
        return BEFORE
    profile = _profile(body)
    if profile == change['after']:
        return AFTER
    return BEFORE if profile == change['before'] else OTHER


def _profile(body):
    return dict(body.get('binding:profile') or {})


def _rolled_back(network_client, plan, written, status, reason, failed=None,
                 left=()):
    """A :class:`WriteFailed` that left Placement as it was: the bindings
    ``written`` are put back, said with ``reason``.  ``failed``: ``{port:
    why}`` of bindings already known not to be put back; ``left``: those
    whose state is unknown, left as they are."""
    failed = dict(failed or {}, **_put_back(network_client, plan, written))
    for port, detail in sorted(failed.items()):
        return WriteFailed(status if status == UNKNOWN else FAILED, why(
            'write.rollback_failed', outcome=reason, port=port, detail=detail,
            command=equivalents.binding(port, plan.ports[port]['before'])),
            BEFORE, set(failed) | set(left))
    if written:
        reason = why('write.rolled_back', outcome=reason,
                     ports=', '.join(sorted(written)))
    return WriteFailed(status, reason, BEFORE, left)


def _left(plan, written, status, reason, where):
    """A :class:`WriteFailed` whose consumer holds something other than
    the plan's before, or may yet change: the bindings ``written`` are
    left as written, with the commands that put them back."""
    if written:
        reason = why('write.bindings_left', outcome=reason,
                     ports=', '.join(sorted(written)),
                     commands=' ; '.join(equivalents.binding(
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
    """The provider's delete or re-creation; after an error answer the
    provider is read back: gone (a delete) or whole as recorded (a
    re-creation), the write is done.  A delete is not generation-checked
    and a re-creation takes several writes: after a lost answer, only
    the after is proof."""
    deleting = plan.action == m.DELETE_PROVIDER
    try:
        if deleting:
            placement.delete_provider(placement_client, plan.provider)
        else:
            placement.create_provider(placement_client, plan.record)
    except ks_exc.ClientException as exc:
        if isinstance(exc, ks_exc.Conflict):
            raise WriteFailed(SKIPPED, _refusal(exc), BEFORE)
        detail = placement.error_detail(exc)[0]
        if refused(exc):
            raise WriteFailed(FAILED, why('write.failed', detail=detail),
                              BEFORE)
        where, _found = settle(
            lambda: placement.provider_record(placement_client,
                                              plan.provider),
            lambda record: _provider_place(record, plan, deleting),
            lost(exc))
        if where == AFTER:
            return why('provider.done_unanswered', name=plan.name,
                       detail=detail), None
        if where in (BEFORE, OTHER) and not lost(exc):
            raise WriteFailed(FAILED, why('write.failed', detail=detail),
                              where)
        raise WriteFailed(UNKNOWN, why(
            'provider.unknown', name=plan.name, detail=detail,
            state=state(where)), where)
    return why('write.done'), None


def _provider_place(record, plan, deleting):
    """Where a provider read back (None: gone) stands against ``plan``."""
    if deleting:
        return BEFORE if record else AFTER
    if record is None:
        return BEFORE
    return AFTER if _but_generation(record) == _but_generation(
        plan.record) else OTHER


def _but_generation(record):
    return {k: v for k, v in record.items() if k != 'generation'}
