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

"""The benchmark as ``doc/source/benchmark.md`` and the README tell a
user to run it (``python -m bench`` with ``--gc-freeze``, with
``--neutron``, and ``python -m bench.rounds``), on a tiny bench cloud
(30 servers on 20 hypervisors, one repeat), so that a renamed
function it calls cannot stop it unseen: each exits 0 and prints its
tables with a number in every cell, and what the bench checks besides
time holds (every seeded verdict found, each refresh equal to a full
sweep).

The bench starts bench clouds of its own (``bench.server``, seeded once
in this module's cache): the sandbox clouds of ``tests/clouds.py`` are
not seeded for it.
"""

import json
import os
import re
import subprocess
import sys

import pytest

from tests import memcached

pytest.importorskip('nova')
pytest.importorskip('placement')
pytest.importorskip('keystone')

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SIZE = 30

pytestmark = memcached.MISSING
"""The bench's pages and cron share one memcached."""

TABLES = (
    ('servers', 'hyp', 'cold sweep s', 'req', 'floor s', 'cold/floor',
     'peak MB', 'refresh s', 'refresh/cold', 'refresh req', 'warm page s',
     'nova-manage s', 'get_providers s', 'refresh==full',
     'agree nova-manage', 'pickle MB/10k'),
    ('servers', 'seed s', 'restore s', 'cold page s', 'report warm s',
     'rows/listed', 'list paged s', 'list by host s',
     'nova-manage only (our verdict)', 'seeded verdicts found'),
    ('servers', 'cold <= 1.05x floor', 'warm page < 0.5 s',
     'refresh <= 10% cold', 'refresh <= 0.5x nova-manage',
     'refresh == full', 'sweeper < 1 GB resident'),
    ('servers', 'cold page s', 'first sweep s', 'pages during it (max s)',
     'refresh click s', 'pages during refresh (max index / hypervisor s)',
     'after refresh (index / hypervisor s)', 'warm page s',
     'hypervisor page (first / warm s)', 'cron refresh s', 'cron wall s',
     'cron/cold', 'every page < 0.5 s'),
    ('servers', 'Nova listings raw s', 'with novaclient s',
     'novaclient extra s', 'extra / cold sweep'),
)
"""The five tables' columns, as ``python -m bench`` prints them."""

NEUTRON_TABLES = (
    ('servers', 'hyp', 'ports (QoS)', 'without Neutron s', 'with Neutron s',
     'with/without', 'req without / with', 'port read s', 'req',
     'plain listing s', 'req', 'fields listing s', 'req', 'read/plain',
     'seeded verdicts found', 'NIC rows ok', 'with <= 1.10x without'),
    ('servers', 'page 500 s (req)', 'page 1000 s (req)',
     'page 2000 s (req)', 'page 5000 s (req)', 'page none s (req)'),
)
"""The two tables of ``python -m bench --neutron``."""

NOT_A_NUMBER = {
    'seed s': '-', 'restore s': '-',
    'nova-manage only (our verdict)': '-',
    'refresh==full': 'yes',
}
"""The cells that may hold no number: a size seeded now is not restored,
nor seeded when restored; nova-manage may flag nothing we judge
otherwise; a yes (checked below)."""

NUMBER = re.compile(r'\d')
SECONDS = r'(\d+\.\d+)'


def markdown_tables(text):
    """Each Markdown table in ``text``: (its head, its rows), the cells
    stripped."""
    found = []
    for block in text.strip().split('\n\n'):
        lines = [line for line in block.splitlines() if line.startswith('|')]
        if len(lines) < 2:
            continue
        cells = [[c.strip() for c in line.strip('|').split('|')]
                 for line in lines]
        assert set(''.join(cells[1])) <= set('-:'), block
        found.append((tuple(cells[0]), cells[2:]))
    return found


def test_markdown_tables_reads_head_and_rows():
    text = 'log line\n\n| a | b |\n|--:|--:|\n| 1 | x |\n\nlast'
    assert markdown_tables(text) == [(('a', 'b'), [['1', 'x']])]


def assert_numbers(out, heads):
    """``out``'s tables are ``heads``, each with one row, the bench's size,
    and a number in every cell but those of :data:`NOT_A_NUMBER`."""
    tables = markdown_tables(out)
    assert [head for head, _ in tables] == list(heads)
    for head, rows in tables:
        assert [row[0] for row in rows] == [str(SIZE)], head
        for column, cell in zip(head, rows[0]):
            if cell != NOT_A_NUMBER.get(column):
                assert NUMBER.search(cell), (column, cell)


