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

"""One place for settings: each documented with its default, the shipped
``local_settings.d`` snippet, and the check that names what is missing."""

import os
import pathlib
import re
import subprocess
import sys

from django.core import checks
from django.test import override_settings
import pytest

from orphan_dashboard import apps
from orphan_dashboard import conf

pytestmark = pytest.mark.horizon

INSTALL = (pathlib.Path(__file__).resolve().parents[2] / 'doc' / 'source' /
           'install.md').read_text()


@pytest.mark.parametrize('setting', conf.SETTINGS, ids=lambda s: s.name)
def test_every_setting_is_documented_with_its_default(setting):
    documented = re.search(r'`%s` \(([^)]*)\)' % setting.name, INSTALL)
    assert documented, setting.name
    default = 'none' if setting.default is None else str(setting.default)
    assert 'default %s' % default in documented.group(1)


def test_no_setting_is_read_outside_conf():
    """Names are never built: each ORPHAN_AUDIT_ name is spelled once."""
    package = pathlib.Path(conf.__file__).resolve().parents[1]
    for path in package.rglob('*.py'):
        if path.name == '__init__.py' and path.parent.name == 'conf':
            continue
        text = path.read_text()
        assert 'getattr(settings' not in text, path
        assert not re.search(r"'ORPHAN_AUDIT_[A-Z_]*'", text), path


def test_the_snippet_adds_the_journal_and_its_router(tmp_path):
    namespace = {'DATABASE_ROUTERS': ['other.Router'],
                 'ORPHAN_AUDIT_JOURNAL_DIR': str(tmp_path)}
    with open(conf.SNIPPET, encoding='utf-8') as f:
        exec(f.read(), namespace)
    assert namespace['DATABASES'][conf.JOURNAL_DATABASE] == {
        'ENGINE': 'django.db.backends.sqlite3',
        'NAME': str(tmp_path / 'journal.sqlite3')}
    assert namespace['DATABASE_ROUTERS'] == [conf.JOURNAL_ROUTER,
                                             'other.Router']
    # Without DATABASES (Horizon 24's settings) Django gets its 'default'.
    assert namespace['DATABASES']['default'] == {}
    # Run twice (or with the alias defined by hand): nothing changes.
    mysql = {'ENGINE': 'django.db.backends.mysql', 'NAME': 'journal'}
    namespace['DATABASES'][conf.JOURNAL_DATABASE] = mysql
    conf.add_journal(namespace)
    assert namespace['DATABASES'][conf.JOURNAL_DATABASE] is mysql
    assert namespace['DATABASE_ROUTERS'].count(conf.JOURNAL_ROUTER) == 1


def test_the_journal_from_devstacks_database_url():
    """What DevStack's database_connection_url prints for each server."""
    assert conf.journal_from_url(
        'mysql+pymysql://root:p%40ss@[::1]:3306/orphan_journal'
        '?charset=utf8&plugin=dbcounter') == {
            'ENGINE': 'django.db.backends.mysql', 'NAME': 'orphan_journal',
            'HOST': '::1', 'PORT': '3306', 'USER': 'root',
            'PASSWORD': 'p@ss', 'OPTIONS': {'charset': 'utf8'}}
    assert conf.journal_from_url(
        'mysql+pymysql://root@localhost/j?unix_socket=/run/mysqld.sock'
    )['OPTIONS'] == {'unix_socket': '/run/mysqld.sock'}
    assert conf.journal_from_url(
        'postgresql://root:secret@10.0.0.1/orphan_journal') == {
            'ENGINE': 'django.db.backends.postgresql',
            'NAME': 'orphan_journal', 'HOST': '10.0.0.1', 'PORT': '',
            'USER': 'root', 'PASSWORD': 'secret'}
    assert conf.journal_from_url('sqlite:////var/lib/j.sqlite3') == {
        'ENGINE': 'django.db.backends.sqlite3', 'NAME': '/var/lib/j.sqlite3'}
    with pytest.raises(conf.BadSetting, match='oracle'):
        conf.journal_from_url('oracle://scott:tiger@db/orcl')


def test_the_journal_directory_defaults_to_the_users_state(monkeypatch):
    monkeypatch.delenv(conf.JOURNAL_DIR.name, raising=False)
    monkeypatch.setenv('XDG_STATE_HOME', '/var/state')
    assert conf.journal_database()['NAME'] == \
        '/var/state/orphan-dashboard/journal.sqlite3'
    monkeypatch.setenv(conf.JOURNAL_DIR.name, '/srv/journal')
    assert conf.journal_database()['NAME'] == '/srv/journal/journal.sqlite3'


def test_the_check_names_a_missing_journal_and_router(settings):
    assert apps.check_journal() == []
    databases = {k: v for k, v in settings.DATABASES.items()
                 if k != conf.JOURNAL_DATABASE}
    with override_settings(DATABASES=databases, DATABASE_ROUTERS=[]):
        problems = apps.check_journal()
    assert [p.id for p in problems] == ['orphan_dashboard.E001',
                                        'orphan_dashboard.E002']
    assert all(isinstance(p, checks.Error) and conf.SNIPPET in p.hint
               for p in problems)


