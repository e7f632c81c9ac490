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
2. the compute service through Nova (``DELETE /os-services/{id}`` at
   2.53, which deletes the compute node's provider tree; each provider
   journaled whole first, so a restore can re-create it), then whatever
   of the trees Nova left, children first (:func:`delete_all`); the
   compute service is never re-created by a restore.

A host Nova still places servers on is not ours to empty: the flow stops
before writing anything.
"""

import difflib
import itertools
import logging

from keystoneauth1 import exceptions as ks_exc

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
from orphan_dashboard.writing import equivalents
from orphan_dashboard.writing import journal
from orphan_dashboard.writing import providers as provider_writes
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
    step = step_outcome
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
        delete_all(clients, journal_, fresh, outcomes, bound)
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


def step_outcome(provider, action, status, message, entry_id=None):
    """The outcome of one step of a decommission, on ``provider``."""
    return write.Outcome(m.Selection('', provider, action), status,
                         message, entry_id=entry_id)


def delete_all(clients, journal, fresh, outcomes, bound):
    """Once every repair of ``fresh`` (a
    :class:`~audit.decommission.Decommission`) went through: the compute
    service, then what of its trees is left, if its service and providers
    are still those ``bound`` says the preview showed.  Each step is
    added to ``outcomes`` as it is done, so that an error after writes
    leaves them said."""
    root = fresh.roots[0] if fresh.roots else ''
    placement_client = clients.placement
    held = _held(placement_client, fresh.providers)
    if held:
        outcomes.append(step_outcome(
            root, m.DELETE_SERVICE, write.SKIPPED, why(
                'decommission.held', held=reasons.sentences(
                    why('decommission.still_holds', provider=p,
                        consumers=', '.join(sorted(c)))
                    for p, c in held.items()))))
        return
    changed = bound and _changed_now(clients, fresh, bound)
    if changed:
        outcomes.append(step_outcome(
            root, m.DELETE_SERVICE, write.SKIPPED,
            why('decommission.changed', changes=changed)))
        return
    records = [placement.provider_record(placement_client, p)
               for p in fresh.providers]
    records = [r for r in records if r]
    if fresh.deletes_service:
        step, entries = _delete_service(clients.nova, journal, fresh,
                                        records)
        outcomes.append(step)
        if step.status != write.DONE or entries is None:
            return
    else:
        entries = {}
    _delete_left(placement_client, journal, records, entries, outcomes)


def _changed_now(clients, fresh, bound):
    """What differs from ``bound`` just before the deletes (after the
    repairs): the service's uuid and the providers of the trees."""
    providers = sorted(p['uuid'] for p in placement.provider_list(
        clients.placement) if (p.get('root_provider_uuid') or p['uuid'])
        in fresh.roots)
    service = next((s.get('id') for s in nova.service_list(clients.nova)
                    if s.get('host') == fresh.host), None) \
        if fresh.host else None
    changes = []
    if service != bound.get('service'):
        changes.append(why('decommission.service_now', host=fresh.host,
                           uuid=str(service)))
    if providers != sorted(bound.get('providers') or ()):
        changes.append(why('decommission.providers', providers=', '.join(
            sorted(set(providers) ^ set(bound.get('providers') or ())))))
    return reasons.sentences(changes) if changes else None


def _held(placement_client, providers):
    held = {}
    for provider in providers:
        try:
            consumers = placement.provider_allocations(placement_client,
                                                       provider)
        except ks_exc.NotFound:
            continue
        if consumers:
            held[provider] = set(consumers)
    return held


