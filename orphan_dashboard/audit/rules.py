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

"""The verdict rules, as a table (pure): :data:`STAGES`.

Each :class:`Rule` gives one verdict of :data:`~model.VERDICT_KINDS` where
it holds for a row (one consumer on one provider) of a :class:`Case`; each
:class:`Stage` names its rows and tries its rules on each in order, the
first that holds deciding the row.  The order of the registry is how much
an operator should care; the order here is what must be ruled out first
(a protection before any verdict that writes), so it is a table of its
own, and ``tests/unit/test_registry.py`` holds the two to each other.
"""

import dataclasses
import functools
import typing

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse
from orphan_dashboard.audit import plan
from orphan_dashboard.audit import ports
from orphan_dashboard.audit.reasons import format_resources
from orphan_dashboard.audit.reasons import image_unread
from orphan_dashboard.audit.reasons import named
from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.audit import server_needs
from orphan_dashboard.audit import stalls

MOVE_AWAITING_CONFIRM = 'finished'
"""A resize or cold migration in VERIFY_RESIZE."""
DOWN_CELL_CONSUMER = 'protected.down_cell_consumer'
"""The reason of a consumer Nova did not say it knows while a cell is
down: it could be the down cell's (a migration's, whose uuid has no
instance mapping to answer for it)."""
MIGRATIONS_UNREAD = 'protected.migrations_unread'
"""The reason of a consumer nothing identifies on a host whose migrations
Nova has not listed whole by host: a migration's could own it."""
IMAGE_UNREAD = 'protected.image_unread'
"""The reason of a server's allocation that what its boot image made Nova
allocate could explain, while Nova has not shown that image."""
YOUNG = 'protected.young_finding'
"""The reason of a problem protected because a write is younger than the
minimum age."""
UNMAPPED = 'protected.unmapped_node'
"""The reason of what a node of a host not mapped to a cell yet holds."""
STUCK_BACK = 'stuck_migration.back'
STUCK_ARRIVED = 'stuck_migration.arrived'
STUCK_EVACUATION = 'stuck_migration.evacuation'
"""The reasons of a stuck move's rows, by the write its side takes."""
TIMED = frozenset({YOUNG, 'protected.moving', 'protected.migration',
                   STUCK_BACK, STUCK_ARRIVED, STUCK_EVACUATION})
"""The reasons the time alone changes: a write younger than the minimum
age, a move that stalls into a stuck migration once old enough, a stuck
move's (they say its age)."""


def _add(totals, resources):
    for rc, amount in resources.items():
        totals[rc] = totals.get(rc, 0) + amount


def _younger(since, auditor):
    """Seconds since ``since`` (a time, or ISO text) if fewer than the
    auditor's minimum age."""
    age = parse.seconds_since(since, auditor.now)
    if age is not None and auditor.min_age and age < auditor.min_age:
        return int(max(age, 0))
    return None


def _move(migration):
    """A migration in words: "resize 1f0e... (host2 → host3)"."""
    return why('move', type=migration.migration_type or 'migration',
               migration=migration.uuid,
               source=(migration.source_compute or migration.source_node or
                       '?'),
               dest=migration.dest_compute or migration.dest_node or '?')


class PortRow(typing.NamedTuple):
    """What a server's ports request on one provider against what it
    holds there."""

    want: dict
    have: dict
    excess: dict
    short: dict
    binds: bool
    """A binding still has to name this provider."""
    args: dict
    """The provider, the ports and the server, as the reasons name them."""


