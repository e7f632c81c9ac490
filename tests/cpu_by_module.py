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

"""Wall time and CPU per test module, of the test process and everything
it started (sandbox clouds, Horizon, Chromium, subprocesses): what a
module costs the machine, not only its own wall time.

``pytest -p tests.cpu_by_module`` writes ``{module: [wall, user, system,
tests]}`` as JSON to ``$ORPHAN_CPU_BY_MODULE`` (default
``.artifacts/cpu-by-module.json``) at the end of the session.
"""

import collections
import json
import os
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICKS = os.sysconf('SC_CLK_TCK')
STATS = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
_started = {}


def tree_cpu(root_pid=None):
    """User and system CPU seconds of ``root_pid`` (this process) and its
    descendants, the children they already reaped included."""
    children = collections.defaultdict(list)
    times = {}
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % name) as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        pid = int(name)
        children[int(fields[1])].append(pid)
        times[pid] = (int(fields[11]) + int(fields[13]),
                      int(fields[12]) + int(fields[14]))
    user = system = 0
    todo = [root_pid or os.getpid()]
    while todo:
        pid = todo.pop()
        u, s = times.get(pid, (0, 0))
        user += u
        system += s
        todo.extend(children.get(pid, ()))
    return user / TICKS, system / TICKS


def pytest_runtest_protocol(item, nextitem):
    _started[item.nodeid] = (time.monotonic(), tree_cpu())


def pytest_runtest_logfinish(nodeid, location):
    if nodeid not in _started:
        return
    began, (user, system) = _started.pop(nodeid)
    user_now, system_now = tree_cpu()
    module = STATS[nodeid.split('::')[0]]
    module[0] += time.monotonic() - began
    module[1] += user_now - user
    module[2] += system_now - system
    module[3] += 1


def pytest_sessionfinish(session):
    path = os.environ.get('ORPHAN_CPU_BY_MODULE') or os.path.join(
        ROOT, '.artifacts', 'cpu-by-module.json')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump(STATS, f, indent=1, sort_keys=True)
