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

"""``./run demo``'s incidents, staged on the cloud it runs (one cell, the
real Neutron and Cyborg: the ``neutron`` topology) in the order it stages
them: each stages with the others around it (an incident booting on a
host another stops fails here, not in an operator's first demo)."""

from unittest import mock

import pytest

pytest.importorskip('nova')
pytest.importorskip('neutron')
pytest.importorskip('cyborg')

from sandbox import __main__ as cli  # noqa: E402
from sandbox import demo  # noqa: E402
from tests import clouds  # noqa: E402


def demo_incidents():
    """What ``python -m sandbox demo`` (its defaults) stages, in order."""
    with mock.patch.object(demo, 'main', lambda args: args):
        args = cli.main(['demo'])
    cmd = demo.up_command(args, '/state')
    assert '--cyborg' in cmd and '--neutron' in cmd
    return tuple(cmd[cmd.index('--incidents') + 1].split(','))


DEMO = demo_incidents()
pytestmark = pytest.mark.topology('neutron')
sb = clouds.module_sandbox(DEMO)


def test_every_incident_of_the_demo_stages_beside_the_others(sb):
    staged = sb.config['incidents']
    assert sorted(staged) == sorted(DEMO)
    accelerator = staged['accelerator_deleted_behind_nova']
    assert accelerator['checks']['arqs']
    assert {e['verdict'] for e in accelerator['expected']} == {
        'deleted_instance'}
