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

# Orphaned Allocations: the journal's database and router.  Copy this file
# into openstack_dashboard/local/local_settings.d/ next to the enabled file
# to choose the journal yourself; without it the panel keeps the same
# sqlite journal and manage.py check warns (orphan_dashboard.W001).
#
# The journal is a sqlite file in ORPHAN_AUDIT_JOURNAL_DIR (set it in
# local_settings.py) unless DATABASES already has 'orphan_journal': on
# several Horizon nodes, define that alias in local_settings.py as a MySQL
# or PostgreSQL database all of them reach.
#
# The audit snapshot and the sweep lock live in CACHES['default']: keep it
# a cache every Horizon process shares (Horizon's default, memcached), so
# one sweep serves them all.
from orphan_dashboard import conf as _orphan_conf

_orphan_conf.add_journal(globals())
