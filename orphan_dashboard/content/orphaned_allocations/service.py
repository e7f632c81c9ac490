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

"""The Horizon user behind a request, as the application layer takes
it: the clients acting with its token, the cloud it is logged in to, the
journal that records its writes, and the snapshot its pages read.  The
request stops here: :mod:`orphan_dashboard.operations` and everything
below it, which the CLI calls too, never see one.
"""

from orphan_dashboard.api import client
from orphan_dashboard.audit import export
from orphan_dashboard.audit import limits as bounds
from orphan_dashboard.audit import server_needs
from orphan_dashboard import conf
from orphan_dashboard.operations import capacity as capacity_ops
from orphan_dashboard.operations import decommission as decommission_ops
from orphan_dashboard.operations import history as history_ops
from orphan_dashboard.operations import repairs
from orphan_dashboard.operations import report as report_ops
from orphan_dashboard.operations import restore as restore_ops
from orphan_dashboard import sweep
from orphan_dashboard.sweep import lock
from orphan_dashboard.sweep import status
from orphan_dashboard.sweep import store as stores
from orphan_dashboard.sweep import worker
from orphan_dashboard.writing import journal


def credentials_for_request(request):
    """The Horizon user's :class:`~api.client.Credentials`: its token, the
    endpoints of its catalog and how Horizon verifies TLS."""
    from django.conf import settings
    from horizon import exceptions
    from openstack_dashboard.api import base

    verify = True
    if settings.OPENSTACK_SSL_NO_VERIFY:
        verify = False
    elif settings.OPENSTACK_SSL_CACERT:
        verify = settings.OPENSTACK_SSL_CACERT

    def optional(service_type):
        try:
            return base.url_for(request, service_type)
        except exceptions.ServiceCatalogException:
            return None
    return client.Credentials(
        request.user.token.id, base.url_for(request, 'placement'),
        base.url_for(request, 'compute'),
        client.keystone_root(getattr(request.user, 'endpoint', None) or
                             settings.OPENSTACK_KEYSTONE_URL),
        verify, optional('network'), optional('accelerator'))


def cloud_for_request(request):
    """The :class:`~api.client.Cloud` the Horizon user is logged in to."""
    from django.conf import settings
    from openstack_dashboard.api import base

    user = request.user
    return client.Cloud(getattr(user, 'endpoint', None) or
                        settings.OPENSTACK_KEYSTONE_URL,
                        user.services_region or '',
                        base.url_for(request, 'placement'),
                        client.placement_service_id(user.service_catalog))


def _clients(request):
    """Adapters acting as the Horizon user, one session per request."""
    clients = getattr(request, '_orphan_clients', None)
    if clients is None:
        settings = conf.run_settings()
        clients = request._orphan_clients = client.for_credentials(
            credentials_for_request(request), settings.api_timeout,
            settings.nova_listing_timeout, settings.nova_cell_timeout)
    return clients


def _journal(request):
    """The journal of the Horizon user's writes."""
    user = request.user
    return journal.Journal('panel', cloud_for_request(request), user.id,
                           user.username, user.project_id, user.project_name)


def _store(request):
    return stores.for_cloud(cloud_for_request(request).key,
                            conf.run_settings())


_shown = {}
"""Per process and cloud: the report of the version last shown
(:class:`~orphan_dashboard.sweep.Shown`)."""


def _sweep(request, store, full=False):
    """Start a background sweep unless one runs (in any process)."""
    return worker.start(
        store, credentials_for_request(request), conf.run_settings(),
        python=conf.SWEEP_PYTHON.get(), full=full)


CURRENT = '_orphan_dashboard_current'
"""Where a request keeps the snapshot it read (:func:`_current`)."""


def _current(request, start=True):
    """``(store, Shown)`` of the last snapshot (``Shown`` is None before
    the first sweep of this cloud has finished): see
    :func:`orphan_dashboard.sweep.current`, whose due sweep starts here.
    Read once per request: what a page shows of it (its report, its
    trees, its capacity, its version) comes from one version, even when a
    sweep publishes meanwhile.  Without ``start``, a read that starts no
    sweep, and is not kept."""
    found = getattr(request, CURRENT, None)
    if found is None:
        store = _store(request)
        shown, due = sweep.current(store, _shown, conf.run_settings())
        if start and due:
            _sweep(request, store, full=due == 'full')
        found = store, shown
        if start and request is not None:
            setattr(request, CURRENT, found)
    return found


