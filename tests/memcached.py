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

"""A throwaway memcached on loopback (Debian's ``memcached``, installed by
``./run test`` as root), for the tests whose processes share a cache as
Horizon's do in production."""

import contextlib
import os
import shutil
import subprocess

import pytest

from sandbox import common

MEMCACHED = shutil.which('memcached') or '/usr/bin/memcached'
MISSING = pytest.mark.skipif(
    not os.path.exists(MEMCACHED) and
    os.environ.get('ORPHAN_MEMCACHED_REQUIRED') != '1',
    reason="Debian's memcached is not installed")
"""Skips a test where memcached is not installed, unless the run requires
it (CI does)."""


@contextlib.contextmanager
def running():
    """A memcached of its own for the block: its ``host:port``."""
    port = common.choose_port(0)
    user = ['-u', 'nobody'] if os.geteuid() == 0 else []
    proc = subprocess.Popen([MEMCACHED, '-l', '127.0.0.1', '-p', str(port),
                             '-U', '0', '-m', '64', *user])
    try:
        common.wait_for_port(port, timeout=30, proc=proc)
        yield '127.0.0.1:%d' % port
    finally:
        common.stop_process(proc, 10)