class Case:
    """One consumer being judged: what the rules read of it, each fact
    worked out once, and its rows as the stages so far decided them."""

    def __init__(self, auditor, uuid, held, owner, judge_age):
        self.auditor, self.uuid, self.held, self.owner = (
            auditor, uuid, held, owner)
        self.judge_age = judge_age
        self.snapshot, self.topology = auditor.snapshot, auditor.topology
        self.server = self.snapshot.servers.get(uuid)
        self.migration = self.snapshot.migrations.get(uuid)
        self.root = (self.topology.server_root(self.server)
                     if self.server is not None else None)
        self.judged = {}
        """``{provider: Finding}``: the rows decided so far."""
        self._ports = {}

    # -- the rows a stage judges ---------------------------------------------

    def allocations(self):
        """Each provider it holds something on."""
        return tuple(self.held)

    def server_root(self):
        """Its server's root provider, where it has one and holds
        something there or should: a server whose stuck migration's
        consumer holds its node in its stead is judged by that move's
        rule."""
        if self.root is None or (self.stall is not None and
                                 self.stall.action == m.MOVE_BACK):
            return ()
        return (self.root,)

    def port_rows(self):
        """The port providers of its server's tree, then its root (where
        ports placed nowhere are missing); none while the server or its
        root is protected."""
        root = self.judged.get(self.root)
        if self.root is None or self.protection or self.stall or (
                root is not None and root.verdict == m.PROTECTED):
            return ()
        if self.request is None:
            return self.port_providers
        return self.port_providers + (
            () if self.root in self.port_providers else (self.root,))

    def rows(self):
        """Every row decided so far."""
        return tuple(self.judged)

    # -- what the rules read -------------------------------------------------

    @functools.cached_property
    def described(self):
        return self.auditor.describe(self.uuid)

    @functools.cached_property
    def protection(self):
        """Why its server may not be judged now (busy, moving, out of
        sight), or None."""
        server = self.server
        if server.down_cell:
            return why('protected.down_cell_server')
        if server.hidden:
            return why('protected.hidden', rule=', '.join(server.hidden))
        migration = self.auditor.in_progress.get(server.uuid)
        if server.status == 'VERIFY_RESIZE' or (
                migration is not None and
                migration.status == MOVE_AWAITING_CONFIRM):
            if migration is None:
                return why('protected.resize_awaiting_confirm')
            return why('protected.awaiting_confirm', move=_move(migration))
        if server.task_state:
            return why('protected.task', task=server.task_state)
        if server.status == 'BUILD' or server.vm_state == 'building':
            return why('protected.building')
        if migration is not None and self.stall is None:
            return why('protected.moving', move=_move(migration),
                       status=migration.status)
        return None

    @functools.cached_property
    def stall(self):
        """The :class:`~stalls.Stall` of the move this consumer is a side
        of, where that move is stuck: idle past the auditor's
        ``stuck_after``."""
        stall = stalls.of(self.snapshot, self.topology, self.uuid,
                          {self.uuid: self.held})
        if stall is None or not stalls.stalled(
                stall.migration, self.auditor.now, self.auditor.stuck_after):
            return None
        return stall

    @functools.cached_property
    def in_tree(self):
        """What it holds in its server's tree."""
        return {p: r for p, r in self.held.items()
                if self.topology.legitimate(self.root, p)}

    @functools.cached_property
    def candidates(self):
        return self.auditor.expected(self.server)

    @functools.cached_property
    def totals(self):
        """Its server's tree's allocations summed, where no candidate need
        of its flavor matches them; else None."""
        if not self.in_tree or self.candidates is None or self.protection:
            return None
        totals = {}
        for resources in self.in_tree.values():
            _add(totals, resources)
        for needs in self.candidates:
            judged = set(needs) | set(self.held.get(self.root, {}))
            if all(totals.get(rc, 0) == needs.get(rc, 0) for rc in judged):
                return None
        return totals

    @functools.cached_property
    def fault(self):
        """Why Neutron's ports could not be read, if so."""
        return ports.unreadable(self.snapshot)

    @functools.cached_property
    def request(self):
        """Its server's ports' :class:`~ports.Request`, where Neutron was
        read."""
        if self.fault or not ports.judged(self.snapshot):
            return None
        return ports.requested(self.topology, self.server)

    @functools.cached_property
    def port_providers(self):
        if not self.fault and self.request is None:
            return ()
        tree = self.topology.tree(self.root)
        nics = {p for p in self.held if p in tree and
                ports.is_port_provider(self.topology, p)}
        if self.fault:
            return tuple(sorted(nics))
        return tuple(sorted(nics | set(self.request.wanted)))

    def port(self, provider):
        """The :class:`PortRow` of a port provider its ports were read
        for; None on any other row."""
        if self.request is None or provider not in self.port_providers:
            return None
        if provider not in self._ports:
            request, server = self.request, self.server
            want = request.wanted.get(provider, {})
            have = self.held.get(provider, {})
            names = ', '.join(
                p.name or p.id
                for p in ports.of_server(self.topology, server.uuid)
                if provider in p.allocation.values() or
                provider in request.bindings.get(p.id, {}).values()) or '-'
            self._ports[provider] = PortRow(
                want, have, *ports.difference(have, want),
                any(provider in placed.values()
                    for placed in request.bindings.values()),
                dict(provider=self.topology.name(provider), ports=names,
                     server=server.name or server.uuid))
        return self._ports[provider]

    @functools.cached_property
    def young(self):
        """Why no repair may write it yet, if its age is judged: its last
        write or its server's creation is younger than the minimum age, and
        Nova may still be writing it (a build, a resize, a QoS update, a
        heal).  Every repair writes the whole consumer: this one rule
        protects every verdict that offers one."""
        if not self.judge_age:
            return None
        consumer = self.snapshot.consumers.get(self.uuid)
        min_age = self.auditor.min_age
        age = _younger(consumer and consumer.modified, self.auditor)
        if age is not None:
            return why('protected.young', age=age, min_age=min_age)
        age = _younger(self.server and self.server.created, self.auditor)
        if age is not None:
            return why('protected.young_server', age=age, min_age=min_age)
        return None


