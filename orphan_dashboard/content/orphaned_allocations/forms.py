"""Confirm forms: what the preview showed comes back, is re-validated, and
goes to the engine, which re-reads and re-checks everything itself."""

import json
import re

from django.core.exceptions import ObjectDoesNotExist
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from horizon import exceptions
from horizon import forms
from horizon import messages

from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard import repair
from orphan_dashboard import service

UUID_RE = re.compile(r'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                     r'[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')
FINGERPRINT_RE = re.compile(r'^[0-9a-f]{16}$')


class BadSelection(ValueError):
    """A selection that did not come from our own pages."""


def parse_uuid(value):
    if not isinstance(value, str) or not UUID_RE.match(value):
        raise BadSelection(_('"%s" is not a UUID.') % value)
    return value.lower()


def parse_selection(text):
    """``consumer:provider:action[:instance]`` into a Selection."""
    parts = str(text).split(':')
    if len(parts) not in (3, 4):
        raise BadSelection(_('Malformed selection "%s".') % text)
    consumer, provider, action = parts[:3]
    if action not in m.ACTIONS:
        raise BadSelection(_('Unknown action "%s".') % action)
    instance = parse_uuid(parts[3]) if len(parts) == 4 and parts[3] else None
    return repair.Selection(parse_uuid(consumer), parse_uuid(provider), action,
                            instance)


def encode_selection(selection):
    return ':'.join([selection.consumer, selection.provider,
                     selection.action, selection.migration_instance or ''])


ROW_MESSAGES = {
    repair.DONE: (messages.success, _(
        '%(action)s of consumer %(consumer)s on provider %(provider)s: done.'
    )),
    repair.SKIPPED: (messages.warning, _(
        '%(action)s of consumer %(consumer)s on provider %(provider)s '
        'skipped: %(reason)s')),
    repair.FAILED: (messages.error, _(
        '%(action)s of consumer %(consumer)s on provider %(provider)s '
        'failed: %(reason)s')),
}


def _summary(status, count):
    if status == repair.DONE:
        return ngettext_lazy(
            '%(count)d allocation change written and journaled.',
            '%(count)d allocation changes written and journaled.',
            count) % {'count': count}
    if status == repair.SKIPPED:
        return ngettext_lazy(
            '%(count)d change skipped: nothing was written for it.',
            '%(count)d changes skipped: nothing was written for them.',
            count) % {'count': count}
    return ngettext_lazy('%(count)d change failed.',
                         '%(count)d changes failed.',
                         count) % {'count': count}


def _report_outcomes(request, outcomes):
    """One message per row (done, skipped with why, failed with
    Placement's error), then the counts."""
    counts = {}
    for outcome in outcomes:
        status = (outcome.status if outcome.status in ROW_MESSAGES
                  else repair.FAILED)
        counts[status] = counts.get(status, 0) + 1
        add, text = ROW_MESSAGES[status]
        add(request, text % {'action': labels.action(outcome.selection.action),
                             'consumer': outcome.selection.consumer,
                             'provider': outcome.selection.provider,
                             'reason': outcome.message})
    for status in (repair.DONE, repair.SKIPPED, repair.FAILED):
        if counts.get(status):
            messages.info(request, _summary(status, counts[status]))
    return counts.get(repair.DONE, 0)


class _RowsForm(forms.SelfHandlingForm):
    """The preview's rows, echoed back in one hidden field.

    Errors are the form's own (non-field) errors: a hidden field's errors
    would not be shown.
    """
    rows = forms.CharField(widget=forms.HiddenInput(), required=False)

    nothing = _('Nothing selected.')

    def clean(self):
        data = super().clean()
        data['rows'] = self.decode(data.get('rows') or '')
        return data

    def parse_key(self, key):
        """What a row's first item must be; raise ValueError otherwise."""
        raise NotImplementedError

    def decode(self, text):
        """Decode ``[[key, fingerprint], ...]``, refusing forgeries."""
        try:
            rows = [(self.parse_key(key), str(fingerprint))
                    for key, fingerprint in json.loads(text or '[]')]
        except (ValueError, TypeError) as exc:
            raise forms.ValidationError(
                _('The selection was not understood: %s') % exc)
        if not rows:
            raise forms.ValidationError(self.nothing)
        if not all(FINGERPRINT_RE.match(fp) for _key, fp in rows):
            raise forms.ValidationError(_('Malformed preview state.'))
        return rows


class RepairForm(_RowsForm):
    nothing = _('Nothing to repair.')

    def parse_key(self, key):
        return parse_selection(key)

    def handle(self, request, data):
        selections = [selection for selection, _fp in data['rows']]
        fingerprints = {s.consumer: fp for s, fp in data['rows']}
        try:
            outcomes = service.apply(request, selections, fingerprints)
        except Exception:
            exceptions.handle(request, _('Unable to apply the repairs: '
                                         'nothing was written.'))
            return False
        _report_outcomes(request, outcomes)
        return True


class RestoreForm(_RowsForm):
    nothing = _('Nothing to restore.')

    def parse_key(self, key):
        return int(key)

    def handle(self, request, data):
        try:
            entries = service.journal_entries(
                request, [entry_id for entry_id, _fp in data['rows']])
        except ObjectDoesNotExist:
            messages.error(request, _('No such journal entry.'))
            return False
        fingerprints = {e.consumer: fp
                        for e, (_id, fp) in zip(entries, data['rows'])}
        try:
            outcomes = service.restore(request, entries, fingerprints)
        except Exception:
            exceptions.handle(request, _('Unable to restore: nothing was '
                                         'written.'))
            return False
        _report_outcomes(request, outcomes)
        return True