def shown_version(request, unread=None):
    """The version of the snapshot this request's pages were read from
    (None before the first sweep), ``unread`` where the request read none
    (its read failed): the page's script swaps what it shows when a newer
    one is published."""
    found = getattr(request, CURRENT, None)
    if found is None:
        return unread
    return found[1] and found[1].version


def report(request):
    """The audit :class:`~audit.report.Report` of the whole cloud as its
    :meth:`~audit.report.Report.summary` (no ``ok`` findings), or None
    before the first sweep of this cloud has finished.  Its ``taken_at``
    says how old it is."""
    shown = _current(request)[1]
    return shown and shown.report


def provider_report(request, provider_uuid):
    """One provider tree of the same report, with every finding (``ok``
    included), or None where the report has no such provider."""
    store, shown = _current(request)
    tree, lost = sweep.provider_tree(store, shown, provider_uuid)
    if lost:
        _sweep(request, store, full=True)
    return tree


class SweepNotStarted(Exception):
    """No sweep ran and none could start (the cause is in the log)."""


def refresh(request):
    """The operator's *Refresh*: a full sweep, in the background.  True
    when it starts now; False when another sweep runs: the full one is
    asked for, and the first page or poll of the page's bar after that
    sweep starts it (:func:`orphan_dashboard.sweep.current`,
    :func:`sweep_state`)."""
    store = _store(request)
    store.want(full=True)
    for _attempt in range(2):      # again if the other ended meanwhile
        if _sweep(request, store, full=True):
            return True
        if lock.sweeping(store):
            return False
    raise SweepNotStarted()


def sweep_state(request):
    """What the page's progress bar shows: the snapshot's version and age,
    and the running sweep's progress, if one runs; the sweep a *Refresh*
    asked for behind another starts here once that one has ended
    (:func:`orphan_dashboard.sweep.status.of`): the state returned
    already shows it."""
    store = _store(request)
    state = status.of(store)
    wanted = state.pop('wanted')
    if wanted:
        _sweep(request, store, full=wanted == 'full')
        state = status.of(store)
        del state['wanted']
    return state


_names = {}
"""Per process and cloud: Keystone's names as the last sweep read them."""

_capacity = {}
"""Per process and cloud: the capacity of the report last shown."""


def capacity(request):
    """The :class:`~audit.capacity.Capacity` of the shown report (the same
    version, :func:`_current`), or None (before the first sweep, or a
    snapshot without inventories).  It starts no sweep: :func:`report`
    does, for the same page."""
    store, shown = _current(request, start=False)
    return capacity_ops.shown(store, shown, _capacity)


def charged_projects(request):
    """What each project's findings hold, with its Placement usage and
    Keystone limits read now, worst first
    (:class:`~audit.capacity.ProjectRow`); None before the first sweep."""
    found = capacity(request)
    if found is None:
        return None
    return capacity_ops.projects(_clients(request), found,
                                 conf.run_settings())


def flavors(request):
    """Every flavor Nova lists, by name: ``(id, flavor)`` pairs."""
    return capacity_ops.flavors(_clients(request))


def flavor_fit(request, listed, flavor_id):
    """Whether the flavor of ``listed`` (:func:`flavors`) with
    ``flavor_id`` fits each hypervisor of the shown report: a dict of its
    ``flavor``, ``resources``, ``rows`` and ``counts``
    (:func:`operations.capacity.fit`) and the ``taken_at`` of the one
    snapshot they come from, or None before the first sweep.
    :data:`NoSuchFlavor` for an unknown id, ``server_needs.CannotHeal`` for
    a flavor whose request a flavor alone cannot say."""
    flavor = capacity_ops.find_flavor(listed, flavor_id)
    resources = server_needs.resources_from_flavor(flavor.flavor)
    found = capacity(request)
    if found is None:
        return None
    rows, counts = capacity_ops.fit(found, resources)
    return {'flavor': flavor, 'resources': resources, 'rows': rows,
            'counts': counts, 'taken_at': found.taken_at}


