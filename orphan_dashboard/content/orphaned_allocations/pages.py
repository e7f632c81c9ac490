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

"""Marker paging over a list already in memory, Horizon's way (``marker``
for the next page, ``prev_marker`` for the previous one)."""


def page(rows, ids, marker, prev_marker, size):
    """``(rows on the page, has previous, has more)``.

    ``ids`` are the rows' object ids.  A marker no longer in the list (its
    row was repaired or the snapshot refreshed) leads to the first page.
    """
    size = max(1, size)
    if prev_marker in ids:
        end = ids.index(prev_marker)
        start = max(0, end - size)
    elif marker in ids:
        start = ids.index(marker) + 1
        end = start + size
    else:
        start, end = 0, size
    return rows[start:end], start > 0, end < len(rows)
