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

"""The run that lets the Horizon matrix skip the unmarked unit tests
(``tests/horizonless.py``) fails every way a test can need Horizon without
its ``horizon`` mark, and leaves the marked ones out."""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULES = {
    'test_marked_module.py': (
        'import pytest\n'
        'from django.conf import settings\n'
        'pytestmark = pytest.mark.horizon\n'
        'def test_reads_settings():\n'
        '    assert settings\n'),
    'test_engine.py': (
        'import pytest\n'
        'def test_pure():\n'
        '    assert True\n'
        '@pytest.mark.horizon\n'
        'def test_marked():\n'
        '    import horizon  # noqa\n'
        'def test_unmarked_import_in_a_test():\n'
        '    from orphan_dashboard.writing import journal  # noqa\n'),
    'test_swallowed.py': (
        'def test_caught():\n'
        '    try:\n'
        '        import openstack_dashboard  # noqa\n'
        '    except ImportError:\n'
        '        pass\n'),
}


def test_an_unmarked_test_needing_horizon_fails_the_run(tmp_path):
    for name, text in MODULES.items():
        (tmp_path / name).write_text(text)
    result = subprocess.run(
        [sys.executable, '-m', 'pytest', '-q', '-p', 'no:django',
         '-p', 'no:cacheprovider', '-p', 'tests.horizonless',
         '-m', 'not horizon', '--rootdir', str(tmp_path), str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    out = result.stdout
    assert result.returncode == 1, out
    assert 'test_marked_module' not in out, out
    assert 'FAILED test_engine.py::test_unmarked_import_in_a_test' in out
    assert '1 failed, 2 passed, 1 deselected' in out, out
    assert 'imported although not marked horizon: django' in out, out
    assert 'openstack_dashboard' in out.split('not marked horizon:')[1]