def names(request):
    """``{'projects', 'users', 'servers'}``, each ``{id: name}``, as the
    last sweep read them from Keystone and Nova: a page never waits for
    them."""
    return sweep.names(_store(request), _names)


def findings_export(request, provider_uuid=None):
    """``(rows, file name)``: the findings as the panel lists them, as
    dicts of :data:`FINDING_FIELDS`, every problem of the cloud or every
    row of one provider tree, and the name of their download
    (:func:`export.file_name`).  None before the first audit;
    ``LookupError`` for a provider it does not have."""
    shown = report(request)
    if shown is None:
        return None
    tree = None
    if provider_uuid:
        tree = provider_report(request, provider_uuid.lower())
        if tree is None:
            raise LookupError(provider_uuid)
    return (report_ops.finding_rows(shown, names(request), tree),
            export.file_name(shown.taken_at,
                             tree and tree.provider.name))


def provider_names(request):
    """``{provider uuid: name}`` of every provider in the shown snapshot."""
    shown = report(request)
    return shown.names if shown is not None else {}


def note_written(request, consumers=(), providers_changed=False):
    """After our own writes: the shown snapshot re-reads the consumers at
    once (a refresh is asked for when providers changed)."""
    sweep.note_written(_store(request), _clients(request), consumers,
                       providers_changed, conf.run_settings())


def selections(request, chosen, provider_uuids):
    """The rows to repair: ``chosen`` as they are, plus the recommended
    repair of every consumer with a finding on ``provider_uuids``.

    Returns ``(selections, instance hints)``: the servers whose migrations
    the engine reads too, from the snapshot the operator was shown.
    Raises ``LookupError`` for a provider the report does not have.
    """
    return repairs.selections(report(request), chosen, provider_uuids)


def preview(request, selections_, instance_hints=()):
    """A fresh plan (or the reason there is none) for each selection."""
    return repairs.preview(_clients(request), selections_,
                           conf.run_settings(), instance_hints)


def limits():
    """The limits a confirm of many rows writes within: the settings an
    unattended run takes (``ORPHAN_AUDIT_MAX_WRITES``,
    ``ORPHAN_AUDIT_MAX_SHARE``), none where they are unset."""
    return bounds.Limits(max_writes=conf.MAX_WRITES.get(),
                         max_share=conf.MAX_SHARE.get())


def apply(request, plans, instance_hints=()):
    """Re-verify, journal and write each confirmed plan; an outcome each.
    A batch past :func:`limits` writes nothing (:class:`repairs.Held`)."""
    shown = report(request)
    repairs.check_limits(limits(), plans, shown.findings if shown else (),
                         shown.consumers if shown else 0)
    clients = _clients(request)
    try:
        return repairs.apply(clients, _journal(request), plans,
                             conf.run_settings(), instance_hints)
    finally:
        note_written(request, {p.consumer for p in plans})


def _named(request, **texts):
    """The ids History's filter finds by name (:func:`history_ops.named`),
    from the names a page shows: the last sweep's, read once."""
    return history_ops.named(
        lambda: dict(names(request), providers=provider_names(request)),
        **texts)


def history_names(request, entries):
    """``{uuid: name}`` of the consumers and providers of History's
    ``entries``, as ``orphan-audit history`` names them
    (:func:`history_ops.entry_names`), from what the last sweep read: a
    page never waits for Nova."""
    return history_ops.entry_names(
        cloud_for_request(request),
        dict(names(request), providers=provider_names(request)), entries)


def cloud_key(request):
    """The journal's key of the cloud the user is logged in to: every
    cloud's History names this one's entries as such."""
    return cloud_for_request(request).key


def other_clouds_allowed():
    """Whether History may show every cloud's journal
    (``ORPHAN_AUDIT_HISTORY_ALL_CLOUDS``): the other clouds' users,
    projects and allocations are not this cloud's login to grant."""
    return bool(conf.HISTORY_ALL_CLOUDS.get())


