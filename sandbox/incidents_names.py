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

"""Names of the staged incidents (importable without Nova)."""
NAMES = ('evacuation', 'deleted_behind_nova', 'failed_migration',
         'unconfirmed_resize', 'healed_away', 'wrong_amount',
         'port_bandwidth_left', 'pre_pike_consumer', 'retired_host',
         'foreign_providers', 'healthy')
NEUTRON = ('qos_ports_healthy', 'routed_segment', 'port_deleted_in_neutron',
           'port_allocation_removed', 'qos_rule_changed',
           'port_migrated_left', 'port_binding_lost')
"""Staged through the real Neutron: the sandbox started with ``--neutron``."""
PCI = ('pci_deleted_behind_nova', 'pci_moved', 'pci_stale_migration',
       'pci_one_time_use', 'pci_removed_device')
"""Servers holding PCI devices Nova's scheduler allocated in Placement: the
sandbox started with ``--pci``."""
CYBORG = ('accelerator_deleted_behind_nova',)
"""Servers holding an accelerator Cyborg bound: the sandbox started with
``--cyborg``."""
OPT_IN = ('second_cell', 'held_children', 'image_pinned', 'volume_pinned',
          'shelved_offloaded', 'vgpu_and_sev_children',
          'stuck_migration', 'reinstalled_host',
          'buried_in_cell0', 'archived_instances') + NEUTRON + PCI + CYBORG
"""Staged only when named, never by ``all``: ``second_cell`` needs the
sandbox started with ``--cells 2``, the ``NEUTRON`` ones ``--neutron``,
the ``PCI`` ones ``--pci``, the ``CYBORG`` ones ``--cyborg``;
``held_children`` boots two servers on host2 the ``all`` tests do not
expect; ``image_pinned`` gives host1 a PCPU inventory its fake driver
does not report (a later boot there would try to remove it);
``volume_pinned`` makes host1's node offer PCPU from then on;
``shelved_offloaded`` leaves a finding every ``all`` test would meet;
``vgpu_and_sev_children`` gives host2 children the ``all`` tests do not
expect;
``stuck_migration`` restarts host1's compute and leaves a driver call
hung on it, and a migration ``migrating`` for ever;
``reinstalled_host`` adds host6, a compute node with no provider;
``buried_in_cell0`` adds host7, not mapped to a cell (every root
Nova answers 404 for is then possibly its node);
``archived_instances`` leaves three unknown consumers on host2."""
DEMO = NAMES + ('reinstalled_host', 'archived_instances')
"""What ``python -m sandbox demo`` stages (with ``NEUTRON`` unless
``--no-neutron``): ``all`` and the opt-in incidents that leave every
other one as it is."""


def parse(value):
    """``up --incidents``' value as incident names: ``all`` (:data:`NAMES`),
    ``none`` or nothing, or a comma list; ValueError naming any unknown."""
    if value in ('', 'none'):
        return []
    if value == 'all':
        return list(NAMES)
    names = [n.strip() for n in value.split(',') if n.strip()]
    known = NAMES + OPT_IN
    bad = [n for n in names if n not in known]
    if bad:
        raise ValueError('unknown incident(s) %s; known: %s'
                         % (', '.join(bad), ', '.join(known)))
    return names
