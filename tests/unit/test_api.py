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

"""API helpers that need no server: paging safety, timeouts, the cloud."""

from unittest import mock

from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.api import client
from orphan_dashboard.api import nova


class Pages:
    """A Nova that answers ``pages`` in turn, each with a next link."""

    def __init__(self, *pages):
        self.pages = list(pages)
        self.markers = []

    def get(self, path, microversion=None, params=None):
        self.markers.append(params.get('marker'))
        page = self.pages.pop(0)
        body = {'servers': [{'id': i} for i in page],
                'servers_links': [{'rel': 'next', 'href': 'x'}]
                if self.pages else []}
        return mock.Mock(json=mock.Mock(return_value=body))


def test_paging_follows_next_links():
    pages = Pages(['a', 'b'], ['c'])
    assert [s['id'] for s in nova.server_list(pages)] == ['a', 'b', 'c']
    assert pages.markers == [None, 'b']


def test_paging_stops_on_a_repeated_marker():
    """A Nova that hands back the same page would loop forever, or with a
    cap, silently cut the list: servers missing from it look orphaned."""
    pages = Pages(['a', 'b'], ['c', 'd'], ['c', 'd'], ['e'])
    with pytest.raises(nova.PagingError, match='repeated the page after d'):
        nova.server_list(pages)


def test_the_panel_session_has_a_timeout(settings):
    request = mock.Mock(spec=['user'])
    request.user.token.id = 'token'
    request.user.endpoint = 'http://keystone.test:5000/v3/'
    with mock.patch('openstack_dashboard.api.base.url_for',
                    return_value='http://placement'):
        clients = client.for_request(request, timeout=7)
    assert clients.placement.session.timeout == 7
    assert clients.nova.session is clients.placement.session
    # Keystone (for names) at its unversioned root: paths name /v3.
    assert clients.identity.session is clients.placement.session
    assert clients.identity.auth.endpoint == 'http://keystone.test:5000'


def test_the_cli_session_has_a_timeout(monkeypatch):
    for name, value in (('OS_AUTH_TYPE', 'admin_token'),
                        ('OS_ENDPOINT', 'http://placement.test'),
                        ('OS_TOKEN', 'x')):
        monkeypatch.setenv(name, value)
    assert client.for_cloud().placement.session.timeout == \
        client.DEFAULT_TIMEOUT
    assert client.for_cloud(timeout=3).nova.session.timeout == 3


@pytest.mark.parametrize('error,known', [
    (None, True), (ks_exc.NotFound, False), (ks_exc.Forbidden, None)])
def test_whether_nova_knew_a_consumer(error, known):
    """None when policy forbids reading a deleted server's instance
    actions: nobody can tell, so the consumer is protected."""
    adapter = mock.Mock()
    if error:
        adapter.get.side_effect = error()
    assert nova.instance_known(adapter, 'uuid') is known
