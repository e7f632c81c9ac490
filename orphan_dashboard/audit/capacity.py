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

"""What the orphans cost in capacity, counted as Placement counts it
(pure).

A provider's capacity for a class is ``(total - reserved) *
allocation_ratio``; an amount fits it when it adds to what is used without
passing that capacity and respects ``min_unit``, ``max_unit`` and
``step_size``.  A request fits a provider tree when each of its classes
fits one provider of the tree, as the unnumbered group of ``GET
/allocation_candidates`` is satisfied (traits, aggregates and sharing
providers are out of scope).  "After repair" is the usage the recommended
repairs (:func:`plan.recommended`, each written as :func:`plan.target`
says) leave.
"""

import dataclasses
import datetime
import math
import typing

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan
from orphan_dashboard.audit import ports
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit import server_needs
from orphan_dashboard.audit import topology as t

N_ = m.N_

FITS_NOW = 'fits_now'
FITS_AFTER_REPAIR = 'fits_after_repair'
DOES_NOT_FIT = 'does_not_fit'


@dataclasses.dataclass(frozen=True)
class FitKind:
    """One answer to "would it fit?", declared as :class:`model.VerdictKind`
    declares a verdict: its label and its name in a sentence together."""

    code: str
    title: str
    """Its label, ``N_``-marked: translated where shown."""
    name: str
    """Its name inside a line of text, ``N_``-marked."""


FIT_KINDS = {kind.code: kind for kind in (
    FitKind(FITS_NOW, N_('Fits now'), N_('fits now')),
    FitKind(FITS_AFTER_REPAIR, N_('Fits after the recommended repairs'),
            N_('fits after repair')),
    FitKind(DOES_NOT_FIT, N_('Does not fit'), N_('does not fit')),
)}
"""Every answer to "would it fit?", best first."""

MAX_INT = 2147483647
"""Placement's default ``max_unit``."""


@dataclasses.dataclass(frozen=True, slots=True)
class Inventory:
    """One class of one provider, as ``GET .../inventories`` gives it."""

    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = MAX_INT
    step_size: int = 1
    allocation_ratio: float = 1.0

    @classmethod
    def from_placement(cls, body):
        return cls(**{f.name: body[f.name] for f in dataclasses.fields(cls)
                      if body.get(f.name) is not None})

    @property
    def capacity(self):
        """What may be allocated in all; the reserved part is never
        schedulable."""
        return max(0, math.floor((self.total - self.reserved) *
                                 self.allocation_ratio))

    def admits(self, amount):
        """Whether one allocation of ``amount`` respects the unit limits."""
        return (self.min_unit <= amount <= self.max_unit and
                amount % max(self.step_size, 1) == 0)


@dataclasses.dataclass(frozen=True, slots=True)
class ClassCapacity:
    """One resource class of one provider tree."""

    resource_class: str
    capacity: int
    used: int
    needed: int
    """What the live servers there need (the report's ``needed``)."""
    held: int
    """What findings hold that nothing needs
    (:attr:`~model.Finding.unneeded`)."""
    free_after: int
    """Free once the recommended repairs are written."""

    @property
    def free(self):
        return self.capacity - self.used


@dataclasses.dataclass(frozen=True, slots=True)
class Repair:
    """A recommended repair that changes what a tree holds."""

    consumer: str
    provider: str
    """The finding's row: where the repair is previewed."""
    action: str
    verdict: str
    freed: m.Resources
    """What it frees on the tree, per class (negative where it adds)."""
    instance: typing.Optional[str] = None
    """The server: the consumer itself, or the migration's instance."""
    server_name: typing.Optional[str] = None
    """That server's name, where Nova still has it."""
    provider_name: typing.Optional[str] = None


def subject(consumer, instance, server_name):
    """What a repair acts on, as an operator knows it: ``server web-1
    (uuid)``, ``migration uuid of server web-1``, else the consumer's
    uuid alone (a deleted server, a consumer Nova does not know)."""
    if not server_name:
        return consumer
    if instance and instance != consumer:
        return reasons.reason('capacity.migration', migration=consumer,
                              server=server_name)
    return reasons.reason('capacity.server', server=reasons.named(
        consumer, {consumer: server_name}))


