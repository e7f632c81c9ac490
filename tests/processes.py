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

"""Processes as Linux's ``/proc`` shows them, for the sweeper's tests."""

import os


def children(parents, name):
    """Pids of the children of ``parents`` whose command line has
    ``name``."""
    found = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open('/proc/%s/stat' % pid) as f:
                ppid = int(f.read().rsplit(')', 1)[1].split()[1])
            with open('/proc/%s/cmdline' % pid, 'rb') as f:
                cmdline = f.read()
        except OSError:
            continue
        if ppid in parents and name.encode() in cmdline:
            found.append(int(pid))
    return found
