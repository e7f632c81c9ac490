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

"""The pytest plugin that proves the unit tests not marked ``horizon`` need
no Horizon, so that the Horizon matrix may leave them out.

``pytest -p no:django -p tests.horizonless -m 'not horizon' tests/unit``
(what ``./run test`` and ``tox -e unit`` run): ``django``, ``horizon`` and
``openstack_dashboard`` cannot be imported, modules marked ``horizon`` as a
whole are not collected, and any attempt to import a blocked package fails
the run, even one a test caught, so a test that needs Horizon and is not
marked cannot pass here."""

import ast
import importlib.abc
import sys

import pytest

BLOCKED = ('django', 'horizon', 'openstack_dashboard')


class Blocker(importlib.abc.MetaPathFinder):
    """Refuses the blocked packages and remembers who asked."""

    def __init__(self):
        self.attempts = []

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition('.')[0] not in BLOCKED:
            return None
        self.attempts.append(fullname)
        raise ImportError('%s is blocked: mark the test horizon '
                          '(tests/horizonless.py)' % fullname, name=fullname)


BLOCKER = Blocker()


def marked_horizon(path):
    """Whether a test module's ``pytestmark`` holds ``horizon``: read from
    its source, since importing it would import what it needs."""
    tree = ast.parse(path.read_text(encoding='utf-8'), str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == 'pytestmark'
                for t in node.targets):
            return any(isinstance(n, ast.Attribute) and n.attr == 'horizon'
                       for n in ast.walk(node.value))
    return False


def pytest_addoption(parser):
    parser.addini('DJANGO_SETTINGS_MODULE',
                  "pytest-django's, unused while Django is blocked")


def pytest_configure(config):
    loaded = sorted(name for name in sys.modules
                    if name.partition('.')[0] in BLOCKED)
    if loaded:
        raise pytest.UsageError(
            'already imported before tests/horizonless.py: %s (run with '
            '-p no:django)' % ', '.join(loaded[:5]))
    sys.meta_path.insert(0, BLOCKER)


def pytest_ignore_collect(collection_path, config):
    if collection_path.suffix == '.py' and \
            collection_path.name.startswith('test_'):
        return marked_horizon(collection_path) or None
    return None


def pytest_sessionfinish(session, exitstatus):
    if BLOCKER.attempts and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    if BLOCKER.attempts:
        terminalreporter.write_line(
            'imported although not marked horizon: %s' %
            ', '.join(sorted(set(BLOCKER.attempts))), red=True)
