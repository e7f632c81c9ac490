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

"""The bench cloud stands in for the sandbox's: ``sandbox.up`` calls it
as it calls :func:`sandbox.cloud.build` (a ``pci`` argument added there
once stopped every ``python -m bench`` before its first size)."""

import ast
import inspect
import pathlib

import pytest

SANDBOX_CLOUD = pathlib.Path(__file__).parents[2] / 'sandbox' / 'cloud.py'


def sandbox_build_parameters():
    """``sandbox.cloud.build``'s parameters, read from its source: importing
    it imports Nova, which looks for Django (blocked in this tier)."""
    tree = ast.parse(SANDBOX_CLOUD.read_text(encoding='utf-8'))
    (build,) = [node for node in tree.body
                if isinstance(node, ast.FunctionDef) and node.name == 'build']
    return [arg.arg for arg in build.args.args]


def bench_build():
    """``bench.server.build``, imported by the tests that call it: the
    older Horizon series' virtualenvs collect every unit module (to run
    those marked ``horizon``) and lack the sandbox's packages."""
    from bench import server
    return server.build


def test_the_bench_cloud_takes_what_the_sandbox_build_takes():
    assert (list(inspect.signature(bench_build()).parameters) ==
            sandbox_build_parameters())


def test_the_bench_cloud_refuses_pci_devices_it_cannot_report():
    with pytest.raises(SystemExit, match='PCI'):
        bench_build()(pci=True)


def test_the_floor_sends_what_the_allocations_decide_after_them():
    """A sweep reads a server alone, then consumers' details and instance
    actions, only once the allocations have shown which: the floor tells
    them from the listings and provider reads it sends before them."""
    from bench import measure
    base = 'http://127.0.0.1:1/'
    assert [measure._kind(base + path) for path in (
        'compute/v2.1/servers/detail?changes-since=x',
        'compute/v2.1/os-migrations', 'compute/v2.1/servers/%s' % ('a' * 36),
        'compute/v2.1/servers/%s/os-instance-actions' % ('a' * 36),
        'placement/resource_providers/%s/allocations' % ('b' * 36),
        'placement/allocations/%s' % ('c' * 36),
        'compute/v2.1/os-hypervisors/detail')] == [
        'servers', 'migrations', 'server alone', 'known',
        'provider allocations', 'details', 'other']
