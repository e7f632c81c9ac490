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

"""A throwaway MariaDB server on a Unix socket (Debian's ``mariadb-server``,
installed by ``./run test`` as root), for the tests that keep the journal
where most OpenStack deployments keep their databases."""

import contextlib
import os
import shutil
import subprocess
import tempfile
import time

MARIADBD = shutil.which('mariadbd') or '/usr/sbin/mariadbd'
INSTALL_DB = shutil.which('mariadb-install-db') or \
    '/usr/bin/mariadb-install-db'
CLIENT = shutil.which('mariadb') or shutil.which('mysql') or \
    '/usr/bin/mariadb'
MISSING = (not os.path.exists(MARIADBD) and
           os.environ.get('ORPHAN_MARIADB_REQUIRED') != '1')


def sql(socket, statement):
    """Run one statement as root with the server's own client."""
    return subprocess.run([CLIENT, '--no-defaults', '--user=root',
                           '--socket=' + socket, '--execute=' + statement],
                          capture_output=True, text=True)


@contextlib.contextmanager
def server():
    """The socket of a fresh server, root without a password."""
    home = tempfile.mkdtemp(prefix='orphan-mariadb-')
    data, socket = os.path.join(home, 'data'), os.path.join(home, 'sock')
    user = ['--user=mysql'] if os.geteuid() == 0 else []
    if os.geteuid() == 0:
        shutil.chown(home, 'mysql', 'mysql')
    subprocess.run([INSTALL_DB, '--no-defaults', '--datadir=' + data,
                    '--auth-root-authentication-method=normal',
                    '--skip-test-db', *user],
                   check=True, capture_output=True, text=True)
    log = open(os.path.join(home, 'log'), 'w')
    process = subprocess.Popen(
        [MARIADBD, '--no-defaults', '--datadir=' + data,
         '--socket=' + socket, '--skip-networking',
         '--pid-file=' + os.path.join(home, 'pid'),
         '--innodb-flush-log-at-trx-commit=0', *user],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while sql(socket, 'SELECT 1').returncode:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(open(log.name).read())
            time.sleep(0.2)
        yield socket
    finally:
        process.terminate()
        process.wait(30)
        log.close()
        shutil.rmtree(home, ignore_errors=True)
