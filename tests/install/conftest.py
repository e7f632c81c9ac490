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

"""One virtualenv with a plain Horizon and this package's wheel, shared by
the install tests."""

import fcntl
import functools
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import types

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
VERSIONS = '''
from importlib import metadata
print(metadata.version('horizon'), metadata.version('Django'))
'''

LOCAL_SETTINGS = '''
CACHES = {'default': {
    'BACKEND': 'django.core.cache.backends.locmem.LocMemCache'}}
STATIC_ROOT = %(static)r
COMPRESS_ENABLED = True
COMPRESS_OFFLINE = True
ORPHAN_AUDIT_JOURNAL_DIR = %(journal)r
ALLOWED_HOSTS = ['localhost']
'''
REGISTERED = '''
import django
django.setup()
from django.conf import settings
from django.urls import reverse
import horizon
print(reverse('horizon:admin:orphaned_allocations:index'))
panel = horizon.get_dashboard('admin').get_panel('orphaned_allocations')
group = horizon.get_dashboard('admin').get_panel_group('compute')
assert panel in list(group), list(group)
print(panel.name)
from orphan_dashboard.api import client
from orphan_dashboard.writing import journal
cloud = client.Cloud('http://keystone/v3', 'RegionOne', 'http://placement',
                     'placement-id')
log = journal.Journal('cli', cloud)
log.finish(log.begin_service('delete', {'uuid': 'service-1'}, 'provider-1',
                             'install test'), 'applied')
found, _, _ = journal.entries(cloud)
print(found[0].subject, found[0].status, 'entries:', len(found))
print(settings.DATABASES['orphan_journal']['NAME'])
'''

# A WSGI script run as a WSGI server runs it (argv[1]; its `application`
# called for the page at argv[2] and argv[3], SCRIPT_NAME and PATH_INFO):
# the application's class, whether the process froze anything, the page's
# status. (Horizon's wsgi.py sends stdout to stderr.)
FROZEN = '''
import gc, runpy, sys, wsgiref.util
application = runpy.run_path(sys.argv[1])['application']
frozen = gc.get_freeze_count()
environ = {}
wsgiref.util.setup_testing_defaults(environ)
environ.update(HTTP_HOST='localhost', SCRIPT_NAME=sys.argv[2],
               PATH_INFO=sys.argv[3])
status = []
b''.join(application(environ, lambda line, headers: status.append(line)))
print(type(application).__name__, frozen > 0, status[0], file=sys.__stdout__)
'''


def run(args, **kwargs):
    """``args``' output; a failure shows its output as text, which
    pytest prints whole (a tuple's repr it cuts to one line)."""
    result = subprocess.run(args, capture_output=True, text=True, **kwargs)
    if result.returncode:
        pytest.fail('%s exited %s\n--- stdout\n%s\n--- stderr\n%s' % (
            ' '.join(args), result.returncode, result.stdout[-3000:],
            result.stderr[-6000:]), pytrace=False)
    return result.stdout


COMPRESS = '''
import importlib.util

import django
from django.core import management

django.setup()
if importlib.util.find_spec('scss'):
    from scss.grammar.expression import SassExpressionScanner

    SassExpressionScanner('')
management.execute_from_command_line(['django-admin', 'compress', '--force'])
'''
"""Django's offline compress, pyScss's expression scanner made once
before it where Horizon compiles its SCSS with pyScss (Horizon 24;
libsass from 25 on).  pyScss fills that scanner's patterns, a list its
class shares, one by one on first use (after Horizon's app
``openstack_dashboard.django_pyscss_fix`` has fixed one for Python
3.11, hence after ``django.setup()``), and django-compressor renders
four templates at once in threads: a thread that starts while another
fills the list scans with part of it and fails on Horizon's own
``serial_console.scss`` ("Syntax error: Found 'inline-blo' but expected
one of ..."), on a loaded machine now and then."""


def compress(python, **kwargs):
    """:data:`COMPRESS` run by ``python`` (``kwargs`` as for :func:`run`)."""
    return run([python, '-c', COMPRESS], **kwargs)


def versions(python):
    return run([python, '-c', VERSIONS]).strip()


