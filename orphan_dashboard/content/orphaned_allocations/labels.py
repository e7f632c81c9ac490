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

import datetime

from django.contrib.humanize.templatetags import humanize
from django.utils.html import conditional_escape
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils import timesince
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from orphan_dashboard.audit import capacity
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import ownership
from orphan_dashboard.audit import reasons
from orphan_dashboard.sweep import status

VERDICTS = {code: _(kind.title) for code, kind in m.VERDICT_KINDS.items()}
"""The registry's titles (``N_``-marked in :mod:`~audit.model`),
translated when shown."""

ACTIONS = {code: _(kind.title) for code, kind in m.ACTION_KINDS.items()}


FITS = {code: _(kind.title) for code, kind in capacity.FIT_KINDS.items()}
"""Would a flavor fit: the engine's answers, translated when shown."""


def verdict(code):
    return VERDICTS.get(code, code)


def fit(code):
    return FITS.get(code, code)


def action(code):
    return ACTIONS.get(code, code)


def reason(value):
    """The engine's :class:`~reasons.Reason` in the user's language, its
    amounts grouped as the user's locale groups thousands (any other value
    as it is)."""
    return reasons.render(value, gettext, humanize.intcomma)


UNIT_ENDINGS = ('_KILOBIT_PER_SEC', '_KILOPACKET_PER_SEC')
"""Standard classes' unit endings: what a narrow label drops first."""
SHORT_CLASS = 13
"""The most characters a narrow label (a bar's, on the index) shows."""


def short_class(resource_class):
    """A resource class as a narrow label: its unit ending dropped
    (NET_BW_EGR_KILOBIT_PER_SEC: NET_BW_EGR); a name still too long is
    shortened to where it ends, as many of its last words as fit after an
    ellipsis (CUSTOM_RESERVATION_8F1D2C3B: …_8F1D2C3B), since classes
    differ at their ends and share their starts (CUSTOM_, NET_).  Its
    full name is the label's title."""
    name = resource_class
    for ending in UNIT_ENDINGS:
        if name.endswith(ending):
            name = name[:-len(ending)]
    if len(name) <= SHORT_CLASS:
        return name
    words = name.split('_')
    tail = words[-1][-(SHORT_CLASS - 2):]
    for word in reversed(words[:-1]):
        if len(word) + 1 + len(tail) + 2 > SHORT_CLASS:
            break
        tail = word + '_' + tail
    return '\u2026' + ('_' if len(words) > 1 else '') + tail


def html_format(text, **values):
    """A translated %-format text with HTML values, both escaped."""
    return mark_safe(conditional_escape(text) % {
        key: conditional_escape(value) for key, value in values.items()})


def breakable(name, after=':'):
    """A name (``host3:Open vSwitch agent:br-phys``) that a narrow cell
    may wrap after each ``after`` character (a colon; an underscore in
    resource classes) as well as at its spaces and hyphens, and nowhere
    inside a word (with the ``orphan-name`` style)."""
    if not name:
        return name
    parts = str(name).split(after)
    return mark_safe('<wbr>'.join(
        conditional_escape(part) + (after if i < len(parts) - 1 else '')
        for i, part in enumerate(parts)))


def breakable_resources(resources):
    """``{class: amount}`` as ``DISK_GB=10, NET_BW_EGR_KILOBIT_PER_SEC=1,000``
    (grouped in the user's locale; a text as it is), wrapping after its
    underscores too: a resource class is as wide as a column at 1024 px."""
    if isinstance(resources, dict):
        resources = reasons.format_resources(resources, humanize.intcomma)
    return breakable(resources, after='_')


def named(uuid, names):
    """A name the panel knows, its uuid one hover away; else the uuid."""
    name = names.get(uuid)
    if not name:
        return uuid or ''
    return format_html('<span title="{}">{}</span>', uuid, name)


def bindings(plan, names):
    """Each port binding ``plan`` (or a journal entry) writes in Neutron
    before Placement: the port, and the providers its allocation names
    before and after (``[(name, uuid)]``)."""
    return [dict(name=change.get('name'), port=port,
                 before=_placed(change['before'], names),
                 after=_placed(change['after'], names))
            for port, change in sorted(
                (getattr(plan, 'ports', None) or {}).items())]


