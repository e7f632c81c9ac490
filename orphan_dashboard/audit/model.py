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

"""Plain data the audit engine works on: no Django, no HTTP.

The collector (I/O) fills a :class:`Snapshot`; the engine turns it into
findings gathered in a :class:`~report.Report`; the planner turns a
finding into a :class:`Plan`.  Every class here is built from JSON-able
values so a snapshot can be cached and a plan can round-trip through a
form.
"""

import dataclasses
import datetime
import typing

Resources = dict[str, int]
"""``{resource class: amount}``."""

ByProvider = dict[str, Resources]
"""``{provider uuid: {resource class: amount}}``: one consumer's
allocations."""


def N_(message):
    """Mark ``message`` for extraction; it is translated where shown."""
    return message


# Verdicts.
OK = 'ok'
EVACUATED_SOURCE = 'evacuated_source'
MOVED = 'moved'
DELETED_INSTANCE = 'deleted_instance'
SHELVED_OFFLOADED = 'shelved_offloaded'
STALE_MIGRATION = 'stale_migration'
STUCK_MIGRATION = 'stuck_migration'
MISSING = 'missing'
WRONG_AMOUNT = 'wrong_amount'
INCOMPLETE_CONSUMER = 'incomplete_consumer'
LEAKED_PORT = 'leaked_port'
PROTECTED = 'protected'
UNKNOWN_CONSUMER = 'unknown_consumer'

# Actions: the repairs a finding offers, then the other writes.
TRIM = 'trim'
DELETE_AND_HEAL = 'delete_and_heal'
DELETE = 'delete'
HEAL = 'heal'
SET_OWNER = 'set_owner'
RELEASE = 'release'
"""Remove what no port requests from a NIC provider, nothing else."""
MOVE_BACK = 'move_back'
"""Give a server back the allocation its stuck migration's consumer holds
on the host it runs on, and empty that consumer, in one write: what Nova's
``revert_allocation_for_migration`` would have written."""
RESTORE = 'restore'
"""Put a journaled consumer (or provider) back as it was before."""
DELETE_PROVIDER = 'delete_provider'
"""Delete a resource provider nothing uses any more."""
DELETE_SERVICE = 'delete_service'
"""Delete a dead hypervisor's compute service (never restored)."""

# How a finding counts in its provider's ``needed``.
AS_HELD = 'as_held'
"""What it holds is what it needs."""
FROM_FLAVOR = 'from_flavor'
"""Its server's flavor says what it needs (its ports, on a port
provider)."""
FROM_PORTS = 'from_ports'
"""Its server's ports say what it needs there; its resources are what it
holds beyond, which nothing needs."""


@dataclasses.dataclass(frozen=True)
class VerdictKind:
    """All the engine declares of one verdict: the reasons, the labels, the
    report and the planner read it from :data:`VERDICT_KINDS`; its rules,
    in the order they are tried, are :data:`.rules.STAGES`."""

    code: str
    title: str
    """Its label, ``N_``-marked: translated where shown."""
    name: str
    """Its name inside a sentence, ``N_``-marked."""
    actions: tuple = ()
    """The repairs it may offer, recommended first.  A finding offers only
    those whose write leaves the whole consumer ``ok``
    (:meth:`classify.Auditor.consumer_findings`)."""
    recommended: bool = True
    """False where its repairs may only be an explicit per-row choice."""
    needed: typing.Optional[str] = None
    """:data:`AS_HELD`, :data:`FROM_FLAVOR`, or None: what it adds to its
    provider's ``needed``."""
    holds: bool = True
    """False where the finding's resources are what it lacks, not what it
    holds: it is then no consumer of the provider."""
    problem: bool = True
    """The allocation may need a repair."""


@dataclasses.dataclass(frozen=True)
class ActionKind:
    """All the engine declares of one action (see :class:`VerdictKind`)."""

    code: str
    title: str
    """Its label, ``N_``-marked: translated where shown."""
    name: str
    """Its name inside a sentence, ``N_``-marked."""
    priority: typing.Optional[int] = None
    """Rank among the repairs a finding offers, least invasive first (every
    offered repair puts the whole consumer right, so the one that rewrites
    least is recommended); None for a write no finding offers."""