@pytest.fixture(scope='session')
def horizon(tmp_path_factory):
    """Horizon 27 (or the series ``ORPHAN_INSTALL_REQUIREMENTS`` names) in
    a virtualenv, and this package built by ``python -m build`` (an sdist
    and a wheel, through its ``pbr.build`` backend), not yet installed.

    The virtualenv sits beside the one running the tests and is built once
    per requirements (installing Horizon is most of these tests' time):
    each session takes it as it was built, without this package and with
    nothing more under ``local/``, and holds it alone until it ends."""
    base = tmp_path_factory.mktemp('horizon')
    pristine = PristineHorizon(sys.prefix + '-install')
    with open(pristine.venv + '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        pristine.ensure()
        python, pip = pristine.python, pristine.pip
        wheel, sdist, build_log = built(python, pip, base)
        yield types.SimpleNamespace(
            python=python, pip=pip, wheel=wheel, sdist=sdist,
            build_log=build_log, dashboard=pristine.dashboard,
            versions=versions(python))
        pristine.restore()


class PristineHorizon:
    """A plain Horizon's virtualenv, rebuilt when what it installs changes,
    put back as built before and after each session that uses it."""

    # What DevStack adds for Horizon's memcached and for MySQL.
    EXTRAS = ('pymemcache', 'PyMySQL')

    def __init__(self, venv):
        self.venv = venv
        self.python = os.path.join(venv, 'bin', 'python')
        self.pip = [self.python, '-m', 'pip', 'install', '-q']
        self.stamp = os.path.join(venv, '.orphan-install-stamp')
        self.manifest = os.path.join(venv, '.orphan-install-local')
        self.requirements = os.environ.get('ORPHAN_INSTALL_REQUIREMENTS')

    def wanted(self):
        if self.requirements:
            installs = ['-r', self.requirements]
            pinned = pathlib.Path(self.requirements).read_text()
        else:
            constraints = os.path.join(ROOT, 'constraints.txt')
            installs = ['-c', constraints, 'horizon==27.0.0', 'Django<6']
            pinned = pathlib.Path(constraints).read_text()
        installs += list(self.EXTRAS)
        key = hashlib.sha256('\n'.join(
            [sys.version, pinned, *installs]).encode()).hexdigest()
        return installs, key

    def ensure(self):
        installs, key = self.wanted()
        if os.path.exists(self.stamp) and \
                pathlib.Path(self.stamp).read_text() == key:
            self.restore()
            return
        shutil.rmtree(self.venv, ignore_errors=True)
        run([sys.executable, '-m', 'venv', self.venv])
        run(self.pip + installs)
        pathlib.Path(self.manifest).write_text(
            '\n'.join(sorted(local_files(self.dashboard))))
        pathlib.Path(self.stamp).write_text(key)

    @functools.cached_property
    def dashboard(self):
        return run([self.python, '-c', 'import openstack_dashboard, os; '
                    'print(os.path.dirname(openstack_dashboard.__file__))'
                    ]).strip()

    def restore(self):
        """This package uninstalled, ``local/`` as built."""
        run(self.pip[:-2] + ['uninstall', '-q', '-y', 'orphan-dashboard'])
        built_files = set(pathlib.Path(self.manifest).read_text().split('\n'))
        for path in local_files(self.dashboard) - built_files:
            os.remove(path)


def built(python, pip, base):
    """This package's wheel, sdist and what building them printed (kept
    beside them as ``build.log``), from ``ORPHAN_INSTALL_DIST`` if an
    earlier session of the same ``./run test`` built them there (the build
    runs isolated: the same for every Horizon series), else built now."""
    dist = pathlib.Path(os.environ.get('ORPHAN_INSTALL_DIST') or
                        base / 'dist')
    dist.mkdir(parents=True, exist_ok=True)
    log = dist / 'build.log'
    # The Horizon series run beside each other: one builds, the others
    # wait for it.
    with open(dist / '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (any(dist.glob('*.whl')) and any(dist.glob('*.tar.gz'))):
            # Not constrained: the Horizon series' own packaging stays as
            # it is.
            run(pip + ['build==1.6.1'])
            result = subprocess.run(
                [python, '-m', 'build', '--outdir', str(dist), ROOT],
                capture_output=True, text=True)
            assert result.returncode == 0, (result.stdout[-3000:],
                                            result.stderr[-3000:])
            log.write_text(result.stdout + result.stderr)
    (wheel,) = dist.glob('*.whl')
    (sdist,) = dist.glob('*.tar.gz')
    return wheel, sdist, log.read_text() if log.exists() else ''


def local_files(dashboard):
    """Every file under openstack_dashboard/local/."""
    found = set()
    for dirpath, _dirs, files in os.walk(os.path.join(dashboard, 'local')):
        found.update(os.path.join(dirpath, f) for f in files)
    return found


@pytest.fixture
def dashboard(horizon):
    """The shared Horizon's ``local/`` as it was before the test, after."""
    before = local_files(horizon.dashboard)
    yield horizon
    for path in local_files(horizon.dashboard) - before:
        os.remove(path)
