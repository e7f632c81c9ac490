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

from keystoneauth1 import exceptions as ks_exc


class PagingError(Exception):
    """A service's paging went round in circles: a listing cut short would
    turn live servers into orphans and leave port allocations
    unexplained."""


MARKER_GONE = (ks_exc.BadRequest, ks_exc.NotFound)
"""How Nova (400 "marker [...] not found": a compute node deleted, an
instance archived) and Neutron (404: a port deleted) answer a page asked
after an item gone since it ended the page before."""


def pages(read, query, key, service, marker_key='id', linked=True,
          short_ends=lambda: False):
    """Each page of a listing, ``read(query)`` with the ``marker`` of the
    last item read set in ``query``, while the body links a next page
    (``<key>_links``), or, not ``linked``, whatever the links say; an
    empty page is the last, and so is a page shorter than ``query``'s
    ``limit`` that the body links no next page after when
    ``short_ends()`` says so.  ``service`` names the service in the
    :class:`PagingError` of a page that comes round again.

    Where the item a page ended with is gone (:data:`MARKER_GONE`), the
    listing goes on after the item that ended the page before it (from
    the start after the first page), leaving out the items already read:
    one compute node deleted during a sweep's listing must not fail the
    sweep.  A marker refused a second time is no gone item: the error
    stands.
    """
    query = dict(query)
    markers, gone = [], set()
    read_before = set()
    while True:
        try:
            body = read(query)
        except MARKER_GONE:
            if not markers or markers[-1] in gone:
                raise               # not a gone item: refused again
            gone.add(markers.pop())
            query.pop('marker')
            if markers:
                query['marker'] = markers[-1]
            continue
        page = body[key]
        new = [item for item in page if item[marker_key] not in read_before]
        read_before.update(item[marker_key] for item in new)
        if new:
            yield new
        next_linked = any(link.get('rel') == 'next'
                          for link in body.get(key + '_links') or ())
        short = len(page) < query.get('limit', 0)
        if not page or not next_linked and (
                linked or short and short_ends()):
            return
        marker = page[-1][marker_key]
        if marker in markers:
            raise PagingError('%s repeated the page after %s: the listing '
                              'is incomplete' % (service, marker))
        markers.append(marker)
        query['marker'] = marker
