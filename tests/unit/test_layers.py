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

"""The package's folders are its layers, and imports only point down.

Read from the source (every ``import``, also inside functions), so a
lazy import cannot hide a wrong direction.  ``doc/source/contributor.md``
draws the same picture.
"""

import ast
import pathlib
import re

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / 'orphan_dashboard'

LAYERS = (
    ('engine', ('orphan_dashboard.audit',)),
    ('services', ('orphan_dashboard.api',)),
    ('settings', ('orphan_dashboard.conf',)),
    ('reading', ('orphan_dashboard.reading',)),
    ('writing', ('orphan_dashboard.writing', 'orphan_dashboard.models')),
    ('sweep', ('orphan_dashboard.sweep',)),
    ('application', ('orphan_dashboard.operations',)),
    ('panel', ('orphan_dashboard.content', 'orphan_dashboard.templatetags',
               'orphan_dashboard.enabled')),
    ('cli', ('orphan_dashboard.cli', 'orphan_dashboard.management')),
    ('app', ('orphan_dashboard.apps', 'orphan_dashboard.migrations',
             'orphan_dashboard')),
)
"""Each layer and the modules in it, most specific prefix first."""

MAY_IMPORT = {
    'engine': {'engine'},
    'services': {'services', 'settings'},
    'settings': {'settings'},
    'reading': {'reading', 'services', 'engine', 'settings'},
    'writing': {'writing', 'reading', 'services', 'engine', 'settings'},
    'sweep': {'sweep', 'reading', 'services', 'engine', 'settings'},
    'application': {'application', 'sweep', 'writing', 'reading',
                    'services', 'engine', 'settings'},
    'panel': {'panel', 'application', 'sweep', 'engine', 'settings'},
    'cli': {'cli', 'application', 'sweep', 'engine', 'settings'},
    'app': {'app', 'settings', 'sweep', 'writing'},
}
"""Which of our layers each layer may import: only ones below it."""

FOREIGN = ('django', 'horizon', 'openstack_dashboard', 'requests',
           'keystoneauth1', 'novaclient', 'openstack', 'osprofiler',
           'prometheus_client', 'rich')
"""Libraries of I/O and UI that the engine never imports."""

MAY_NOT_IMPORT = {'engine': FOREIGN}

CONNECTIONS = ('orphan_dashboard.api.client',
               'orphan_dashboard.writing.journal',
               'orphan_dashboard.reading.progress')
"""What a front end connects with, below the application layer: the
clients it builds from its request or its ``clouds.yaml``, the journal
that records its user's writes, and the progress it is told of a read
(the command line's bar implements it)."""

FRONT_ENDS = ('panel', 'cli')


def layer_of(module):
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + '.'):
                return name
    raise AssertionError('%s is in no layer' % module)


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix('').parts
    if parts[-1] == '__init__':
        parts = parts[:-1]
    return '.'.join(parts)


def imported(source):
    """Every module a source imports, as ``(line, dotted name)``; a
    ``from package import name`` counts as ``package.name``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.extend((node.lineno, '%s.%s' % (node.module, alias.name))
                         for alias in node.names)
    return found


def wrong_imports(module, source):
    """What ``module`` imports against the layers, one line each."""
    layer = layer_of(module)
    wrong = []
    for line, name in imported(source):
        top = name.split('.')[0]
        if top == 'orphan_dashboard':
            target = layer_of(name)
            if target not in MAY_IMPORT[layer] and not (
                    layer in FRONT_ENDS and name in CONNECTIONS):
                wrong.append('%s:%d %s (%s) imports %s (%s)' % (
                    module, line, module, layer, name, target))
        elif top in MAY_NOT_IMPORT.get(layer, ()):
            wrong.append('%s:%d %s (%s) imports %s' % (
                module, line, module, layer, name))
    return wrong


def sources():
    for path in sorted(PACKAGE.rglob('*.py')):
        yield module_name(path), path.read_text(encoding='utf-8')


def test_every_import_points_down():
    wrong = []
    for module, source in sources():
        wrong.extend(wrong_imports(module, source))
    assert wrong == []


ADAPTER = 'orphan_dashboard.content.orphaned_allocations.service'
"""The panel's one door to what a request connects with: its clients,
cloud and journal."""


def test_views_tables_tabs_and_forms_connect_only_through_service():
    """They call ``operations/`` and read the engine's types as the command
    lines do; the request's clients and journal come from ``service``."""
    wrong = []
    for module, source in sources():
        if layer_of(module) != 'panel' or module == ADAPTER:
            continue
        wrong += ['%s:%d imports %s' % (module, line, name)
                  for line, name in imported(source)
                  if name.startswith('orphan_dashboard.') and
                  layer_of(name) not in ('panel', 'application', 'sweep',
                                         'engine', 'settings')]
    assert wrong == []


