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

"""orphan-audit fails with one line and exit code 1, never a traceback."""

import os
import subprocess
import sys

import pytest

from sandbox.common import free_port


def audit(*args, **env):
    clean = {k: v for k, v in os.environ.items() if not k.startswith('OS_')}
    clean.update(env)
    return subprocess.run(
        [sys.executable, '-m', 'orphan_dashboard.cli', *args],
        capture_output=True, text=True, env=clean, timeout=120)


def _one_line_error(result, text, code=1):
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith('orphan-audit: ')
    assert text in lines[0]
    assert 'Traceback' not in result.stderr


def test_unknown_cloud():
    _one_line_error(audit('--os-cloud', 'no-such-cloud'), 'no-such-cloud')


def unreachable():
    return dict(OS_AUTH_URL='http://127.0.0.1:%d/v3' % free_port(),
                OS_USERNAME='admin', OS_PASSWORD='x',
                OS_PROJECT_NAME='admin', OS_USER_DOMAIN_NAME='Default',
                OS_PROJECT_DOMAIN_NAME='Default')


def test_unreachable_keystone():
    _one_line_error(audit(**unreachable()), 'cannot reach the cloud')


@pytest.mark.parametrize('args, text', [
    (['--timeout', '-1', 'report'], '--timeout -1'),
    (['report', '--timeout', '0'], '--timeout 0'),
    (['--timeout', 'nan'], '--timeout nan'),
    (['metrics', '--textfile', '/missing/dir/x.prom'], '/missing/dir'),
])
def test_values_that_parse_but_cannot_work_exit_2(args, text):
    """Said in one line before anything is read, never a traceback."""
    _one_line_error(audit(*args, **unreachable()), text, code=2)


def test_a_textfile_that_cannot_be_written_is_one_line(tmp_path):
    (tmp_path / 'x.prom').mkdir()
    _one_line_error(audit('metrics', '--textfile', str(tmp_path / 'x.prom'),
                          **unreachable()), 'x.prom')


@pytest.mark.parametrize('args', [['--min-age', 'soon'], ['--bogus']])
def test_bad_arguments_exit_2(args):
    assert audit(*args).returncode == 2


@pytest.mark.parametrize('output', ['--csv', '--json'])
def test_a_reader_that_stops_early_ends_it_quietly(tmp_path, output):
    """``orphan-audit history | head -1``: the reader is gone before the
    first line, as ``head`` is after its lines; orphan-audit ends as
    ``git log`` does, on SIGPIPE's status (128 + 13), saying nothing."""
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith('OS_') and k != 'DJANGO_SETTINGS_MODULE'}
    clean['ORPHAN_AUDIT_JOURNAL_DIR'] = str(tmp_path)
    listing = subprocess.Popen(
        [sys.executable, '-m', 'orphan_dashboard.cli', 'history',
         '--all-clouds', output], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=clean)
    listing.stdout.close()
    _out, said = listing.communicate(timeout=120)
    assert (listing.returncode, said) == (141, '')
