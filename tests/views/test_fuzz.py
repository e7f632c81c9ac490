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

"""Every form of the panel, posted random bodies: random fields and
values, forged selections, signed blobs of no preview, missing fields,
huge values, any unicode.  None answers 500, writes to Placement or Nova
(the write functions and keystoneauth are watched) or journals anything.
"""

from unittest import mock
from urllib import parse

from django.core import signing
from django.urls import reverse
import hypothesis
from hypothesis import strategies as st
import pytest

from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import forms
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.models import JournalEntry
from orphan_dashboard.writing import journal
from tests.views.base import AdminViewTests
from tests.views.base import DELETE_PROVIDER
from tests.views.base import detail
from tests.views.base import GONE
from tests.views.base import H1
from tests.views.base import H3
from tests.views.base import Incidents
from tests.views.base import INDEX
from tests.views.base import REPAIR
from tests.views.base import RESTORE
from tests.views.fakes import dead_host1

DECOMMISSION = reverse('horizon:admin:orphaned_allocations:decommission')
EXPORTS = [reverse('horizon:admin:orphaned_allocations:%s' % name,
                   args=[fmt])
           for name in ('export', 'export_findings') for fmt in ('csv',
                                                                 'json')]
WRITES = ('apply', 'restore', 'delete_providers', 'decommission_apply')
"""The service functions that write to Placement or Nova (and journal)."""
FIELDS = ('rows', 'delete_unknown', 'delete_foreign', 'optional', 'foreign',
          'sel', 'selection', 'provider', 'entry',
          'batch', 'next', 'action', 'object_ids', 'csrfmiddlewaretoken',
          'providers__filter_providers__q',
          'providers__filter_providers__q_field',
          'allocations__filter_allocations__q',
          'allocations__filter_allocations__q_field',
          'history__filter_history__q', 'history__filter_history__q_field',
          'consumer', 'tab', 'show', 'marker', 'refresh')
ACTIONS = ('providers__refresh', 'providers__fix_recommended',
           'providers__filter_providers', 'allocations__filter_allocations',
           'history__filter_history', 'history__restore_selected',
           'allocations__trim_selected', 'allocations__delete_selected',
           'allocations__heal_selected', 'providers__toggle_all',
           'providers__delete_provider', 'providers__decommission')
URLS = {'repair': REPAIR, 'restore': RESTORE,
        'delete_provider': DELETE_PROVIDER, 'decommission': DECOMMISSION}
KINDS = tuple(URLS)

text = st.text(st.characters(blacklist_categories=('Cs',)), max_size=60)
uuids = st.one_of(st.sampled_from([H1, H3, GONE]), st.uuids().map(str),
                  st.uuids().map(lambda u: str(u).upper()))
forged_selection = st.builds(
    lambda consumer, provider, action: '%s:%s:%s' % (consumer, provider,
                                                     action),
    st.one_of(uuids, text), st.one_of(uuids, text),
    st.one_of(st.sampled_from(m.ACTIONS), text))
junk = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), text,
              st.floats(allow_nan=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(text, inner, max_size=4)),
    max_leaves=12)
signed_data = st.dictionaries(st.one_of(st.sampled_from(
    ('plans', 'names', 'hints', 'optional')), text), junk, max_size=4)
"""What a confirm's blob holds, as junk (never a ``provider``: a
decommission of no plan but a provider is a legitimate one)."""
signed_junk = st.builds(
    lambda data, kind, salt: signing.dumps(data, salt=salt or kind),
    signed_data, st.sampled_from(KINDS), text)
"""Signed, but never with a session's salt: what anyone can make."""
value = st.one_of(
    text, uuids, forged_selection, signed_junk, st.sampled_from(ACTIONS),
    st.integers().map(str), st.just(''),
    st.builds(lambda c, n: c * n, st.characters(
        blacklist_categories=('Cs',)), st.integers(10000, 100000)))
bodies = st.dictionaries(st.one_of(st.sampled_from(FIELDS), text),
                         st.one_of(value, st.lists(value, max_size=4)),
                         max_size=6)
SETTINGS = hypothesis.settings(
    max_examples=50, deadline=None, database=None,
    suppress_health_check=list(hypothesis.HealthCheck))


