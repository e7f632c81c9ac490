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

"""Horizon's own test settings with this plugin enabled."""

import os
import tempfile

from openstack_dashboard.test.settings import *  # noqa: F401,F403

from openstack_dashboard import enabled
from openstack_dashboard.utils import settings as settings_utils

from orphan_dashboard import conf
from orphan_dashboard import enabled as orphan_enabled

INSTALLED_APPS = list(INSTALLED_APPS)  # noqa: F405
settings_utils.update_dashboards([enabled, orphan_enabled],
                                 HORIZON_CONFIG,  # noqa: F405
                                 INSTALLED_APPS)
INSTALLED_APPS = list(dict.fromkeys(INSTALLED_APPS))

ORPHAN_AUDIT_MIN_AGE = 0
# The panel's snapshot in chunks: more than the 300 default entries; a
# sweeper process a test starts shares the test's file-based cache.
CACHES = {'default': dict(
    BACKEND='django.core.cache.backends.filebased.FileBasedCache',
    LOCATION=os.environ['ORPHAN_TEST_CACHE_DIR'],
) if os.environ.get('ORPHAN_TEST_CACHE_DIR') else dict(
    BACKEND='django.core.cache.backends.locmem.LocMemCache',
    OPTIONS={'MAX_ENTRIES': 100000})}
DATABASES = dict(DATABASES)  # noqa: F405
ORPHAN_AUDIT_JOURNAL_DIR = tempfile.gettempdir()
# The shipped local_settings.d snippet, run as Horizon runs its snippets.
with open(conf.SNIPPET, encoding='utf-8') as _f:
    exec(_f.read())
# Tests get an in-memory copy (pytest-django) with no dependency on the
# default database.
DATABASES[conf.JOURNAL_DATABASE]['TEST'] = {'DEPENDENCIES': []}
# Templates parsed once per process, as Horizon loads them when DEBUG is
# off: its test settings list the loaders bare, so every page read and
# parsed each template it includes again.
TEMPLATES = [dict(TEMPLATES[0], OPTIONS=dict(  # noqa: F405
    TEMPLATES[0]['OPTIONS'],  # noqa: F405
    loaders=[('django.template.loaders.cached.Loader',
              TEMPLATES[0]['OPTIONS']['loaders'])]))]  # noqa: F405
# Compression on, each block's cache keyed once (tests/compressors.py).
# (django-compressor's COMPRESS_COMPRESSORS, named without its prefix.)
COMPRESSORS = {'css': 'tests.compressors.CssCompressor',
               'js': 'tests.compressors.JsCompressor'}
