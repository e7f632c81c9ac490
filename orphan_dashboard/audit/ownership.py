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

"""Whose resource provider it is, from what Placement and Nova show.

Only a provider proven Nova's may be called orphaned or be deleted: "not a
compute node" does not mean "ours".  Current Novas tag every provider
they create with ``OWNER_NOVA``, Cyborg its own with ``OWNER_CYBORG``;
older Novas tag nothing, so there ownership is inferred from what Nova's
resource tracker writes, another service's trait, name or class winning
over a name shaped like Nova's (see
``doc/source/verdicts.md``, *Whose provider*).  Each answer says who
and how it was proven (:class:`Ownership`), so the panel and the CLI can
say it.  Pure: the collector reads the facts.
"""

import re
import typing

from orphan_dashboard.audit.model import N_

NOVA = 'nova'
NEUTRON = 'neutron'
BLAZAR = 'blazar'
CYBORG = 'cyborg'
NOVA_TRAIT = 'OWNER_NOVA'
OWNER_PREFIX = 'OWNER_'

TRAIT = 'trait'
COMPUTE_NODE = 'compute node'
NOVA_HOST = 'nova host'
INVENTORY = 'inventory'
SHAPE = 'shape'
CLASS = 'class'
NAME = 'name'
UNPROVEN = 'unproven'
PROOF_TITLES = {
    TRAIT: N_('its OWNER_* trait'),
    COMPUTE_NODE: N_("Nova's listing of its compute node"),
    NOVA_HOST: N_('its name, a compute host Nova lists'),
    INVENTORY: N_("nothing but its inventory, a compute node's classes, "
                  "which another service's provider can have too"),
    SHAPE: N_("its name's shape and class, as Nova makes a node's child"),
    CLASS: N_('a resource class that service makes'),
    NAME: N_('a name that service gives'),
    UNPROVEN: N_('nothing'),
}
"""How an owner was proven, each read after "proven by".  ``OWNER_NOVA``
is written from Nova 34 on only: a compute on an older Nova writes no
trait, and Nova's API shows no compute service version to tell them
apart, so an untagged provider is judged by the other signs, never
called foreign for the trait's absence.  Its inventory alone proves
nobody (:data:`_SUSPECT`): another service can register the same
classes; Nova's own record of the name does."""


class Ownership(typing.NamedTuple):
    """Who likely made a provider (``nova``, another service, or None when
    nobody is proven) and how: one of :data:`PROOF_TITLES`."""

    owner: typing.Optional[str]
    proof: str


_NOBODY = Ownership(None, UNPROVEN)
_SUSPECT = Ownership(None, INVENTORY)
"""A root with a compute node's classes and nothing else of Nova's:
OpenStack Zun's compute agent registers such roots (VCPU, MEMORY_MB,
DISK_GB, no trait), and so may anyone through the Placement API."""

COMPUTE_CLASSES = frozenset({'VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB',
                             'MEM_ENCRYPTION_CONTEXT', 'VGPU'})
"""What the resource tracker of a libvirt, VMware or Hyper-V compute node
puts on its root provider."""