@dataclasses.dataclass(frozen=True)
class Rule:
    """One verdict's rule: ``judge(case, provider)`` gives ``(reason,
    resources)`` where it holds, else None."""

    verdict: str
    judge: typing.Callable


@dataclasses.dataclass(frozen=True)
class Stage:
    """The rows ``rows(case)`` names, each decided by the first of
    ``rules`` that holds (a row no rule holds for keeps its finding)."""

    rows: typing.Callable
    rules: tuple


# -- one held allocation ------------------------------------------------------

def _unreachable(case, p):
    """``p``'s tree out of reach: what the consumer holds there, too much
    or nothing (its server's own node, in the server-root stage), is not
    judged."""
    reach = case.auditor.out_of_reach(p)
    if reach is None or _buried(case, reach):
        return None
    return reach, case.held.get(p, {})


def _buried(case, reach):
    """A server Nova shows alone in ``ERROR`` with no host and no task, as
    the conductor's ``_bury_in_cell0`` leaves one whose chosen host had no
    host mapping (it never deletes the scheduler's claim), holding a node
    ``reach`` keeps as a host not mapped to a cell yet: whatever that node
    is, the server runs nowhere, so its allocation is a leftover, judged
    now (:func:`_on_no_node` names both steps)."""
    server = case.server
    return (reach.code == UNMAPPED and server is not None and
            not case.protection and not server.host and not server.node and
            server.status == m.ERROR_STATUS)


def _server_protected(case, p):
    if case.server is None or not case.protection:
        return None
    return case.protection, case.held[p]


def _lives_here(case, p):
    if case.server is None or not case.topology.legitimate(case.root, p):
        return None
    return why('ok.lives_here', server=case.server.name or case.server.uuid,
               host=case.server.node), case.held[p]


def _stuck(case, p):
    """A side of a stuck move that its write changes: the migration's
    consumer, or what the server holds off the node it runs on."""
    stall = case.stall
    if stall is None or case.uuid not in stall.consumers or (
            case.server is not None and
            case.topology.legitimate(case.root, p)):
        return None
    migration, server = stall.migration, stall.server
    seconds = int(parse.seconds_since(migration.updated_at,
                                      case.auditor.now))
    return why({m.MOVE_BACK: STUCK_BACK, m.DELETE: STUCK_ARRIVED,
                m.TRIM: STUCK_EVACUATION}[stall.action],
               move=_move(migration), status=migration.status,
               server=_server_named(case, server.uuid), host=server.node,
               age=seconds, after=case.auditor.stuck_after,
               here=case.topology.name(case.topology.root(p))), case.held[p]


def _node_unknown(case, p):
    if case.server is None or case.root is not None or not case.server.node:
        return None
    return why('protected.no_provider', node=case.server.node), case.held[p]


def _shelved_offloaded(case, p):
    if case.server is None or case.root is not None or \
            case.server.status != m.SHELVED_OFFLOADED_STATUS:
        return None
    return why('shelved_offloaded'), case.held[p]


def _on_no_node(case, p):
    if case.server is None or case.root is not None:
        return None
    reach = case.auditor.out_of_reach(p)
    if reach is not None and _buried(case, reach):
        return why('moved.buried', status=case.server.status,
                   here=case.topology.name(case.topology.root(p)),
                   services=', '.join(case.topology.nodeless_services)), \
            case.held[p]
    return why('moved.no_node', status=case.server.status), case.held[p]


def _evacuated_source(case, p):
    if case.server is None:
        return None
    here = case.topology.provider(case.topology.root(p))
    evacuation = case.auditor.evacuations.get((case.server.uuid, here.name))
    if evacuation is None:
        return None
    return why('evacuated_source', source=here.name, host=case.server.node,
               migration=evacuation.uuid,
               status=evacuation.status), case.held[p]