VERDICT_KINDS = {kind.code: kind for kind in (
    # In the order of how much an operator should care.
    VerdictKind(EVACUATED_SOURCE, N_('Evacuated source'),
                N_('evacuated source'), (TRIM, DELETE_AND_HEAL)),
    VerdictKind(MOVED, N_('Moved'), N_('moved'), (TRIM, DELETE_AND_HEAL)),
    VerdictKind(DELETED_INSTANCE, N_('Deleted instance'),
                N_('deleted instance'), (DELETE,)),
    VerdictKind(SHELVED_OFFLOADED, N_('Shelved offloaded'),
                N_('shelved offloaded'), (DELETE,)),
    VerdictKind(STALE_MIGRATION, N_('Stale migration'),
                N_('stale migration'), (DELETE,)),
    VerdictKind(STUCK_MIGRATION, N_('Stuck migration'),
                N_('stuck migration'),
                (MOVE_BACK, TRIM, DELETE, DELETE_AND_HEAL)),
    VerdictKind(LEAKED_PORT, N_('Leaked port resources'),
                N_('leaked port resources'), (RELEASE, DELETE_AND_HEAL),
                needed=FROM_PORTS),
    VerdictKind(MISSING, N_('Missing'), N_('missing'),
                (HEAL, DELETE_AND_HEAL), needed=FROM_FLAVOR, holds=False),
    VerdictKind(WRONG_AMOUNT, N_('Wrong amount'), N_('wrong amount'),
                (DELETE_AND_HEAL,), needed=FROM_FLAVOR),
    VerdictKind(INCOMPLETE_CONSUMER, N_('Incomplete consumer'),
                N_('incomplete consumer'), (SET_OWNER,), needed=AS_HELD),
    # An unknown consumer may only be deleted by an explicit choice.
    VerdictKind(UNKNOWN_CONSUMER, N_('Unknown consumer'),
                N_('unknown consumer'), (DELETE,), recommended=False),
    VerdictKind(PROTECTED, N_('Protected'), N_('protected'),
                needed=AS_HELD, problem=False),
    VerdictKind(OK, N_('OK'), N_('ok'), needed=AS_HELD, problem=False),
)}
"""Every verdict, worst first."""

ACTION_KINDS = {kind.code: kind for kind in (
    ActionKind(TRIM, N_('Trim to current host'), N_('trim to current host'),
               priority=1),
    ActionKind(DELETE_AND_HEAL, N_('Delete and heal'), N_('delete and heal'),
               priority=5),
    ActionKind(DELETE, N_('Delete'), N_('delete'), priority=6),
    ActionKind(HEAL, N_('Heal'), N_('heal'), priority=3),
    ActionKind(SET_OWNER, N_('Set project and user'),
               N_('set project and user'), priority=4),
    ActionKind(RELEASE, N_('Release leaked resources'),
               N_('release leaked resources'), priority=2),
    ActionKind(MOVE_BACK, N_('Move back to current host'),
               N_('move back to current host'), priority=7),
    ActionKind(RESTORE, N_('Restore'), N_('restore')),
    ActionKind(DELETE_PROVIDER, N_('Delete provider'), N_('delete provider')),
    ActionKind(DELETE_SERVICE, N_('Delete compute service'),
               N_('delete compute service')),
)}
"""Every action: the repairs a finding offers, then the other writes."""

# Derived from the two registries above: declare nothing below.
VERDICTS = tuple(VERDICT_KINDS)
ACTIONS = tuple(code for code, kind in ACTION_KINDS.items()
                if kind.priority is not None)
PRIORITY = tuple(sorted(ACTIONS, key=lambda code: ACTION_KINDS[code].priority))
"""The repairs, least invasive first."""
CANDIDATE_ACTIONS = {code: kind.actions
                     for code, kind in VERDICT_KINDS.items()}
NOT_RECOMMENDED = frozenset(code for code, kind in VERDICT_KINDS.items()
                            if not kind.recommended)
RECOMMENDED = tuple(code for code, kind in VERDICT_KINDS.items()
                    if kind.recommended and kind.problem and kind.actions)
"""The verdicts a recommended repair puts right (what ``orphan-audit
apply`` repairs), worst first."""
NO_PROBLEM = frozenset(code for code, kind in VERDICT_KINDS.items()
                       if not kind.problem)
NEEDED_AS_HELD = frozenset(code for code, kind in VERDICT_KINDS.items()
                           if kind.needed == AS_HELD)
