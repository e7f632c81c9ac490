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

"""The package as operators get it: the sdist and the wheel ``python -m
build`` makes (the ones the install tests install), checked by ``twine``
and for every file a Horizon needs; and the release notes reno builds."""

import html
import os
import re
import sys
import tarfile
import zipfile

import pytest
import yaml

from tests.install.conftest import ROOT
from tests.install.conftest import run

SHIPPED = (
    'orphan_dashboard/enabled/_2170_admin_orphaned_allocations_panel.py',
    'orphan_dashboard/local_settings.d/_90_orphan_dashboard.py',
    'orphan_dashboard/conf/placement_policy.yaml',
    'orphan_dashboard/templates/orphaned_allocations/index.html',
    'orphan_dashboard/templates/orphaned_allocations/_preview_modal.html',
    'orphan_dashboard/static/orphan_dashboard/js/sweep.js',
    'orphan_dashboard/static/orphan_dashboard/js/keyboard.js',
    'orphan_dashboard/static/orphan_dashboard/js/filters.js',
    'orphan_dashboard/static/orphan_dashboard/scss/orphan_dashboard.scss',
    'orphan_dashboard/migrations/0001_initial.py',
    'orphan_dashboard/management/commands/orphan_audit.py',
    'orphan_dashboard/locale/django.pot',
    'orphan_dashboard/locale/djangojs.pot',
    'orphan_dashboard/locale/ru/LC_MESSAGES/django.po',
    'orphan_dashboard/locale/ru/LC_MESSAGES/django.mo',
)
"""What a Horizon reads from the package besides its modules."""


def test_twine_accepts_the_sdist_and_the_wheel(horizon):
    pytest.importorskip('twine')
    out = run([sys.executable, '-m', 'twine', 'check', '--strict',
               str(horizon.sdist), str(horizon.wheel)])
    assert out.count('PASSED') == 2, out


def test_the_build_prints_no_license_deprecation(horizon):
    """Setuptools boxes a table-form ``project.license`` and license
    classifiers as deprecated: the metadata uses the SPDX string."""
    assert '`project.license`' not in horizon.build_log
    assert 'License classifiers are deprecated' not in horizon.build_log


def test_the_build_ships_every_folder_as_a_package(horizon):
    """Setuptools boxes each folder under ``orphan_dashboard/`` that is
    absent from ``packages`` ("Package would be ignored"), which it ships
    as the top package's data for now: every folder is a package."""
    ignored = re.findall(r"Package '([^']+)' is absent from the `packages`",
                         horizon.build_log)
    assert ignored == []
    assert 'Package would be ignored' not in horizon.build_log


def test_the_wheel_holds_what_a_horizon_needs(horizon):
    names = set(zipfile.ZipFile(horizon.wheel).namelist())
    assert set(SHIPPED) - names == set()
    assert not {n for n in names
                if n.startswith(('tests/', 'sandbox/', 'bench/'))}
    [metadata] = [n for n in names if n.endswith('.dist-info/METADATA')]
    text = zipfile.ZipFile(horizon.wheel).read(metadata).decode()
    assert 'Requires-Dist: horizon>=24.0.0' in text
    [entry_points] = [n for n in names
                      if n.endswith('.dist-info/entry_points.txt')]
    assert 'orphan-audit = orphan_dashboard.cli.commands:main' in \
        zipfile.ZipFile(horizon.wheel).read(entry_points).decode()


def test_the_wheel_holds_every_file_of_the_package(horizon):
    """Modules and data alike: whatever git tracks under the package."""
    tracked = set(run(['git', 'ls-files', 'orphan_dashboard'],
                      cwd=ROOT).split())
    assert len(tracked) > len(SHIPPED)
    assert tracked - set(zipfile.ZipFile(horizon.wheel).namelist()) == set()


def test_the_sdist_holds_the_release_notes_and_the_package(horizon):
    with tarfile.open(horizon.sdist) as sdist:
        names = {n.split('/', 1)[1] for n in sdist.getnames() if '/' in n}
    assert set(SHIPPED) - names == set()
    assert 'pyproject.toml' in names
    assert any(n.startswith('releasenotes/notes/') for n in names)


def alphanumeric(text):
    """Text as letters and digits only: quotes and spacing apart."""
    return re.sub(r'[^a-z0-9]', '', text.lower())


def page_text(markup):
    """An HTML page's text, its tags dropped and its entities read."""
    return html.unescape(re.sub(r'<[^>]*>', '', markup))


def test_the_release_notes_build_without_a_warning(tmp_path):
    pytest.importorskip('reno')
    pytest.importorskip('sphinx')
    reno = os.path.join(os.path.dirname(sys.executable), 'reno')
    run([reno, 'lint'], cwd=ROOT)
    run([sys.executable, '-m', 'sphinx', '-a', '-E', '-W', '-q',
         '-d', str(tmp_path / 'doctrees'), '-b', 'html',
         os.path.join(ROOT, 'releasenotes', 'source'),
         str(tmp_path / 'html')])
    page = alphanumeric(page_text(
        (tmp_path / 'html' / 'unreleased.html').read_text()))
    notes = os.path.join(ROOT, 'releasenotes', 'notes')
    for name in os.listdir(notes):
        with open(os.path.join(notes, name)) as f:
            note = yaml.safe_load(f)
        for section, entries in note.items():
            for entry in [entries] if isinstance(entries, str) else entries:
                assert alphanumeric(entry)[:80] in page, (name, section)