@dataclasses.dataclass(frozen=True)
class Fit:
    """The answer for one tree and one request."""

    root: str
    name: str
    state: str
    repairs: tuple = ()
    """The repairs that free what the request needs, when only they make
    it fit."""
    why: typing.Optional[reasons.Reason] = None
    """Why nothing fits there whatever its capacity (:func:`closed`)."""


@dataclasses.dataclass(slots=True)
class TreeCapacity:
    """One provider tree: per class, and per provider for the fit test."""

    root: str
    name: str
    classes: tuple
    """:class:`ClassCapacity` per class, standard classes first."""
    slots: dict
    """``{provider: {class: (Inventory, free now, free after)}}``."""
    repairs: tuple = ()
    hypervisor: bool = True
    """A compute node Nova lists."""
    compute_node: bool = True
    """A hypervisor's tree, listed or not
    (:attr:`~report.ProviderReport.compute_node`): another service's root
    is none."""
    closed: typing.Optional[reasons.Reason] = None
    """Why Nova schedules no server there (:func:`closed`), if so."""

    @property
    def held(self):
        return {c.resource_class: c.held for c in self.classes if c.held}

    def fits(self, request, after=False):
        """Each class of ``request`` fits one provider of the tree."""
        index = 2 if after else 1
        return all(any(rc in slots and slots[rc][0].admits(amount) and
                       slots[rc][index] >= amount
                       for slots in self.slots.values())
                   for rc, amount in request.items())

    def fit(self, request):
        """:class:`Fit` of ``request`` here."""
        if self.closed is not None:
            return Fit(self.root, self.name, DOES_NOT_FIT, why=self.closed)
        if self.fits(request):
            return Fit(self.root, self.name, FITS_NOW)
        if self.fits(request, after=True):
            return Fit(self.root, self.name, FITS_AFTER_REPAIR, tuple(
                r for r in self.repairs
                if any(r.freed.get(rc, 0) > 0 for rc in request)))
        return Fit(self.root, self.name, DOES_NOT_FIT,
                   why=self.shortfall(request))

    def shortfall(self, request):
        """Why ``request`` fits no provider here even after the
        recommended repairs, class by class (the standard classes first):
        a class the tree has no inventory of, an amount outside every
        provider's unit limits, or how much is missing on the provider
        with the most free."""
        short = []
        for rc in sorted(request, key=class_order):
            amount = request[rc]
            offered = [slots[rc] for slots in self.slots.values()
                       if rc in slots]
            if not offered:
                short.append(reasons.reason(
                    'capacity.no_class', resource_class=rc))
                continue
            admitting = [free for inventory, _now, free in offered
                         if inventory.admits(amount)]
            if not admitting:
                inventory = offered[0][0]
                short.append(reasons.reason(
                    'capacity.unit', resource_class=rc, amount=amount,
                    min=inventory.min_unit, max=inventory.max_unit,
                    step=inventory.step_size))
                continue
            free = max(max(admitting), 0)
            if free < amount:
                short.append(reasons.reason(
                    'capacity.short', resource_class=rc, amount=amount,
                    short=amount - free, free=free))
        return reasons.sentences(short) if short else None


@dataclasses.dataclass(frozen=True, slots=True)
class ProjectCost:
    """What one project's findings hold, against what its servers need."""

    held: m.Resources
    needed: m.Resources
    freed: m.Resources = dataclasses.field(default_factory=dict)
    """What the recommended repairs of its consumers free, net (a heal
    takes some back): the quota it regains where Nova counts from
    Placement."""


@dataclasses.dataclass(frozen=True)
class ProjectRow:
    """One project charged by findings: Placement's usage (what quota
    counts where Nova counts from Placement) against its servers' needs
    and its limits."""

    project: str
    held: m.Resources
    needed: m.Resources
    usage: m.Resources
    limits: m.Resources
    """Keystone's limit per class, where it has one."""
    freed: m.Resources = dataclasses.field(default_factory=dict)
    """As :attr:`ProjectCost.freed`."""

    def headroom(self, rc):
        """What the project may still take of ``rc`` under its limit now;
        None without a limit."""
        limit = self.limits.get(rc)
        return None if limit is None else limit - self.usage.get(rc, 0)

    def headroom_after(self, rc):
        """:meth:`headroom` once the recommended repairs are done."""
        now = self.headroom(rc)
        return None if now is None else now + self.freed.get(rc, 0)

    @property
    def worst(self):
        """The largest share of a limit (else of the usage) findings
        hold: how much of its quota the orphans eat."""
        shares = [0]
        for rc, held in self.held.items():
            whole = self.limits.get(rc) or self.usage.get(rc) or held
            shares.append(held / max(whole, 1))
        return max(shares)