NEEDED_FROM_FLAVOR = frozenset(code for code, kind in VERDICT_KINDS.items()
                               if kind.needed in (FROM_FLAVOR, FROM_PORTS))
HOLDS_NOTHING = frozenset(code for code, kind in VERDICT_KINDS.items()
                          if not kind.holds)

INCOMPLETE = '00000000-0000-0000-0000-000000000000'
"""Project and user Placement gives consumers written before 1.8
(``[placement] incomplete_consumer_project_id`` / ``_user_id``)."""

# Migration statuses (nova/objects/migration.py and the compute manager).
MIGRATION_FINAL = frozenset({'confirmed', 'reverted', 'completed', 'error',
                             'failed', 'cancelled'})
MIGRATION_IN_PROGRESS = frozenset({
    'accepted', 'queued', 'preparing', 'running', 'pre-migrating',
    'migrating', 'post-migrating', 'finished', 'confirming', 'reverting'})
EVACUATION_DONE = frozenset({'done', 'completed'})
MIGRATION_STUCK_CAN_BE = frozenset({
    'pre-migrating', 'migrating', 'post-migrating', 'preparing', 'running',
    'queued'})
"""The statuses a move a compute crash interrupted is left in for ever
(Nova bug 1836369), besides ``accepted`` for an evacuation: never
``finished`` (a resize awaiting confirmation) nor ``confirming`` or
``reverting``."""
EVACUATION_STUCK_CAN_BE = MIGRATION_STUCK_CAN_BE | {'accepted'}
BUSY_STATUSES = frozenset({'VERIFY_RESIZE', 'MIGRATING', 'RESIZE', 'REBUILD',
                           'BUILD'})
"""A server's statuses while a live operation moves it."""
STUCK_AFTER = 3600
"""Seconds a move must have gone without an update before it is taken for
stuck: ``ORPHAN_AUDIT_STUCK_MIGRATION_AGE``'s default."""
DOWN_CELL_STATUS = 'UNKNOWN'
"""A server's or compute service's status in a cell Nova cannot reach."""
SHELVED_OFFLOADED_STATUS = 'SHELVED_OFFLOADED'
"""A server Nova removed from its host, its allocations with it (the
compute manager's ``_shelve_offload_instance``)."""
ERROR_STATUS = 'ERROR'
"""A server Nova gave up on: one it buried in cell0 shows it."""
SERVICE_DOWN = 'down'
"""The state os-services and os-hypervisors give a dead compute."""


@dataclasses.dataclass(frozen=True, slots=True)
class Provider:
    uuid: str
    name: str
    generation: int
    root_uuid: str
    parent_uuid: typing.Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Flavor:
    vcpus: int
    ram: int
    disk: int
    ephemeral: int = 0
    swap: int = 0
    extra_specs: typing.Optional[dict] = None
    """None when policy hid the extra specs: then amounts are not judged."""
    name: str = ''


@dataclasses.dataclass(frozen=True)
class Server:
    uuid: str
    name: str = ''
    status: str = ''
    host: typing.Optional[str] = None
    node: typing.Optional[str] = None
    task_state: typing.Optional[str] = None
    vm_state: typing.Optional[str] = None
    project_id: typing.Optional[str] = None
    user_id: typing.Optional[str] = None
    flavor: typing.Optional[Flavor] = None
    created: typing.Optional[str] = None
    image_ref: typing.Optional[str] = None
    volumes_attached: int = 0
    image_properties: typing.Optional[dict] = None
    """The ``hw_*`` properties of its image as Nova copied them at boot
    (compute API 2.98's ``image.properties``): what Nova allocated from
    (:mod:`.server_needs`), whatever Glance shows since.  None where Nova
    did not show them (``image_fault`` says why), as for every server
    booted from a volume."""
    image_fault: typing.Optional[str] = None
    """Why its boot image's properties are not known
    (:data:`IMAGE_UNSHOWN`, :data:`IMAGE_VOLUME`, ...); None where they
    are."""
    hidden: tuple = ()
    """The policy rules that hid from us fields Nova has for it (where it
    lives): what they would say is unknown, never None."""

    @property
    def image_unknown(self):
        """The properties of its boot image are not known: what Nova
        allocated for it cannot be told from its flavor alone.  A server
        booted from a volume is such a server: Nova copied its volume's
        image metadata at boot and shows none of it (``image: ""``)."""
        return self.image_properties is None

    @property
    def down_cell(self):
        """A partial record from a cell Nova cannot reach (microversion
        2.69)."""
        return self.status == DOWN_CELL_STATUS and self.flavor is None


