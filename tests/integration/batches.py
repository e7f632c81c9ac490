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

"""Batches of trims over consumers on two providers, for the fault and
shared-journal tests."""

import dataclasses
import json
import os
import subprocess
import sys

from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.writing import write

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


def trim_batch(build, count):
    """``count`` consumers on providers old and new, and the plans trimming
    each one to new."""
    old, new = build.provider('old'), build.provider('new')
    consumers = [build.allocate({old: SMALL, new: SMALL})
                 for _ in range(count)]
    plans = [m.Plan(m.TRIM, c, old, m.MOVED, 'moved', 1, 'p', 'u',
                    {old: SMALL, new: SMALL}, {new: SMALL})
             for c in consumers]
    return consumers, plans


def write_plan(client, journal, plan):
    """A consumer plan written as a repair writes it, journaled."""
    return write.allocations(client, journal, plan,
                             plan.selection)


def held(placement, consumers):
    """Each consumer's allocations, as Placement holds them now."""
    return [parse.consumer(c, api.consumer_allocations(placement, c))
            .allocations for c in consumers]


JOURNAL_SETTINGS = '''
INSTALLED_APPS = ['orphan_dashboard']
USE_TZ = True
DATABASE_ROUTERS = ['orphan_dashboard.writing.journal.Router']
DATABASES = {'default': {}, 'orphan_journal': %r}
'''


def shared_journal(database, placement, placement_url, build, tmp_path,
                   preamble=''):
    """Two processes, one journal database (``database``, Django's
    ``DATABASES`` entry for it, after ``preamble`` in the settings
    module): a worker applies three trims against the real
    Placement and journals them; ``orphan-audit history`` in another
    process lists them and ``orphan-audit restore --apply`` puts every
    consumer back.  The caller then reads the rows straight from its
    database."""
    consumers, plans = trim_batch(build, 3)
    initial = held(placement, consumers)
    (tmp_path / 'shared_settings.py').write_text(
        preamble + JOURNAL_SETTINGS % (database,))
    plans_file = tmp_path / 'plans.json'
    plans_file.write_text(json.dumps([dataclasses.asdict(p) for p in plans]))
    env = dict(os.environ, DJANGO_SETTINGS_MODULE='shared_settings',
               PYTHONPATH=os.pathsep.join([str(tmp_path), os.getcwd()]),
               OS_AUTH_TYPE='admin_token', OS_ENDPOINT=placement_url,
               OS_TOKEN='admin')
    env.pop('ORPHAN_AUDIT_JOURNAL_DIR', None)

    def run(*args):
        return subprocess.run([sys.executable, '-m', *args], env=env,
                              capture_output=True, text=True, timeout=120)

    applied = run('tests.integration.batch_worker', placement_url,
                  str(plans_file))
    assert applied.returncode == 0, applied.stderr
    assert held(placement, consumers) == [p.after for p in plans]

    history = run('orphan_dashboard.cli', 'history', '--json')
    assert history.returncode == 0, history.stderr
    entries = json.loads(history.stdout)
    assert sorted((e['consumer'], e['status']) for e in entries) == sorted(
        (c, 'applied') for c in consumers)
    assert {e['placement_url'] for e in entries} == {placement_url}

    restored = run('orphan_dashboard.cli', 'restore', '--apply',
                   *[str(e['id']) for e in entries])
    assert restored.returncode == 4, restored.stdout + restored.stderr
    assert held(placement, consumers) == initial
    history = run('orphan_dashboard.cli', 'history', '--json')
    assert len(json.loads(history.stdout)) == 2 * len(consumers)
