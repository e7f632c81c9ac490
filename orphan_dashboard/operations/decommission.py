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

"""Decommissioning a dead hypervisor (use case): its leftover
allocations, its compute service and its providers, previewed first."""

import difflib
import itertools

from orphan_dashboard.api import nova
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan as planning
from orphan_dashboard.reading import collect
from orphan_dashboard.writing import decommission
from orphan_dashboard.writing import equivalents
from orphan_dashboard.writing import journal
from orphan_dashboard.writing import repair


def tree_hints(tree):
    """The instance hints of one provider tree of the shown report (None
    where it has none)."""
    findings = tree.findings if tree else []
    return planning.instance_hints(findings, findings)


def preview(clients, name, settings, whole_service=False, **hints):
    """What decommissioning the hypervisor ``name`` (with
    ``whole_service``, every node of its compute service) takes, read
    now; ``hints`` (``instance_hints``) come from a snapshot shown."""
    return decommission.preview(clients.placement, clients.nova, name,
                                min_age=settings.min_age,
                                whole_service=whole_service,
                                network_client=clients.network, **hints)


def service_commands(plan):
    """The command equivalent to deleting ``plan``'s compute service
    (Nova names it by uuid from 2.53), or none when the service is kept
    or has no uuid to name."""
    service = plan.service
    if not plan.deletes_service or not getattr(service, 'uuid', None):
        return []
    return [equivalents.service_delete(service.uuid)]


def provider_commands(plan):
    """``{provider uuid: commands}`` equivalent to deleting what Nova
    leaves of ``plan``'s providers, as a provider delete previews its
    own."""
    return {uuid: equivalents.for_plan(repair.ProviderPlan(
        m.DELETE_PROVIDER, uuid, plan.names.get(uuid, ''), None, {}))
        for uuid in plan.providers}


def delete_commands(plan):
    """``(service commands, provider commands)`` of ``plan``'s deletes,
    the providers' in the order they are deleted, children first: what
    both previews, the panel's and the command line's, print."""
    by_provider = provider_commands(plan)
    return (service_commands(plan),
            [c for uuid in plan.providers for c in by_provider[uuid]])


def apply(clients, journal_, name, plans, chosen, settings,
          instance_hints=(), bound=None, children=()):
    """Carry a previewed decommission out, if its compute service and
    providers are still those ``bound`` says it showed; an outcome per
    step.  ``children``: the foreign children ticked for deletion."""
    return decommission.apply(clients.placement, clients.nova, journal_,
                              name, plans, chosen, min_age=settings.min_age,
                              instance_hints=instance_hints, bound=bound,
                              children=children,
                              network_client=clients.network)


def close_names(clients, cloud, name):
    """None if Nova (a migration to or from the host) or ``cloud``'s
    journal knew ``name``, a host found nowhere now; else the names that
    come close to it (at most three, perhaps none): "already gone" must
    not pass a typo off as success."""
    deleted = journal.deleted_names(cloud)
    if name.lower() in deleted or nova.migration_list(clients.nova,
                                                      host=name):
        return None
    topology = collect.read_topology(clients.placement, clients.nova)
    names = deleted | {n.lower() for n in itertools.chain(
        topology['services'],
        (h.hostname for h in topology['hypervisors'].values()),
        (p.name for p in topology['providers'].values()))}
    return difflib.get_close_matches(name.lower(), sorted(names), n=3,
                                     cutoff=0.5)