@dataclasses.dataclass(frozen=True)
class Migration:
    uuid: str
    instance_uuid: str
    status: str
    migration_type: str
    source_node: typing.Optional[str] = None
    dest_node: typing.Optional[str] = None
    source_compute: typing.Optional[str] = None
    dest_compute: typing.Optional[str] = None
    updated_at: typing.Optional[str] = None
    """When Nova last wrote it (ISO text); None where it did not say."""


@dataclasses.dataclass(frozen=True, slots=True)
class Hypervisor:
    uuid: str
    hostname: str
    host: typing.Optional[str] = None
    state: typing.Optional[str] = None
    status: typing.Optional[str] = None

    @property
    def down(self):
        """Its compute service reports it down."""
        return self.state == SERVICE_DOWN


@dataclasses.dataclass(frozen=True)
class Service:
    host: str
    state: str
    status: str = 'enabled'
    forced_down: bool = False
    uuid: typing.Optional[str] = None

    @property
    def down(self):
        """Dead as far as Nova knows: forced down, or reported down."""
        return self.forced_down or self.state == SERVICE_DOWN


def down_hosts(services):
    """The compute hosts among ``services`` of a cell Nova cannot reach:
    os-services (2.69) lists them from the host mappings with status
    ``UNKNOWN``."""
    return frozenset(s.host for s in services
                     if s.status == DOWN_CELL_STATUS)


@dataclasses.dataclass(frozen=True)
class Port:
    """A Neutron port whose QoS policy makes it request resources."""

    id: str
    name: str = ''
    device_id: str = ''
    """The server it is attached to, if any."""
    host: str = ''
    """``binding:host_id``."""
    requests: dict = dataclasses.field(default_factory=dict)
    """``{request group id: Resources}`` of its ``resource_request``."""
    allocation: dict = dataclasses.field(default_factory=dict)
    """``{request group id: provider uuid}`` of ``binding:profile``'s
    ``allocation``: where Nova placed each group."""
    required: dict = dataclasses.field(default_factory=dict)
    """``{request group id: (trait, ...)}``: the traits each group
    requires of its provider (the physnet, the vnic type)."""
    profile: dict = dataclasses.field(default_factory=dict)
    """``binding:profile`` whole, as a binding write must keep it."""
    revision: typing.Optional[int] = None
    """``revision_number``: a binding write is sent only while it is still
    this one (Neutron's ``If-Match``)."""
    grouped: bool = True
    """Whether the request comes in groups (the allocation a dict by group)
    or as Neutron's older single request (the allocation one uuid)."""

    def allocation_value(self, placed):
        """``binding:profile``'s ``allocation`` placing the groups as
        ``placed`` (``{group: provider}``) says, in this port's format."""
        if self.grouped:
            return dict(placed)
        return placed.get(self.id)


IMAGE_UNSHOWN = 'unshown'
IMAGE_VOLUME = 'volume'
IMAGE_GONE = 'gone'
IMAGE_DOWN = 'down'
IMAGE_FORBIDDEN = 'forbidden'
"""Why the properties of a server's boot image are not known: Nova did
not show them (a listing, or a Nova older than 2.98), it boots from a
volume (Nova never shows the volume's image metadata it copied at boot;
Cinder's can be edited since), the server was deleted before it was
read, Nova did not answer, Nova refused."""

EXTENDED_ATTRIBUTES_RULE = 'os_compute_api:os-extended-server-attributes'
"""The Nova policy rule without which a server's host and node are left
out of its body."""

NEUTRON_READ = 'read'
NEUTRON_ABSENT = 'absent'
NEUTRON_DOWN = 'down'
NEUTRON_FORBIDDEN = 'forbidden'
NEUTRON_HIDDEN = 'hidden'
"""Whether the sweep could read Neutron's ports: read, or why not (its
policy hid a field the audit reads)."""


