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

"""What a server's ports request, and where (pure).

A port whose QoS policy has a minimum rule requests resources (bandwidth,
packet rate) that Nova allocates on a NIC provider of Neutron's, nested
under the compute node, in the *server's* consumer; the port's
``binding:profile`` ``allocation`` names the provider of each request
group.  These functions are the one reading of those facts: the verdicts
and the repair targets both ask them.
"""

import typing

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import ownership


def _add(totals, resources):
    for rc, amount in resources.items():
        totals[rc] = totals.get(rc, 0) + amount


def by_server(snapshot):
    """``{server uuid: [ports that request resources, by id]}``: gathered
    once per snapshot (:attr:`Topology.server_ports`)."""
    found = {}
    for port in sorted((snapshot.ports or {}).values(), key=lambda p: p.id):
        found.setdefault(port.device_id, []).append(port)
    return found


def of_server(topology, server_uuid):
    """The ports of ``server_uuid`` that request resources, by id."""
    return topology.server_ports.get(server_uuid, [])


class Request(typing.NamedTuple):
    """What a server's ports request in the tree of its node."""

    wanted: dict
    """``{provider: Resources}``: on the providers their bindings name
    there, and on the one candidate Placement offers for the groups their
    bindings place nowhere there."""
    bindings: dict
    """``{port id: {group: provider}}``: the groups that one candidate
    places, whose binding must be written to Neutron to name it."""
    unplaced: list
    """The ports with a group no single candidate places."""
    candidates: typing.Optional[tuple]
    """The providers Placement's candidates name for those groups; None
    where Placement did not answer."""


def to_place(topology, server):
    """``{port id: [group ids]}``: the request groups of ``server``'s ports
    whose binding names no provider of its node's tree (no ``allocation``,
    as for a port made before Stein or after ``heal_allocations
    --force``, or a provider of another tree, as after a move whose
    binding update failed).  What Placement's allocation candidates are
    asked for (:func:`collect.read_port_candidates`) where the server
    does not hold them already (:func:`held_unclaimed`)."""
    root = topology.server_root(server)
    tree = topology.tree(root) if root is not None else set()
    found = {}
    for port in of_server(topology, server.uuid):
        groups = [g for g in sorted(port.requests)
                  if port.allocation.get(g) not in tree]
        if groups:
            found[port.id] = groups
    return found


def held_unclaimed(topology, server, placing):
    """``{group: provider}`` placing every group of ``placing`` on the one
    port provider of the server's tree that holds, for the server, what it
    requests and no binding there claims (a binding that lost its
    ``allocation`` while Placement kept the resources); None unless each
    group has exactly one such provider."""
    if not placing:
        return None
    snapshot = topology.snapshot
    consumer = snapshot.consumers.get(server.uuid)
    root = topology.server_root(server)
    if consumer is None or root is None:
        return None
    tree = topology.tree(root)
    claimed = {}
    for port in of_server(topology, server.uuid):
        for group, resources in port.requests.items():
            if group not in placing.get(port.id, ()):
                _add(claimed.setdefault(port.allocation.get(group), {}),
                     resources)
    spare = {p: difference(held, claimed.get(p, {}))[0]
             for p, held in consumer.allocations.items()
             if p in tree and is_port_provider(topology, p)}
    placed = {}
    for port_id, groups in sorted(placing.items()):
        for group in groups:
            wanted = snapshot.ports[port_id].requests[group]
            fits = [p for p, left in sorted(spare.items())
                    if not difference(left, wanted)[1]]
            if len(fits) != 1:
                return None
            placed[group] = fits[0]
            spare[fits[0]] = difference(spare[fits[0]], wanted)[0]
    return placed


def requested(topology, server):
    """The :class:`Request` of ``server``'s ports in its node's tree.

    Groups placed elsewhere are placed where the server already holds them
    unclaimed (:func:`held_unclaimed`), else by Placement's candidates when
    exactly one candidate covers them all, as ``heal_allocations`` does;
    else their ports are ``unplaced``.
    """
    snapshot = topology.snapshot
    placing = to_place(topology, server)
    offered = snapshot.port_candidates.get(server.uuid, ())
    groups = {g for found in placing.values() for g in found}
    chosen = held_unclaimed(topology, server, placing)
    if chosen is None and offered and len(offered) == 1 and \
            set(offered[0]) == groups:
        chosen = offered[0]
    wanted, bindings, unplaced = {}, {}, []
    for port in of_server(topology, server.uuid):
        waiting = placing.get(port.id, ())
        for group, resources in sorted(port.requests.items()):
            provider = port.allocation.get(group)
            if group in waiting:
                if chosen is None:
                    continue
                provider = chosen[group]
                bindings.setdefault(port.id, {})[group] = provider
            _add(wanted.setdefault(provider, {}), resources)
        if waiting and chosen is None:
            unplaced.append(port)
    candidates = None if offered is None else tuple(sorted(
        {p for found in offered for p in found.values()}))
    return Request(wanted, bindings, unplaced, candidates)


def binding_after(port, placed):
    """``port``'s ``binding:profile`` with its ``allocation`` naming the
    providers of ``placed`` (``{group: provider}``) too."""
    allocation = {g: p for g, p in port.allocation.items()
                  if g in port.requests}
    allocation.update(placed)
    return dict(port.profile, allocation=port.allocation_value(allocation))


def by_provider(topology, server_uuid, provider):
    """The server's ports whose binding places a request on ``provider``."""
    return [p for p in of_server(topology, server_uuid)
            if provider in p.allocation.values()]


def is_port_provider(topology, provider):
    """A provider whose allocations ports make: Neutron's, or one a port's
    binding names."""
    return topology.owner(provider) == ownership.NEUTRON or \
        provider in topology.port_providers


def judged(snapshot):
    """Whether port allocations can be judged: Neutron's ports were read."""
    return snapshot.ports is not None and snapshot.neutron in (
        None, m.NEUTRON_READ)


def unreadable(snapshot):
    """Why Neutron's ports could not be read (a ``NEUTRON_*`` state), or
    None when they were, or nobody asked."""
    if snapshot.neutron in (None, m.NEUTRON_READ):
        return None
    return snapshot.neutron


def difference(held, wanted):
    """``(excess, short)``: what ``held`` has over ``wanted``, and what it
    lacks, per class."""
    excess = {rc: n - wanted.get(rc, 0) for rc, n in held.items()
              if n > wanted.get(rc, 0)}
    short = {rc: n - held.get(rc, 0) for rc, n in wanted.items()
             if n > held.get(rc, 0)}
    return excess, short
