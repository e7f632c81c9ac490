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

"""The command lines' language: the panel's own catalog (the ``django``
domain of ``orphan_dashboard/locale``), chosen as any gettext program
chooses it, by ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES`` or ``LANG``.

One catalog for both front ends: the engine's reasons, verdicts and
actions are translated once, and read the same in the panel and in a
terminal; Python's own :mod:`gettext` reads it, so a command line needs
no Django settings to speak the operator's language.
"""

import gettext as gettext_module
import os

from orphan_dashboard.audit import reasons

LOCALE = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'locale')
DOMAIN = 'django'


ENVIRONMENT = ('LANGUAGE', 'LC_ALL', 'LC_MESSAGES', 'LANG')


def languages():
    """The languages the environment asks for, as :func:`gettext.find`
    reads them; read here on each call, since ``oslo_i18n`` (loaded with
    the ``openstack`` client) caches ``find`` by its arguments alone."""
    for variable in ENVIRONMENT:
        value = os.environ.get(variable)
        if value:
            return value.split(':')
    return ['C']


def translation():
    """The catalog the environment asks for (English when there is none:
    the messages are written in English)."""
    return gettext_module.translation(DOMAIN, LOCALE, languages(),
                                      fallback=True)


def _(message):
    """``message`` in the operator's language."""
    return translation().gettext(message)


def ngettext(singular, plural, count):
    """The form of ``singular`` or ``plural`` for ``count``."""
    return translation().ngettext(singular, plural, count)


def text(value):
    """The engine's :class:`~reasons.Reason` (anything else as it is) as
    text in the operator's language, in a command line's words."""
    return reasons.render(worded(value), translation().gettext)


def worded(value):
    """A reason (with the reasons inside it) in a command line's words:
    where the panel has the operator tick a foreign child, the option that
    names it; anything else as it is."""
    if isinstance(value, (tuple, list)):
        return type(value)(worded(part) for part in value)
    if not isinstance(value, reasons.Reason):
        return value
    params = {name: worded(part) for name, part in value.params}
    if value.code == 'blocker.foreign_child':
        return reasons.reason('blocker.foreign_child_option', **params)
    if value.code == 'blocker.unproven_child':
        return reasons.reason('blocker.unproven_child_option', **params)
    return reasons.Reason(value.code, tuple(sorted(params.items())))


def N_(message):
    """``message`` marked for the catalog, translated where it is shown."""
    return message
