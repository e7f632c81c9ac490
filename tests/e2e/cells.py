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

"""What the tests of a cell down (``test_cells.py``) and of a cell slow
(``test_slow_cell.py``) check alike: the index's one warning, and
``orphan-audit`` repairing the healthy cell only."""

import json

from orphan_dashboard.api import placement as api
from tests.e2e.conftest import orphan_audit

PARTIAL = 5
"""The documented exit code of a partial run (``doc/source/cli.md``,
``--help``)."""


def host5_allocations(clients, host5):
    """What each consumer holds on host5 (its generation moves when a
    repair writes its share elsewhere)."""
    return {c: a['resources'] for c, a in api.provider_allocations(
        clients.placement, host5).items()}


def cell2_warning(page, state='down'):
    """The index's one warning, of cell2 (the ``second_cell`` incident)
    not answering, ``state`` (down, or slow) as measured: its text."""
    from tests.views.base import alerts
    warnings = alerts(page)
    assert len(warnings) == 1, warnings
    assert not [m for m in page.context['messages'] if 'warning' in m.tags]
    assert 'A cell is %s' % state in warnings[0]
    assert 'compute hosts of the %s cells: host5' % state in warnings[0]
    assert 'partial records: 2' in warnings[0]
    return warnings[0]


def straddler(incident):
    """The cell1 server holding a wrong amount on host2 and a share on
    host5: ``(server, host2)``."""
    (row,) = [e for e in incident['expected']
              if e['verdict'] == 'wrong_amount']
    return row['consumer'], row['provider']


def healthy_cell_repaired(cloud, cell2, tmp_path, *options, waited=0,
                          unconfirmed=()):
    """``orphan-audit report`` and ``apply`` (with ``options``) while
    ``cell2`` (the ``second_cell`` incident) does not answer: its host5 is
    reported, with Nova's wait for it (at least ``waited`` seconds), and
    left as it was, the providers ``unconfirmed`` said so; cell1's
    findings are repaired."""
    host5 = cell2['hosts']['host5']
    evacuation = cloud.incidents['evacuation']
    host1 = evacuation['hosts']['host1']
    evacuated = evacuation['servers'][0]['uuid']
    # Deleted behind Nova's back in cell1: its instance actions still
    # answer through its mapping, which proves its cell up.
    behind = cloud.incidents['deleted_behind_nova']
    ghost = behind['servers'][0]['uuid']
    ghost_host2 = behind['hosts']['host2']
    clients = cloud.clients()
    before = host5_allocations(clients, host5)
    assert len(before) == 3, before

    text = orphan_audit(cloud, tmp_path, 'report', '--min-age', '0',
                        *options)
    assert text.returncode == PARTIAL, text.stderr
    # Slow where Nova waited its cell timer out, as measured.
    state = 'slow' if waited else 'down'
    assert text.stdout.startswith('PARTIAL: A cell is %s' % state)
    assert 'compute hosts of the %s cells: host5' % state in text.stdout

    server, host2 = straddler(cell2)
    shares = api.consumer_allocations(clients.placement, server)
    # The apply's JSON is its audit's report (as ``report --json``
    # prints it) with the outcomes of its writes.
    applied = orphan_audit(cloud, tmp_path, 'apply', '--json',
                           '--min-age', '0', *options)
    assert applied.returncode == PARTIAL, applied.stderr
    out = json.loads(applied.stdout)
    assert out['partial'] is True
    assert out['skipped_cells'].pop('waited_seconds') >= waited
    assert out['skipped_cells'].pop('slow') is bool(waited)
    assert out['skipped_cells'] == {
        'hosts': ['host5'], 'down_cell_servers': 2,
        'unconfirmed_providers': list(unconfirmed)}
    verdicts = {(f['consumer'], f['provider']): f['verdict']
                for f in out['findings']}
    assert verdicts[(evacuated, host1)] == 'evacuated_source'
    assert verdicts[(ghost, ghost_host2)] == 'deleted_instance'
    assert {v for (c, p), v in verdicts.items() if p == host5} == \
        {'protected'}
    assert {c for (c, p) in verdicts if p == host5} == set(before)
    # The straddler's wrong amount is repaired; its host5 share is kept.
    assert verdicts[(server, host2)] == 'wrong_amount'
    outcomes = out['outcomes']
    assert sorted((o['consumer'], o['provider'], o['status'])
                  for o in outcomes) == sorted([
                      (evacuated, host1, 'done'), (server, host2, 'done'),
                      (ghost, ghost_host2, 'done')]), \
        [o['message'] for o in outcomes]
    assert api.consumer_allocations(clients.placement,
                                    ghost)['allocations'] == {}
    body = api.consumer_allocations(clients.placement, evacuated)
    assert host1 not in body['allocations']
    assert host5_allocations(clients, host5) == before
    after = api.consumer_allocations(clients.placement, server)
    assert after['allocations'][host5]['resources'] == \
        shares['allocations'][host5]['resources']
    assert after['allocations'][host2]['resources'] != \
        shares['allocations'][host2]['resources']
