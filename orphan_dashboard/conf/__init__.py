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

"""Every setting of the panel and of ``orphan-audit``, with its default.

Set them in Horizon's ``local_settings.py``; ``orphan-audit`` reads them
when it runs with Horizon's settings (``manage.py orphan_audit``).  A
setting Horizon's settings do not have comes from the environment variable
of its name (how ``orphan-audit`` without Horizon is set), else its
default.  The journal's database and router come from
the ``local_settings.d`` snippet shipped beside this package
(:data:`SNIPPET`), as other Horizon plugins ship theirs, or, where only
the enabled file was copied, from the app when Django starts.
"""

import dataclasses
import os
import typing
import urllib.parse


class BadSetting(ValueError):
    """An environment variable that is not what its setting takes."""


_UNSET = object()
_BOOLEANS = {'1': True, 'true': True, 'yes': True, 'on': True,
             '0': False, 'false': False, 'no': False, 'off': False}


@dataclasses.dataclass(frozen=True)
class Setting:
    name: str
    default: typing.Any
    doc: str
    kind: typing.Optional[type] = None
    """What the environment variable's text is read as (``int``,
    ``float``) where a default of None does not say; None: text, or an
    ``int`` where the default is one."""

    def get(self):
        """Horizon's setting, else the environment variable of the same
        name, else the default (see the module docstring)."""
        from django.conf import settings

        if settings.configured or os.environ.get('DJANGO_SETTINGS_MODULE'):
            value = getattr(settings, self.name, _UNSET)
            if value is not _UNSET:
                return value
        text = os.environ.get(self.name, '')
        if not text:
            return self.default
        if isinstance(self.default, bool):
            if text.lower() not in _BOOLEANS:
                raise BadSetting('%s=%s: not true or false' % (
                    self.name, text))
            return _BOOLEANS[text.lower()]
        kind = self.kind or (int if isinstance(self.default, int) else None)
        if kind is None:
            return text
        try:
            return kind(text)
        except ValueError:
            raise BadSetting('%s=%s: not a %s' % (
                self.name, text,
                'whole number' if kind is int else 'number'))


MIN_AGE = Setting(
    'ORPHAN_AUDIT_MIN_AGE', 600,
    'Seconds: allocations written more recently are protected.')
CONCURRENCY = Setting(
    'ORPHAN_AUDIT_CONCURRENCY', 8,
    'Placement requests in flight during a sweep.')
SNAPSHOT_TTL = Setting(
    'ORPHAN_AUDIT_SNAPSHOT_TTL', 300,
    'Seconds before a page asks for a background refresh of the snapshot.')
FULL_SWEEP = Setting(
    'ORPHAN_AUDIT_FULL_SWEEP', 1800,
    'Seconds between full sweeps; refreshes in between are incremental.')
API_TIMEOUT = Setting(
    'ORPHAN_AUDIT_API_TIMEOUT', 60,
    'Seconds one Nova or Placement request of the panel may take.')
NOVA_LISTING_TIMEOUT = Setting(
    'ORPHAN_AUDIT_NOVA_LISTING_TIMEOUT', 90,
    "Seconds one page of a Nova listing may take (servers, migrations, "
    "compute services, hypervisors): above Nova's own wait for a cell "
    "(CELL_TIMEOUT, 60 s), so that Nova leaves a slow cell out before we "
    "give up on Nova; never less than ORPHAN_AUDIT_API_TIMEOUT.")
NOVA_CELL_TIMEOUT = Setting(
    'ORPHAN_AUDIT_NOVA_CELL_TIMEOUT', 60,
    "Seconds Nova gives the cells of a listing (nova.context.CELL_TIMEOUT, "
    "60): one timer for all of them, so a migration listing that took "
    "longer may have dropped a healthy cell's records with no marker, and "
    "what it leaves out proves nothing.", float)
STUCK_MIGRATION_AGE = Setting(
    'ORPHAN_AUDIT_STUCK_MIGRATION_AGE', 3600,
    'Seconds a move in progress must go without an update, its server '
    'idle, before it is taken for stuck (a compute that restarted during '
    'it): Nova never moves such a migration on.')
PLACEMENT_RELEASE = Setting(
    'ORPHAN_AUDIT_PLACEMENT_RELEASE', None,
    "Placement's release (14.0.0) or series (2025.2), which its API does "
    'not say: before 14.0.0 Placement refuses any write onto a provider '
    'over capacity (bug 2104040). Unset, a preview of such a write warns '
    'that an older Placement refuses it.')
