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

"""The panel in Russian, from the shipped catalog: the language an operator
chose in Horizon's settings (its cookie) or the browser asks for."""

import html
from importlib import metadata
import pathlib
import re

from babel.messages import pofile
from django.conf import settings
from django.utils import translation

from orphan_dashboard.content.orphaned_allocations import finding_tables
from orphan_dashboard.content.orphaned_allocations import history_tables
from orphan_dashboard.content.orphaned_allocations import provider_tables
from orphan_dashboard.content.orphaned_allocations import service
from tests.views.base import AdminViewTests
from tests.views.base import detail
from tests.views.base import H1
from tests.views.base import helpers
from tests.views.base import INDEX

HORIZON = int(metadata.version('horizon').split('.')[0])
FROZEN_HEADERS = HORIZON < 25
"""Horizon 24 turns a column's verbose name into text when the table
class is made (``str()`` in ``Column.__init__``, lazy since Horizon 25):
there the headers stay in the language of that moment."""

CATALOG = (pathlib.Path(__file__).resolve().parents[2] / 'orphan_dashboard' /
           'locale' / 'ru' / 'LC_MESSAGES' / 'django.po')


def english_labels():
    """Our msgids that Russian does not keep as they are."""
    with open(CATALOG, 'rb') as f:
        catalog = pofile.read_po(f)
    labels = set()
    for message in catalog:
        ids = message.id if message.pluralizable else (message.id,)
        strings = (message.string if message.pluralizable
                   else (message.string,))
        labels.update(i for i in ids if i and i not in strings)
    return labels


def column_headers():
    tables = (provider_tables.ProvidersTable, finding_tables.AllocationsTable,
              history_tables.HistoryTable)
    return {str(column.verbose_name) for table in tables
            for column in table.base_columns.values()}


def texts(response):
    """Every text node of the page, and every title attribute."""
    page = response.content.decode()
    page = re.sub(r'(?s)<(script|style)\b.*?</\1>', '', page)
    found = re.findall(r'>([^<]+)<', page)
    found += re.findall(r'title="([^"]*)"', page)
    return {' '.join(html.unescape(t).split()) for t in found} - {''}


class RussianTests(AdminViewTests):
    def setUp(self):
        super().setUp()
        self.client.cookies[settings.LANGUAGE_COOKIE_NAME] = 'ru'
        # Django's locale middleware leaves the request's language active
        # in this thread: the tests after these must not run in Russian.
        self.addCleanup(translation.activate, settings.LANGUAGE_CODE)

    def assert_no_english_label(self, res):
        english = english_labels()
        if FROZEN_HEADERS:
            english -= column_headers()
        self.assertEqual([], sorted(t for t in texts(res) if t in english))

    @helpers.create_mocks({service: ['report']})
    def test_the_index_in_russian(self):
        self.reported()
        res = self.client.get(INDEX)
        self.assertContains(res, 'Осиротевшие выделения')
        self.assertContains(res, 'Источник эвакуации: 1')
        if not FROZEN_HEADERS:
            self.assertContains(res, 'Вычислительная служба')
        self.assertContains(res, 'Принудительно отключена')
        self.assertNotContains(res, 'Orphaned Allocations')
        self.assert_no_english_label(res)

    @helpers.create_mocks({service: ['report']})
    def test_a_provider_in_russian(self):
        self.reported()
        res = self.client.get(detail(H1))
        self.assertContains(res, 'Источник эвакуации')
        self.assertContains(res, 'эвакуирован с host1 на host2')
        if not FROZEN_HEADERS:
            self.assertContains(res, 'Потребитель')
        self.assertNotContains(res, 'Evacuated source')
        self.assertNotContains(res, 'evacuated from host1')
        self.assert_no_english_label(res)

    @helpers.create_mocks({service: ['report']})
    def test_the_browser_language_alone_is_enough(self):
        self.client.cookies.clear()
        self.reported()
        res = self.client.get(INDEX, HTTP_ACCEPT_LANGUAGE='ru')
        self.assertContains(res, 'Осиротевшие выделения')
