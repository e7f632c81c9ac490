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

"""Fixtures every real-service tier shares."""

import pytest

from tests import clouds as clouds_module


def pytest_addoption(parser):
    parser.addoption(
        '--clouds-stream', choices=clouds_module.STREAMS,
        help="only the tests of this stream of the clouds' tiers "
        '(tests/clouds.py STREAMS), the others deselected')


def pytest_collection_modifyitems(config, items):
    wanted = config.getoption('clouds_stream')
    if wanted is None:
        return
    kept, other = [], []
    for item in items:
        (kept if clouds_module.stream(item) == wanted else other).append(item)
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = kept


@pytest.fixture(scope='session')
def sandbox_clouds():
    """The run's sandbox clouds, one per topology (``tests/clouds.py``)."""
    clouds = clouds_module.Clouds()
    yield clouds
    clouds.stop()
