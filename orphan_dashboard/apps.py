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

"""The plugin's Django app, the journal it falls back to when the settings
name none, and the checks that its journal is configured and that
background sweeps can start."""

import os
import re
import sys

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.db import connections
from django.db import router
from django.db import utils as db_utils
from django.utils.translation import gettext as _

from orphan_dashboard import conf


def check_journal(app_configs=None, **kwargs):
    """``manage.py check`` says so when the journal has no database: every
    repair writes it first, so without one the panel writes nothing."""
    problems = []
    if conf.JOURNAL_DATABASE not in settings.DATABASES:
        problems.append(checks.Error(
            "DATABASES has no '%s' alias for the repair journal" %
            conf.JOURNAL_DATABASE,
            hint='copy %s into openstack_dashboard/local/local_settings.d/'
            % conf.SNIPPET, id='orphan_dashboard.E001'))
    if conf.JOURNAL_ROUTER not in settings.DATABASE_ROUTERS:
        problems.append(checks.Error(
            'DATABASE_ROUTERS lacks %s, which keeps the journal in its own '
            'database' % conf.JOURNAL_ROUTER,
            hint='copy %s into openstack_dashboard/local/local_settings.d/'
            % conf.SNIPPET, id='orphan_dashboard.E002'))
    return problems


def default_journal():
    """Installers that copy only enabled files (Kolla, OpenStack-Ansible)
    leave the journal's database and router out of the settings: add the
    embedded sqlite journal then, as the snippet would.  True when it did,
    which :func:`check_journal_shared` reports."""
    namespace = {'DATABASES': dict(settings.DATABASES),
                 'DATABASE_ROUTERS': list(settings.DATABASE_ROUTERS),
                 conf.JOURNAL_DIR.name: conf.JOURNAL_DIR.get()}
    defaulted = conf.JOURNAL_DATABASE not in namespace['DATABASES']
    if defaulted or conf.JOURNAL_ROUTER not in namespace['DATABASE_ROUTERS']:
        conf.add_journal(namespace)
        settings.DATABASES = namespace['DATABASES']
        settings.DATABASE_ROUTERS = namespace['DATABASE_ROUTERS']
        # Another app may have made django.db read the settings already
        # (Horizon's do): give what it read the journal too.
        if conf.JOURNAL_DATABASE not in connections.settings:
            connections.settings[conf.JOURNAL_DATABASE] = \
                connections.configure_settings({
                    'default': {},
                    conf.JOURNAL_DATABASE:
                        namespace['DATABASES'][conf.JOURNAL_DATABASE],
                })[conf.JOURNAL_DATABASE]
        router.routers = db_utils.ConnectionRouter().routers
    return defaulted


def check_journal_shared(app_configs=None, **kwargs):
    """A journal the settings did not name is a file on this node: fine
    for one Horizon, while several must share one database."""
    from django.apps import apps

    if not apps.get_app_config('orphan_dashboard').journal_defaulted:
        return []
    return [checks.Warning(
        _('The repair journal is the sqlite file %s, on this Horizon node '
          'only') % settings.DATABASES[conf.JOURNAL_DATABASE]['NAME'],
        hint=_("Several Horizon nodes must share one journal: define "
               "DATABASES['%(alias)s'] as a MySQL or PostgreSQL database "
               "in local_settings.py and copy %(snippet)s into "
               "openstack_dashboard/local/local_settings.d/.") %
        {'alias': conf.JOURNAL_DATABASE, 'snippet': conf.SNIPPET},
        id='orphan_dashboard.W001')]


def check_sweep_python(app_configs=None, **kwargs):
    """Background sweeps run in a ``PYTHON`` of their own (the sweeper
    process, :func:`orphan_dashboard.sweep.worker.main`) when the cache is
    shared; under uWSGI, or Apache with an embedded interpreter, this
    process's executable is the web server."""
    from orphan_dashboard.sweep import store

    python = conf.SWEEP_PYTHON.get() or sys.executable
    if not store.Store('').shared or (
            python and os.access(python, os.X_OK) and
            re.match(r'python', os.path.basename(python))):
        return []
    return [checks.Warning(
        '%r does not look like a Python interpreter: background sweeps '
        'cannot start' % python,
        hint="set %s to the Python Horizon runs with (its virtualenv's "
        "bin/python3)" % conf.SWEEP_PYTHON.name,
        id='orphan_dashboard.W003')]


class OrphanDashboardConfig(AppConfig):
    name = 'orphan_dashboard'
    verbose_name = 'Orphaned Allocations'
    default_auto_field = 'django.db.models.BigAutoField'

    journal_defaulted = False

    def ready(self):
        self.journal_defaulted = default_journal()
        checks.register(check_journal)
        checks.register(check_journal_shared)
        checks.register(check_sweep_python)