@dataclasses.dataclass
class Consumer:
    """One consumer's allocations as Placement holds them."""

    uuid: str
    generation: typing.Optional[int]
    allocations: ByProvider
    project_id: typing.Optional[str] = None
    user_id: typing.Optional[str] = None
    modified: typing.Optional[datetime.datetime] = None
    """``Last-Modified`` of ``GET /allocations/{consumer}``: the last write."""


@dataclasses.dataclass
class Snapshot:
    """Everything the audit needs, read at one moment."""

    providers: dict[str, Provider]
    consumers: dict[str, Consumer]
    servers: dict[str, Server]
    migrations: dict[str, Migration]
    hypervisors: dict[str, Hypervisor]
    services: dict[str, Service]
    sharing_providers: frozenset = frozenset()
    known_instances: frozenset = frozenset()
    """Consumers that are not live servers but whose instance actions still
    answer: deleted the Nova way (``deleted=id``, not yet archived) or marked
    deleted by hand (``deleted=1``), which ``deleted=True`` listings miss."""
    unresolved: frozenset = frozenset()
    """Consumers Nova could not be fully asked about (e.g. policy hides
    instance actions): never judged orphaned."""
    taken_at: typing.Optional[datetime.datetime] = None
    full_sweep_at: typing.Optional[datetime.datetime] = None
    """When every provider's allocations were last read (an incremental
    refresh cannot see a ``DELETE /allocations``: it bumps no generation)."""
    hypervisors_listed: bool = True
    """False when Nova's hypervisor listing failed (it does whenever one
    cell is down): ``hypervisors`` then holds only the compute nodes that
    the services, the servers or an earlier snapshot prove."""
    owner_traits: typing.Optional[dict] = None
    """``{provider uuid: frozenset of its OWNER_* traits}`` of the tagged
    providers (``OWNER_NOVA`` current Novas set, ``OWNER_CYBORG``, ...)."""
    inventory_classes: typing.Optional[dict] = None
    """``{provider uuid: resource classes}`` of the root providers with no
    compute node: what decides whose they are (:mod:`.ownership`)."""
    ports: typing.Optional[dict] = None
    """``{port id: Port}``: every port that requests resources, or None
    where Neutron was not read (``neutron`` says why)."""
    neutron: typing.Optional[str] = None
    """:data:`NEUTRON_READ` or why the ports could not be read; None where
    nobody asked (then port allocations are judged as any child's)."""
    inventories: typing.Optional[dict] = None
    """``{provider uuid: {resource class: inventory}}`` as ``GET
    /resource_providers/{uuid}/inventories`` gives them, for capacity
    (:mod:`.capacity`); None in a snapshot that did not read them."""
    nodes_gone: frozenset = frozenset()
    """Root providers whose compute node Nova itself answered 404 for
    (``GET /os-hypervisors/{uuid}``) while every cell answered: the one
    proof that a node is gone, which no listing gives (Nova leaves out of
    its hypervisor listing a host not mapped to a cell yet, and filters a
    page after cutting it)."""
    port_candidates: dict = dataclasses.field(default_factory=dict)
    """``{server uuid: ({request group id: provider uuid}, ...)}``:
    Placement's allocation candidates, in the tree of the server's node,
    for the request groups its ports' bindings place nowhere there
    (:func:`.ports.to_place`), or None where Placement did not answer;
    only servers with such groups appear."""

    migration_hosts: frozenset = frozenset()
    """The hosts whose migrations Nova listed by host
    (``os-migrations?host=``) within its cell timeout, for the hosts of
    the consumers nothing else identifies.  Nova's listings share one
    timer across cells: after a slow cell they drop a healthy cell's later
    records with no marker, so only such a read proves that no migration
    of the host owns a consumer (:meth:`.Topology.migration_host`)."""

    services_wait: float = 0.0
    """Seconds Nova took to list its compute services.  It waits up to
    its ``CELL_TIMEOUT`` (60 s) for each cell: with :attr:`down_hosts`,
    how long a listing waits while their cell stays down or slow."""
    services_timed_out: bool = False
    """That listing ran Nova's cell timer out: with :attr:`down_hosts`,
    their cell is slow (Nova waited for it), not down (refused at
    once)."""

    @property
    def down_hosts(self):
        """Compute hosts of a cell Nova cannot reach (:func:`down_hosts`)."""
        return down_hosts(self.services.values())

    @property
    def down_cells(self):
        """Nova could not read every cell: the audit is partial."""
        return (not self.hypervisors_listed or bool(self.down_hosts) or
                any(s.down_cell for s in self.servers.values()))