def _delete_service(nova_client, journal, fresh, records):
    """Journal the service and every provider of its trees, then ask Nova
    to delete the service (and, with it, the providers).

    Once the delete is sent, the outcome says what is known: Nova's
    refusal, an error answer or a lost one read back
    (:func:`_service_read_back`), or done with the journal failing after
    it.  The journal's own errors are logged, never shown.
    """
    service = fresh.service
    root = fresh.roots[0] if fresh.roots else ''
    try:
        entry = journal.begin_service(m.DELETE_SERVICE, {
            'uuid': service.uuid, 'host': service.host,
            'state': service.state, 'status': service.status,
            'forced_down': service.forced_down}, root,
            'decommission of %s: not re-created by a restore' % service.host)
        entries = {r['uuid']: journal.begin_provider(
            m.DELETE_PROVIDER, r, {}, 'provider %s, deleted with compute '
            'service %s' % (r['name'], service.host)) for r in records}
    except Exception:
        LOG.exception('the journal could not record the delete of compute '
                      'service %s first', service.host)
        return step_outcome(root, m.DELETE_SERVICE, write.FAILED,
                            reasons.reason('service.journal_before',
                                           host=service.host)), {}
    try:
        nova.delete_service(nova_client, service.uuid)
    except ks_exc.ClientException as exc:
        where = _service_read_back(nova_client, service, exc)
        if where != write.AFTER:
            return _service_kept(journal, entry, entries, root, service,
                                 exc, where), {}
        LOG.warning('Nova answered the delete of compute service %s with '
                    '%s, but it is gone', service.host, exc)
    try:
        journal.finish(entry, entry.APPLIED)
    except Exception:
        LOG.exception('the journal could not record the delete of compute '
                      'service %s', service.host)
        return step_outcome(root, m.DELETE_SERVICE, write.DONE,
                            reasons.reason('service.deleted_unjournaled',
                                           host=service.host), entry.id), None
    return step_outcome(root, m.DELETE_SERVICE, write.DONE,
                        why('service.deleted', host=service.host),
                        entry.id), entries


def _service_read_back(nova_client, service, exc):
    """Where Nova's error ``exc`` on its delete left the compute service,
    read back as every write is (:func:`write.settle`): :data:`write.AFTER`
    once it is gone."""
    if write.refused(exc):
        return write.BEFORE
    return write.settle(
        lambda: [s for s in nova.service_list(nova_client)
                 if s.get('id') == service.uuid],
        lambda found: write.BEFORE if found else write.AFTER,
        write.lost(exc))[0]


def _service_kept(journal, entry, entries, root, service, exc, where):
    """The outcome of a compute service delete that did not go through
    (Nova refused it, or answered an error and still has it), or whose
    outcome is unknown; its entries and its providers' say the same."""
    detail = _nova_detail(exc)
    if where == write.BEFORE and not write.lost(exc):
        status = entry.REFUSED if isinstance(exc, ks_exc.Conflict) \
            else entry.FAILED
        journal.finish(entry, status, detail)
        for provider_entry in entries.values():
            journal.finish(provider_entry, status, 'kept: the compute '
                           'service delete did not go through')
        return step_outcome(root, m.DELETE_SERVICE, write.FAILED,
                            why('service.refused', host=service.host,
                                detail=detail), entry.id)
    unknown = why('service.unknown', host=service.host, detail=detail,
                  state=write.state(where))
    journal.finish(entry, entry.UNKNOWN, str(unknown))
    for provider_entry in entries.values():
        journal.finish(provider_entry, entry.UNKNOWN, 'may have been '
                       'deleted with the compute service, whose delete '
                       'had no clear answer')
    return step_outcome(root, m.DELETE_SERVICE, write.UNKNOWN, unknown,
                        entry.id)


def _nova_detail(exc):
    response = getattr(exc, 'response', None)
    try:
        body = response.json()
        return next(iter(body.values()))['message']
    except Exception:
        return str(exc)


def _delete_left(placement_client, journal, records, entries, outcomes):
    """Delete, children first, what of the trees Nova left; the providers
    Nova deleted only have their journal entries finished."""
    for record in records:
        uuid = record['uuid']
        entry = entries.get(uuid)
        if entry is not None and placement.provider_record(
                placement_client, uuid) is None:
            journal.finish(entry, entry.APPLIED, 'deleted by Nova with the '
                           'compute service')
            outcomes.append(step_outcome(uuid, m.DELETE_PROVIDER, write.DONE,
                                         why('provider.deleted_by_nova',
                                             name=record['name']), entry.id))
            continue
        plan = repair.ProviderPlan(m.DELETE_PROVIDER, uuid, record['name'],
                                   record['generation'], record)
        outcome = provider_writes.delete_provider(placement_client, journal,
                                                  plan, entry)
        outcomes.append(outcome)
        if outcome.status != write.DONE:
            break
