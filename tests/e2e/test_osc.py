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

"""``openstack placement orphan ...``: the real ``openstack`` console
script, with the sandbox's ``openrc`` as its environment, against the
sandbox cloud; its journal read back by ``orphan-audit history``."""

import json
import os
import subprocess
import sys

import pytest

from tests.e2e.conftest import every_allocation
from tests.e2e.conftest import held
from tests.e2e.conftest import module_cloud
from tests.e2e.conftest import orphan_audit
from tests.e2e.conftest import ROOT

cloud = module_cloud('deleted_behind_nova,evacuation,retired_host,healthy')

OPENSTACK = os.path.join(os.path.dirname(sys.executable), 'openstack')


def openrc(path):
    """The variables ``openrc`` exports."""
    with open(path) as f:
        return dict(line[len('export '):].strip().split('=', 1)
                    for line in f if line.startswith('export '))


def openstack(cloud, journal_dir, *args):
    """``openstack placement orphan ARGS`` as an operator runs it after
    sourcing the sandbox's ``openrc``, with its journal in
    ``journal_dir``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('OS_', 'ORPHAN_AUDIT_'))}
    env.pop('DJANGO_SETTINGS_MODULE', None)
    env.update(openrc(cloud.config['openrc']),
               ORPHAN_AUDIT_JOURNAL_DIR=str(journal_dir))
    return subprocess.run([OPENSTACK, 'placement', 'orphan', *args],
                          env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope='module')
def journal_dir(tmp_path_factory):
    return tmp_path_factory.mktemp('journal')


def test_list_as_json_has_the_verdicts_of_orphan_audit(cloud, journal_dir):
    listed = openstack(cloud, journal_dir, 'list', '-f', 'json')
    # Findings are what a list lists: 0, as every openstack list command.
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    report = json.loads(orphan_audit(cloud, journal_dir, 'report', '--json',
                                     '--min-age', '0').stdout)
    assert sorted((r['Consumer'], r['Provider'], r['Verdict'])
                  for r in rows) == sorted(
        (f['consumer'], f['provider'], f['verdict'])
        for f in report['findings'])
    ghost = cloud.incidents['deleted_behind_nova']['servers'][0]['uuid']
    assert (ghost, 'deleted_instance') in {(r['Consumer'], r['Verdict'])
                                           for r in rows}

    chosen = openstack(cloud, journal_dir, 'list', '--verdict',
                       'deleted_instance', '-f', 'json', '-c', 'Consumer',
                       '-c', 'Action')
    assert chosen.returncode == 0, chosen.stderr
    assert {'Consumer': ghost, 'Action': 'delete'} in json.loads(
        chosen.stdout)
    assert all(set(r) == {'Consumer', 'Action'}
               for r in json.loads(chosen.stdout))


def test_repair_previews_then_writes_and_restore_puts_it_back(
        cloud, journal_dir):
    clients = cloud.clients()
    incident = cloud.incidents['deleted_behind_nova']
    ghost = incident['servers'][0]['uuid']
    before = held(clients, ghost)
    assert before

    preview = openstack(cloud, journal_dir, 'repair', ghost, '-f', 'json')
    assert preview.returncode == 3, preview.stderr
    (row,) = json.loads(preview.stdout)
    assert (row['Action'], row['Status']) == ('delete', 'preview')
    assert row['Plan'] and row['Journal Entry'] is None
    assert held(clients, ghost) == before
    history = json.loads(orphan_audit(cloud, journal_dir, 'history',
                                      '--json').stdout)
    assert history == []

    done = openstack(cloud, journal_dir, 'repair', ghost, '--yes',
                     '-f', 'json')
    assert done.returncode == 4, done.stderr
    assert 'plan: ' in done.stderr
    (row,) = json.loads(done.stdout)
    assert row['Status'] == 'done'
    assert held(clients, ghost) == {}
    (entry,) = json.loads(orphan_audit(cloud, journal_dir, 'history',
                                       '--json').stdout)
    assert entry['id'] == row['Journal Entry']
    assert (entry['consumer'], entry['action'], entry['status']) == (
        ghost, 'delete', 'applied')

    restore = openstack(cloud, journal_dir, 'restore', str(entry['id']),
                        '-f', 'json')
    assert restore.returncode == 3, restore.stderr
    assert [r['Status'] for r in json.loads(restore.stdout)] == ['preview']
    assert held(clients, ghost) == {}

    restored = openstack(cloud, journal_dir, 'restore', str(entry['id']),
                         '--yes', '-f', 'json')
    assert restored.returncode == 4, restored.stderr
    assert [r['Status'] for r in json.loads(restored.stdout)] == ['done']
    assert held(clients, ghost) == before


def test_unknown_names_are_bad_arguments(cloud, journal_dir):
    unknown = openstack(cloud, journal_dir, 'show', 'no-such-thing')
    assert unknown.returncode == 2
    assert 'no consumer or provider no-such-thing' in unknown.stderr
    host1 = cloud.incidents['evacuation']['hosts']['host1']
    shown = openstack(cloud, journal_dir, 'show', host1, '-f', 'json')
    assert shown.returncode == 3, shown.stderr
    tree = json.loads(shown.stdout)
    assert tree['uuid'] == host1
    assert 'evacuated_source' in {f['verdict'] for f in tree['findings']}


def test_decommission_previews_what_orphan_audit_previews(cloud,
                                                          journal_dir):
    clients = cloud.clients()
    host4 = cloud.incidents['retired_host']['hosts']['host4']
    before = clients.placement.get('/resource_providers/%s' % host4)
    assert before.status_code == 200
    preview = openstack(cloud, journal_dir, 'decommission', 'host4',
                        '-f', 'json')
    assert preview.returncode == 3, preview.stderr
    rows = json.loads(preview.stdout)
    plan = json.loads(orphan_audit(cloud, journal_dir, 'decommission',
                                   'host4', '--min-age', '0',
                                   '--json').stdout)
    assert sorted((r['Consumer'], r['Action']) for r in rows
                  if r['Consumer']) == sorted(
        (s['consumer'], s['action']) for s in plan['steps'])
    assert (None, host4, 'delete_provider') in {
        (r['Consumer'], r['Provider'], r['Action']) for r in rows}
    assert 'blocked' in {r['Status'] for r in rows}
    assert clients.placement.get(
        '/resource_providers/%s' % host4).status_code == 200


def test_capacity_rows_are_orphan_audit_capacitys(cloud, journal_dir):
    """A flavor one MB larger than host2 has free: it fits there only once
    the server deleted behind Nova's back is cleaned up; the plugin's
    rows are ``orphan-audit capacity --json``'s, state and repairs."""
    clients = cloud.clients()
    host2 = cloud.config['hosts']['host2']
    ghost = cloud.incidents['deleted_behind_nova']['servers'][0]['uuid']
    assert held(clients, ghost)
    inventory = clients.placement.get(
        '/resource_providers/%s/inventories' % host2,
        microversion='1.28').json()['inventories']['MEMORY_MB']
    used = clients.placement.get(
        '/resource_providers/%s/usages' % host2,
        microversion='1.28').json()['usages']['MEMORY_MB']
    free = int((inventory['total'] - inventory['reserved']) *
               inventory['allocation_ratio']) - used
    clients.nova.post('/flavors', json={'flavor': {
        'name': 'osc-capacity', 'vcpus': 1, 'ram': free + 1, 'disk': 1}})

    listed = openstack(cloud, journal_dir, 'capacity', '--flavor',
                       'osc-capacity', '--min-age', '0', '-f', 'json')
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    done = orphan_audit(cloud, journal_dir, 'capacity', '--flavor',
                        'osc-capacity', '--min-age', '0', '--json')
    assert done.returncode == 0, done.stderr
    expected = json.loads(done.stdout)['hypervisors']
    assert [(r['Hypervisor'], r['Provider'], r['State'], r['Repairs'])
            for r in rows] == [
        (h['hypervisor'], h['provider'], h['state'], h['repairs'])
        for h in expected]
    states = {r['Hypervisor']: r['State'] for r in rows}
    assert states['host2'] == 'fits_after_repair', states
    host2_repairs = {r['Hypervisor']: r['Repairs'] for r in rows}['host2']
    assert ghost in {r['consumer'] for r in host2_repairs}

    table = openstack(cloud, journal_dir, 'capacity', '--flavor',
                      'osc-capacity', '--provider', 'host2', '--min-age',
                      '0', '-f', 'value', '-c', 'Hypervisor', '-c', 'State')
    assert table.returncode == 0, table.stderr
    assert table.stdout.split() == ['host2', 'fits_after_repair']
    unknown = openstack(cloud, journal_dir, 'capacity', '--flavor', 'nope')
    assert unknown.returncode == 2
    assert 'no flavor nope' in unknown.stderr


