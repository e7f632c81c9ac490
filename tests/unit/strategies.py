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

"""Generated clouds (hypothesis strategies) for the engine's properties
(``test_property``, ``test_proof_property``): every kind of server,
migration, port and device the audit judges, drawn together."""

import dataclasses
import datetime

from hypothesis import strategies as st

from orphan_dashboard.audit import model as m
from tests.unit.cloud import Cloud
from tests.unit.cloud import DEVICES
from tests.unit.cloud import LONG_AGO
from tests.unit.cloud import NOW
from tests.unit.cloud import uid

FLAVORS = {
    'small': m.Flavor(1, 512, 1, extra_specs={}, name='small'),
    'big': m.Flavor(4, 4096, 40, ephemeral=2, swap=1024, extra_specs={},
                    name='big'),
    'pinned': m.Flavor(2, 1024, 10, name='pinned',
                       extra_specs={'hw:cpu_policy': 'dedicated'}),
    'gold': m.Flavor(1, 512, 5, name='gold',
                     extra_specs={'resources:CUSTOM_GOLD': '1'}),
    'hidden': m.Flavor(1, 512, 1, extra_specs=None, name='hidden'),
}
SERVER_KINDS = ('correct', 'missing', 'wrong', 'extra_class', 'moved',
                'moved_only', 'evacuated', 'child_here', 'child_left',
                'child_moved_along', 'shared_disk', 'shared_wrong',
                'incomplete', 'busy', 'verify_resize', 'young', 'nowhere',
                'shelved_offloaded',
                'young_wrong', 'young_incomplete', 'young_elsewhere',
                'qos_ok', 'port_deleted', 'port_missing', 'qos_changed',
                'port_moved_left', 'port_unplaced', 'port_elsewhere',
                'port_unnamed', 'crashed', 'crashed_recently',
                'crashed_evacuation')
PORT_KINDS = ('qos_ok', 'port_deleted', 'port_missing', 'qos_changed',
              'port_moved_left', 'port_unplaced', 'port_elsewhere',
              'port_unnamed')
"""Servers with QoS ports (where ``here`` has a NIC): what their ports
request against what they hold on the NICs."""
BW = 'NET_BW_EGR_KILOBIT_PER_SEC'
YOUNG_WRITES = ('young', 'young_wrong', 'young_incomplete',
                'young_elsewhere')
"""Kinds whose allocations were written seconds ago (by a resize, a QoS
update, a heal, an operator) on a server created long before, but for
``young`` (a server just built)."""
NO_NODE = ('nowhere', 'shelved_offloaded')
"""Servers Nova places on no compute node: what they hold is elsewhere."""
OTHER_KINDS = ('stale_migration', 'migration_in_progress', 'deleted',
               'unknown', 'young_unknown', 'unresolved')
YOUNG = NOW - datetime.timedelta(seconds=30)
DEVICE_KINDS = ('pci', 'pgpu')


def needs(flavor, volume_backed=False):
    from orphan_dashboard.audit import server_needs
    return server_needs.resources_from_flavor(flavor, volume_backed)