def _moved(case, p):
    if case.server is None:
        return None
    return why('moved', host=case.server.node), case.held[p]


def _server_named(case, uuid):
    """A server as a reason names it: its name with its uuid beside,
    where Nova still has it."""
    server = case.snapshot.servers.get(uuid)
    return named(uuid, {uuid: server.name} if server else {})


def _stale_migration(case, p):
    migration = case.migration
    if migration is None or migration.status not in m.MIGRATION_FINAL:
        return None
    return why('stale_migration', move=_move(migration),
               server=_server_named(case, migration.instance_uuid),
               status=migration.status), case.held[p]


def _migration_under_way(case, p):
    migration = case.migration
    if migration is None:
        return None
    server = _server_named(case, migration.instance_uuid)
    if migration.status == MOVE_AWAITING_CONFIRM:
        return why('protected.source_awaiting_confirm',
                   move=_move(migration), server=server), case.held[p]
    return why('protected.migration', move=_move(migration), server=server,
               status=migration.status), case.held[p]


def _deleted_instance(case, p):
    """Why a deleted server's allocation is left behind; on a PCI device,
    what its repair may take with it: Nova keeps a device removed from
    ``device_spec`` in Placement only while an allocation holds it (Nova
    bug 2115905), and neither Placement nor Nova's API tells such a device
    from one still listed."""
    if case.uuid not in case.snapshot.known_instances:
        return None
    if case.topology.pci_device(p):
        return why('deleted_instance.pci_device',
                   server=case.uuid), case.held[p]
    return why('deleted_instance', server=case.uuid), case.held[p]


def _unresolved(case, p):
    if case.uuid not in case.snapshot.unresolved:
        return None
    return why('protected.unresolved'), case.held[p]


def _cell_down(case, p):
    if not case.auditor.down_cells:
        return None
    return why(DOWN_CELL_CONSUMER), case.held[p]


def _migrations_unread(case, p):
    host = case.topology.migration_host(p)
    if host in case.snapshot.migration_hosts:
        return None
    return why(MIGRATIONS_UNREAD, host=host), case.held[p]


def _unknown_consumer(case, p):
    return why('unknown_consumer'), case.held[p]


# -- its server's whole picture, on the server's root -------------------------

def _holds_nothing_protected(case, root):
    if case.in_tree or not case.protection:
        return None
    return (why('protected.holds_nothing', protection=case.protection),
            case.candidates[0] if case.candidates else {})


def _missing(case, root):
    if case.in_tree:
        return None
    reason = why('missing', host=case.server.node)
    if case.held:
        names = sorted({case.topology.name(case.topology.root(p))
                        for p in case.held})
        reason = why('missing.elsewhere', host=case.server.node,
                     elsewhere=', '.join(names))
    return reason, case.candidates[0] if case.candidates else {}


def _image_unread(case, root):
    totals = case.totals
    if totals is None or not any(
            server_needs.explained_by_image(case.server, totals, needs)
            for needs in case.candidates):
        return None
    return why(IMAGE_UNREAD, held=format_resources(totals),
               flavor=case.server.flavor.name,
               needs=format_resources(case.candidates[0]),
               why=image_unread(case.server)), case.held.get(root, {})


def _wrong_amount(case, root):
    if case.totals is None:
        return None
    return why('wrong_amount', held=format_resources(case.totals),
               flavor=case.server.flavor.name,
               needs=format_resources(case.candidates[0])), \
        case.held.get(root, {})


# -- what its server's ports request ------------------------------------------

def _unplaced(case, p):
    """Ports whose request nothing in the tree can take: missing on the
    root, unless the root was found wrong already."""
    root = case.judged.get(case.root)
    if p != case.root or case.request is None or \
            not case.request.unplaced or \
            root is not None and root.verdict != m.OK:
        return None
    requests, names = {}, set()
    for port in case.request.unplaced:
        names.add(port.name or port.id)
        for resources in port.requests.values():
            _add(requests, resources)
    return why('missing.port_unplaced', host=case.server.node,
               ports=', '.join(sorted(names)),
               needs=format_resources(requests),
               candidates=plan.candidates_said(case.topology, case.request)
               ), requests


def _neutron_unread(case, p):
    if not case.fault:
        return None
    return {m.NEUTRON_ABSENT: why('protected.neutron_absent'),
            m.NEUTRON_DOWN: why('protected.neutron_down'),
            m.NEUTRON_FORBIDDEN: why('protected.neutron_forbidden'),
            m.NEUTRON_HIDDEN: why('protected.neutron_hidden'),
            }[case.fault], case.held[p]


