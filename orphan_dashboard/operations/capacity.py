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

"""What the orphans cost in capacity, and whether a flavor would fit (use
case): the same answers for the panel (from the stored snapshot) and the
CLI (from a cloud read now), with what a capacity question reads beyond
the snapshot: Nova's flavors, the projects' Placement usages and
Keystone's unified limits."""

import dataclasses
import logging
import typing

from orphan_dashboard.api import keystone
from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import capacity
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import server_needs
from orphan_dashboard.operations import report as report_ops
from orphan_dashboard.reading import collect
from orphan_dashboard.reading.progress import NO_PROGRESS

LOG = logging.getLogger(__name__)
FIT_STATES = tuple(capacity.FIT_KINDS)
"""fits now, fits after the recommended repairs, does not fit."""


class NoSuchFlavor(LookupError):
    """No flavor has this id or name."""


class NoInventories(LookupError):
    """Placement gave no inventories: there is no capacity to count."""


class ListedFlavor(typing.NamedTuple):
    id: str
    flavor: object
    """The :class:`~audit.model.Flavor`."""

    @property
    def name(self):
        return self.flavor.name


def flavors(clients):
    """Every flavor Nova lists (public and private), by name."""
    listed = [ListedFlavor(id_, flavor)
              for id_, flavor in _listed_flavors(clients.nova)]
    return sorted(listed, key=lambda f: (f.name, f.id))


def find_flavor(listed, wanted):
    """The flavor of ``listed`` whose id, else name, is ``wanted``."""
    for key in (lambda f: f.id, lambda f: f.name):
        for flavor in listed:
            if key(flavor) == wanted:
                return flavor
    raise NoSuchFlavor(wanted)


def shown(store, shown_, known):
    """The :class:`~audit.capacity.Capacity` of the report ``shown_``
    (:func:`orphan_dashboard.sweep.current`'s), or None before the first
    sweep or for a snapshot without inventories.  ``known`` is the
    caller's memory of it, per process and cloud."""
    if shown_ is None:
        return None
    key = (shown_.version, shown_.min_age)
    cached = known.get(store.base)
    if cached is not None and cached[0] == key:
        return cached[1]
    if shown_.audited is not None:
        # Audited here again, with another minimum age.
        snapshot = store.load_snapshot(shown_.version)
        found = snapshot and capacity.assess(snapshot, shown_.audited)
    else:
        found = store.load_capacity(shown_.version)
    known[store.base] = (key, found)
    return found


def audit(clients, settings, progress=NO_PROGRESS, provider=None):
    """``(report, Capacity)`` of the whole cloud read now; the report of
    ``provider``'s tree only when named (see
    :func:`operations.report.narrowed`)."""
    snapshot = report_ops.read(clients, settings, progress)
    report = classify.audit(snapshot, min_age=settings.min_age,
                            stuck_after=settings.stuck_after)
    found = capacity.assess(snapshot, report)
    return report_ops.narrowed(report, provider), found


class Answer(typing.NamedTuple):
    """What ``capacity`` says in both command lines."""

    report: object
    capacity: object
    """The :class:`~audit.capacity.Capacity`, of the named provider's tree
    only when one is named."""
    trees: list
    """Its :class:`~audit.capacity.TreeCapacity`, by name: the named
    provider's, else every hypervisor's."""
    flavor: typing.Optional[ListedFlavor] = None
    resources: typing.Optional[dict] = None
    """What a server of ``flavor`` asks Placement for."""
    rows: typing.Optional[list] = None
    """:func:`fit`'s rows for ``flavor``."""
    counts: typing.Optional[dict] = None


def answer(clients, settings, progress=NO_PROGRESS, provider=None,
           flavor=None):
    """The :class:`Answer` of the cloud read now: capacity per tree (of
    ``provider``'s only, a uuid or a name), and whether ``flavor`` (an id
    or a name) fits each.  The flavor is looked up before the cloud is
    read: :class:`NoSuchFlavor`, :class:`~audit.server_needs.CannotHeal`
    for one whose request a flavor alone cannot say;
    :class:`~operations.report.NoSuchProvider`; :class:`NoInventories`."""
    listed = resources = None
    if flavor:
        listed = find_flavor(flavors(clients), flavor)
        resources = server_needs.resources_from_flavor(listed.flavor)
    report, found = audit(clients, settings, progress)
    if found is None:
        raise NoInventories()
    trees = sorted(found.trees.values(), key=lambda t: t.name)
    if provider:
        wanted = provider.lower()
        trees = [t for t in trees if wanted in (t.root, t.name.lower())]
        if not trees:
            raise report_ops.NoSuchProvider(provider)
        found = dataclasses.replace(found, trees={t.root: t for t in trees})
    else:
        trees = [t for t in trees if t.compute_node]
    if resources is None:
        return Answer(report, found, trees)
    rows, counts = fit(found, resources)
    return Answer(report, found, trees, listed, resources, rows, counts)