@st.composite
def snapshots(draw):
    cloud = Cloud(hosts=())
    hosts = [cloud.host('h%d' % i) for i in range(draw(st.integers(2, 4)))]
    nics = {h: cloud.nic(cloud.providers[h].name) for h in hosts
            if draw(st.booleans())}
    ceph = cloud.sharing_provider('ceph') if draw(st.booleans()) else None
    # Nova's own children of a node: a PCI device, a vGPU's physical GPU.
    devices = {h: cloud.device(cloud.providers[h].name,
                               draw(st.sampled_from(DEVICE_KINDS)))
               for h in hosts if draw(st.booleans())}
    # Other services' providers: a routed network's segment, Blazar's
    # child of a node.
    if draw(st.booleans()):
        cloud.foreign('Neutron segment id %s' % uid('segment'),
                      ['IPV4_ADDRESS'])
    if draw(st.booleans()):
        cloud.child(hosts[0], 'blazar_%s' % cloud.providers[hosts[0]].name)
    neutron = draw(st.sampled_from([None, m.NEUTRON_READ, m.NEUTRON_DOWN]))
    # A host of a cell Nova cannot reach, on which servers of the healthy
    # cells may hold a share: no repair of theirs may change it.
    down = None
    if draw(st.booleans()):
        down = uid('h-down')
        cloud.providers[down] = m.Provider(down, 'h-down', 1, down)
        cloud.services['h-down'] = m.Service('h-down', '', status='UNKNOWN')
    # A compute node Nova deleted, its provider left holding a deleted
    # server's allocation; or so replaced by a new node of its name (a
    # host reinstalled, Nova bug 1817833) that has no provider, maybe with
    # a server Nova placed there holding the old one.
    node = draw(st.sampled_from([None, 'gone', 'replaced']))
    if node == 'gone':
        gone = cloud.gone('h-gone')
    elif node == 'replaced':
        gone, _new = cloud.replaced('h-gone')
        if draw(st.booleans()):
            cloud.allocate(cloud.server('on-new-node', 'h-gone'), gone,
                           modified=LONG_AGO)
    if node:
        cloud.tag(gone)
        cloud.deleted('ghost-on-gone', gone)
    # A host not mapped to a cell yet (its node maybe named by its FQDN),
    # holding the claim of a server the conductor buried in cell0 and a
    # deleted server's leftover.
    if draw(st.integers(0, 3)) == 0:
        unmapped = cloud.unmapped('h-new', node=draw(st.sampled_from(
            [None, 'h-new.example.com'])))
        cloud.tag(unmapped)
        cloud.allocate(cloud.server('buried', None, status=m.ERROR_STATUS),
                       unmapped)
        cloud.deleted('ghost-on-new', unmapped)
    serial = iter(range(1000))

    for kind in draw(st.lists(st.sampled_from(SERVER_KINDS), max_size=7)):
        name = '%s-%d' % (kind, next(serial))
        here, there = draw(st.permutations(hosts))[:2]
        flavor = FLAVORS[draw(st.sampled_from(sorted(FLAVORS)))]
        extra = {}
        if kind == 'busy':
            extra['task_state'] = draw(st.sampled_from(
                ['migrating', 'resize_prep', 'rebuilding']))
        if kind == 'verify_resize':
            extra['status'] = 'VERIFY_RESIZE'
        if kind == 'young':
            extra['created'] = YOUNG.isoformat()
        if kind == 'shelved_offloaded':
            extra['status'] = m.SHELVED_OFFLOADED_STATUS
        vm = cloud.server(name, None if kind in NO_NODE else
                          cloud.providers[here].name, flavor=flavor, **extra)
        full = needs(flavor) if flavor.extra_specs is not None else {
            'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
        owner = (m.INCOMPLETE, m.INCOMPLETE) if (
            kind in ('incomplete', 'young_incomplete') or
            draw(st.integers(0, 9)) == 0) else ('p', 'u')
        modified = YOUNG if kind in YOUNG_WRITES else \
            NOW - datetime.timedelta(hours=1)

        def give(provider, resources, _vm=vm, _owner=owner,
                 _modified=modified):
            cloud.allocate(_vm, provider, dict(resources), owner=_owner,
                           modified=_modified)

        if down and draw(st.integers(0, 2)) == 0:
            give(down, {'VCPU': 1, 'MEMORY_MB': 256})
        if kind in PORT_KINDS:
            if here not in nics or (kind in ('port_moved_left',
                                             'port_elsewhere') and
                                    there not in nics):
                kind = 'correct'
            else:
                _qos_server(cloud, kind, name, vm, here, there, nics, full,
                            give, draw(st.integers(0, 3)))
                continue
        if kind == 'missing':
            continue
        if kind in ('crashed', 'crashed_recently', 'crashed_evacuation'):
            _crashed(cloud, kind, name, vm, here, there, full, give, draw)
            continue
        if kind in ('moved_only', 'young_elsewhere') + NO_NODE:
            give(there, full)
            continue
        if kind in ('shared_disk', 'shared_wrong') and ceph and \
                'DISK_GB' in full:
            local = {rc: n for rc, n in full.items() if rc != 'DISK_GB'}
            give(here, local)
            disk = full['DISK_GB'] + (7 if kind == 'shared_wrong' else 0)
            give(ceph, {'DISK_GB': disk})
        elif kind in ('wrong', 'young_wrong'):
            give(here, dict(full, MEMORY_MB=full['MEMORY_MB'] * 2))
        elif kind == 'extra_class':
            give(here, dict(full, CUSTOM_STRAY=3))
        else:
            give(here, full)
        if kind in ('moved', 'evacuated', 'busy', 'verify_resize', 'young'):
            give(there, full)
        if kind == 'evacuated':
            cloud.migration('evac-%s' % name, vm, 'done', kind='evacuation',
                            source=cloud.providers[there].name,
                            dest=cloud.providers[here].name)
        if kind == 'verify_resize':
            cloud.migration('resize-%s' % name, vm, 'finished', kind='resize',
                            source=cloud.providers[there].name,
                            dest=cloud.providers[here].name)
        device_held = draw(st.booleans())
        if device_held and here in devices:
            give(devices[here], _device(cloud, devices[here]))
        if device_held and there in devices and kind in (
                'moved', 'evacuated', 'busy', 'verify_resize', 'young'):
            give(devices[there], _device(cloud, devices[there]))
        if kind == 'child_here' and here in nics:
            give(nics[here], {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
        if kind in ('child_left', 'child_moved_along') and there in nics:
            give(there, full)
            give(nics[there], {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
            if kind == 'child_moved_along' and here in nics:
                give(nics[here], {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})

    unresolved = set()
    for kind in draw(st.lists(st.sampled_from(OTHER_KINDS), max_size=4)):
        name = '%s-%d' % (kind, next(serial))
        provider = draw(st.sampled_from(hosts + list(nics.values()) +
                                        list(devices.values())))
        resources = {'VCPU': draw(st.integers(1, 4)), 'MEMORY_MB': 256}
        modified = YOUNG if kind == 'young_unknown' else \
            NOW - datetime.timedelta(hours=2)
        if kind in ('stale_migration', 'migration_in_progress'):
            instance = cloud.server('owner-' + name,
                                    cloud.providers[hosts[0]].name)
            cloud.allocate(instance, hosts[0], needs(FLAVORS['small']))
            status = draw(st.sampled_from(sorted(
                m.MIGRATION_FINAL if kind == 'stale_migration'
                else m.MIGRATION_IN_PROGRESS)))
            # Its consumer holds the source, as Nova's do.
            source = cloud.providers[cloud.providers[provider].root_uuid]
            consumer = cloud.migration(
                name, instance, status, kind='resize', source=source.name,
                dest=cloud.providers[hosts[0]].name)
        else:
            consumer = uid(name)
            if kind == 'deleted':
                cloud.known.add(consumer)
        cloud.allocate(consumer, provider, resources, modified=modified)
        if kind == 'unresolved':
            unresolved.add(consumer)
    if neutron == m.NEUTRON_READ:
        cloud.ports = cloud.ports or {}
    elif neutron is not None:
        cloud.ports = None
    cloud.neutron = neutron
    return dataclasses.replace(cloud.snapshot(),
                               unresolved=frozenset(unresolved))


def _crashed(cloud, kind, name, vm, here, there, full, give, draw):
    """A move a compute crash left in progress (Nova bug 1836369), its
    server idle on ``here``: a cold or live migration or a resize whose
    consumer holds ``here`` while the server's holds ``there`` (its
    migration updated two hours ago, or ten minutes ago: not stuck yet),
    or an evacuation whose server holds both."""
    source, dest = cloud.providers[here].name, cloud.providers[there].name
    long_ago = NOW - datetime.timedelta(hours=2)
    if kind == 'crashed_evacuation':
        cloud.migration('evac-%s' % name, vm, draw(st.sampled_from(sorted(
            m.EVACUATION_STUCK_CAN_BE))), kind='evacuation', source=dest,
            dest=source, updated=long_ago)
        give(here, full)
        give(there, full)
        return
    mig = cloud.migration(
        'mig-%s' % name, vm, draw(st.sampled_from(sorted(
            m.MIGRATION_STUCK_CAN_BE))),
        kind=draw(st.sampled_from(['migration', 'resize', 'live-migration'])),
        source=source, dest=dest, updated=long_ago if kind == 'crashed'
        else NOW - datetime.timedelta(minutes=10))
    cloud.allocate(mig, here, dict(full), modified=LONG_AGO)
    give(there, full)


def _device(cloud, device):
    """What a server holds on Nova's ``device`` child: one of its class."""
    kind = 'pgpu' if '_pci_' in cloud.providers[device].name else 'pci'
    return {DEVICES[kind][1]: 1}


def _qos_server(cloud, kind, name, vm, here, there, nics, full, give,
                offered):
    """A server of a :data:`PORT_KINDS` kind, holding and with ports as
    its kind says; a port its binding places nowhere in its tree gets
    ``offered`` allocation candidates there (none, its node's NIC, that
    and a second NIC, or 3: Placement did not answer)."""
    port = name + '-port'
    if kind in ('port_moved_left', 'port_elsewhere'):
        give(there, full)
        give(nics[there], {BW: 1000})
    give(here, full)
    if kind in ('qos_ok', 'port_deleted', 'qos_changed', 'port_unnamed'):
        give(nics[here], {BW: 1000})
    if kind in ('qos_ok', 'port_missing', 'port_moved_left'):
        cloud.port(port, vm, nics[here])
    elif kind == 'qos_changed':
        cloud.port(port, vm, nics[here], {BW: 2000})
    elif kind in ('port_unplaced', 'port_elsewhere', 'port_unnamed'):
        port = cloud.port(port, vm, nics[there] if kind == 'port_elsewhere'
                          else None)
        second = cloud.child(cloud.providers[nics[here]].parent_uuid,
                             '%s:br-phys2' % cloud.providers[here].name)
        cloud.offer(vm, port, *(nics[here], second)[:offered])
        if offered == 3:
            cloud.candidates[vm] = None
