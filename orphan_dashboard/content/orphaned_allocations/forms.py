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
from orphan_dashboard import repair
from orphan_dashboard import service

UUID_RE = re.compile(r'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                     r'[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')
FINGERPRINT_RE = re.compile(r'^[0-9a-f]{16}$')


class BadSelection(ValueError):
    """A selection that did not come from our own pages."""


def _uuid(value):
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
    instance = _uuid(parts[3]) if len(parts) == 4 and parts[3] else None
    return repair.Selection(_uuid(consumer), _uuid(provider), action,
                            instance)


def encode_selection(selection):
    return ':'.join([selection.consumer, selection.provider,
                     selection.action, selection.migration_instance or ''])


def _report_outcomes(request, outcomes):
    counts = {}
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        text = '%s %s (%s): %s' % (outcome.selection.action,
                                   outcome.selection.consumer,
                                   outcome.selection.provider,
                                   outcome.message)
        if outcome.status == repair.DONE:
            messages.success(request, _('Done: %s') % text)
        elif outcome.status == repair.SKIPPED:
            messages.warning(request, _('Skipped: %s') % text)
        else:
            messages.error(request, _('Failed: %s') % text)
    done = counts.get(repair.DONE, 0)
    if done:
        messages.info(request, ngettext_lazy(
            '%(count)d allocation change written and journaled.',
            '%(count)d allocation changes written and journaled.',
            done) % {'count': done})
    return done


class RepairForm(forms.SelfHandlingForm):
    rows = forms.CharField(widget=forms.HiddenInput())

    def clean_rows(self):
        """Decode ``[[selection, fingerprint], ...]``, refusing forgeries."""
        try:
            raw = json.loads(self.cleaned_data['rows'])
            rows = [(parse_selection(sel), fingerprint)
                    for sel, fingerprint in raw]
        except (ValueError, TypeError, BadSelection) as exc:
            raise forms.ValidationError(
                _('The selection was not understood: %s') % exc)
        if not rows:
            raise forms.ValidationError(_('Nothing to repair.'))
        for _selection, fingerprint in rows:
            if not FINGERPRINT_RE.match(str(fingerprint)):
                raise forms.ValidationError(_('Malformed preview state.'))
        return rows

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


class RestoreForm(forms.SelfHandlingForm):
    rows = forms.CharField(widget=forms.HiddenInput())

    def clean_rows(self):
        """Decode ``[[entry id, fingerprint], ...]``."""
        try:
            raw = json.loads(self.cleaned_data['rows'])
            rows = [(int(entry_id), str(fingerprint))
                    for entry_id, fingerprint in raw]
        except (ValueError, TypeError):
            raise forms.ValidationError(_('The selection was not understood.'))
        if not rows or not all(FINGERPRINT_RE.match(fp) for _e, fp in rows):
            raise forms.ValidationError(_('Nothing to restore.'))
        return rows

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