def test_every_module_is_in_a_layer():
    assert {layer_of(module) for module, _ in sources()} == set(MAY_IMPORT)


@pytest.mark.parametrize('module,source', [
    ('orphan_dashboard.audit.classify', 'import django.conf\n'),
    ('orphan_dashboard.audit.classify',
     'def f():\n    from orphan_dashboard import conf\n'),
    ('orphan_dashboard.audit.plan', 'import requests\n'),
    ('orphan_dashboard.api.placement',
     'from orphan_dashboard.reading import collect\n'),
    ('orphan_dashboard.api.placement',
     'from orphan_dashboard.audit import model\n'),
    ('orphan_dashboard.reading.collect',
     'from orphan_dashboard.writing import repair\n'),
    ('orphan_dashboard.writing.repair',
     'from orphan_dashboard.content.orphaned_allocations import views\n'),
    ('orphan_dashboard.content.orphaned_allocations.views',
     'from orphan_dashboard.writing import repair\n'),
    ('orphan_dashboard.cli.commands',
     'from orphan_dashboard.content.orphaned_allocations import service\n'),
])
def test_a_wrong_direction_is_caught(module, source):
    assert len(wrong_imports(module, source)) == 1


def test_every_package_opens_with_its_job():
    """Each folder of modules says what it is for, as the layers table of
    ``doc/source/contributor.md`` does; ``local_settings.d`` is a folder of
    snippets Horizon runs, not a package."""
    folders = sorted({path.parent for path in PACKAGE.rglob('*.py')
                      if '.' not in path.parent.name})
    silent = [str(folder.relative_to(PACKAGE.parent)) for folder in folders
              if not (folder / '__init__.py').exists() or
              not ast.get_docstring(ast.parse(
                  (folder / '__init__.py').read_text(encoding='utf-8')))]
    assert silent == []


def test_each_attribute_docstring_sits_under_its_own_name():
    """A string right after an assignment documents that name (Sphinx reads
    it so): two strings in a row leave one under the wrong name."""
    misplaced = []
    for module, source in sources():
        bodies = [ast.parse(source).body]
        while bodies:
            body = bodies.pop()
            bodies += [node.body for node in body
                       if isinstance(node, ast.ClassDef)]
            misplaced += ['%s:%d' % (module, node.lineno)
                          for before, node in zip(body, body[1:])
                          if isinstance(node, ast.Expr) and
                          isinstance(node.value, ast.Constant) and
                          isinstance(node.value.value, str) and
                          not isinstance(before, (ast.Assign,
                                                  ast.AnnAssign))]
    assert misplaced == []


SIDES = {'audit': '(pure)', 'reading': '(I/O)', 'writing': '(I/O)',
         'operations': '(use case)'}
"""What the first sentence of a module says of its side, by folder, where
its name stands in more than one of them (``contributor.md``, *Names*)."""


def first_sentence(source):
    text = ' '.join((ast.get_docstring(ast.parse(source)) or '').split())
    return re.split(r'(?<=\.)\s', text, maxsplit=1)[0]


def test_a_name_in_several_layers_says_its_side_in_each():
    folders = {}
    for folder in SIDES:
        for path in (PACKAGE / folder).glob('*.py'):
            if path.stem != '__init__':
                folders.setdefault(path.stem, []).append(path)
    silent = ['%s: %s' % (path.relative_to(PACKAGE), first_sentence(
        path.read_text(encoding='utf-8')))
        for paths in folders.values() if len(paths) > 1
        for path in paths
        if SIDES[path.parent.name] not in first_sentence(
            path.read_text(encoding='utf-8'))]
    assert silent == []


TESTS = PACKAGE.parent / 'tests'


def imported_tests(source, path):
    """The ``tests.*`` modules ``source`` (of the file at ``path``)
    imports, also inside functions."""
    found = set()
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update('%s.%s' % (node.module, alias.name)
                         for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith('tests.')}


def test_no_test_module_imports_another():
    """What several test modules share lives in a module of helpers or
    fixtures (``tests/browser/pages.py``, ``tests/unit/staged.py``, ...),
    never in a test module: a test module's tests are its own."""
    wrong = sorted(
        '%s imports %s' % (path.relative_to(TESTS.parent), name)
        for path in TESTS.rglob('test_*.py')
        for name in imported_tests(path.read_text(encoding='utf-8'), path)
        if any(part.startswith('test_') for part in name.split('.')))
    assert wrong == []
    assert imported_tests('from tests.unit.test_x import y\n', 'x') == {
        'tests.unit.test_x', 'tests.unit.test_x.y'}
    assert 'tests.unit.test_x' in imported_tests(
        'def f():\n    from tests.unit import test_x\n', 'x')
