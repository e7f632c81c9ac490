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

"""The one place for microversions: why each call uses the one it does."""

# Placement
PROVIDERS = '1.18'
"""root/parent provider uuids (1.14) and ``required=`` trait filters (1.18)."""
ALLOCATIONS = '1.28'
"""Consumer generations in reads; project, user (1.12), Last-Modified
(1.15)."""
WRITE = '1.28'
"""Generation-checked writes.  At >= 1.38 Nova's consumers read back as
``consumer_type: unknown`` and echoing that is a 400, so stay below 1.37."""
USAGES = '1.9'
"""``GET /usages?project_id=``: tells whether pre-1.8 (incomplete)
consumers exist at all."""
PROVIDER_RECORD = '1.19'
"""A provider's traits (1.6) and aggregates with its generation (1.19), to
journal a provider before deleting it and to re-create it on restore."""
TRAITS = '1.6'
"""``GET /traits?name=startswith:`` (1.6): which ``OWNER_*`` traits exist."""
TOKEN_CHECK = '1.2'
"""``GET /resource_classes/{name}`` (1.2): a cheap authenticated read that
validates a new token once before a sweep's concurrent reads."""
CANDIDATES = '1.34'
"""Allocation candidates restricted to a tree per request group
(``in_tree<suffix>``, 1.31), groups suffixed by the port's own request
group id (1.33), and the ``mappings`` of each group to its provider
(1.34): what a port's binding must name, as ``heal_allocations`` asks."""
OSC_PROVIDER_CREATE = '1.20'
"""The ``openstack resource provider create`` a provider's restore shows:
``--parent-provider`` (1.14), the created provider answered (1.20)."""

# Compute
SERVERS = '2.69'
"""Down-cell servers come back as UNKNOWN partial records (2.69) instead of
vanishing; embedded flavor with extra specs (2.47).  2.69 lists about twice
as fast as ``latest``."""
SERVER_IMAGE = '2.98'
"""One server with ``image.properties``: the image properties Nova copied
at boot and allocated from (2.98), read per server, never in a listing
(the listing stays at :data:`SERVERS`)."""
INSTANCE_ACTIONS = '2.21'
"""Instance actions answer for deleted servers (2.21)."""
MIGRATIONS = '2.59'
"""Migration uuids and paging (2.59)."""
HYPERVISORS = '2.53'
"""Hypervisor id == compute node uuid == resource provider uuid (2.53)."""
SERVICES = '2.53'
"""Service uuids (2.53), forced_down (2.11)."""
SERVICE_LIST = '2.69'
"""The listing also names a down cell's compute hosts, status ``UNKNOWN``
(2.69), instead of leaving them out."""
FLAVORS = '2.61'
"""Flavors listed with their extra specs (2.61): the resource overrides
and custom classes a flavor asks for."""
