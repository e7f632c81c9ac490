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

"""The panel's ``ORPHAN_AUDIT_*`` settings, each with its default, in one
place (``local_settings.py`` sets them; ``orphan-audit`` reads them when
it runs with Horizon's settings)."""

from django.conf import settings

DEFAULTS = {
    'MIN_AGE': 600,
    # Allocations written more recently are protected (seconds).
    'CONCURRENCY': 8,
    # Placement requests in flight during a sweep.
    'SNAPSHOT_TTL': 300,
    # Seconds before a page asks for a background refresh of the snapshot.
    'FULL_SWEEP': 1800,
    # Seconds between full sweeps (refreshes in between are incremental).
    'API_TIMEOUT': 60,
    # Seconds one Nova or Placement request of the panel may take.
    'MAX_ROWS': 200,
    # Rows one preview and its confirm may carry.
    'PREVIEW_MAX_AGE': 600,
    # Seconds a preview can be confirmed.
}


def setting(name):
    """``ORPHAN_AUDIT_<name>``, or its default (also without settings)."""
    if not settings.configured:
        return DEFAULTS[name]
    return getattr(settings, 'ORPHAN_AUDIT_' + name, DEFAULTS[name])
