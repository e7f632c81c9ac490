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

"""The plugin's Django app and the checks that its journal is configured
and that background sweeps can start."""

import os
import re
import sys

from django.apps import AppConfig
from django.conf import settings
from django.core import checks

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


def check_sweep_python(app_configs=None, **kwargs):
    """Background sweeps run ``PYTHON -m orphan_dashboard.sweeper`` when
    the cache is shared; under uWSGI, or Apache with an embedded
    interpreter, this process's executable is the web server."""
    from orphan_dashboard import snapshots

    python = conf.SWEEP_PYTHON.get() or sys.executable
    if not snapshots.Store('').shared or (
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

    def ready(self):
        checks.register(check_journal)
        checks.register(check_sweep_python)
