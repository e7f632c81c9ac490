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

"""Django settings for Horizon against the sandbox cloud.

Used by ``python -m sandbox demo`` (DJANGO_SETTINGS_MODULE=
sandbox.horizon_settings).  Reads the running sandbox from the file named by
``SANDBOX_JSON`` (default ``./.sandbox/sandbox.json``).

The orphan_dashboard enabled files are added the Horizon way, without copying
anything into site-packages: ``openstack_dashboard.settings`` calls
``settings_utils.update_dashboards([enabled, local_enabled], ...)`` once;
while it is imported we hand that call one more enabled package
(``orphan_dashboard.enabled``), so its ``_2170_...`` file is merged in
order with Horizon's own (INSTALLED_APPS, panel customisation, JS/SCSS files).
"""
import importlib
import json
import os
import secrets
import sys
import types

_SANDBOX_JSON = os.environ.get(
    'SANDBOX_JSON', os.path.join('.sandbox', 'sandbox.json'))
with open(_SANDBOX_JSON) as _f:
    SANDBOX = json.load(_f)
_STATE_DIR = SANDBOX['state_dir']

# openstack_dashboard.settings imports `local.local_settings` and, failing a
# SECRET_KEY, writes a key file into site-packages.  Give it a generated key
# through an in-memory `local.local_settings` instead.
_key_file = os.path.join(_STATE_DIR, 'horizon-secret-key')
if not os.path.exists(_key_file):
    with open(_key_file, 'w') as _f:
        _f.write(secrets.token_urlsafe(48))
with open(_key_file) as _f:
    _SECRET = _f.read().strip()
if 'local.local_settings' not in sys.modules:
    _local = types.ModuleType('local')
    _local.__path__ = []
    _ls = types.ModuleType('local.local_settings')
    _ls.SECRET_KEY = _SECRET
    # SANDBOX_HORIZON_WEBROOT='/dashboard/' serves Horizon under a prefix,
    # as the distributions' Apache does: openstack_dashboard.settings
    # derives the login, static and media URLs from it.
    if os.environ.get('SANDBOX_HORIZON_WEBROOT'):
        _ls.WEBROOT = os.environ['SANDBOX_HORIZON_WEBROOT']
    _local.local_settings = _ls
    sys.modules['local'] = _local
    sys.modules['local.local_settings'] = _ls

EXTRA_ENABLED = []
try:
    EXTRA_ENABLED.append(
        importlib.import_module('orphan_dashboard.enabled'))
    from orphan_dashboard import conf as _orphan_conf
except ImportError:
    _orphan_conf = None

from openstack_dashboard.utils import settings as _settings_utils  # noqa

from sandbox import common as _common  # noqa

_update_dashboards = _settings_utils.update_dashboards


def _with_extra_enabled(modules, horizon_config, installed_apps):
    return _update_dashboards(list(modules) + EXTRA_ENABLED, horizon_config,
                              installed_apps)


_settings_utils.update_dashboards = _with_extra_enabled
try:
    from openstack_dashboard.settings import *  # noqa: F401,F403,E402
finally:
    _settings_utils.update_dashboards = _update_dashboards

SECRET_KEY = _SECRET
DEBUG = False
ALLOWED_HOSTS = ['127.0.0.1', 'localhost', '[::1]', 'testserver']

OPENSTACK_KEYSTONE_URL = SANDBOX['keystone']['url']
OPENSTACK_KEYSTONE_DEFAULT_DOMAIN = 'Default'
OPENSTACK_KEYSTONE_DEFAULT_ROLE = 'member'
OPENSTACK_ENDPOINT_TYPE = 'publicURL'
AVAILABLE_REGIONS = []
OPENSTACK_SSL_NO_VERIFY = True

# SANDBOX_HORIZON_CACHE=host:port shares a memcached between Horizon
# processes and ``orphan-audit refresh`` (as production does).
CACHES = {'default': {
    'BACKEND': 'django.core.cache.backends.locmem.LocMemCache',
    # Django's default 300 entries would let the compressor's cull the
    # panel's snapshot.
    'OPTIONS': {'MAX_ENTRIES': 100000}}}
if os.environ.get('SANDBOX_HORIZON_CACHE'):
    CACHES = {'default': {
        'BACKEND': 'django.core.cache.backends.memcached.PyMemcacheCache',
        'LOCATION': os.environ['SANDBOX_HORIZON_CACHE']}}

# The cache session engine failed after login here; cookies work.
SESSION_ENGINE = 'django.contrib.sessions.backends.signed_cookies'
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False

# No Neutron (or Cinder, Glance) in the sandbox.
OPENSTACK_NEUTRON_NETWORK = {
    'enable_router': False,
    'enable_quotas': False,
    'enable_ipv6': False,
    'enable_distributed_router': False,
    'enable_ha_router': False,
    'enable_fip_topology_check': False,
    'enable_auto_allocated_network': False,
}
OPENSTACK_HYPERVISOR_FEATURES = {
    'can_set_mount_point': False,
    'can_set_password': False,
    'requires_keypair': False,
    'enable_quotas': False,
}
OPENSTACK_CINDER_FEATURES = {'enable_backup': False}

# Static files: `runserver --insecure` serves them through the finders;
# django-compressor compiles SCSS on the fly into COMPRESS_ROOT, which its
# CompressorFinder serves.  SANDBOX_HORIZON_OFFLINE=1 runs as production
# does: pages use only what `collectstatic` and `compress` wrote beforehand
# into SANDBOX_HORIZON_STATIC_ROOT, so a broken static reference fails.
STATIC_ROOT = os.environ.get('SANDBOX_HORIZON_STATIC_ROOT') or os.path.join(
    _STATE_DIR, 'horizon-static')
COMPRESS_ROOT = STATIC_ROOT
COMPRESS_ENABLED = True
COMPRESS_OFFLINE = os.environ.get('SANDBOX_HORIZON_OFFLINE') == '1'
if 'compressor.finders.CompressorFinder' not in STATICFILES_FINDERS:  # noqa
    STATICFILES_FINDERS = list(STATICFILES_FINDERS) + [  # noqa
        'compressor.finders.CompressorFinder']

# The plugin: audit freshly staged incidents (no minimum age); the journal
# lives with this sandbox, never mixed with another cloud's.
ORPHAN_AUDIT_MIN_AGE = 0
ORPHAN_AUDIT_JOURNAL_DIR = _STATE_DIR
ORPHAN_AUDIT_NOVA_CELL_TIMEOUT = _common.SLOW_CELL_TIMEOUT
ORPHAN_AUDIT_STUCK_MIGRATION_AGE = _common.STUCK_MIGRATION_AGE
# Tests set other ORPHAN_AUDIT_* settings as JSON here.
globals().update(json.loads(os.environ.get('SANDBOX_ORPHAN_SETTINGS', '{}')))
# The shipped local_settings.d snippet, run as Horizon runs its snippets.
if _orphan_conf is not None:
    with open(_orphan_conf.SNIPPET, encoding='utf-8') as _f:
        exec(_f.read())

LOGGING = {
    'version': 1,
    'disable_existing_loggers': False,
    'handlers': {'file': {
        'class': 'logging.FileHandler',
        'filename': os.path.join(_STATE_DIR, 'horizon.log'),
    }},
    'root': {'handlers': ['file'], 'level': 'INFO'},
}
