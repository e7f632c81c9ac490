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

"""The journal on a shared PostgreSQL database, as on a multi-node Horizon:
one process applies a batch and journals it there, another (the
``orphan-audit`` command, with the same settings) reads the history and
restores every consumer from it.  A throwaway PostgreSQL cluster runs on
loopback (Debian's ``postgresql``, installed by ``./run test`` as root)."""

import glob
import os
import shutil
import subprocess
import tempfile

import pytest

from sandbox.common import free_port
from tests.integration.batches import shared_journal

BINARIES = sorted(glob.glob('/usr/lib/postgresql/*/bin'))

pytestmark = pytest.mark.skipif(
    not BINARIES and os.environ.get('ORPHAN_POSTGRESQL_REQUIRED') != '1',
    reason="Debian's postgresql is not installed")


def _as_postgres(args):
    """PostgreSQL refuses to run as root: drop to its own user then."""
    if os.geteuid() == 0:
        args = ['runuser', '-u', 'postgres', '--'] + args
    subprocess.run(args, check=True, capture_output=True, text=True)


@pytest.fixture(scope='module')
def postgresql():
    """The port of a fresh cluster with an empty ``orphan_journal``."""
    bin_dir = BINARIES[-1]
    home = tempfile.mkdtemp(prefix='orphan-pg-')
    os.chmod(home, 0o755)
    if os.geteuid() == 0:
        shutil.chown(home, 'postgres', 'postgres')
    data = os.path.join(home, 'data')
    port = free_port()
    _as_postgres([os.path.join(bin_dir, 'initdb'), '-D', data, '-U',
                  'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync'])
    _as_postgres([os.path.join(bin_dir, 'pg_ctl'), '-D', data, '-w', '-l',
                  os.path.join(home, 'log'), '-o',
                  '-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off'
                  % (port, home), 'start'])
    try:
        import psycopg2
        connection = psycopg2.connect(host='127.0.0.1', port=port,
                                      user='postgres', dbname='postgres')
        connection.autocommit = True
        connection.cursor().execute('CREATE DATABASE orphan_journal')
        connection.close()
        yield port
    finally:
        _as_postgres([os.path.join(bin_dir, 'pg_ctl'), '-D', data, '-m',
                      'immediate', 'stop'])
        shutil.rmtree(home, ignore_errors=True)


def test_two_processes_share_the_journal_on_postgresql(
        postgresql, placement, placement_url, build, tmp_path):
    shared_journal({'ENGINE': 'django.db.backends.postgresql',
                    'NAME': 'orphan_journal', 'USER': 'postgres',
                    'HOST': '127.0.0.1', 'PORT': postgresql},
                   placement, placement_url, build, tmp_path)
    assert _statuses(postgresql) == ['applied'] * 6


def _statuses(port):
    """Read straight from PostgreSQL: the journal is really there."""
    import psycopg2
    connection = psycopg2.connect(host='127.0.0.1', port=port,
                                  user='postgres', dbname='orphan_journal')
    with connection, connection.cursor() as cursor:
        cursor.execute('SELECT status FROM orphan_dashboard_journalentry '
                       'ORDER BY id')
        rows = [status for status, in cursor.fetchall()]
    connection.close()
    return rows
