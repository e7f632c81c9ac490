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

"""The journal on a shared MariaDB database, the database most OpenStack
deployments already run: one process applies a batch and journals it
there, another (``orphan-audit``) reads the history and restores every
consumer from it.  A throwaway MariaDB server runs on a Unix socket
(Debian's ``mariadb-server``, installed by ``./run test`` as root), spoken
to with PyMySQL, as oslo.db does."""

import pytest

from tests.integration.batches import shared_journal
from tests import mariadb as mariadb_server

PYMYSQL = '''
import pymysql
pymysql.install_as_MySQLdb()
'''

pytestmark = pytest.mark.skipif(
    mariadb_server.MISSING, reason="Debian's mariadb-server is not installed")


@pytest.fixture(scope='module')
def mariadb():
    """The socket of a fresh server with an empty ``orphan_journal``."""
    with mariadb_server.server() as socket:
        created = mariadb_server.sql(
            socket, 'CREATE DATABASE orphan_journal CHARACTER SET utf8mb4')
        assert created.returncode == 0, created.stderr
        yield socket


def _statuses(socket):
    """Read straight from MariaDB: the journal is really there."""
    import pymysql
    connection = pymysql.connect(unix_socket=socket, user='root',
                                 database='orphan_journal')
    with connection.cursor() as cursor:
        cursor.execute('SELECT status, cloud FROM '
                       'orphan_dashboard_journalentry ORDER BY id')
        rows = cursor.fetchall()
    connection.close()
    return rows


def test_two_processes_share_the_journal_on_mariadb(
        mariadb, placement, placement_url, build, tmp_path):
    shared_journal({'ENGINE': 'django.db.backends.mysql',
                    'NAME': 'orphan_journal', 'USER': 'root', 'HOST': mariadb,
                    'OPTIONS': {'charset': 'utf8mb4'}},
                   placement, placement_url, build, tmp_path, PYMYSQL)
    rows = _statuses(mariadb)
    assert [status for status, _cloud in rows] == ['applied'] * 6
    assert len({cloud for _status, cloud in rows}) == 1
    assert placement_url.lower() in rows[0][1]
