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

"""The plugin's Django app: brings the journal's database with it."""

import os

from django.apps import AppConfig
from django.conf import settings


def default_journal_dir():
    return os.environ.get('ORPHAN_JOURNAL_DIR') or os.path.join(
        os.environ.get('XDG_STATE_HOME') or
        os.path.join(os.path.expanduser('~'), '.local', 'state'),
        'orphan-dashboard')


class OrphanDashboardConfig(AppConfig):
    name = 'orphan_dashboard'
    verbose_name = 'Orphaned Allocations'
    default_auto_field = 'django.db.models.BigAutoField'

    def ready(self):
        """Add the journal database and its router unless settings did.

        Horizon has no database by default; the embedded default is a
        sqlite file under ``ORPHAN_JOURNAL_DIR``.  Set
        ``DATABASES['orphan_journal']`` to a MySQL or PostgreSQL database
        when Horizon runs on several nodes.
        """
        from django import db

        from orphan_dashboard import journal

        if journal.DATABASE not in settings.DATABASES:
            directory = getattr(settings, 'ORPHAN_JOURNAL_DIR',
                                None) or default_journal_dir()
            settings.DATABASES[journal.DATABASE] = {
                'ENGINE': 'django.db.backends.sqlite3',
                'NAME': os.path.join(directory, 'journal.sqlite3'),
            }
        # Model classes already made Django read DATABASES (for name
        # lengths): hand the alias to the connection handler as well.
        # configure_settings() fills the alias's defaults in place.
        alias = settings.DATABASES[journal.DATABASE]
        db.connections.configure_settings(
            {**db.connections.settings, journal.DATABASE: alias})
        db.connections.settings[journal.DATABASE] = alias
        router = 'orphan_dashboard.journal.Router'
        if router not in settings.DATABASE_ROUTERS:
            settings.DATABASE_ROUTERS = [router, *settings.DATABASE_ROUTERS]
            db.router.__dict__.pop('routers', None)