def _port_ok(case, p):
    row = case.port(p)
    if row is None or row.excess or row.short:
        return None
    if row.binds:
        return why('ok.port_unbound', host=case.server.node,
                   **row.args), row.have
    return why('ok.port', **row.args), row.have


def _port_missing(case, p):
    row = case.port(p)
    if row is None or row.have:
        return None
    needs = format_resources(row.want)
    if row.binds:
        return why('missing.port_to_bind', host=case.server.node,
                   needs=needs, **row.args), row.want
    return why('missing.port', needs=needs, **row.args), row.want


def _port_short(case, p):
    row = case.port(p)
    if row is None or not row.short:
        return None
    amounts = dict(held=format_resources(row.have),
                   needs=format_resources(row.want), **row.args)
    if row.binds:
        return why('wrong_amount.port_to_bind', host=case.server.node,
                   **amounts), row.have
    return why('wrong_amount.port', **amounts), row.have


def _leaked_port(case, p):
    row = case.port(p)
    if row is None:
        return None
    return why('leaked_port', leaked=format_resources(row.excess),
               **row.args), row.excess


# -- the whole consumer, once every row is decided ----------------------------

def _incomplete_consumer(case, p):
    if case.root is None or m.INCOMPLETE not in case.owner or any(
            f.verdict != m.OK for f in case.judged.values()):
        return None
    return why('incomplete_consumer', project=case.server.project_id,
               user=case.server.user_id), case.judged[p].resources


def _young(case, p):
    finding = case.judged[p]
    if not case.young or not finding.problem:
        return None
    return why(YOUNG, young=case.young,
               reason=finding.reason), finding.resources


STAGES = (
    # Every held allocation by itself.  Protections come before any verdict
    # that writes, each where it must: a live server's before its verdicts;
    # a deleted server's (its instance actions answered, whichever cell is
    # down) before a down cell's and an unknown consumer's.
    Stage(Case.allocations, (
        Rule(m.PROTECTED, _unreachable),
        Rule(m.PROTECTED, _server_protected),
        Rule(m.OK, _lives_here),
        Rule(m.STUCK_MIGRATION, _stuck),
        Rule(m.PROTECTED, _node_unknown),
        Rule(m.SHELVED_OFFLOADED, _shelved_offloaded),
        Rule(m.MOVED, _on_no_node),
        Rule(m.EVACUATED_SOURCE, _evacuated_source),
        Rule(m.MOVED, _moved),
        Rule(m.STALE_MIGRATION, _stale_migration),
        Rule(m.PROTECTED, _migration_under_way),
        Rule(m.DELETED_INSTANCE, _deleted_instance),
        Rule(m.PROTECTED, _unresolved),
        Rule(m.PROTECTED, _cell_down),
        Rule(m.PROTECTED, _migrations_unread),
        Rule(m.UNKNOWN_CONSUMER, _unknown_consumer))),
    # What only the server's whole tree shows, on its root: it decides that
    # row again, whatever the first stage said of it.
    Stage(Case.server_root, (
        Rule(m.PROTECTED, _unreachable),
        Rule(m.PROTECTED, _holds_nothing_protected),
        Rule(m.MISSING, _missing),
        Rule(m.PROTECTED, _image_unread),
        Rule(m.WRONG_AMOUNT, _wrong_amount))),
    # Its ports' requests against its port providers (skipped while its
    # server or root is protected: :meth:`Case.port_rows`).
    Stage(Case.port_rows, (
        Rule(m.MISSING, _unplaced),
        Rule(m.PROTECTED, _neutron_unread),
        Rule(m.OK, _port_ok),
        Rule(m.MISSING, _port_missing),
        Rule(m.WRONG_AMOUNT, _port_short),
        Rule(m.LEAKED_PORT, _leaked_port))),
    # The whole consumer: a right one written before Placement 1.8, then
    # any write too young to be sure Nova is done.
    Stage(Case.rows, (Rule(m.INCOMPLETE_CONSUMER, _incomplete_consumer),)),
    Stage(Case.rows, (Rule(m.PROTECTED, _young),)),
)
"""Every rule, in the order they are tried: the order of
:data:`~model.VERDICT_KINDS` is how much an operator should care, this one
is what must be ruled out first."""

RULES = tuple(rule for stage in STAGES for rule in stage.rules)