MAX_ROWS = Setting(
    'ORPHAN_AUDIT_MAX_ROWS', 200,
    'Rows one preview and its confirm may carry.')
PREVIEW_MAX_AGE = Setting(
    'ORPHAN_AUDIT_PREVIEW_MAX_AGE', 600,
    'Seconds a preview can be confirmed.')
JOURNAL_DIR = Setting(
    'ORPHAN_AUDIT_JOURNAL_DIR', None,
    'Directory of the embedded sqlite journal (default: the environment '
    'variable of the same name, else $XDG_STATE_HOME/orphan-dashboard or '
    '~/.local/state/orphan-dashboard); read by the local_settings.d '
    'snippet, or by the app when the settings name no journal.')
SWEEP_PYTHON = Setting(
    'ORPHAN_AUDIT_SWEEP_PYTHON', None,
    "The Python that runs background sweeps (the sweeper process of "
    "orphan_dashboard.sweep.worker) when the cache is shared; default: "
    "this process's interpreter, which under uWSGI or some mod_wsgi builds is "
    "the web server's binary instead: then name Horizon's Python here.")
METRIC_FLAVORS = Setting(
    'ORPHAN_AUDIT_METRIC_FLAVORS', None,
    'Flavors (names or ids, comma-separated, or a list in Horizon\'s '
    'settings) whose count of hypervisors they fit only after the '
    'recommended repairs orphan-audit metrics reports.')
HISTORY_ALL_CLOUDS = Setting(
    'ORPHAN_AUDIT_HISTORY_ALL_CLOUDS', False,
    "Whether the panel's History offers every cloud's journal (All "
    "clouds, read only) beside this cloud's. Off: each cloud's users, "
    "projects, allocations and provider names stay behind that cloud's "
    "own login and panel policy; orphan-audit history --all-clouds, run "
    "with the journal database's own access, is not bound by it.")
MAX_WRITES = Setting(
    'ORPHAN_AUDIT_MAX_WRITES', None,
    'orphan-audit apply (and openstack placement orphan repair --all) '
    'writes nothing and exits 6 when it would write more consumers than '
    'this (--max-writes); so does a decommission whose repairs would '
    "(orphan-audit decommission --apply, the panel's), and a confirm of "
    "the panel's rows; unset: no limit.", int)
MAX_SHARE = Setting(
    'ORPHAN_AUDIT_MAX_SHARE', None,
    'orphan-audit apply (and openstack placement orphan repair --all) '
    'writes nothing and exits 6 when the consumers it would write are more '
    'than this percentage of every consumer the audit saw (--max-share); '
    'unset: 50 there (UNATTENDED_MAX_SHARE), 100 turns it off. A confirm '
    "of the panel's rows past it writes nothing either; unset: no limit "
    'there.', float)
UNATTENDED_MAX_SHARE = 50.0
"""The share of every consumer the audit saw that a command line run
writes at most where neither ``--max-share`` nor ORPHAN_AUDIT_MAX_SHARE
says: a run from cron that would rewrite half of them is far likelier a
listing gone wrong (a cell emptied, a Nova bug) than a cloud half
orphaned, and no one is there to look."""
SETTINGS = (MIN_AGE, CONCURRENCY, SNAPSHOT_TTL, FULL_SWEEP, API_TIMEOUT,
            NOVA_LISTING_TIMEOUT, NOVA_CELL_TIMEOUT, STUCK_MIGRATION_AGE,
            MAX_ROWS,
            PREVIEW_MAX_AGE, JOURNAL_DIR,
            SWEEP_PYTHON, METRIC_FLAVORS, HISTORY_ALL_CLOUDS, MAX_WRITES,
            MAX_SHARE)


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """The settings a run works with, read once where it enters (the
    panel's ``service.py``, the CLI's ``options.py``, the plugin's
    ``osc_commands.py``; a background sweep gets it in its job) and passed
    down, so that nothing below reads a setting.  Each default is its
    setting's."""

    min_age: int = MIN_AGE.default
    concurrency: int = CONCURRENCY.default
    full_sweep_interval: int = FULL_SWEEP.default
    ttl: int = SNAPSHOT_TTL.default
    api_timeout: typing.Optional[float] = API_TIMEOUT.default
    """None: the cloud's ``api_timeout`` (``orphan-audit`` without
    ``--timeout``)."""
    nova_listing_timeout: float = NOVA_LISTING_TIMEOUT.default
    nova_cell_timeout: float = NOVA_CELL_TIMEOUT.default
    stuck_after: int = STUCK_MIGRATION_AGE.default
    placement_release: typing.Optional[str] = PLACEMENT_RELEASE.default


