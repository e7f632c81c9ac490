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

"""The shipped message catalogs: the templates hold every translatable
string of the package, the Russian catalog translates each of them with the
same placeholders, and the committed ``.mo`` is the ``.po`` compiled."""

import gettext
import pathlib
import re

from babel.messages import frontend
from babel.messages import mofile
from babel.messages import pofile
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOCALE = ROOT / 'orphan_dashboard' / 'locale'
RUSSIAN = LOCALE / 'ru' / 'LC_MESSAGES'

KEYWORDS = ('-k', 'ngettext_lazy:1,2', '-k', 'pgettext_lazy:1c,2',
            '-k', 'npgettext_lazy:1c,2,3')
"""Django's lazy plural and context forms, which Babel does not know; its
defaults already hold ``_``, ``gettext`` and the engine's ``N_``."""

PLACEHOLDER = re.compile(r'%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[a-zA-Z%]')


def _extract(tmp_path, domain):
    # Horizon's template extractor is named by the config.
    pytest.importorskip('horizon.utils.babel_extract_django')
    out = tmp_path / ('%s.pot' % domain)
    frontend.CommandLineInterface().run(
        ['pybabel', '-q', 'extract', '-F', str(ROOT / ('babel-%s.cfg' %
                                                       domain)),
         *KEYWORDS, '-o', str(out), str(ROOT / 'orphan_dashboard')])
    return _ids(out)


def _read(path):
    with open(path, 'rb') as f:
        return pofile.read_po(f)


def _ids(path):
    return {message.id for message in _read(path) if message.id}


def _singular(msgid):
    return msgid[0] if isinstance(msgid, tuple) else msgid


def _messages(mo):
    # The header differs with the compiler (msgfmt or Babel).
    catalog = gettext.GNUTranslations(mo)._catalog
    return {key: text for key, text in catalog.items() if key != ''}


def _placeholders(text):
    return sorted(p for p in PLACEHOLDER.findall(text) if p != '%%')


@pytest.mark.horizon
@pytest.mark.parametrize('domain', ['django', 'djangojs'])
def test_the_shipped_template_holds_every_string_of_the_package(
        tmp_path, domain):
    assert _extract(tmp_path, domain) == _ids(LOCALE / ('%s.pot' % domain))


@pytest.mark.horizon
def test_russian_translates_every_string_of_the_package(tmp_path):
    extracted = _extract(tmp_path, 'django')
    catalog = _read(RUSSIAN / 'django.po')
    translated = {m.id for m in catalog
                  if m.id and all(m.string if isinstance(m.string, tuple)
                                  else (m.string,))}
    assert sorted(map(_singular, extracted - translated)) == []
    assert not [m.id for m in catalog if m.id and m.fuzzy]


def test_russian_has_three_plural_forms():
    catalog = _read(RUSSIAN / 'django.po')
    assert catalog.num_plurals == 3
    for message in catalog:
        if message.pluralizable:
            assert len(message.string) == 3, message.id


def test_russian_keeps_the_placeholders_of_each_message():
    wrong = []
    for message in _read(RUSSIAN / 'django.po'):
        if not message.id:
            continue
        ids = message.id if message.pluralizable else (message.id,)
        strings = (message.string if message.pluralizable
                   else (message.string,))
        for text in strings:
            if _placeholders(text) != _placeholders(ids[-1]):
                wrong.append((_singular(message.id), text))
    assert wrong == []


def test_the_committed_mo_is_the_po_compiled(tmp_path):
    compiled = tmp_path / 'django.mo'
    with open(compiled, 'wb') as f:
        mofile.write_mo(f, _read(RUSSIAN / 'django.po'))
    with open(compiled, 'rb') as fresh, \
            open(RUSSIAN / 'django.mo', 'rb') as shipped:
        assert _messages(shipped) == _messages(fresh)