_UUID = re.compile(r'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                   r'[0-9a-f]{12}$', re.I)

PCI_DEVICE = re.compile(r'_[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$', re.I)
"""How Nova names a PCI device in Placement: ``<node>_<PCI address>``."""

_NOVA_CHILDREN = (
    (PCI_DEVICE, re.compile(r'^CUSTOM_')),
    (re.compile(r'_pci_[0-9a-f]{4}_[0-9a-f]{2}_[0-9a-f]{2}_[0-7]$', re.I),
     re.compile(r'^(VGPU$|CUSTOM_)')),
    (re.compile(r'_amd_sev(_es|_snp)?$'),
     re.compile(r'^MEM_ENCRYPTION_CONTEXT$')),
)
"""The children Nova gives a compute node ``<node>``, each name's shape
with the classes Nova puts there: a PCI device in Placement
``<node>_0000:81:00.0`` (``CUSTOM_PCI_<vendor>_<product>`` or the
``device_spec``'s class), a vGPU's physical GPU ``<node>_pci_0000_84_00_0``
(``VGPU`` or an mdev class), memory encryption slots ``<node>_amd_sev``
(``_es``, ``_snp``)."""

_BY_NAME = (
    (re.compile(r'^Neutron segment id '), NEUTRON),
    (re.compile(r'^blazar_'), BLAZAR),
    (re.compile(r':'), NEUTRON),
)
"""Names other services give their providers: a routed network's segment,
Blazar's reservable host, a Neutron agent's ``<host>:<agent>[:<device>]``
(a compute node's name never holds a colon)."""

_BY_CLASS = (
    (re.compile(r'^IPV4_ADDRESS$'), NEUTRON),
    (re.compile(r'^NET_(BW|PACKET_RATE)_'), NEUTRON),
    (re.compile(r'^CUSTOM_RESERVATION_'), BLAZAR),
    (re.compile(r'^(FPGA|PGPU|CUSTOM_ACCELERATOR_)'), CYBORG),
)


def _foreign(name, classes):
    return _by_name(name) or _by_class(classes)


def _by_name(name):
    """The service whose names ``name`` is shaped like, or None."""
    for pattern, owner in _BY_NAME:
        if pattern.search(name or ''):
            return Ownership(owner, NAME)
    return None


def _by_class(classes):
    """The service one of ``classes`` belongs to, or None."""
    for rc in classes or ():
        for pattern, owner in _BY_CLASS:
            if pattern.search(rc):
                return Ownership(owner, CLASS)
    return None


def _shaped_like_a_compute_node(name, classes):
    """A compute node's inventory: only the resource tracker's classes, or
    an Ironic node's one custom class under the node's uuid."""
    classes = set(classes or ())
    if classes and classes <= COMPUTE_CLASSES:
        return True
    return (len(classes) == 1 and
            next(iter(classes)).startswith('CUSTOM_') and
            bool(_UUID.match(name or '')))


def likely_owner(name, traits=(), classes=None, nova_names=frozenset(),
                 node=False):
    """``'nova'``, another service's name, or None when nobody is proven
    (:func:`likely_ownership`'s owner)."""
    return likely_ownership(name, traits, classes, nova_names, node).owner


def likely_ownership(name, traits=(), classes=None, nova_names=frozenset(),
                     node=False):
    """The :class:`Ownership` of a root provider.

    ``node``: Nova lists the provider as a compute node.  ``classes``: its
    inventory's resource classes (None when not read).  ``nova_names``:
    the names Nova's records give its nodes and hosts (:func:`nova_names`).
    A root with a compute node's classes that Nova never named is a
    suspect (:func:`suspected`), owned by nobody proven.
    """
    if node:
        return Ownership(NOVA, COMPUTE_NODE)
    tagged = _by_trait(traits)
    if tagged:
        return tagged
    foreign = _foreign(name, classes)
    if foreign:
        return foreign
    if classes and not _shaped_like_a_compute_node(name, classes):
        return _NOBODY
    if name in nova_names:
        return Ownership(NOVA, NOVA_HOST)
    if classes:
        return _SUSPECT
    return _NOBODY


def suspected(found):
    """``found`` (an :class:`Ownership`) is nobody's but for an inventory
    shaped like one of Nova's compute nodes: a suspect Nova's one-node
    read may prove no node of its, never proven Nova's by itself."""
    return found == _SUSPECT


def _by_trait(traits):
    """The owner an ``OWNER_*`` trait names, Nova's first, or None."""
    traits = set(traits or ())
    if NOVA_TRAIT in traits:
        return Ownership(NOVA, TRAIT)
    for trait in sorted(traits):
        if trait.startswith(OWNER_PREFIX):
            return Ownership(trait[len(OWNER_PREFIX):].lower(), TRAIT)
    return None


def nova_names(snapshot):
    """The names Nova's own records give its compute nodes and hosts: the
    hypervisor hostnames and compute service hosts it lists, and the
    nodes and hosts its migrations name."""
    return frozenset(h.hostname for h in snapshot.hypervisors.values()) | \
        frozenset(snapshot.services) | frozenset(
            name for g in snapshot.migrations.values()
            for name in (g.source_node, g.dest_node, g.source_compute,
                         g.dest_compute) if name)


def provider_traits(snapshot, uuid):
    """The ``OWNER_*`` traits the sweep read on provider ``uuid``."""
    return (snapshot.owner_traits or {}).get(uuid, frozenset())


def root_owner(snapshot, root):
    """The likely owner of a root provider of ``snapshot``
    (:func:`root_ownership`'s owner)."""
    return root_ownership(snapshot, root).owner


def root_ownership(snapshot, root):
    """The :class:`Ownership` of a root provider of ``snapshot``, from its
    facts (``owner_traits``, ``inventory_classes``)."""
    provider = snapshot.providers.get(root)
    classes = (snapshot.inventory_classes or {}).get(root)
    return likely_ownership(
        provider.name if provider else root, provider_traits(snapshot, root),
        classes, nova_names(snapshot), node=root in snapshot.hypervisors)


def held_classes(snapshot):
    """``{provider uuid: classes its consumers hold there}``."""
    held = {}
    for consumer in snapshot.consumers.values():
        for provider, resources in consumer.allocations.items():
            held.setdefault(provider, set()).update(resources)
    return held


def provider_ownership(snapshot, uuid, held=None):
    """The :class:`Ownership` of any provider of ``snapshot``, children
    included: a root as :func:`root_ownership` says; a child by its
    traits, its name, or the classes its consumers hold there (a child's
    inventory is not read; ``held`` is :func:`held_classes`, computed when
    not given)."""
    provider = snapshot.providers.get(uuid)
    if provider is None or provider.root_uuid == uuid:
        return root_ownership(snapshot, uuid)
    classes = (held if held is not None else held_classes(snapshot)).get(
        uuid, ())
    return _child(snapshot, provider, classes)


def child_owners(snapshot, held=None):
    """``{child uuid: likely owner}`` of every child provider of
    ``snapshot`` not proven Nova's, as :func:`provider_ownership` tells each
    (``held`` as there)."""
    return not_novas(child_ownerships(snapshot, held))


def not_novas(ownerships):
    """``{uuid: likely owner}`` of those of ``ownerships`` (``{uuid:
    Ownership}``) not proven Nova's."""
    return {uuid: found.owner for uuid, found in ownerships.items()
            if found.owner != NOVA}


def child_ownerships(snapshot, held=None):
    """``{child uuid: Ownership}`` of every child provider of ``snapshot``,
    Nova's included, as :func:`provider_ownership` tells each (``held`` as
    there)."""
    if held is None:
        held = held_classes(snapshot)
    return {uuid: _child(snapshot, provider, held.get(uuid, ()))
            for uuid, provider in snapshot.providers.items()
            if provider.root_uuid != uuid}


def _child(snapshot, provider, held):
    return child_ownership(provider.name, held,
                           provider_traits(snapshot, provider.uuid))


def nova_pci_device(name, found):
    """A child named as Nova names a PCI device in Placement and proven
    Nova's (``found``: its :class:`Ownership`), not Cyborg's named alike."""
    return found.owner == NOVA and bool(PCI_DEVICE.search(name or ''))


def child_owner(name, classes=(), traits=()):
    """The likely owner of a child provider from its own facts
    (:func:`child_ownership`'s owner)."""
    return child_ownership(name, classes, traits).owner


def child_ownership(name, classes=(), traits=()):
    """The :class:`Ownership` of a child provider from its own facts: its
    name, the classes held or offered there, its traits.  An ``OWNER_*``
    trait decides; then another service's class (Cyborg names its devices
    ``<host>_<PCI address>`` too); then a name shaped as Nova names a
    child (:data:`_NOVA_CHILDREN`) is Nova's when every class known there
    is one Nova puts on that shape (none known: nothing says otherwise),
    and nobody's else; then another service's name."""
    tagged = _by_trait(traits)
    if tagged:
        return tagged
    foreign = _by_class(classes)
    if foreign:
        return foreign
    for shape, nova_classes in _NOVA_CHILDREN:
        if shape.search(name or ''):
            if all(nova_classes.search(rc) for rc in classes or ()):
                return Ownership(NOVA, SHAPE)
            return _NOBODY
    return _by_name(name) or _NOBODY