def test_repair_all_previews_and_is_held_past_its_limits(cloud, tmp_path):
    """``repair --all`` previews every recommended repair, as
    ``orphan-audit apply --dry-run``; past ``--max-writes`` it previews
    and writes nothing, even with ``--yes``, and exits 6."""
    clients = cloud.clients()
    before = every_allocation(clients)
    preview = openstack(cloud, tmp_path, 'repair', '--all', '--min-age',
                        '0', '-f', 'json')
    assert preview.returncode == 3, preview.stderr
    rows = json.loads(preview.stdout)
    dry = json.loads(orphan_audit(cloud, tmp_path, 'apply', '--dry-run',
                                  '--json', '--min-age', '0').stdout)
    assert sorted((r['Consumer'], r['Action'], r['Plan']) for r in rows) \
        == sorted((p['consumer'], p['action'], p['commands'])
                  for p in dry['plans'])
    assert len(rows) > 1

    for argv in ((), ('--yes',)):
        held_run = openstack(cloud, tmp_path, 'repair', '--all',
                             '--max-writes', '1', '--min-age', '0',
                             '-f', 'json', *argv)
        assert held_run.returncode == 6, held_run.stderr
        assert json.loads(held_run.stdout) == []
        assert 'held, nothing written: the run would write %d of ' % len(
            rows) in held_run.stderr
    assert every_allocation(clients) == before
    assert json.loads(orphan_audit(cloud, tmp_path, 'history',
                                   '--json').stdout) == []
