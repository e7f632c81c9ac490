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

"""The documentation builds with no warning (``tox -e docs``), and its
references name every setting, every command and option and every verdict
and action the code has."""

import argparse
import html
import os
import re
import subprocess
import sys

import pytest

from orphan_dashboard.audit import model
from orphan_dashboard.cli import options
from orphan_dashboard import conf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


@pytest.fixture(scope='module')
def built(tmp_path_factory):
    for module in ('sphinx', 'myst_parser', 'openstackdocstheme'):
        pytest.importorskip(module)
    out = tmp_path_factory.mktemp('docs')
    result = subprocess.run(
        [sys.executable, '-m', 'sphinx', '-W', '-q', '-b', 'html',
         os.path.join(ROOT, 'doc', 'source'), str(out)],
        capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr

    def page(name):
        return html.unescape((out / (name + '.html')).read_text())
    return page


def test_every_setting_is_in_the_configuration_reference(built):
    page = built('configuration')
    assert [s.name for s in conf.SETTINGS if s.name not in page] == []


def parsers():
    parser = options.build_parser()
    [sub] = [a for a in parser._actions
             if isinstance(a, argparse._SubParsersAction)]
    return [('', parser)] + list(sub.choices.items())


def test_every_command_and_option_is_in_the_cli_reference(built):
    page = built('cli')
    missing = []
    for name, parser in parsers():
        if name and 'orphan-audit %s' % name not in page:
            missing.append(name)
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or \
                    isinstance(action, argparse._HelpAction):
                continue
            missing += [o for o in action.option_strings if o not in page]
    assert missing == []


def test_every_verdict_and_action_is_in_the_reference(built):
    page = built('verdicts')
    kinds = list(model.VERDICT_KINDS.values())
    kinds += list(model.ACTION_KINDS.values())
    assert [k.code for k in kinds
            if k.code not in page or k.title not in page] == []


def verdicts_table():
    """The verdicts the table at the top of ``verdicts.md`` has a row of,
    in its order."""
    with open(os.path.join(ROOT, 'doc', 'source', 'verdicts.md')) as page:
        top = page.read().split('\n\n|')[1].split('\n\n')[0]
    return re.findall(r'^\| `([a-z_]+)` \|', top, re.MULTILINE)


def test_the_verdicts_table_lists_exactly_the_registrys_verdicts():
    table = verdicts_table()
    assert len(table) == len(set(table)), 'a verdict has two rows'
    assert [v for v in model.VERDICT_KINDS if v not in table] == [], (
        'add a row of each to the table at the top of '
        'doc/source/verdicts.md: its meaning and its repair')
    assert [v for v in table if v not in model.VERDICT_KINDS] == [], (
        'no such verdict in orphan_dashboard/audit/model.py: drop its row '
        'from doc/source/verdicts.md')
