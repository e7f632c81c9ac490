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


def requested(topology, server_uuid):
    """``({provider: Resources}, [unplaced ports])``: what the server's
    ports request on each provider their binding names, and the ports
    with a request group their binding places nowhere Placement has."""
    snapshot = topology.snapshot
    wanted, unplaced = {}, []
    for port in of_server(topology, server_uuid):
        placed = True
        for group, resources in sorted(port.requests.items()):
            provider = port.allocation.get(group)
            if provider is None or provider not in snapshot.providers:
                placed = False
                continue
            _add(wanted.setdefault(provider, {}), resources)
        if not placed:
            unplaced.append(port)
    return wanted, unplaced


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