class FuzzTests(AdminViewTests):
    databases = {'default', 'orphan_journal'}

    def setUp(self):
        super().setUp()
        incidents = Incidents()
        _incidents, decommission = dead_host1()
        patches = [
            mock.patch.object(service, 'report',
                              return_value=incidents.report),
            mock.patch.object(service, 'refresh'),
            mock.patch.object(service, 'preview', return_value=[]),
            mock.patch.object(service, 'preview_restore', return_value=[]),
            mock.patch.object(service, 'preview_provider_delete',
                              return_value=[]),
            mock.patch.object(service, 'preview_decommission',
                              return_value=decommission),
            mock.patch.object(service, 'findings_export',
                              return_value=([], 'orphan-findings')),
        ] + [mock.patch.object(service, name, wraps=getattr(service, name))
             for name in WRITES]
        self.mocks = {}
        for patch in patches:
            self.mocks[patch.attribute] = patch.start()
            self.addCleanup(patch.stop)
        # A session with its preview key, as after a first preview.
        self.session_request = self.client.get(
            DECOMMISSION, {'provider': H1}).wsgi_request

    def check(self, res, where, body):
        self.assertLess(res.status_code, 500, (where, body))
        for name in WRITES:
            self.mocks[name].assert_not_called()
        self.assertEqual(
            0, JournalEntry.objects.using(journal.DATABASE).count())

    def post_each(self, urls, body, modal=False):
        """``modal``: as the modal's script posts (the form alone)."""
        extra = {'HTTP_X_REQUESTED_WITH': 'XMLHttpRequest'} if modal else {}
        for url in urls:
            self.check(self.client.post(url, body, **extra), url, body)

    @pytest.mark.error_messages
    def test_the_confirms(self):
        @SETTINGS
        @hypothesis.given(body=bodies, modal=st.booleans())
        def post(body, modal):
            self.post_each(URLS.values(), body, modal)
        post()

    @pytest.mark.error_messages
    def test_the_confirms_signed_for_this_session_with_junk(self):
        """Even signed with this session's key (which only the server
        has), data that is no previewed plan is refused."""
        @SETTINGS
        @hypothesis.given(data=signed_data, kind=st.sampled_from(KINDS),
                          ticked=st.lists(st.one_of(text, uuids),
                                          max_size=3),
                          modal=st.booleans())
        def post(data, kind, ticked, modal):
            rows = signing.dumps(data, salt=forms._salt(
                self.session_request, kind), compress=True)
            self.post_each((URLS[kind],), {'rows': rows,
                                           'delete_unknown': ticked}, modal)
        post()

    @pytest.mark.error_messages
    def test_the_tables_filters_refresh_and_batch_actions(self):
        @SETTINGS
        @hypothesis.given(body=bodies, query=st.sampled_from(
            ('', '?show=all', '?tab=orphaned_allocations__history')),
            provider=st.sampled_from((H1, H3)))
        def post(body, query, provider):
            self.mocks['refresh'].reset_mock()
            self.post_each((INDEX + query, detail(provider)), body)
            action = body.get('action')
            if isinstance(action, list):
                action = action[-1] if action else None
            if action != 'providers__refresh':
                self.mocks['refresh'].assert_not_called()
        post()

    @pytest.mark.error_messages
    def test_the_previews_and_exports_read_anything(self):
        """The GETs with input: previews (forged ``sel``, ``provider``,
        ``entry``, ``batch``, ``next``), exports and pages' filters."""
        @SETTINGS
        @hypothesis.given(query=bodies)
        def get(query):
            encoded = parse.urlencode(query, doseq=True)
            for url in (*URLS.values(), INDEX, detail(H1), *EXPORTS):
                res = self.client.get(url + '?' + encoded)
                self.check(res, url, query)
        get()

    def test_a_malformed_table_action_is_a_bad_request(self):
        """Found by the above: Horizon's tables split ``action`` on
        ``__`` and failed with a server error when it has none."""
        for url in (INDEX, detail(H1)):
            for action in ('', '0', 'providers', ['x', 'y']):
                res = self.client.post(url, {'action': action})
                self.assertEqual(400, res.status_code, (url, action))
        self.mocks['refresh'].assert_not_called()

    def assert_junk_offers_nothing(self, key, field, junk):
        """A signed decommission blob whose ``key`` is each of ``junk``
        offers no choice in ``field``, and nothing is written."""
        salt = forms._salt(self.session_request, 'decommission')
        for value in junk:
            rows = signing.dumps({'plans': [], key: value}, salt=salt,
                                 compress=True)
            res = self.client.post(DECOMMISSION, {'rows': rows,
                                                  field: ['a']})
            self.assertEqual(200, res.status_code, value)
            self.assertEqual([], res.context['form'].fields[field].choices)
        self.mocks['decommission_apply'].assert_not_called()

    @pytest.mark.error_messages
    def test_a_decommission_blob_offering_junk_offers_nothing(self):
        """Found by the above: the consumers a signed blob offers to
        delete were trusted to be a list of strings."""
        self.assert_junk_offers_nothing(
            'optional', 'delete_unknown',
            (None, [[None]], 7, [1, 2], {'a': 'b'}))

    @pytest.mark.error_messages
    def test_a_decommission_blob_offering_junk_children_offers_none(self):
        """The foreign children a signed blob offers to tick are checked
        as the unknown consumers are: ``[[uuid, label], ...]`` or none."""
        self.assert_junk_offers_nothing(
            'foreign', 'delete_foreign',
            (None, [[None, 'x']], 7, ['a'], [['a']], [['a', 'b', 'c']],
             {'a': 'b'}))
