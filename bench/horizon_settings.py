"""The demo's Horizon settings (``sandbox.horizon_settings``) for the bench,
with ``SANDBOX_HORIZON_CACHE`` the memcached the bench starts (shared with
``orphan-audit refresh``, as in production)."""
from sandbox.horizon_settings import *  # noqa: F401,F403
