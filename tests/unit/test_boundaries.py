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

"""Boundaries the engine and the service calls keep: settings passed in,
no engine inside the API modules, every microversion named in one place,
a cache key that changes with the cached classes, no measurements in
docstrings, a migration for every change of the journal's model."""

import ast
import dataclasses
import gc
import inspect
import pathlib
import re
import types

from django.core.cache.backends import locmem
from django.core import management
import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import decommission
from orphan_dashboard import conf
from orphan_dashboard.sweep import store as stores
from tests.unit.cloud import Cloud

pytestmark = pytest.mark.horizon

PACKAGE = pathlib.Path(classify.__file__).resolve().parents[1]


def _imports(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names |= {'%s.%s' % (node.module, alias.name)
                      for alias in node.names}
    return names


def test_the_engine_takes_min_age_from_its_caller():
    """The setting holds the one default: the engine has none to drift
    from it."""
    assert not any('conf' in name.split('.')
                   for name in _imports(PACKAGE / 'audit' / 'classify.py'))
    for takes in (classify.Auditor, classify.audit, decommission.plan):
        assert inspect.signature(takes).parameters['min_age'].default is \
            inspect.Parameter.empty, takes
    assert not re.search(r'\b%d\b' % conf.MIN_AGE.default, ''.join(
        path.read_text() for path in (PACKAGE / 'audit').glob('*.py')))


def test_the_api_modules_do_not_import_the_engine():
    for path in (PACKAGE / 'api').glob('*.py'):
        assert not any(name.startswith('orphan_dashboard.audit')
                       for name in _imports(path)), path.name


MICROVERSION = re.compile(r"""['"][12]\.\d+['"]""")


def test_every_microversion_comes_from_the_microversions_module():
    found = []
    for path in PACKAGE.rglob('*.py'):
        if path.name == 'microversions.py' or path.parts[-2] == 'audit':
            continue
        found += ['%s: %s' % (path.name, line.strip())
                  for line in path.read_text().splitlines()
                  if MICROVERSION.search(line)]
    assert found == []


MEASURED = re.compile(r'\d+\.\d+\s?(?:s|ms|%)(?!\w)|\d\s?%')


def _docstrings(tree):
    for node in ast.walk(tree):
        body = getattr(node, 'body', None)
        if not isinstance(body, list):
            continue
        for statement in body:
            if (isinstance(statement, ast.Expr) and
                    isinstance(statement.value, ast.Constant) and
                    isinstance(statement.value.value, str)):
                yield statement.value.value


def test_docstrings_hold_no_measurements():
    found = ['%s: %s' % (path.name, match.group())
             for path in PACKAGE.rglob('*.py')
             for text in _docstrings(ast.parse(path.read_text()))
             for match in MEASURED.finditer(text)]
    assert found == []


def _store(cache):
    return stores.Store('cloud', cache=cache)


def test_a_loaded_blob_costs_no_collector_pass_while_it_is_made():
    cache = locmem.LocMemCache('collector', {'OPTIONS': {'MAX_ENTRIES': 1000}})
    store = _store(cache)
    store._put({('blob',): [[i] for i in range(100000)]})
    passes = []

    def counted(phase, info):
        if phase == 'start':
            passes.append(info['generation'])
    gc.callbacks.append(counted)
    try:
        loaded = store._get('blob')
        during = len(passes)
    finally:
        gc.callbacks.remove(counted)
    assert len(loaded) == 100000
    assert during <= 1
    assert gc.isenabled()
    gc.disable()
    try:
        store._get('blob')
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_store_written_with_another_format_version_is_not_read(
        monkeypatch):
    cache = locmem.LocMemCache('format-version', {})
    snapshot = Cloud().snapshot()
    monkeypatch.setattr(stores, 'FORMAT_VERSION', 'older')
    old = _store(cache)
    version = old.save(snapshot, classify.audit(snapshot, min_age=600), 600)
    assert old.load_snapshot(version) is not None
    monkeypatch.undo()
    new = _store(cache)
    assert new.state()['version'] is None
    assert new.load_snapshot(version) is None
    assert new.load_report(version) is None
    assert _store(cache).base == new.base != old.base


def test_the_format_version_changes_with_a_cached_class():
    def module(*fields):
        namespace = types.ModuleType('cached')
        namespace.Cached = dataclasses.make_dataclass('Cached', fields)
        return namespace

    one = stores.fingerprint([module(('a', int))])
    assert one == stores.fingerprint([module(('a', int))])
    assert one != stores.fingerprint([module(('a', int), ('b', str))])
    assert one != stores.fingerprint([module(('a', str))])
    assert stores.FORMAT_VERSION.startswith('%d.' % stores.FORMAT)


@pytest.mark.django_db(databases=['default', 'orphan_journal'])
def test_the_journal_s_migrations_hold_every_change_of_its_model():
    """A journal field without its migration would fail only at the
    first write of an upgraded Horizon: ``makemigrations --check`` exits
    1 while the model differs from what the migrations build."""
    management.call_command('makemigrations', 'orphan_dashboard',
                            check=True, dry_run=True, verbosity=0)
