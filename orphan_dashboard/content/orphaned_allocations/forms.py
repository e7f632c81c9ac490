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

"""Confirm forms: the preview's plans come back signed, bound to the
session that saw them and to their age; the engine then re-reads and
re-plans every row and writes only where nothing changed since."""

import dataclasses
import hashlib
import re
import secrets
from urllib import parse as urlparse

from django.core.cache import cache
from django.core.exceptions import ObjectDoesNotExist
from django.core import signing
from django.urls import reverse
from django.utils.datastructures import MultiValueDict
from django.utils.html import format_html
from django.utils.html import format_html_join
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from horizon import exceptions
from horizon import forms
from horizon import messages

from orphan_dashboard.audit import model as m
from orphan_dashboard import conf
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import policies
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.operations import repairs

UUID_RE = re.compile(r'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                     r'[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')
SESSION_KEY = 'orphan_dashboard_preview_key'
HISTORY_TAB = 'orphaned_allocations__history'


class BadSelection(ValueError):
    """A selection that did not come from our own pages."""


class NotAllowed(BadSelection):
    """A selection the policy does not let this user write."""


def check_restore_allowed(request, entries):
    """Raise :class:`NotAllowed` when the policy refuses this user the
    restore of ``entries`` (:func:`policies.restore_rules`)."""
    rules = policies.restore_rules(entries)
    if not policies.allowed(request, rules):
        raise NotAllowed(policies.REFUSED[rules])


def parse_uuid(value):
    if not isinstance(value, str) or not UUID_RE.match(value):
        raise BadSelection(_('"%s" is not a UUID.') % str(value)[:40])
    return value.lower()


def parse_selection(text):
    """``consumer:provider:action`` into a Selection (ids only)."""
    parts = str(text).split(':')
    if len(parts) != 3:
        raise BadSelection(_('Malformed selection "%s".') % str(text)[:120])
    consumer, provider, action = parts
    if action not in m.ACTIONS:
        raise BadSelection(_('Unknown action "%s".') % action[:40])
    return m.Selection(parse_uuid(consumer), parse_uuid(provider),
                       action)


def encode_selection(selection):
    return ':'.join([selection.consumer, selection.provider,
                     selection.action])


def check_count(count):
    """Refuse more rows than one confirm may carry."""
    limit = conf.MAX_ROWS.get()
    if count > limit:
        raise BadSelection(_(
            'Too many rows (%(count)d): at most %(limit)d at once '
            '(ORPHAN_AUDIT_MAX_ROWS). Select fewer: nothing was written.') %
            {'count': count, 'limit': limit})


def _selection_key(request, token):
    """The cache key of a kept selection: only the session that kept it
    finds it."""
    bound = '%s:%s' % (_salt(request, 'selection'), token)
    return 'orphan_dashboard:selection:' + hashlib.sha256(
        bound.encode()).hexdigest()


def keep_selection(request, query):
    """A short token for a preview's ``query`` (``{name: [values]}``),
    which stays on the server.

    A batch's selection outgrows any URL (Apache cuts the request line at
    8,190 bytes, Django refuses to redirect past its limit); it is kept in
    Django's cache, which every Horizon process shares (memcached by
    default), not in the session, which Horizon rewrites whole on every
    request (the sweep's polling would race it away) and which may be a
    cookie.  Kept as long as a preview can be confirmed.
    """
    token = secrets.token_urlsafe(16)
    cache.set(_selection_key(request, token), dict(query),
              conf.PREVIEW_MAX_AGE.get())
    return token


def kept_selection(request, token):
    """The query :func:`keep_selection` kept for this session under
    ``token``, as a ``MultiValueDict``; :class:`BadSelection` when there is
    none (expired, another session's, made up)."""
    query = cache.get(_selection_key(request, str(token)[:64]))
    if not isinstance(query, dict):
        raise BadSelection(_('This selection is no longer available: select '
                             'the rows again. Nothing was written.'))
    return MultiValueDict(query)


def dump(plan):
    """A plan as JSON-able data, for the confirm form (which signs it)."""
    kind = 'provider' if isinstance(plan, repairs.ProviderPlan) else \
        'allocations'
    return dict(dataclasses.asdict(plan), kind=kind)


def load(data):
    """The plan :func:`dump` made; ``ValueError`` on anything else."""
    try:
        data = dict(data)
        kind = data.pop('kind')
        cls = repairs.ProviderPlan if kind == 'provider' else m.Plan
        if kind not in ('provider', 'allocations'):
            raise ValueError(kind)
        return cls(**data)
    except (TypeError, KeyError) as exc:
        raise ValueError('not a plan: %s' % exc)


def _salt(request, kind):
    """Binds a signed preview to this user's session, to its form and to
    the cloud and region it was read from: a user who switched region (or
    logged in to another Keystone) in between confirms nothing of it."""
    key = request.session.get(SESSION_KEY)
    if not key:
        key = request.session[SESSION_KEY] = secrets.token_hex(16)
    return 'orphan_dashboard:%s:%s:%s:%s' % (
        kind, request.user.id, service.cloud_for_request(request).key, key)


def sign(request, kind, data):
    """What a preview showed, signed for its confirm."""
    return signing.dumps(data, salt=_salt(request, kind), compress=True)


def unsign(request, kind, text):
    """The data :func:`sign` signed in this session, not older than
    ``ORPHAN_AUDIT_PREVIEW_MAX_AGE``; a clear error otherwise."""
    max_age = conf.PREVIEW_MAX_AGE.get()
    try:
        return signing.loads(text, salt=_salt(request, kind),
                             max_age=max_age)
    except signing.SignatureExpired:
        raise forms.ValidationError(_(
            'This preview is more than %d minutes old: nothing was written. '
            'Open it again to see the allocations as they are now.') %
            (max_age // 60))
    except signing.BadSignature:
        raise forms.ValidationError(_(
            'This confirmation does not come from a preview of yours, or '
            'was altered: nothing was written. Open the preview again.'))
    except Exception:
        raise forms.ValidationError(_('The selection was not understood: '
                                      'nothing was written.'))


ROW_TEXTS = {
    repairs.DONE: _('%(action)s of %(what)s: done.'),
    repairs.SKIPPED: _('%(action)s of %(what)s skipped: %(reason)s'),
    repairs.FAILED: _('%(action)s of %(what)s failed: %(reason)s'),
    repairs.UNKNOWN: _('%(action)s of %(what)s: outcome unknown: %(reason)s'),
}

PROVIDER_TEXTS = {
    repairs.DONE: _('%(action)s %(what)s: done.'),
    repairs.SKIPPED: _('%(action)s %(what)s skipped: %(reason)s'),
    repairs.FAILED: _('%(action)s %(what)s failed: %(reason)s'),
    repairs.UNKNOWN: _('%(action)s %(what)s: outcome unknown: %(reason)s'),
}
"""A provider's or a compute service's row: its action names what it
acts on, the name follows."""

WORST_FIRST = (repairs.FAILED, repairs.UNKNOWN, repairs.SKIPPED,
               repairs.DONE)
"""The order a batch's rows are named in, and the message's level: its
worst row's."""

LEVELS = {repairs.FAILED: messages.error, repairs.UNKNOWN: messages.error,
          repairs.SKIPPED: messages.warning, repairs.DONE: messages.success}

COUNTS = {
    repairs.FAILED: ngettext_lazy('%(count)d failed', '%(count)d failed',
                                  'count'),
    repairs.UNKNOWN: ngettext_lazy(
        '%(count)d of unknown outcome (it may have been written)',
        '%(count)d of unknown outcome (they may have been written)',
        'count'),
    repairs.SKIPPED: ngettext_lazy('%(count)d skipped', '%(count)d skipped',
                                   'count'),
}
"""How many rows failed, are of unknown outcome and were skipped, after
the done ones (which each form counts in its own words)."""

NAMED = 5
"""The rows a batch's message names, worst first (:data:`WORST_FIRST`;
the done ones only in a batch this small): the others are counted, and
its link to History leads to every row.  Django keeps messages in a
cookie, and drops what does not fit."""

RESULT_KEY = 'result'
"""Kept with a batch (:func:`keep_result`): its rows History has no entry
for."""


def _status(outcome):
    return (outcome.status if outcome.status in ROW_TEXTS
            else repairs.FAILED)


def _row_text(outcome, names):
    """The sentence of one row's outcome, its server and provider by
    name where ``names`` knows them."""
    status = _status(outcome)
    text = ROW_TEXTS[status]
    selection = outcome.selection
    provider = names.get(selection.provider) or selection.provider
    if not selection.consumer:
        text, what = PROVIDER_TEXTS[status], provider
    elif names.get(selection.consumer):
        what = _('server %(server)s on %(provider)s') % {
            'server': names[selection.consumer], 'provider': provider}
    else:
        what = _('consumer %(consumer)s on %(provider)s') % {
            'consumer': selection.consumer, 'provider': provider}
    return text % {'action': labels.action(selection.action),
                   'what': what,
                   'reason': labels.reason(outcome.message)}


def _result_key(request, batch):
    return _selection_key(request, '%s:%s' % (RESULT_KEY, batch))


def keep_result(request, batch, texts):
    """Keep ``texts``, the rows of ``batch`` that wrote nothing (skipped,
    not possible), for its History, in this session, as long as a preview
    can be confirmed: the journal holds only what was written."""
    cache.set(_result_key(request, batch), [str(t) for t in texts],
              conf.PREVIEW_MAX_AGE.get())


def kept_result(request, batch):
    """What :func:`keep_result` kept of ``batch`` for this session, or an
    empty list."""
    found = cache.get(_result_key(request, str(batch)[:64]))
    return found if isinstance(found, list) else []


def batch_link(batch):
    """A link to ``batch`` in History (:class:`views.IndexView` filters
    it on ``?batch=``)."""
    return format_html(
        '<a class="orphan-batch-link" href="{}?{}">{}</a>',
        reverse('horizon:admin:orphaned_allocations:index'),
        urlparse.urlencode({'tab': HISTORY_TAB, 'batch': batch}),
        _('See every row of this batch in History.'))


def _journal_batch(request, outcomes):
    """The journal batch of ``outcomes``, or None when nothing was
    journaled (or the journal cannot say)."""
    try:
        return service.batch_of(request, outcomes)
    except Exception:
        return None


def report_outcomes(request, outcomes, names, done):
    """One message for a whole batch, however large: how many rows were
    ``done`` (an ``ngettext_lazy`` on ``count``), failed and skipped; up
    to :data:`NAMED` rows by name, failures first; a link to the batch in
    History, where the rows that wrote nothing are kept
    (:func:`keep_result`)."""
    by_status = {status: [] for status in WORST_FIRST}
    for outcome in outcomes:
        by_status[_status(outcome)].append(outcome)
    parts = [done % {'count': len(by_status[repairs.DONE])}] + [
        COUNTS[status] % {'count': len(by_status[status])}
        for status in WORST_FIRST[:-1] if by_status[status]]
    named = [o for status in WORST_FIRST for o in by_status[status]
             if status != repairs.DONE or len(outcomes) <= NAMED][:NAMED]
    # A batch that journaled nothing still has its rows, under an id
    # no journal entry has.
    batch = _journal_batch(request, outcomes) or secrets.token_hex(16)
    unwritten = [_row_text(o, names) for o in outcomes
                 if o.entry_id is None]
    if unwritten:
        keep_result(request, batch, unwritten)
    worst = next((s for s in WORST_FIRST if by_status[s]), repairs.DONE)
    LEVELS[worst](request, format_html(
        '{}.{}<br>{}', ', '.join(str(p) for p in parts),
        format_html_join('', '<br>{}', ((_row_text(o, names),)
                                        for o in named)),
        batch_link(batch)))


class _SignedRowsForm(forms.SelfHandlingForm):
    """The preview's rows, signed, in one hidden field.

    Errors are the form's own (non-field) errors: a hidden field's errors
    would not be shown.
    """
    rows = forms.CharField(widget=forms.HiddenInput(), required=False)

    kind = None
    """What its signed rows are of, and the name of its view's action."""
    policy_rules = policies.WRITE_ALLOCATIONS
    """The rules its write needs: its view refuses the preview as well
    (a restore of a provider's entries needs more, checked per entry by
    :func:`check_restore_allowed`)."""
    nothing = _('Nothing selected.')
    empty_ok = False
    """Whether a confirm may carry no rows (a decommission with nothing to
    repair still has its deletes)."""
    failure = _('Unable to write: nothing was written.')

    def clean(self):
        data = super().clean()
        signed = unsign(self.request, self.kind, data.get('rows') or '')
        try:
            data['rows'] = self.decode(signed)
        except (BadSelection, ValueError, TypeError, KeyError,
                AttributeError, RecursionError):
            raise forms.ValidationError(_('The selection was not understood: '
                                          'nothing was written.'))
        if not data['rows'] and not self.empty_ok:
            raise forms.ValidationError(self.nothing)
        try:
            check_count(len(data['rows']))
        except BadSelection as exc:
            raise forms.ValidationError(str(exc))
        data['signed'] = signed
        return data

    def decode(self, signed):
        return [load(plan) for plan in signed['plans']]

    def handle(self, request, data):
        try:
            outcomes = self.write(request, data)
        except ObjectDoesNotExist:
            messages.error(request, _('No such journal entry.'))
            return False
        except NotAllowed as exc:
            # Refused as the view refuses a user its rules: back, nothing
            # written.
            messages.error(request, exc)
            return True
        except repairs.Held as exc:
            messages.error(request, labels.reason(exc.reason))
            return True
        except Exception:
            exceptions.handle(request, self.failure)
            return False
        self.report(request, outcomes, data['signed'])
        return True

    def report(self, request, outcomes, signed):
        """The batch's one message: its outcomes, then the rows its
        preview could not plan, as skipped."""
        refused = [repairs.Outcome(m.Selection(*row[:3]),
                                   repairs.SKIPPED, row[3])
                   for row in _refused(signed)]
        report_outcomes(request, outcomes + refused,
                        signed.get('names') or {}, self.done)


def _refused(signed):
    """The rows a preview showed as not possible, ``[consumer, provider,
    action, why]`` (:meth:`views._PreviewView.signed_refused`); none from
    a blob of any other shape."""
    refused = signed.get('refused') if isinstance(signed, dict) else None
    if isinstance(refused, list) and all(
            isinstance(r, list) and len(r) == 4 and
            all(isinstance(x, str) for x in r) for r in refused):
        return refused
    return []


class RepairForm(_SignedRowsForm):
    kind = 'repair'
    done = ngettext_lazy('%(count)d repair done', '%(count)d repairs done',
                         'count')
    nothing = _('Nothing to repair.')
    failure = _('Unable to read the cloud again before writing: nothing was '
                'written.')

    def write(self, request, data):
        return service.apply(request, data['rows'],
                             data['signed'].get('hints', ()))


class DeleteUnknownForm(RepairForm):
    """Every unknown consumer chosen at once: written only when the count
    the preview showed is typed back."""
    kind = 'delete_unknown'
    count = forms.IntegerField(
        label=_('Number of consumers to delete'), min_value=0,
        help_text=_('Type the number of unknown consumers shown above to '
                    'confirm that none of them is another service\'s.'))
    done = ngettext_lazy('%(count)d unknown consumer deleted',
                         '%(count)d unknown consumers deleted', 'count')
    nothing = _('No unknown consumer to delete.')

    def clean(self):
        data = super().clean()
        rows = data.get('rows')
        if isinstance(rows, list) and data.get('count') != len(rows):
            raise forms.ValidationError(_(
                'Type %(count)d, the number of unknown consumers shown, to '
                'confirm: nothing was written.') % {'count': len(rows)})
        return data


class RestoreForm(_SignedRowsForm):
    kind = 'restore'
    done = ngettext_lazy('%(count)d restore done',
                         '%(count)d restores done', 'count')
    nothing = _('Nothing to restore.')
    failure = _('Unable to restore: nothing was written.')

    def decode(self, signed):
        return [(int(entry_id), load(plan))
                for entry_id, plan in signed['plans']]

    def write(self, request, data):
        ids = [entry_id for entry_id, _plan in data['rows']]
        entries = service.journal_entries(request, ids)
        check_restore_allowed(request, entries)
        return service.restore(request, entries, dict(data['rows']))


class DeleteProvidersForm(_SignedRowsForm):
    kind = 'delete_provider'
    done = ngettext_lazy('%(count)d provider deleted',
                         '%(count)d providers deleted', 'count')
    policy_rules = policies.DELETE_PROVIDERS
    nothing = _('Nothing to delete.')
    failure = _('Unable to delete the providers: nothing was deleted.')

    def write(self, request, data):
        return service.delete_providers(request, data['rows'])


def _offered(signed, key='optional'):
    """What a decommission's preview offered to delete by a tick (the
    unknown consumers, or with ``key='foreign'`` the foreign children as
    ``[uuid, label]``); none from a blob of any other shape."""
    offered = signed.get(key) if isinstance(signed, dict) else None
    if key == 'foreign':
        if isinstance(offered, list) and all(
                isinstance(c, list) and len(c) == 2 and
                all(isinstance(x, str) for x in c) for c in offered):
            return [tuple(c) for c in offered]
        return []
    if isinstance(offered, list) and all(isinstance(c, str)
                                         for c in offered):
        return offered
    return []


def _previewed(signed):
    """``(provider, whole_service)`` a decommission's signed preview was
    of, or None from a blob of any other shape."""
    if not isinstance(signed, dict):
        return None
    bound = signed.get('bound')
    whole = bound.get('whole_service') if isinstance(bound, dict) else None
    try:
        return parse_uuid(signed.get('provider')), whole is True
    except BadSelection:
        return None


class DecommissionForm(_SignedRowsForm):
    """The repairs of a decommission, signed, and the unknown consumers the
    operator chose to delete (each an explicit tick)."""
    kind = 'decommission'
    policy_rules = policies.DECOMMISSION
    empty_ok = True
    failure = _('Unable to read the cloud again before writing: nothing was '
                'written.')
    delete_unknown = forms.MultipleChoiceField(
        label=_('Delete these consumers Nova does not know: each must be '
                'deleted for the decommission'), required=False,
        widget=forms.CheckboxSelectMultiple)

    delete_foreign = forms.MultipleChoiceField(
        label=_("Delete these providers, which are not Nova's, here rather "
                'than through their owner: each must be deleted for the '
                'decommission'), required=False,
        widget=forms.CheckboxSelectMultiple)

    whole_service = forms.BooleanField(required=False)

    def __init__(self, request, *args, **kwargs):
        super().__init__(request, *args, **kwargs)
        optional = kwargs.get('initial', {}).get('optional', ())
        foreign = kwargs.get('initial', {}).get('foreign', ())
        whole = kwargs.get('initial', {}).get('whole_service_host')
        self.previewed = None
        if self.data.get('rows'):
            try:
                signed = unsign(request, self.kind, self.data['rows'])
                self.previewed = _previewed(signed)
                optional = _offered(signed)
                foreign = _offered(signed, 'foreign')
                bound = (signed.get('bound')
                         if isinstance(signed, dict) else None)
                whole = (bound.get('whole_service')
                         if isinstance(bound, dict) else None)
            except forms.ValidationError:
                optional, foreign, whole = (), (), None
        self.offered = list(optional)
        self.foreign = [uuid for uuid, _label in foreign]
        for name, choices in (('delete_unknown',
                               [(c, c) for c in self.offered]),
                              ('delete_foreign', list(foreign))):
            field = self.fields[name]
            field.choices = choices
            if not choices:
                # No heading over an empty list; anything posted is refused.
                field.widget = forms.MultipleHiddenInput()
        if whole:
            # Deleting a whole multi-node service is ticked, never implied.
            field = self.fields['whole_service']
            field.required = True
            field.label = _('Delete this compute service and every node of '
                            'it, as listed above')
        else:
            del self.fields['whole_service']

    def clean(self):
        """Every offered consumer ticked: the decommission clears every
        allocation, so one left unticked would stop it after the
        confirm, halfway."""
        data = super().clean()
        if set(self.offered) - set(data.get('delete_unknown') or ()):
            self.add_error('delete_unknown', _(
                'Tick every consumer listed, or cancel: the decommission '
                'cannot delete the compute service while they hold its '
                'providers. Nothing was written.'))
        if set(self.foreign) - set(data.get('delete_foreign') or ()):
            self.add_error('delete_foreign', _(
                'Tick every provider listed, or cancel and have its owner '
                'remove it: the decommission cannot delete the tree while '
                'they are in it. Nothing was written.'))
        return data

    def write(self, request, data):
        return service.decommission_apply(
            request, data['signed']['provider'], data['rows'],
            set(data.get('delete_unknown') or ()),
            bound=data['signed'].get('bound'),
            children=set(data.get('delete_foreign') or ()))

    def report(self, request, outcomes, signed):
        """One message: how many steps were done, where it stopped and
        why, and a link to the batch in History."""
        names = signed.get('names') or {}
        host = names.get(signed['provider']) or signed['provider']
        done = sum(1 for o in outcomes if o.status == repairs.DONE)
        stopped = next((o for o in outcomes if o.status != repairs.DONE),
                       None)
        if stopped is None:
            add = messages.success
            text = ngettext_lazy(
                'Decommission of %(host)s: %(count)d step done and '
                'journaled.',
                'Decommission of %(host)s: %(count)d steps done and '
                'journaled.', done) % {'host': host, 'count': done}
        else:
            add = LEVELS[_status(stopped)]
            why = _row_text(stopped, names)
            text = ngettext_lazy(
                'Decommission of %(host)s: %(done)d of %(count)d step done. '
                '%(why)s',
                'Decommission of %(host)s: %(done)d of %(count)d steps done. '
                '%(why)s', len(outcomes)) % {
                    'host': host, 'done': done, 'count': len(outcomes),
                    'why': why}
        batch = _journal_batch(request, outcomes)
        if batch:
            text = format_html('{} {}', text, batch_link(batch))
        add(request, text)
