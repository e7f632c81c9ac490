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

"""``orphan_dashboard.wsgi.frozen``: what a deployment's WSGI script calls
to freeze Horizon's objects once loaded (``doc/source/operations.md``)."""

import gc

from django.core.handlers.wsgi import WSGIHandler
from django.core.wsgi import get_wsgi_application
from django import urls
import pytest

from orphan_dashboard import wsgi

pytestmark = pytest.mark.horizon


@pytest.fixture
def unfrozen():
    """A resolver made anew (a test before may have loaded the URLs), and
    the process's objects given back to the collector afterwards."""
    urls.clear_url_caches()
    yield
    gc.unfreeze()


def _tracked(obj):
    """Whether the collector still walks ``obj``: frozen objects are in
    none of its generations."""
    return any(each is obj for each in gc.get_objects())


def test_horizons_application_comes_back_with_its_urls_frozen(unfrozen):
    application = get_wsgi_application()

    assert wsgi.frozen(application) is application
    assert isinstance(application, WSGIHandler)
    assert gc.get_freeze_count() > 0
    # The URLs were loaded before the freeze: the resolver's maps (which
    # the first reverse makes) down to the panel's are frozen, not left
    # for the collector.
    resolver = urls.get_resolver()
    panel = resolver.namespace_dict['horizon'][1].namespace_dict['admin'][
        1].namespace_dict['orphaned_allocations'][1]
    assert 'index' in panel.reverse_dict
    assert not _tracked(resolver.reverse_dict)
    assert not _tracked(panel.reverse_dict)
    assert _tracked({'made': ['after the freeze']})
