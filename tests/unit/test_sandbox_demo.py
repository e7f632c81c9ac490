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

"""``./run demo --cells 2``: the demo starts the sandbox as the tests' two
cells cloud is started (``up --cells 2``, ``tests/clouds.py``) with its
incident, and says how to take cell2 down, slow and up again."""

import re
from unittest import mock

import pytest

from sandbox import __main__ as cli
from sandbox import demo
from sandbox import incidents_names


def demo_args(*argv):
    with mock.patch.object(demo, 'main', lambda args: args):
        return cli.main(['demo'] + list(argv))


def incidents(cmd):
    return cmd[cmd.index('--incidents') + 1].split(',')


def test_the_default_demo_has_one_cell():
    args = demo_args()
    cmd = demo.up_command(args, '/state')
    assert '--cells' not in cmd
    assert 'second_cell' not in incidents(cmd)
    assert incidents(cmd) == list(incidents_names.DEMO +
                                  incidents_names.NEUTRON +
                                  incidents_names.CYBORG)
    assert demo.cell_controls(args) == []
    # The sandbox's own parser takes what the demo passes it: Neutron and
    # Cyborg, which the Cyborg incident needs.
    with mock.patch('sandbox.up.main', lambda up: up):
        up = cli.main(cmd[cmd.index('up'):])
    assert (up.neutron, up.cyborg) == (True, True)


def test_two_cells_stage_the_second_cell_and_say_its_controls():
    args = demo_args('--cells', '2', '--no-neutron', '--control-port',
                     '9899')
    cmd = demo.up_command(args, '/state')
    assert cmd[cmd.index('--cells') + 1] == '2'
    assert incidents(cmd) == list(incidents_names.DEMO) + ['second_cell']
    # The sandbox's own parser takes what the demo passes it.
    with mock.patch('sandbox.up.main', lambda up: up):
        up = cli.main(cmd[cmd.index('up'):])
    assert (up.cells, up.neutron) == (2, False)
    assert 'second_cell' in up.incidents
    controls = demo.cell_controls(args)
    assert [re.search(r'curl -X POST (\S+)', line).group(1)
            for line in controls] == [
        'http://127.0.0.1:9899/cells/cell2/down',
        'http://127.0.0.1:9899/cells/cell2/slow',
        'http://127.0.0.1:9899/cells/cell2/up']


def test_three_cells_are_refused():
    with pytest.raises(SystemExit) as refused:
        demo_args('--cells', '3')
    assert refused.value.code == 2