def flavor_counts(clients, capacity_, names):
    """``{flavor name: {state: hypervisors}}`` of the flavors ``names``
    that Nova lists (the others are left out, with a warning) and whose
    request a flavor can say."""
    if not names or capacity_ is None:
        return {}
    try:
        listed = flavors(clients)
    except Exception as exc:
        LOG.warning('Nova did not list its flavors (%s): no flavor is in '
                    'the metrics', exc)
        return {}
    counts = {}
    for name in names:
        try:
            resources = server_needs.resources_from_flavor(
                find_flavor(listed, name).flavor)
        except (NoSuchFlavor, server_needs.CannotHeal) as exc:
            LOG.warning('flavor %s is left out of the metrics: %s', name,
                        exc)
            continue
        counts[name] = fit(capacity_, resources)[1]
    return counts


def fit(capacity_, resources):
    """``(rows, counts)``: one dict per provider tree (its name, uuid,
    state, why nothing fits there whatever its capacity, and the repairs
    that would make room, each with its server's and provider's names
    beside their ids), fits after repair first, then by state and name;
    ``{state: trees}`` of every state."""
    fits = capacity_.fit(resources)
    fits.sort(key=lambda f: (FIT_STATES.index(f.state) != 1,
                             FIT_STATES.index(f.state), f.name))
    rows = [{'hypervisor': f.name, 'provider': f.root, 'state': f.state,
             'why': f.why,
             'repairs': [{'consumer': r.consumer, 'instance': r.instance,
                          'server_name': r.server_name,
                          'provider': r.provider,
                          'provider_name': r.provider_name,
                          'action': r.action, 'verdict': r.verdict,
                          'frees': dict(r.freed)} for r in f.repairs]}
            for f in fits]
    return rows, capacity.count(fits)


def repair_subject(repair):
    """What one of :func:`fit`'s repairs acts on, by name where Nova has
    one (:func:`~audit.capacity.subject`)."""
    return capacity.subject(repair['consumer'], repair.get('instance'),
                            repair.get('server_name'))


def projects(clients, capacity_, settings):
    """:class:`~audit.capacity.ProjectRow` of every project whose findings
    hold something, worst first, with its Placement usage and limits read
    now."""
    charged = capacity_.charged()
    usages = project_usages(clients.placement, charged,
                            settings.concurrency)
    limit = limits(clients.identity, clients.nova)
    return capacity.project_rows(capacity_, usages,
                                 {p: limit(p) for p in charged})


def project_names(clients):
    """``{project id: name}`` from Keystone, empty where it will not say."""
    return collect.owner_names(clients.identity)['projects']


def _listed_flavors(nova_client):
    """``[(id, Flavor)]`` of every flavor Nova lists (public and
    private)."""
    return [(body['id'], parse.listed_flavor(body))
            for body in nova.flavor_list(nova_client)]


def project_usages(placement_client, projects, concurrency):
    """``{project: {class: used}}`` from Placement, ``concurrency`` read
    at a time."""
    return collect.concurrently(
        lambda p: placement.project_usages(placement_client, p),
        projects, concurrency)


def compute_scope(catalog, compute_url):
    """``(service id, region id)`` whose unified limits Nova enforces: the
    catalog's compute endpoint at ``compute_url`` (the one these clients
    call), as Nova's ``oslo.limit`` is pointed at its own endpoint; else
    the only compute service and region the catalog has.  None when the
    catalog does not tell them apart."""
    services = [s for s in catalog if s.get('type') == 'compute']
    wanted = (compute_url or '').rstrip('/')
    for service in services:
        for endpoint in service.get('endpoints', ()):
            if (endpoint.get('url') or '').rstrip('/') == wanted:
                return service['id'], endpoint.get('region_id')
    scopes = {(s['id'], e.get('region_id'))
              for s in services for e in s.get('endpoints', ())}
    return scopes.pop() if len(scopes) == 1 else None


def limits(identity_client, nova_client):
    """``{project: {class: limit}}`` getter from Keystone's unified limits
    of this cloud's compute service and region (:func:`compute_scope`),
    registered limits as every project's default; none where Keystone has
    none, or will not say (no endpoint, no permission, too old, no compute
    endpoint it can tell)."""
    if identity_client is None:
        return lambda project: {}
    try:
        compute_url = nova_client.get_endpoint()
        scope = compute_scope(keystone.catalog(identity_client),
                              compute_url)
        if scope is None:
            LOG.warning('the catalog names no compute endpoint at %s: '
                        'no limits are shown', compute_url)
            return lambda project: {}
        defaults, per_project = keystone.class_limits(identity_client,
                                                      *scope)
    except Exception as exc:
        LOG.warning('Keystone gave no limits (%s): none are shown', exc)
        return lambda project: {}
    if per_project is None:
        return lambda project: dict(defaults, **_project_limits(
            identity_client, project, scope))
    return lambda project: dict(defaults, **per_project.get(project, {}))


def _project_limits(identity_client, project, scope):
    """One project's own limits, asked alone; none where Keystone will
    not say."""
    try:
        return keystone.project_class_limits(identity_client, project,
                                             *scope)
    except Exception as exc:
        LOG.warning('Keystone gave no limits of project %s (%s)', project,
                    exc)
        return {}
