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

"""One sandbox cloud per topology for a whole test run (for each of
its :data:`STREAMS`, when ``./run test`` runs them side by side).

A module names its topology with ``@pytest.mark.topology('two_cells')``
(none: ``plain``); the cloud starts the first time a module asks for it,
each module then gets it reset to the incidents it stages
(``sandbox.harness.Sandbox.reset``), and it is paused between the modules
that use it.
"""

import os
import pathlib

import pytest

TOPOLOGIES = {
    'plain': {},
    'two_cells': {'cells': 2},
    'neutron': {'neutron': True, 'cyborg': True},
    'pci': {'pci': True},
}
"""Topology -> ``sandbox.harness.Sandbox`` options."""

STREAMS = ('plain', 'beside')
"""The tiers on the clouds in two pytest processes side by side
(``./run test``), each with clouds of its own: ``plain`` runs the plain
cloud's modules outside the browser tier; ``beside`` runs the modules of
:data:`BESIDE` and of every other topology.  Only the plain cloud is
started in both, and the browser tier's Horizon and Chromium once."""

BESIDE = ('tests/browser', 'tests/sandbox/test_bench.py')
"""Modules (or folders of them) of the plain topology that run in the
``beside`` stream: the browser tier, and the bench, whose clouds are its
own (``bench.server``)."""

ROOT = pathlib.Path(__file__).resolve().parent.parent


def topology(node):
    """The topology the ``topology`` marker of a test or of its module
    names (a pytest node)."""
    marker = node.get_closest_marker('topology')
    return marker.args[0] if marker else 'plain'


def stream(item):
    """The stream (:data:`STREAMS`) the test ``item`` runs in."""
    path = pathlib.Path(str(item.fspath)).resolve()
    beside = topology(item) != 'plain' or any(
        ROOT / name == path or ROOT / name in path.parents
        for name in BESIDE)
    return STREAMS[beside]


def staged(request, incidents):
    """The run's sandbox of the requesting module's topology with
    ``incidents`` staged (a ``sandbox.harness.Sandbox``), paused again
    when the requesting fixture ends."""
    clouds = request.getfixturevalue('sandbox_clouds')
    name = topology(request.node)
    sandbox = clouds.staged(name, incidents)
    request.addfinalizer(lambda: clouds.pause(name))
    return sandbox


def clients(sandbox):
    """The plugin's clients (``orphan_dashboard.api.client``) for
    ``sandbox``, through its ``clouds.yaml`` as ``orphan-audit`` reads it."""
    from orphan_dashboard.api import client
    os.environ['OS_CLIENT_CONFIG_FILE'] = sandbox.config['clouds_yaml']
    return client.for_cloud('sandbox')


def module_sandbox(incidents=()):
    """A module's ``sb`` fixture: ``staged`` for the module."""
    @pytest.fixture(scope='module')
    def sb(request):
        return staged(request, incidents)
    return sb


class Clouds:
    """The run's sandboxes, by topology, started on first use."""

    def __init__(self):
        self.running = {}

    def get(self, name):
        """The ``name`` cloud, running: started, or resumed if paused."""
        from sandbox import harness
        if name not in self.running:
            sandbox = harness.Sandbox(timeout=300, **TOPOLOGIES[name])
            self.running[name] = sandbox.start()
        else:
            self.running[name].resume()
        return self.running[name]

    def staged(self, name, incidents):
        """The ``name`` cloud with ``incidents`` staged, and nothing else
        any other module did to it."""
        sandbox = self.get(name)
        sandbox.reset(incidents)
        return sandbox

    def pause(self, name):
        """Freeze the ``name`` cloud until a module asks for it again (see
        ``sandbox.harness.Sandbox.pause``)."""
        self.running[name].pause()

    def stop(self):
        for sandbox in self.running.values():
            sandbox.stop()
        self.running.clear()
