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

"""Marker paging, as Nova and Neutron page their listings: one page after
another while the service links a next one."""


class PagingError(Exception):
    """A service's paging went round in circles: a listing cut short would
    turn live servers into orphans and leave port allocations
    unexplained."""


def pages(read, query, key, service, marker_key='id', linked=True):
    """Each page of a listing, ``read(query)`` with the ``marker`` of the
    last item read set in ``query``, while the body links a next page
    (``<key>_links``), or, not ``linked``, whatever the links say; an
    empty page is the last.  ``service`` names the service in the
    :class:`PagingError` of a page that comes round again."""
    query = dict(query)
    markers = set()
    while True:
        body = read(query)
        page = body[key]
        yield page
        if not page or linked and not any(
                link.get('rel') == 'next'
                for link in body.get(key + '_links') or ()):
            return
        marker = page[-1][marker_key]
        if marker in markers:
            raise PagingError('%s repeated the page after %s: the listing '
                              'is incomplete' % (service, marker))
        markers.add(marker)
        query['marker'] = marker
