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

"""Decommissioning a dead hypervisor (I/O): the deletes once its repairs
went through, the compute service through Nova (``DELETE
/os-services/{id}`` at 2.53, which deletes the compute node's provider
tree; each provider journaled whole first, so a restore can re-create
it), then whatever of the trees Nova left, children first.  The first
failure stops the rest with the state said; the compute service is never
re-created by a restore.
"""

import logging

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.writing import providers as provider_writes
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write

LOG = logging.getLogger(__name__)


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