def _placed(profile, names):
    allocation = (profile or {}).get('allocation')
    if not allocation:
        return []
    providers = allocation.values() if isinstance(allocation, dict) \
        else [allocation]
    return [(names.get(p), p) for p in sorted(set(providers))]


def consumer_owner(project, user, names):
    """A consumer's project and user by name (``names`` as
    ``service.names`` gives them); none for an incomplete consumer's."""
    if project == m.INCOMPLETE:
        return format_html('<span title="{}">{}</span>', project,
                           _('no project, no user'))
    return html_format(_('project %(project)s, user %(user)s'),
                       project=named(project, names.get('projects', {})),
                       user=named(user, names.get('users', {})))


def owner_named(reason, names):
    """A reason naming its server as Nova does and an incomplete
    consumer's server's project and user as Keystone does (``names`` as
    ``service.names`` gives them), rather than by their ids."""
    return reasons.server_named(reasons.owner_named(reason, names),
                                names.get('servers', {}))


def owner_change(plan, names):
    """``(before, after)`` owners of a plan that changes them, else
    ``(None, None)``: a preview shows the change, not only its reason."""
    if not getattr(plan, 'changes_owner', False):
        return None, None
    return (consumer_owner(plan.before_project, plan.before_user, names),
            consumer_owner(plan.project_id, plan.user_id, names))


READ_KINDS = {
    'providers': _('providers'),
    'servers': _('servers'),
    'migrations': _('migrations'),
}
"""What a sweep reads, as its progress bar names it."""

READ_TOTAL = _('%(done)s of %(total)s read (%(percent)s %%)')
"""The bar's text before the counts of each kind: what fills it."""

SERVICE_STATES = {
    'up': _('Up'),
    'down': _('Down'),
    'forced down': _('Forced down'),
    'sharing provider': _('Sharing provider'),
    'no compute node': _('No compute node'),
    'cell down': _('Cell down'),
    'not a compute node': _('Not a compute node'),
    'not mapped to a cell': _('Not mapped to a cell'),
    'replaced': _('Replaced by a new compute node'),
    'unconfirmed': _('Not confirmed by Nova'),
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


PROOFS = {code: _(title) for code, title in ownership.PROOF_TITLES.items()}
"""How an owner was proven (the engine's titles, ``N_``-marked in
:mod:`~audit.ownership`), translated when shown."""


def owner_proof(code):
    """How a provider's owner was proven, to be read after "proven by"."""
    return PROOFS.get(code, code)


def proven_by(proof):
    """``proven by …``, or None when nothing proved the owner or the
    report predates the proofs."""
    if proof in (None, ownership.UNPROVEN):
        return None
    return _('proven by %(proof)s') % {'proof': owner_proof(proof)}


def owner_proven(value, proof):
    """A provider's owner and how it was proven: ``Nova, proven by Nova's
    listing of its compute node``; the owner alone when nothing proved
    it."""
    proven = proven_by(proof)
    if proven is None:
        return owner(value)
    return _('%(owner)s, %(proven_by)s') % {'owner': owner(value),
                                            'proven_by': proven}


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


SWEEP_FAILURES = {
    status.TIMED_OUT: _('%(url)s did not answer within %(timeout)g s '
                        '(ORPHAN_AUDIT_API_TIMEOUT).'),
    status.UNREACHABLE: _('%(url)s could not be reached: %(detail)s'),
    status.ANSWERED: _('%(url)s answered %(status)s: %(detail)s'),
    status.EXITED: _('the sweeper process ended with status %(status)s '
                     '(killed, or out of memory?); Horizon\'s log may say '
                     'more.'),
}
"""How each kind of failure reads; any other says the error's own text."""


def sweep_failure(failure, now=None):
    """Why the last sweep failed and when, in words (a sweep's
    :func:`status.failure`), or '' when it did not."""
    if not failure:
        return ''
    when = datetime.datetime.fromtimestamp(failure['at'],
                                           datetime.timezone.utc)
    values = dict(failure, url=failure.get('url') or _('a request'))
    kind = failure['kind']
    if kind == status.TIMED_OUT and failure.get('timeout') is None:
        kind = status.FAILED        # the cloud's own timeout, unknown here
    words = SWEEP_FAILURES.get(kind)
    return _('The last audit failed %(age)s ago: %(why)s') % {
        'age': timesince.timesince(when, now),
        'why': words % values if words else failure['detail']}