@dataclasses.dataclass(frozen=True, slots=True)
class Finding:
    """The verdict on one (consumer, provider) allocation."""

    consumer: str
    provider: str
    verdict: str
    reason: str
    resources: Resources
    actions: tuple = ()
    nova: str = ''
    """What Nova says about the consumer, e.g. "server web1 (ACTIVE)"."""
    host: typing.Optional[str] = None
    """The compute node the server lives on now, if any."""
    instance: typing.Optional[str] = None
    """The server uuid: the consumer itself, or the migration's instance."""
    live: bool = False
    """Nova still has ``instance`` (it is not deleted)."""
    project_id: typing.Optional[str] = None
    """The server's project, else the project Placement records."""
    user_id: typing.Optional[str] = None
    blocked: str = ''
    """Why none of the verdict's repairs can be offered, if so."""
    unneeded: Resources = dataclasses.field(default_factory=dict)
    """What it holds that nothing needs, per class, counted as held by
    findings wherever they are counted: all an orphan or a leak holds,
    what a wrong amount holds beyond its server's need (the auditor
    sets it)."""

    def as_dict(self):
        """JSON-able, its reasons in English with the reason's code: what
        ``orphan-audit --json`` prints and the panel exports."""
        return {
            'consumer': self.consumer, 'provider': self.provider,
            'verdict': self.verdict, 'reason': str(self.reason),
            'reason_code': getattr(self.reason, 'code', None),
            'action': self.action, 'actions': list(self.actions),
            'blocked': str(self.blocked), 'resources': dict(self.resources),
            'nova': str(self.nova), 'host': self.host,
            'instance': self.instance, 'project_id': self.project_id,
            'user_id': self.user_id}

    @property
    def problem(self):
        """Neither ok nor protected: the allocation may need a repair."""
        return self.verdict not in NO_PROBLEM

    @property
    def action(self):
        """The recommended repair, if any."""
        if self.verdict in NOT_RECOMMENDED or not self.actions:
            return None
        return self.actions[0]


@dataclasses.dataclass(frozen=True)
class Selection:
    """One row an operator chose: a consumer, where, and what to do.  Only
    ids: what they stand for is re-read."""

    consumer: str
    provider: str
    action: str


@dataclasses.dataclass(frozen=True)
class Plan:
    """One write: a consumer's allocations before and after a repair."""

    action: str
    consumer: str
    provider: str
    verdict: str
    reason: str
    generation: typing.Optional[int]
    project_id: typing.Optional[str]
    user_id: typing.Optional[str]
    before: ByProvider
    after: ByProvider
    before_project: typing.Optional[str] = None
    before_user: typing.Optional[str] = None
    """The owner before, when the repair changes it (``set_owner``)."""
    ports: dict = dataclasses.field(default_factory=dict)
    """``{port id: {'name', 'revision', 'before', 'after'}}``: the
    ``binding:profile`` of each port that must name its new provider,
    written to Neutron before Placement (as ``heal_allocations`` does) and
    put back if Placement refuses."""
    kept: list = dataclasses.field(default_factory=list)
    """The providers whose rows are protected, which the plan holds exactly
    as read (:func:`~plan.protected_rows`); the preview says so."""
    partner: typing.Optional[dict] = None
    """The other consumer the same write changes (``{'consumer',
    'generation', 'project_id', 'user_id', 'before', 'after'}``), where
    there is one (:data:`MOVE_BACK`): both are sent in one ``POST
    /allocations``, each generation-checked, and journaled each."""

    @property
    def selection(self):
        """The row this plan was made for."""
        return Selection(self.consumer, self.provider, self.action)

    @property
    def consumers(self):
        """Every consumer the write changes."""
        return (self.consumer,) + (
            (self.partner['consumer'],) if self.partner else ())

    @property
    def sides(self):
        """``(before, after)`` of every consumer the write changes, in
        the order of :attr:`consumers`."""
        return ((self.before, self.after),) + (
            ((self.partner['before'], self.partner['after']),)
            if self.partner else ())

    @property
    def changes_owner(self):
        return (self.before_project is not None and
                (self.before_project, self.before_user) !=
                (self.project_id, self.user_id))