class OtherRouter:
    """A router of another app, which the journal's must not replace."""


OTHER_ROUTER = __name__ + '.OtherRouter'


def test_without_the_snippet_the_journal_is_embedded_with_a_warning(
        settings, tmp_path):
    """The enabled file alone (Kolla, OpenStack-Ansible): the app adds
    the sqlite journal and its router, and the check says what several
    Horizon nodes must set instead."""
    from django.apps import apps as django_apps

    config = django_apps.get_app_config('orphan_dashboard')
    assert apps.default_journal() is False
    assert apps.check_journal_shared() == []
    databases = {k: v for k, v in settings.DATABASES.items()
                 if k != conf.JOURNAL_DATABASE}
    with override_settings(DATABASES=databases,
                           DATABASE_ROUTERS=[OTHER_ROUTER],
                           ORPHAN_AUDIT_JOURNAL_DIR=str(tmp_path)):
        assert apps.default_journal() is True
        from django.conf import settings as current
        assert current.DATABASES[conf.JOURNAL_DATABASE] == {
            'ENGINE': 'django.db.backends.sqlite3',
            'NAME': str(tmp_path / 'journal.sqlite3')}
        assert current.DATABASE_ROUTERS == [conf.JOURNAL_ROUTER,
                                            OTHER_ROUTER]
        assert apps.check_journal() == []
        config.journal_defaulted = True
        try:
            (warning,) = apps.check_journal_shared()
        finally:
            config.journal_defaulted = False
    assert isinstance(warning, checks.Warning)
    assert warning.id == 'orphan_dashboard.W001'
    assert str(tmp_path / 'journal.sqlite3') in warning.msg
    assert "DATABASES['orphan_journal']" in warning.hint
    assert conf.SNIPPET in warning.hint


def test_the_check_names_a_python_background_sweeps_cannot_use(
        settings, monkeypatch, tmp_path):
    """uWSGI's executable is uWSGI: with a shared cache the sweeps need
    Horizon's Python named; a process-local cache sweeps in a thread."""
    python = sys.executable
    monkeypatch.setattr(sys, 'executable', '/usr/bin/uwsgi')
    assert apps.check_sweep_python() == []          # locmem: a thread
    settings.CACHES = {'default': {
        'BACKEND': 'django.core.cache.backends.filebased.FileBasedCache',
        'LOCATION': str(tmp_path)}}
    problems = apps.check_sweep_python()
    assert [p.id for p in problems] == ['orphan_dashboard.W003']
    assert conf.SWEEP_PYTHON.name in problems[0].hint
    settings.ORPHAN_AUDIT_SWEEP_PYTHON = python
    assert apps.check_sweep_python() == []


def test_a_setting_falls_back_to_its_default(settings):
    settings.ORPHAN_AUDIT_MAX_ROWS = 7
    assert conf.MAX_ROWS.get() == 7
    del settings.ORPHAN_AUDIT_MAX_ROWS
    assert conf.MAX_ROWS.get() == conf.MAX_ROWS.default == 200


def test_orphan_audit_without_horizon_reads_the_environment(tmp_path):
    """``orphan-audit`` has no Horizon settings: a setting comes from the
    environment variable of its name (the sandbox's openrc), also once
    the CLI has set Django up for its journal."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('ORPHAN_AUDIT_', 'DJANGO_'))}
    env.update(ORPHAN_AUDIT_MIN_AGE='0', ORPHAN_AUDIT_JOURNAL_DIR=str(
        tmp_path))
    code = ('from orphan_dashboard import conf\n'
            'from orphan_dashboard.cli import handlers\n'
            'print(conf.MIN_AGE.get(), conf.MAX_ROWS.get())\n'
            'handlers.setup_django()\n'
            'print(conf.MIN_AGE.get(), conf.MAX_ROWS.get())\n')
    result = subprocess.run([sys.executable, '-c', code], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ['0', '200', '0', '200'], result.stderr


def test_horizons_setting_wins_over_the_environment(settings, monkeypatch):
    monkeypatch.setenv('ORPHAN_AUDIT_MAX_ROWS', '9')
    settings.ORPHAN_AUDIT_MAX_ROWS = 7
    assert conf.MAX_ROWS.get() == 7
    del settings.ORPHAN_AUDIT_MAX_ROWS
    assert conf.MAX_ROWS.get() == 9
    monkeypatch.setenv('ORPHAN_AUDIT_MAX_ROWS', 'many')
    with pytest.raises(conf.BadSetting, match='ORPHAN_AUDIT_MAX_ROWS=many'):
        conf.MAX_ROWS.get()


def test_a_switch_from_the_environment_is_true_or_false(monkeypatch):
    """An on/off setting read from the environment takes the usual
    spellings of true and false, and refuses anything else."""
    setting = conf.HISTORY_ALL_CLOUDS
    assert setting.get() is False
    for text, value in (('1', True), ('True', True), ('on', True),
                        ('0', False), ('false', False), ('No', False)):
        monkeypatch.setenv(setting.name, text)
        assert setting.get() is value
    monkeypatch.setenv(setting.name, 'maybe')
    with pytest.raises(conf.BadSetting, match='not true or false'):
        setting.get()
