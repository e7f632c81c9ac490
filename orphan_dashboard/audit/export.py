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

"""CSV and JSON downloads (the journal's and the findings'), produced a
piece at a time so a long one streams."""

import csv
import datetime
import json
import re
import unicodedata

FORMULA_START = ('=', '+', '-', '@', '\t', '\r')
"""A spreadsheet runs a cell starting with these as a formula."""


def _runnable(text):
    """Whether a spreadsheet could run ``text``: a formula start, also in a
    compatibility form (full-width, small) that some spreadsheets take for
    it, or any whitespace, which they may trim before one."""
    first = text[:1]
    return bool(first) and (first.isspace() or unicodedata.normalize(
        'NFKC', first) in FORMULA_START)


def _cell(value):
    if isinstance(value, (dict, list, tuple)):
        value = json.dumps(value, sort_keys=True)
    text = '' if value is None else str(value)
    return "'" + text if _runnable(text) else text


class _Line:
    def write(self, line):
        return line


def csv_lines(fields, rows):
    """A header, then one line per ``rows`` dict; nested values as JSON,
    and cells a spreadsheet would run as formulas quoted with a leading
    apostrophe."""
    writer = csv.writer(_Line())
    yield writer.writerow(fields)
    for row in rows:
        yield writer.writerow([_cell(row.get(f)) for f in fields])


def json_array(rows):
    """A JSON array of ``rows`` dicts."""
    yield '['
    for i, row in enumerate(rows):
        yield (',\n' if i else '\n') + json.dumps(row, sort_keys=True)
    yield '\n]\n'


def pieces(fmt, fields, rows):
    """``rows`` as :func:`csv_lines` of ``fields`` (``fmt`` ``csv``) or
    as the pieces of one :func:`json_array`: the choice every download
    makes."""
    if fmt == 'csv':
        return csv_lines(fields, rows)
    return json_array(rows)


def file_name(taken_at, host=None):
    """A findings download's name, without its extension: what it holds
    (the cloud's findings, or one hypervisor's allocations by its name)
    and its audit's time in UTC, so that two downloads never share one;
    only letters, digits, dots, hyphens and underscores."""
    stamp = taken_at.astimezone(datetime.timezone.utc).strftime(
        '%Y%m%dT%H%M%SZ') if taken_at else 'unaudited'
    if host is None:
        return 'orphan-findings-%s' % stamp
    return 'orphan-allocations-%s-%s' % (
        re.sub(r'[^A-Za-z0-9._-]+', '_', host).strip('._') or 'provider',
        stamp)
