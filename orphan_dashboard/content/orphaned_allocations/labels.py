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

"""Translatable names for the engine's verdict and action codes."""

from django.utils import timesince
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons

VERDICTS = {
    m.OK: _('OK'),
    m.EVACUATED_SOURCE: _('Evacuated source'),
    m.MOVED: _('Moved'),
    m.DELETED_INSTANCE: _('Deleted instance'),
    m.STALE_MIGRATION: _('Stale migration'),
    m.MISSING: _('Missing'),
    m.WRONG_AMOUNT: _('Wrong amount'),
    m.INCOMPLETE_CONSUMER: _('Incomplete consumer'),
    m.PROTECTED: _('Protected'),
    m.UNKNOWN_CONSUMER: _('Unknown consumer'),
}

ACTIONS = {
    m.TRIM: _('Trim to current host'),
    m.DELETE_AND_HEAL: _('Delete and heal'),
    m.DELETE: _('Delete'),
    m.HEAL: _('Heal'),
    m.SET_OWNER: _('Set project and user'),
    m.RESTORE: _('Restore'),
    m.DELETE_PROVIDER: _('Delete provider'),
    m.DELETE_SERVICE: _('Delete compute service'),
}


def verdict(code):
    return VERDICTS.get(code, code)


def action(code):
    return ACTIONS.get(code, code)


def reason(value):
    """The engine's :class:`~reasons.Reason` in the user's language (any
    other value as it is)."""
    return reasons.render(value, gettext)


READ_KINDS = {
    'providers': _('providers'),
    'servers': _('servers'),
    'migrations': _('migrations'),
}
"""What a sweep reads, as its progress bar names it."""

SERVICE_STATES = {
    'up': _('Up'),
    'down': _('Down'),
    'forced down': _('Forced down'),
    'sharing provider': _('Sharing provider'),
    'no compute node': _('No compute node'),
    'cell down': _('Cell down'),
    'not a compute node': _('Not a compute node'),
    'unknown': _('Unknown'),
}
DISABLED_SUFFIX = ' (disabled)'


def service_state(text):
    """The engine's compute service state, e.g. ``up (disabled)``."""
    if text and text.endswith(DISABLED_SUFFIX):
        state = text[:-len(DISABLED_SUFFIX)]
        return _('%(state)s (disabled)') % {
            'state': SERVICE_STATES.get(state, state)}
    return SERVICE_STATES.get(text, text)


OWNERS = {
    'nova': _('Nova'),
    'neutron': _('Neutron'),
    'blazar': _('Blazar'),
    'cyborg': _('Cyborg'),
}


def owner(value):
    """Who likely made a provider (:mod:`audit.ownership`)."""
    if not value:
        return _("unknown, not proven Nova's")
    return OWNERS.get(value, value.capitalize())


def snapshot_age(taken_at, now=None):
    """When the audit was taken, as an operator reads it: "just now" and
    seconds rather than Django's "0 minutes"."""
    if taken_at is None:
        return ''
    seconds = ((now or timezone.now()) - taken_at).total_seconds()
    if seconds < 5:
        return _('Audit snapshot taken just now.')
    if seconds < 60:
        return _('Audit snapshot taken %(seconds)d s ago.') % {
            'seconds': seconds}
    return _('Audit snapshot taken %(age)s ago.') % {
        'age': timesince.timesince(taken_at, now)}
