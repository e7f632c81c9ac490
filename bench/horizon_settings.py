"""The demo's Horizon settings (``sandbox.horizon_settings``) for the bench.

One change: a local-memory cache large enough to keep the snapshot.  With
Django's default ``MAX_ENTRIES`` (300) the compressor's entries cull it and
every page sweeps again; production uses memcached or redis, which do not.
"""
from sandbox.horizon_settings import *  # noqa: F401,F403

CACHES = {'default': {
    'BACKEND': 'django.core.cache.backends.locmem.LocMemCache',
    'OPTIONS': {'MAX_ENTRIES': 100000}}}