@dataclasses.dataclass(slots=True)
class Capacity:
    """Every provider tree with inventories, sharing providers aside."""

    trees: dict
    """``{root uuid: TreeCapacity}``."""
    projects: dict = dataclasses.field(default_factory=dict)
    """``{project id: ProjectCost}`` of every project with live servers or
    findings."""
    taken_at: typing.Optional[datetime.datetime] = None
    """When the one snapshot every number of it comes from was taken."""

    def charged(self):
        """The projects whose findings hold something, or whose quota the
        recommended repairs change."""
        return sorted(p for p, cost in self.projects.items()
                      if cost.held or cost.freed)

    def held(self):
        """``{class: amount}`` held by findings, cloud-wide."""
        totals = {}
        for tree in self.trees.values():
            _add(totals, tree.held)
        return dict(sorted(totals.items(), key=lambda i: class_order(i[0])))

    def affected(self):
        """How many hypervisors' trees hold resources for findings."""
        return sum(1 for tree in self.trees.values()
                   if tree.compute_node and tree.held)

    def fit(self, request):
        """:class:`Fit` per compute node Nova lists, by name: only they can
        host a server (a routed network's segment, a dead node's leftover
        provider, another service's root are not asked)."""
        return sorted((tree.fit(request) for tree in self.trees.values()
                       if tree.hypervisor), key=lambda f: f.name)


def count(fits):
    """``{state: trees}`` for every state, best first."""
    counts = dict.fromkeys(FIT_KINDS, 0)
    for fit in fits:
        counts[fit.state] += 1
    return counts


STANDARD = ('VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB')


def class_order(rc):
    """Standard classes first, in their usual order, then the others
    (custom ones included) by name."""
    return (STANDARD.index(rc) if rc in STANDARD else len(STANDARD), rc)


def _add(totals, resources, sign=1):
    for rc, amount in resources.items():
        totals[rc] = totals.get(rc, 0) + sign * amount


def usage_by_provider(snapshot):
    """``{provider: {class: amount}}`` every consumer holds."""
    usage = {}
    for consumer in snapshot.consumers.values():
        for provider, resources in consumer.allocations.items():
            _add(usage.setdefault(provider, {}), resources)
    return usage


def repair_changes(snapshot, findings, topo=None):
    """``[(finding, action, {provider: {class: freed}})]`` for each
    recommended repair of ``findings``: what its write frees."""
    topo = topo or t.Topology(snapshot)
    by_consumer = {}
    for finding in findings:
        by_consumer.setdefault(finding.consumer, []).append(finding)
    changes = []
    for finding, action in plan.recommended(findings):
        consumer = snapshot.consumers.get(finding.consumer)
        before = consumer.allocations if consumer else {}
        try:
            after = plan.target(
                snapshot, topo, finding.consumer, action,
                plan.protected_rows(by_consumer[finding.consumer])).after
        except plan.CannotRepair:
            continue
        changes.append((finding, action, freed(before, after)))
    return changes


def freed(before, after):
    """``{provider: {class: amount}}`` a write from ``before`` to
    ``after`` (a consumer's allocations) takes off each provider it
    changes; negative where it adds."""
    found = {}
    for provider in set(before) | set(after):
        delta = dict(before.get(provider, {}))
        _add(delta, after.get(provider, {}), -1)
        delta = {rc: n for rc, n in delta.items() if n}
        if delta:
            found[provider] = delta
    return found