def _history_cloud(request, all_clouds):
    """The cloud whose journal History reads: this one, or every cloud
    (None) when asked (a rebuilt Keystone is a new cloud to the journal;
    ``filters.all_clouds`` asks only where :func:`other_clouds_allowed`)."""
    return None if all_clouds else cloud_for_request(request)


def history(request, provider=None, consumer=None, batch=None, project=None,
            marker=None, prev_marker=None, limit=None, all_clouds=False):
    """This cloud's journal entries (every cloud's, read-only, with
    ``all_clouds``), newest first, a page at a time: ``(entries, has_prev,
    has_more, {subject: restorable entry ids})``.  ``provider``,
    ``consumer`` and ``project`` match a part of an id or of the name
    History shows."""
    return history_ops.page(
        _history_cloud(request, all_clouds), provider=provider,
        consumer=consumer, batch=batch, project=project, marker=marker,
        prev_marker=prev_marker, limit=limit,
        named_=_named(request, provider=provider, consumer=consumer,
                      project=project))


def history_export(request, provider=None, consumer=None, batch=None,
                   project=None, all_clouds=False):
    """Every entry History shows with the same filter, read as it is
    written out."""
    return journal.all_entries(
        _history_cloud(request, all_clouds), provider=provider,
        consumer=consumer, batch=batch, project=project,
        named=_named(request, provider=provider, consumer=consumer,
                     project=project))


def batch_entries(request, batch):
    """This cloud's entries of exactly one confirm or decommission."""
    return journal.batch_entries(cloud_for_request(request), batch)


def journal_entries(request, entry_ids):
    """This cloud's entries with these ids; others raise ``DoesNotExist``."""
    return history_ops.entries_by_id(cloud_for_request(request),
                                     entry_ids)


def batch_of(request, outcomes):
    """The journal batch these outcomes were written in, or None when
    nothing was journaled."""
    return history_ops.batch_of(cloud_for_request(request), outcomes)


def _restorable(request, entries):
    return restore_ops.restorable(cloud_for_request(request), entries)


def preview_restore(request, entries):
    """``[(entry, row)]``: a fresh restore plan per entry, with what Nova
    says of its consumer now."""
    return restore_ops.preview(_clients(request), entries,
                               _restorable(request, entries))


def restore(request, entries, confirmed):
    """Put each entry's subject back as it was; journaled as well."""
    try:
        return restore_ops.restore(_clients(request), _journal(request),
                                   entries, confirmed,
                                   _restorable(request, entries))
    finally:
        note_written(request, {e.consumer for e in entries},
                     providers_changed=restore_ops.changes_providers(entries))


def overview(request, tree):
    return report_ops.overview(_clients(request), tree)


def preview_provider_delete(request, roots):
    return repairs.preview_provider_delete(_clients(request), roots)


def delete_providers(request, plans):
    clients = _clients(request)
    try:
        return repairs.delete_providers(clients, _journal(request), plans)
    finally:
        note_written(request, providers_changed=True)


def preview_decommission(request, provider_uuid, whole_service=False):
    """What decommissioning the hypervisor of ``provider_uuid`` (with
    ``whole_service``, every node of its compute service) takes, read now;
    the instance hints come from the snapshot shown."""
    return decommission_ops.preview(
        _clients(request), provider_uuid, conf.run_settings(),
        instance_hints=_hints_for_tree(request, provider_uuid),
        whole_service=whole_service)


def decommission_apply(request, provider_uuid, plans, chosen, bound=None,
                       children=()):
    """Carry a previewed decommission out, if its compute service and
    providers are still those ``bound`` says it showed; an outcome per
    step.  ``children``: the foreign children ticked."""
    clients = _clients(request)
    try:
        return decommission_ops.apply(
            clients, _journal(request), provider_uuid, plans,
            chosen, conf.run_settings(),
            instance_hints=_hints_for_tree(request, provider_uuid),
            bound=bound, children=children, bounds=limits())
    finally:
        note_written(request, {p.consumer for p in plans},
                     providers_changed=True)


def _hints_for_tree(request, provider_uuid):
    return decommission_ops.tree_hints(provider_report(request,
                                                       provider_uuid))
