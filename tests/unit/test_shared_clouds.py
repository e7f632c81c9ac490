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

"""Test time is a budget: a cloud test joins the shared cloud of its
topology (``tests/clouds.py``), never starts a sandbox of its own."""

import os
import re

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)

STARTS = (
    re.compile(r'\bSandbox\('),
    re.compile(r'\bSandboxCloud\('),
    re.compile(r"""['"]-m['"],\s*['"]sandbox['"],\s*['"](up|demo)['"]"""),
)
"""What starts a sandbox cloud: the harness, the cloud itself, or
``python -m sandbox up`` (or ``demo``) in a process of its own."""
ALLOWED = {
    ('tests/clouds.py', 0),
    # A second ``up`` on the running shared cloud's state dir, refused at
    # once: it starts nothing.
    ('tests/sandbox/test_sandbox.py', 2),
}
"""``(file, index in STARTS)`` of the starts that are the shared fixture's."""


def starts():
    """``{(file, index in STARTS)}`` of every start in a test file."""
    found = set()
    for folder, _dirs, files in os.walk(TESTS):
        for name in files:
            if not name.endswith('.py'):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding='utf-8') as f:
                text = f.read()
            relative = os.path.relpath(path, ROOT)
            found.update((relative, i) for i, pattern in enumerate(STARTS)
                         if pattern.search(text))
    return found


def test_no_cloud_test_starts_a_cloud_of_its_own():
    found = starts()
    # The patterns find the shared fixture's own start: they can fail.
    assert ('tests/clouds.py', 0) in found
    assert found - ALLOWED == set(), (
        'join the shared cloud of the topology (tests/clouds.py: '
        'module_cloud, module_sandbox or a topology marker) instead')


def test_what_runs_beside_the_plain_cloud_exists():
    from tests import clouds
    # A renamed module would run in the plain stream unseen.
    for name in clouds.BESIDE:
        assert os.path.exists(os.path.join(ROOT, name)), name


def test_a_port_chosen_for_a_service_is_one_the_kernel_never_gives_out():
    # Two streams start services at once: a port the kernel hands out
    # itself could go to another process before the service binds it.
    import socket

    from sandbox import common
    with open(common.EPHEMERAL) as f:
        low = int(f.read().split()[0])
    port = common.free_port()
    assert low - common.OWN_PORTS <= port < low
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', port))


def test_a_long_list_of_incidents_names_a_snapshot_a_folder_can_have():
    """The demo's incidents, joined, are longer than a file name may be:
    their snapshot is named by a digest of their order, each order its
    own."""
    from sandbox import harness
    from sandbox import incidents_names
    every = incidents_names.DEMO + incidents_names.NEUTRON
    assert len(','.join(every)) > 255
    name = harness.snapshot_name(every)
    assert len(name) <= harness.SNAPSHOT_NAME_MAX
    assert name != harness.snapshot_name(every[::-1])
    assert harness.snapshot_name(('evacuation', 'healthy')) == \
        'evacuation,healthy'