def first_row(out, n):
    """The ``n``-th table's first row: {column: cell}."""
    head, rows = markdown_tables(out)[n]
    return dict(zip(head, rows[0]))


def all_of(cell):
    """Whether a ``found/of`` cell found all of a nonzero count."""
    found, of = cell.split('/')
    return found == of != '0'


@pytest.fixture(scope='module')
def cache(tmp_path_factory):
    """The bench's cache (seeds, compressed static files) for this module:
    each size seeded by the first command that needs it."""
    return tmp_path_factory.mktemp('bench-cache')


def run_bench(module, cache, *args):
    """``python -m MODULE ARGS --cache-dir CACHE`` from the repository, as
    a user's shell runs it (no Django settings of the tests): its
    output."""
    env = dict(os.environ)
    env.pop('DJANGO_SETTINGS_MODULE', None)
    proc = subprocess.run(
        [sys.executable, '-m', module, *args, '--cache-dir', str(cache)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-6000:]
    return proc.stdout


@pytest.fixture(scope='module')
def bench(cache, tmp_path_factory):
    """``python -m bench --sizes 30 --repeat 1 --gc-freeze --json
    results.json``: the documentation's first command, with Horizon's
    objects frozen (the page process does all it does without, then
    freezes them once warm): (its output, the results it wrote)."""
    results = tmp_path_factory.mktemp('bench') / 'results.json'
    out = run_bench('bench', cache, '--sizes', str(SIZE), '--repeat', '1',
                    '--gc-freeze', '--json', str(results))
    with open(results) as f:
        return out, json.load(f)


def test_the_bench_prints_a_number_in_every_cell(bench):
    assert_numbers(bench[0], TABLES)


def test_the_bench_times_every_step(bench):
    out, (result,) = bench
    row = first_row(out, 0)
    for column in ('cold sweep s', 'floor s', 'refresh s', 'warm page s',
                   'nova-manage s', 'get_providers s'):
        assert float(row[column]) > 0, column
    assert int(row['hyp']) == 20
    assert int(row['req']) > int(row['refresh req']) > 0
    assert result['size'] == SIZE
    assert len(result['rounds']) == 1
    assert result['page']['gc_frozen'] > 0


def test_what_the_bench_checks_besides_time_holds(bench):
    out, _ = bench
    assert first_row(out, 0)['refresh==full'] == 'yes'
    assert all_of(first_row(out, 1)['seeded verdicts found'])


def test_the_bench_with_neutron(cache):
    pytest.importorskip('neutron')
    out = run_bench('bench', cache, '--neutron', '--sizes', str(SIZE),
                    '--repeat', '1')
    assert_numbers(out, NEUTRON_TABLES)
    row = first_row(out, 0)
    assert all_of(row['seeded verdicts found'])
    assert all_of(row['NIC rows ok'])
    assert "binding:profile.allocation on the host's br-phys: yes" in out


def test_where_a_refresh_goes(cache):
    out = run_bench('bench.rounds', cache, '--size', str(SIZE), '--rounds',
                    '1').splitlines()
    assert len(out) == 6, out
    assert re.fullmatch(r'cold sweep %s s, \d+ requests' % SECONDS, out[0])
    for line in out[1:3]:
        assert re.fullmatch(r'refresh, nothing changed: %s s, \d+ requests '
                            r'\(floor %s s\)' % (SECONDS, SECONDS), line)
    churned = re.fullmatch(
        r'round 0: refresh %s s \(its report %s s, judging again '
        r'(?P<again>\d+) of (?P<all>\d+) consumers; the last findings '
        r'loaded %s s\), \d+ requests \(floor %s s: [0-9.]+x\), same as a '
        r'full sweep; \{.+\}' % ((SECONDS,) * 4), out[3])
    assert churned and 0 < int(churned['again']) < int(churned['all']), \
        out[3]
    assert re.fullmatch(r'median refresh %s s, its report %s s, the last '
                        r'findings loaded %s s, floor of its requests %s s, '
                        r'refresh / floor [0-9.]+x, with the load [0-9.]+x'
                        % ((SECONDS,) * 4), out[4])
    assert re.fullmatch(r'nova-manage placement audit %s s \(exit \d\), a '
                        r'reference' % SECONDS, out[5])
