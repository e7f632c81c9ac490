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

"""Moves a compute crash left stuck (pure): which side the server is on,
and the write that puts its allocations where it runs.

A compute that dies while ``migrate_disk_and_power_off`` runs comes back
with ``_init_instance`` resetting the server's task: the server runs on
its source, its migration stays ``migrating`` for ever, the migration's
consumer holds the source and the server's own consumer the destination
(Nova bug 1836369).  Nova never moves such a migration on, so only its
age tells it from a move under way: :func:`stalled` is the one place
that says so; :func:`of` is the one place that pairs the two consumers
and says which write their side takes, by Placement's trees (the
server's node's tree holding a consumer), never by a host's name.
"""

import typing

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse

MOVES = ('resize', 'migration', 'live-migration')
"""The moves whose migration consumer holds the source while they run."""
SETTLED = None
"""A stall's action when its allocations already stand where the server
runs: nothing to write."""
WRITES = {m.MOVE_BACK: {m.MOVE_BACK}, m.DELETE: {m.DELETE},
          m.TRIM: {m.TRIM, m.DELETE_AND_HEAL}}
"""The repairs each side's write may be made by: a server holding both
sides of an evacuation may also be rebuilt on the side it runs on, as a
server that moved; no other write of a stuck move's consumers is one."""


class Stall(typing.NamedTuple):
    """One in-progress move and its server, with the write its side takes:
    :data:`~model.MOVE_BACK` (the server runs on the source the migration's
    consumer holds), :data:`~model.DELETE` of the migration's consumer (a
    live migration whose server runs on its destination), :data:`~model.TRIM`
    of the server's consumer (an evacuation, which holds both sides through
    the server's consumer), or :data:`SETTLED`."""

    migration: m.Migration
    server: m.Server
    action: typing.Optional[str]

    @property
    def consumers(self):
        """The consumers its write changes."""
        if self.action == m.MOVE_BACK:
            return (self.server.uuid, self.migration.uuid)
        if self.action == m.DELETE:
            return (self.migration.uuid,)
        return (self.server.uuid,) if self.action else ()


def _held(snapshot, consumer_uuid, held):
    if consumer_uuid in held:
        return held[consumer_uuid]
    consumer = snapshot.consumers.get(consumer_uuid)
    return consumer.allocations if consumer else {}


def _idle(server):
    """Nothing in its server's record says a live operation moves it."""
    return not (server.down_cell or server.hidden or server.task_state or
                server.status in m.BUSY_STATUSES or
                server.vm_state == 'building')


def of(snapshot, topology, consumer_uuid, held=None):
    """The :class:`Stall` whose move ``consumer_uuid`` is a side of (the
    migration's consumer, or its server), where its server is idle and the
    side can be told; else None.  Its age is :func:`stalled`'s.

    ``held``: ``{consumer: allocations}`` standing in for what the
    snapshot holds (a write judged before it is made)."""
    held = held or {}
    migration = snapshot.migrations.get(consumer_uuid)
    moving = topology.moving.get(
        migration.instance_uuid if migration else consumer_uuid, [])
    if len(moving) != 1 or migration not in (None, moving[0]):
        return None
    migration = moving[0]
    server = snapshot.servers.get(migration.instance_uuid)
    if server is None or not _idle(server):
        return None
    root = topology.server_root(server)
    if root is None:
        return None
    action = _side(topology, root, migration, server,
                   _held(snapshot, migration.uuid, held),
                   _held(snapshot, server.uuid, held))
    if action is False:
        return None
    return Stall(migration, server, action)


def _side(topology, root, migration, server, moving, own):
    """The write a stalled move's side takes, :data:`SETTLED`, or False
    where its side cannot be told."""
    def here(allocations):
        return {p for p in allocations if topology.legitimate(root, p)}

    if migration.migration_type == 'evacuation':
        if migration.status not in m.EVACUATION_STUCK_CAN_BE or moving:
            return False
        if not here(own):
            return False
        return m.TRIM if set(own) - here(own) else SETTLED
    if migration.migration_type not in MOVES or \
            migration.status not in m.MIGRATION_STUCK_CAN_BE:
        return False
    if server.node == migration.source_node:
        if not moving:
            return SETTLED if here(own) == set(own) and own else False
        if here(moving) == set(moving) and not here(own):
            return m.MOVE_BACK
        return False
    if migration.migration_type == 'live-migration' and \
            server.node == migration.dest_node and own and \
            here(own) == set(own) and not here(moving):
        return m.DELETE if moving else SETTLED
    return False


def stalled(migration, now, after):
    """``migration`` has gone ``after`` seconds or more without an update:
    no move under way goes that long without one."""
    seconds = parse.seconds_since(migration.updated_at, now)
    return seconds is not None and seconds >= after
