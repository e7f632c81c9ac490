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

"""The CSV downloads never hand a spreadsheet a formula."""

import csv
import datetime
import io

import pytest

from orphan_dashboard.audit import export

STARTERS = ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx',
            # Whitespace before a formula: spreadsheets trim it.
            ' =1+1', '\n=1+1', '\r\n=1+1', '\u00a0=1+1', '\u3000=1+1',
            # Full-width forms, run as formulas by CJK spreadsheets.
            '\uff1d1+1', '\uff0b1', '\uff0d1', '\uff20SUM(A1)',
            # Other compatibility forms of the same characters.
            '\ufe66HYPERLINK("http://evil.example.com")', '\ufe62 1']


def cells(value):
    header, row = csv.reader(io.StringIO(''.join(
        export.csv_lines(['a'], [{'a': value}]))))
    assert header == ['a']
    return row[0]


@pytest.mark.parametrize('text', STARTERS)
def test_cells_a_spreadsheet_could_run_are_quoted(text):
    assert cells(text) == "'" + text


@pytest.mark.parametrize('text', ['server moved; 1 = 1', 'host1', '',
                                  'a-b', 'naïve', '\u7e41\u4f53', '0',
                                  "'=already quoted"])
def test_plain_cells_are_kept(text):
    assert cells(text) == text


def test_nested_values_and_none():
    assert cells({'b': 1}) == '{"b": 1}'
    assert cells(None) == ''
    assert cells(-3) == "'-3"


def test_a_downloads_name_says_what_it_holds_and_when():
    taken = datetime.datetime(2026, 12, 2, 15, 4, 5,
                              tzinfo=datetime.timezone(
                                  datetime.timedelta(hours=3)))
    assert export.file_name(taken) == 'orphan-findings-20261202T120405Z'
    assert export.file_name(taken, 'host3.example.org') == (
        'orphan-allocations-host3.example.org-20261202T120405Z')
    # A name is no header's end nor a path: nothing but a file's letters.
    assert export.file_name(taken, 'a"b;\r\nc/../d') == (
        'orphan-allocations-a_b_c_.._d-20261202T120405Z')
    assert export.file_name(None, '...') == (
        'orphan-allocations-provider-unaudited')