_RUN_SETTINGS = {'min_age': MIN_AGE, 'concurrency': CONCURRENCY,
                 'full_sweep_interval': FULL_SWEEP, 'ttl': SNAPSHOT_TTL,
                 'api_timeout': API_TIMEOUT,
                 'nova_listing_timeout': NOVA_LISTING_TIMEOUT,
                 'nova_cell_timeout': NOVA_CELL_TIMEOUT,
                 'stuck_after': STUCK_MIGRATION_AGE,
                 'placement_release': PLACEMENT_RELEASE}


def run_settings(**chosen):
    """The :class:`RunSettings` of the settings' values, but for what
    ``chosen`` names (a command line's options)."""
    values = {field: setting.get()
              for field, setting in _RUN_SETTINGS.items()
              if field not in chosen}
    return RunSettings(**values, **chosen)


def names(value):
    """A setting holding names: a list, or a comma-separated text."""
    if isinstance(value, str):
        value = value.split(',')
    return [name.strip() for name in value or () if name.strip()]


JOURNAL_DATABASE = 'orphan_journal'
"""The journal's alias in ``DATABASES``."""
JOURNAL_ROUTER = 'orphan_dashboard.writing.journal.Router'
SNIPPET = os.path.join(os.path.dirname(os.path.dirname(__file__)),
                       'local_settings.d', '_90_orphan_dashboard.py')
"""Copy into ``openstack_dashboard/local/local_settings.d/``."""


def journal_database(directory=None):
    """The embedded journal: a sqlite file in ``directory`` (see
    :data:`JOURNAL_DIR`)."""
    directory = directory or os.environ.get(JOURNAL_DIR.name) or os.path.join(
        os.environ.get('XDG_STATE_HOME') or
        os.path.join(os.path.expanduser('~'), '.local', 'state'),
        'orphan-dashboard')
    return {'ENGINE': 'django.db.backends.sqlite3',
            'NAME': os.path.join(directory, 'journal.sqlite3')}


_ENGINES = {'mysql': 'django.db.backends.mysql',
            'postgresql': 'django.db.backends.postgresql',
            'sqlite': 'django.db.backends.sqlite3'}


def journal_from_url(url):
    """The journal's ``DATABASES`` entry from an SQLAlchemy URL, the form
    in which DevStack (``database_connection_url``) and oslo.db name a
    database; the driver after ``+`` is Django's to choose."""
    parts = urllib.parse.urlsplit(url)
    backend = parts.scheme.split('+')[0]
    if backend not in _ENGINES:
        raise BadSetting('%s: not a MySQL, PostgreSQL or sqlite URL' %
                         parts.scheme)
    if backend == 'sqlite':
        return {'ENGINE': _ENGINES[backend], 'NAME': parts.path[1:]}
    database = {'ENGINE': _ENGINES[backend],
                'NAME': urllib.parse.unquote(parts.path.lstrip('/')),
                'HOST': parts.hostname or '',
                'PORT': str(parts.port or ''),
                'USER': urllib.parse.unquote(parts.username or ''),
                'PASSWORD': urllib.parse.unquote(parts.password or '')}
    query = urllib.parse.parse_qs(parts.query)
    options = {option: query[option][-1]
               for option in ('charset', 'unix_socket') if option in query}
    if options and backend == 'mysql':
        database['OPTIONS'] = options
    return database


def add_journal(namespace):
    """Add the journal database and its router to a settings module's
    ``namespace`` unless it has them (what the snippet does)."""
    databases = namespace.setdefault('DATABASES', {})
    # Django wants a 'default' alias once DATABASES is set; Horizon 24
    # defines none (its sessions live in the cache): a dummy one then.
    databases.setdefault('default', {})
    if JOURNAL_DATABASE not in databases:
        databases[JOURNAL_DATABASE] = journal_database(
            namespace.get(JOURNAL_DIR.name))
    routers = list(namespace.get('DATABASE_ROUTERS') or ())
    if JOURNAL_ROUTER not in routers:
        namespace['DATABASE_ROUTERS'] = [JOURNAL_ROUTER] + routers