def project_costs(snapshot, findings, topo, changes):
    """``{project: ProjectCost}``: what each project's findings hold that
    nothing needs, what the recommended repairs free (``changes`` as
    :func:`repair_changes` returns them), and what its live servers need:
    their flavor and image (as the audit reads them) and what their ports
    request (:func:`ports.requested`, as the hypervisors' ``needed``
    counts it)."""
    held, needed, freed = {}, {}, {}
    for finding in findings:
        if finding.unneeded and finding.project_id:
            _add(held.setdefault(finding.project_id, {}), finding.unneeded)
    for finding, _action, by_provider in changes:
        if finding.project_id:
            for delta in by_provider.values():
                _add(freed.setdefault(finding.project_id, {}), delta)
    for server in snapshot.servers.values():
        if not server.project_id:
            continue
        if server.flavor is not None:
            try:
                candidates = server_needs.expected_resources(server)
            except server_needs.CannotHeal:
                candidates = ()
            if candidates:
                _add(needed.setdefault(server.project_id, {}),
                     candidates[0])
        for requested in ports.requested(topo, server).wanted.values():
            _add(needed.setdefault(server.project_id, {}), requested)
    freed = {p: {rc: n for rc, n in f.items() if n}
             for p, f in freed.items()}
    return {p: ProjectCost(held.get(p, {}), needed.get(p, {}),
                           freed.get(p, {}))
            for p in set(held) | set(needed) | set(freed)}


def project_rows(capacity, usages, limits):
    """:class:`ProjectRow` of every project :meth:`Capacity.charged`,
    worst first; ``usages`` and ``limits`` are ``{project: {class:
    amount}}`` (a project missing from them has none)."""
    rows = [ProjectRow(p, dict(capacity.projects[p].held),
                       dict(capacity.projects[p].needed),
                       dict(usages.get(p) or {}), dict(limits.get(p) or {}),
                       dict(capacity.projects[p].freed))
            for p in capacity.charged()]
    rows.sort(key=lambda r: (-r.worst, r.project))
    return rows


def assess(snapshot, report):
    """:class:`Capacity` of ``snapshot`` judged as ``report`` (the full
    report of the same snapshot); None when the snapshot has no
    inventories (it predates them)."""
    if snapshot.inventories is None:
        return None
    topo = t.Topology(snapshot)
    usage = usage_by_provider(snapshot)
    after = {p: dict(r) for p, r in usage.items()}
    repairs = {}
    changes = repair_changes(snapshot, report.findings, topo)
    for finding, action, freed in changes:
        by_root = {}
        for provider, delta in freed.items():
            _add(after.setdefault(provider, {}), delta, -1)
            _add(by_root.setdefault(topo.root(provider), {}), delta)
        server = snapshot.servers.get(finding.instance)
        provider = snapshot.providers.get(finding.provider)
        for root, delta in by_root.items():
            repairs.setdefault(root, []).append(Repair(
                finding.consumer, finding.provider, action, finding.verdict,
                delta, finding.instance, server and server.name or None,
                provider and provider.name))
    trees = {}
    for provider_report in report.providers:
        root = provider_report.provider.uuid
        if provider_report.sharing:
            continue
        tree = [p for p in topo.tree(root) if p in snapshot.inventories]
        if not tree:
            continue
        trees[root] = _tree(snapshot, provider_report, tree, usage, after,
                            repairs.get(root, ()))
    return Capacity(trees, project_costs(snapshot, report.findings, topo,
                                         changes),
                    taken_at=snapshot.taken_at)


def closed(snapshot, hypervisor):
    """Why Nova's scheduler places no new server on ``hypervisor``'s node
    (its compute service forced down, reported down or disabled, which
    the scheduler's ``ComputeFilter`` refuses) while Placement would
    still offer its capacity; None when it may, or for no compute node."""
    if hypervisor is None:
        return None
    service = snapshot.services.get(hypervisor.host)
    if service is not None and service.forced_down:
        return reasons.reason('capacity.forced_down')
    if (service.down if service is not None else hypervisor.down):
        return reasons.reason('capacity.service_down')
    if (service.status if service is not None else
            hypervisor.status) == 'disabled':
        return reasons.reason('capacity.disabled')
    return None


def _tree(snapshot, provider_report, tree, usage, after, repairs):
    held = {}
    for finding in provider_report.findings:
        _add(held, finding.unneeded)
    slots, totals = {}, {}
    for provider in tree:
        for rc, body in snapshot.inventories[provider].items():
            inventory = Inventory.from_placement(body)
            used = usage.get(provider, {}).get(rc, 0)
            left = after.get(provider, {}).get(rc, 0)
            slots.setdefault(provider, {})[rc] = (
                inventory, inventory.capacity - used,
                inventory.capacity - left)
            sums = totals.setdefault(rc, [0, 0, 0])
            sums[0] += inventory.capacity
            sums[1] += used
            sums[2] += left
    classes = tuple(
        ClassCapacity(rc, capacity, used,
                      provider_report.needed.get(rc, 0), held.get(rc, 0),
                      capacity - left)
        for rc, (capacity, used, left) in sorted(
            totals.items(), key=lambda i: class_order(i[0])))
    return TreeCapacity(
        root=provider_report.provider.uuid,
        name=provider_report.provider.name, classes=classes, slots=slots,
        repairs=tuple(repairs),
        hypervisor=provider_report.hypervisor is not None,
        compute_node=provider_report.compute_node,
        closed=closed(snapshot, provider_report.hypervisor))


