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
allocations, its compute service and its providers, previewed first.

The writes go in order, each journaled, and the first failure stops the
rest with the state said:

1. the repairs of every consumer on the host's provider trees, as a batch
   of :func:`repairs.apply` (re-read, generation-checked);
2. the compute service and what Nova leaves of its trees
   (:func:`writing.decommission.delete_all`).

A host Nova still places servers on is not ours to empty: the flow stops
before writing anything.
"""

import difflib
import itertools
import logging

from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import decommission
from orphan_dashboard.audit import limits
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan as planning
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.operations import repairs
from orphan_dashboard.reading import collect
from orphan_dashboard.reading import refresh
from orphan_dashboard.writing import decommission as deletes
from orphan_dashboard.writing import equivalents
from orphan_dashboard.writing import journal
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write

LOG = logging.getLogger(__name__)


def tree_hints(tree):
    """The instance hints of one provider tree of the shown report (None
    where it has none)."""
    findings = tree.findings if tree else []
    return planning.instance_hints(findings, findings)


def read(clients, name, instance_hints=()):
    """A snapshot of everything on ``name``'s provider trees (every node
    of its compute service), read now: the consumers holding them, the
    servers Nova places there, and their ports, as every repair reads
    them (a server evacuated with a QoS port has its old NIC trimmed
    like any other repair)."""
    topology = collect.read_topology(clients.placement, clients.nova)
    bare = m.Snapshot(consumers={}, servers={}, migrations={}, **topology)
    host, _service, roots = decommission.resolve(bare, name)
    tree = [p for p in bare.providers.values() if p.root_uuid in roots]
    holders = set()
    for provider in tree:
        holders.update(placement.provider_allocations(clients.placement,
                                                      provider.uuid))
    living = {s['id'] for s in nova.server_list(clients.nova, host=host)} \
        if host else set()
    return refresh.consumer_snapshot(clients, holders | living,
                                     instance_hints, providers=roots,
                                     topology=topology)


def preview(clients, name, settings, whole_service=False,
            instance_hints=()):
    """What decommissioning the hypervisor ``name`` (with
    ``whole_service``, every node of its compute service) takes, read
    now: a :class:`~audit.decommission.Decommission`; ``instance_hints``
    come from a snapshot shown.  A step whose write Placement may refuse
    for a provider's capacity says so, and a step that leaves a server's
    accelerator requests bound in Cyborg names them, as a repair's preview
    does (:func:`repairs.note_capacity`, :func:`repairs.note_accelerators`).
    """
    snapshot = read(clients, name, instance_hints)
    plan = decommission.plan(snapshot, name, settings.min_age, whole_service,
                             stuck_after=settings.stuck_after)
    repairs.note_capacity(clients, plan.steps, settings, snapshot.providers)
    repairs.note_accelerators(clients, plan.steps, settings)
    return plan


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
          instance_hints=(), bound=None, children=(), bounds=limits.NO_LIMITS):
    """Carry the decommission of ``name`` out; an outcome per step.

    ``plans`` are the repair plans the operator saw; ``chosen`` the
    unknown consumers they chose to delete; ``children`` the providers of
    other services (or of no proven owner) they ticked; ``bound`` the
    :meth:`~audit.decommission.Decommission.binding` of the preview (the
    compute service, the providers, the choice of the whole service):
    checked on the fresh read and again just before the deletes.  Nothing
    is written while anything blocks the whole flow (servers on the host,
    a consumer nothing would clear, an unknown consumer not chosen, a
    service or provider the preview did not show, a foreign child not
    ticked).  Repairs of more consumers than ``bounds``' ``max_writes``
    (a :class:`~audit.limits.Limits`; its share is of a whole cloud's
    audit, which a decommission does not read) raise
    :class:`~repairs.Held`: nothing is written.
    """
    bound = bound or {}
    step = deletes.step_outcome
    fresh = preview(clients, name, settings, bool(bound.get('whole_service')),
                    instance_hints)
    root = fresh.roots[0] if fresh.roots else ''
    if fresh.gone:
        return [step(root, m.DELETE_PROVIDER, write.SKIPPED,
                     why('decommission.gone', name=name))]
    changed = bound and fresh.changed_since(bound)
    if changed:
        return [step(root, m.DELETE_SERVICE, write.SKIPPED, changed)]
    blockers = fresh.blockers(chosen, children)
    if blockers:
        return [step(root, m.DELETE_SERVICE, write.SKIPPED,
                     why('decommission.blocked',
                         blockers=reasons.sentences(blockers)))]
    repairs.check_limits(limits.Limits(max_writes=bounds.max_writes),
                         fresh.plans(chosen), [s.finding for s in fresh.steps])
    wanted = {p.consumer for p in fresh.plans(chosen)}
    outcomes = repairs.apply(
        clients, journal_, [p for p in plans if p.consumer in wanted],
        settings, instance_hints) if wanted else []
    missing = wanted - {p.consumer for p in plans}
    outcomes += [step(root, m.DELETE, write.SKIPPED,
                      why('decommission.appeared', consumer=c))
                 for c in sorted(missing)]
    if missing or any(o.status != write.DONE for o in outcomes):
        return outcomes + [step(root, m.DELETE_SERVICE, write.SKIPPED,
                                why('decommission.repairs_failed'))]
    try:
        deletes.delete_all(clients, journal_, fresh, outcomes, bound)
    except Exception:
        if not outcomes:
            raise
        LOG.exception('decommission of %s interrupted', name)
        outcomes.append(step(root, m.DELETE_SERVICE, write.FAILED,
                             reasons.reason('decommission.interrupted',
                                            host=name)))
    return outcomes


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
