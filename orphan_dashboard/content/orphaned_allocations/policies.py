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

"""The policy rules of each thing the panel does, in one place: the
tables' buttons declare them and the views enforce them, so a direct URL
is refused what a hidden button would not offer."""

from django.utils.translation import gettext_lazy as _

from openstack_dashboard import policy

PANEL = (("compute", "os_compute_api:os-hypervisors:list"),)
WRITE_ALLOCATIONS = PANEL + (("placement", "placement:allocations:update"),)
DELETE_PROVIDERS = PANEL + (
    ("placement", "placement:resource_providers:delete"),)
"""Placement's own rules: enforced where a placement policy file is
registered in ``POLICY_FILES`` (see ``doc/source/install.md``)."""
DECOMMISSION = DELETE_PROVIDERS + (
    ("compute", "os_compute_api:os-services:delete"),
    ("placement", "placement:allocations:update"))
RESTORE_PROVIDERS = WRITE_ALLOCATIONS + (
    ("placement", "placement:resource_providers:create"),
    ("placement", "placement:resource_providers:inventories:update"),
    ("placement", "placement:resource_providers:traits:update"),
    ("placement", "placement:resource_providers:aggregates:update"))
"""Restoring a deleted provider re-creates it with its inventories,
traits and aggregates (then its consumers' allocations)."""

REFUSED = {
    WRITE_ALLOCATIONS: _('You are not allowed to change allocations in '
                         'Placement: nothing was written.'),
    DELETE_PROVIDERS: _('You are not allowed to delete resource providers: '
                        'nothing was deleted.'),
    DECOMMISSION: _('You are not allowed to decommission hypervisors (it '
                    'changes allocations, deletes resource providers and '
                    'compute services): nothing was written.'),
    RESTORE_PROVIDERS: _('You are not allowed to re-create resource '
                         'providers (a restore creates the provider and '
                         'writes its inventories, traits and aggregates): '
                         'nothing was written.'),
}
"""Why a view refused a user its rules."""


def restore_rules(entries):
    """The rules restoring the journal ``entries`` takes: the provider
    rules as well when one of them is a provider's."""
    if any(entry.kind == entry.PROVIDER for entry in entries):
        return RESTORE_PROVIDERS
    return WRITE_ALLOCATIONS


def allowed(request, rules):
    """Whether the policy lets this user do what ``rules`` guard."""
    return policy.check(rules, request)