@dataclasses.dataclass(frozen=True, slots=True)
class Excess:
    """A class a write leaves over its provider's capacity."""

    provider: str
    resource_class: str
    after: int
    """What every consumer holds of it once the write is done."""
    now: int
    capacity: int

    @property
    def worse(self):
        """The write adds to the excess: every Placement refuses it."""
        return self.after > self.now


def excesses(plan, inventories, usages):
    """:class:`Excess` of each class ``plan``'s write (every consumer it
    changes) leaves over capacity, on the providers it writes onto.

    Placement checks, for each provider and class the write allocates,
    what every consumer holds once it is done against the capacity (a
    trim's remainder included); what the write no longer allocates there
    is not checked, and a delete never is.  ``inventories`` and ``usages``
    are ``{provider: {class: ...}}`` as read just now (``GET
    .../inventories``' body, an amount); a provider without them is not
    judged."""
    written, taken_off = {}, {}
    for before, after in plan.sides:
        for provider, resources in after.items():
            written.setdefault(provider, set()).update(resources)
        for provider, delta in freed(before, after).items():
            _add(taken_off.setdefault(provider, {}), delta)
    found = []
    for provider, classes in sorted(written.items()):
        inventory = inventories.get(provider)
        used = usages.get(provider)
        if inventory is None or used is None:
            continue
        for rc in sorted(classes, key=class_order):
            if rc not in inventory:
                continue
            now = used.get(rc, 0)
            after = now - taken_off.get(provider, {}).get(rc, 0)
            whole = Inventory.from_placement(inventory[rc]).capacity
            if after > whole:
                found.append(Excess(provider, rc, after, now, whole))
    return tuple(found)


NOT_WORSE_RELEASE = (14,)
"""Placement 14.0.0 (2025.2) takes a write onto a provider over capacity
that does not make it worse (bug 2104040); older ones refuse any."""
NOT_WORSE_SERIES = (2025, 2)
LAST_MICROVERSION = (1, 39)
"""The newest microversion (Placement 7.0.0, Yoga, and every release
since): a Placement whose newest is older predates 14.0.0."""


def release_refuses_excess(release, max_microversion=None):
    """Whether this Placement refuses a write that leaves a provider over
    capacity but no worse: True, False, or None (unknown).

    ``release`` is a setting's ``14.0.0`` or ``2025.2`` (Placement's API
    says neither); ``max_microversion`` what ``GET /`` answered, which
    tells only releases before Yoga apart."""
    if release:
        try:
            numbers = tuple(int(part) for part in str(release).split('.'))
        except ValueError:
            numbers = ()
        if numbers:
            if numbers[0] >= 2000:
                return numbers < NOT_WORSE_SERIES
            return numbers < NOT_WORSE_RELEASE
    if max_microversion is not None and max_microversion < LAST_MICROVERSION:
        return True
    return None


def excess_notes(found, refuses, names):
    """What a preview says of a write's :func:`excesses`: that every
    Placement refuses it where it adds to an excess; that this one does,
    or may (``refuses`` None), where it leaves one no worse; nothing when
    this Placement takes it (14.0.0 and newer).  ``names``: ``{provider
    uuid: name}``."""
    notes = []
    for excess in found:
        params = dict(provider=reasons.named(excess.provider, names),
                      resource_class=excess.resource_class,
                      after=excess.after, now=excess.now,
                      capacity=excess.capacity)
        if excess.worse:
            notes.append(reasons.reason('capacity.excess_worse', **params))
        elif refuses:
            notes.append(reasons.reason('capacity.excess_refused', **params))
        elif refuses is None:
            notes.append(reasons.reason('capacity.excess_unknown', **params))
    return tuple(notes)
