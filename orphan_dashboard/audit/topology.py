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

"""Provider trees and the compute nodes they stand for (pure)."""

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import ownership
from orphan_dashboard.audit import ports


class Topology:
    """Which provider belongs to which tree, and which tree to which node."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self.providers = dict(snapshot.providers)
        self.trees = {}
        for provider in self.providers.values():
            self.trees.setdefault(provider.root_uuid, set()).add(provider.uuid)
        self.node_roots = {}
        for provider in self.providers.values():
            if provider.uuid == provider.root_uuid:
                self.node_roots.setdefault(provider.name, provider.uuid)
        for hypervisor in snapshot.hypervisors.values():
            root = self.root(hypervisor.uuid)
            self.node_roots[hypervisor.hostname] = root
        self.down_hosts = snapshot.down_hosts
        self._owners = {}
        self._held = None
        self._nodeless = None
        self._moving = None
        self._providerless = None
        self.server_ports = ports.by_server(snapshot)
        # The providers a port's binding names.
        self.port_providers = frozenset(
            provider for port in (snapshot.ports or {}).values()
            for provider in port.allocation.values())

    @property
    def held(self):
        """:func:`ownership.held_classes` of the snapshot, gathered once."""
        if self._held is None:
            self._held = ownership.held_classes(self.snapshot)
        return self._held

    @property
    def moving(self):
        """``{server: [its migrations in progress]}``, gathered once: what
        a stuck move is told by (:mod:`.stalls`), asked of every
        consumer."""
        if self._moving is None:
            self._moving = {}
            for migration in self.snapshot.migrations.values():
                if migration.status in m.MIGRATION_IN_PROGRESS:
                    self._moving.setdefault(migration.instance_uuid,
                                            []).append(migration)
        return self._moving

    def owner(self, uuid):
        """Who owns ``uuid`` (its :meth:`ownership`'s owner)."""
        return self.ownership(uuid).owner

    def ownership(self, uuid):
        """:func:`ownership.provider_ownership` of ``uuid``, read once."""
        if uuid not in self._owners:
            self._owners[uuid] = ownership.provider_ownership(
                self.snapshot, uuid, self.held)
        return self._owners[uuid]

    def provider(self, uuid):
        """The provider, or a stand-in for one that vanished since listing."""
        return self.providers.get(uuid) or m.Provider(
            uuid=uuid, name=uuid, generation=-1, root_uuid=uuid)

    def name(self, uuid):
        return self.provider(uuid).name

    def root(self, uuid):
        return self.provider(uuid).root_uuid

    def tree(self, root_uuid):
        return self.trees.get(root_uuid, {root_uuid})

    def server_root(self, server):
        """Root provider of the compute node ``server`` lives on, or None
        (also for a node Nova lists that has no provider yet: nothing can
        be healed onto it)."""
        if not server.node:
            return None
        root = self.node_roots.get(server.node)
        return root if root in self.providers else None

    def is_sharing(self, uuid):
        return uuid in self.snapshot.sharing_providers

    def is_child(self, uuid):
        """A nested provider (vGPU, PCI, a NIC's bandwidth...)."""
        return (not self.is_sharing(uuid) and
                self.provider(uuid).parent_uuid is not None)

    def pci_device(self, uuid):
        """Nova's PCI device in Placement, a node's child."""
        return self.is_child(uuid) and ownership.nova_pci_device(
            self.name(uuid), self.ownership(uuid))

    def legitimate(self, server_root, uuid):
        """May a server living under ``server_root`` hold ``uuid``?"""
        return self.is_sharing(uuid) or (
            server_root is not None and self.root(uuid) == server_root)

    def host(self, uuid):
        """The compute service host of ``uuid``'s tree, or None."""
        hypervisor = self.snapshot.hypervisors.get(self.root(uuid))
        return hypervisor.host if hypervisor is not None else None

    def migration_host(self, uuid):
        """The host whose migrations could hold ``uuid``: its tree's
        compute service host, else its root's name (a node Nova no longer
        lists, which its migrations name as their host)."""
        return self.host(uuid) or self.name(self.root(uuid))

    def cut_off(self, uuid):
        """``(host, None)`` when ``uuid``'s tree is a compute node of a
        host in a cell Nova cannot reach, ``(None, provider name)`` when
        no compute node could be confirmed for it (Nova's hypervisor
        listing failed, or it left out a provider of Nova's that Nova did
        not say is gone: :meth:`unconfirmed`), else ``(None, None)``."""
        root = self.root(uuid)
        if self.is_sharing(root):
            return None, None
        down = self.down_hosts
        hypervisor = self.snapshot.hypervisors.get(root)
        if hypervisor is not None:
            return (hypervisor.host if hypervisor.host in down else None,
                    None)
        name = self.name(root)
        if name in down:
            return name, None
        if self.unconfirmed(root):
            return None, name
        return None, None

    def unconfirmed(self, root):
        """A root Nova's listing left out that may be one of its compute
        nodes (proven Nova's, or shaped like one, a suspect), of which
        Nova did not say it is gone (its one-node read failed or was not
        made): whatever it holds is protected."""
        if root in self.snapshot.hypervisors or self.is_sharing(root):
            return False
        if not self.snapshot.hypervisors_listed:
            return True
        found = self.ownership(root)
        return root not in self.snapshot.nodes_gone and (
            found.owner == ownership.NOVA or ownership.suspected(found))

    def unmapped(self, root):
        """A root Nova answers 404 for while a compute service it lists
        has no node in its listing (:attr:`nodeless_services`): that
        service's host may be unmapped, and this its node, whatever its
        name.  Alive as far as anyone can prove, never deleted."""
        return root in self.snapshot.nodes_gone and \
            bool(self.nodeless_services) and not self.replaced_by(root)

    def replaced_by(self, root):
        """The compute node Nova created anew in ``root``'s place, or None
        (Nova bug 1817833: a host reinstalled, or its compute service
        deleted and started again, with a new node uuid): Nova answers
        404 for ``root`` alone, and lists a node of ``root``'s name that
        has no provider, which nova-compute cannot create while ``root``
        keeps the name (Placement's names are unique).  Placement's
        refusal, not the name, ties them: ``root`` stays judged as a node
        Nova deleted, whose ownership is proven as any other's."""
        if root not in self.snapshot.nodes_gone:
            return None
        if self._providerless is None:
            self._providerless = {
                h.hostname: h for h in self.snapshot.hypervisors.values()
                if h.uuid not in self.providers}
        return self._providerless.get(self.name(root))

    def replacements(self):
        """``{root: the node Nova created in its place}``
        (:meth:`replaced_by`) of every replaced root."""
        return {root: node for root in self.snapshot.nodes_gone
                if (node := self.replaced_by(root))}

    @property
    def nodeless_services(self):
        """The hosts of the compute services os-services lists, in a cell
        Nova reaches, with no compute node in Nova's listing: a host not
        mapped to a cell yet, or whose nodes Nova did not answer for.  Any
        root Nova left out may be one of their nodes, since a provider's
        name is no host's (libvirt names a node by the hypervisor's
        FQDN, Ironic by the node's uuid)."""
        if self._nodeless is None:
            with_nodes = {h.host for h in self.snapshot.hypervisors.values()}
            self._nodeless = tuple(sorted(
                s.host for s in self.snapshot.services.values()
                if s.status != m.DOWN_CELL_STATUS and
                s.host not in with_nodes))
        return self._nodeless

    def node_gone(self, root):
        """Nova itself answered that ``root``'s compute node is gone, and
        every compute service it lists has a node in its listing: no live
        service could own it."""
        return root in self.snapshot.nodes_gone and not self.unmapped(root)

    def children_first(self, roots):
        """The providers of the trees of ``roots``, deepest first (see
        :func:`children_first`)."""
        return children_first(self.providers.values(), roots)


def children_first(providers, roots):
    """The uuids of ``providers`` in the trees of ``roots``, deepest first:
    the order in which a tree can be deleted (a parent with a child left
    cannot go)."""
    parents = {p.uuid: p.parent_uuid for p in providers
               if p.root_uuid in roots}
    depths = depths_in(parents)
    return sorted(parents, key=lambda u: (-depths[u], u))


def depths_in(parents):
    """``{uuid: how many ancestors}`` for every key of ``parents``
    (``{uuid: parent uuid or None}``), each chain walked once and without
    recursion: a tree can be deeper than Python's stack.  A parent missing
    from ``parents`` counts as an ancestor (the chain stops there); a
    cycle is cut where it closes."""
    depths = {}
    for start in parents:
        path, seen = [], set()
        uuid = start
        while uuid in parents and uuid not in depths and uuid not in seen:
            seen.add(uuid)
            path.append(uuid)
            uuid = parents[uuid]
        below = depths.get(uuid, 0)
        for uuid in reversed(path):
            below = below + 1 if parents[uuid] else 0
            depths[uuid] = below
    return depths


def unlisted_roots(snapshot):
    """The root providers Nova's hypervisor listing left out that may be
    its compute nodes, sorted: each is asked about alone
    (``GET /os-hypervisors/{uuid}``), since absence from a listing proves
    nothing.  Those proven Nova's; while the listing fails (a cell down),
    only those holding an allocation, as nothing on the others waits for a
    verdict."""
    topology = Topology(snapshot)
    if snapshot.hypervisors_listed:
        roots = {p.root_uuid for p in snapshot.providers.values()}
    else:
        roots = {topology.root(p) for c in snapshot.consumers.values()
                 for p in c.allocations}
    return sorted(r for r in roots if topology.cut_off(r)[1])


def proven_hypervisors(providers, services, servers=(), known=()):
    """The compute nodes Nova's services and servers prove when its
    hypervisor listing failed: ``{provider uuid: Hypervisor}``.

    A root provider is a node of a reachable host when a server of that
    host lives on the node Nova names as the provider (a node's provider
    carries its ``hypervisor_hostname``), or when ``known`` (an earlier
    listing) had it under such a host.  A root merely named like a host
    is proven nothing (libvirt names a node by the hypervisor's FQDN,
    Ironic by the node's uuid, and another service may take any name):
    each such root is asked about alone (:func:`unlisted_roots`), and
    anything else could belong to the down cell.
    """
    up = {s.host for s in services.values()
          if s.status != m.DOWN_CELL_STATUS}
    roots = {p.name: p.uuid for p in providers.values()
             if p.uuid == p.root_uuid}
    proven = {h.uuid: h for h in known
              if h.host in up and h.uuid in providers}
    for server in servers:
        uuid = roots.get(server.node)
        if (uuid is not None and uuid not in proven and
                server.host in up and not server.down_cell):
            proven[uuid] = m.Hypervisor(uuid, server.node, host=server.host)
    return proven
