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

"""The cloud of ``orphan-audit capacity``'s tests (host1 full of an
evacuated server's leftover, three flavors) and a run of the command on
it with only the services mocked, which the ``openstack`` plugin's tests
compare with."""

import io
from unittest import mock

from orphan_dashboard.api import nova
from orphan_dashboard.audit import model as m
from orphan_dashboard.cli import commands as cli
from orphan_dashboard.cli import options
from orphan_dashboard.reading import collect
from tests.unit.cloud import uid
from tests.unit.staged import evacuated
from tests.unit.staged import H1
from tests.unit.staged import H2
from tests.unit.staged import H3

SMALL = {'id': 'f1', 'name': 'm1.small', 'vcpus': 1, 'ram': 512, 'disk': 1,
         'OS-FLV-EXT-DATA:ephemeral': 0, 'swap': '', 'extra_specs': {}}


FPGA = dict(SMALL, id='f2', name='fpga', extra_specs={
    'resources:CUSTOM_FPGA_X': '1'})


VGPU = dict(SMALL, id='f3', name='vgpu', extra_specs={'resources:VGPU': '1'})


def inventory(total):
    return {'total': total, 'reserved': 0, 'min_unit': 1, 'max_unit': total,
            'step_size': 1, 'allocation_ratio': 1.0}


def snapshot(fat=False):
    """vm1 was evacuated to host2 and still holds host1, which has room
    for one small server; host3 has room for two.  With ``fat``, server
    fat on host3 holds 1024 MB where its flavor needs 512 (a wrong
    amount)."""
    cloud, vm = evacuated()
    if fat:
        cloud.allocate(cloud.server('fat', 'host3'), H3,
                       {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 1})
    found = cloud.snapshot()
    small = {'VCPU': inventory(1), 'MEMORY_MB': inventory(512),
             'DISK_GB': inventory(1)}
    found.inventories = {H1: small, H2: small, H3: {
        'VCPU': inventory(2), 'MEMORY_MB': inventory(1024),
        'DISK_GB': inventory(2)}}
    return found, vm


def with_segment(found):
    """``found`` with a routed network's segment provider: Neutron's root,
    with an inventory, no hypervisor."""
    segment = uid('Neutron segment id 2c1f7d3a')
    found.providers[segment] = m.Provider(
        segment, 'Neutron segment id 2c1f7d3a', 1, segment)
    found.inventory_classes[segment] = ('IPV4_ADDRESS',)
    found.inventories[segment] = {'IPV4_ADDRESS': inventory(254)}
    return found


def run(*argv, segment=False, fat=False):
    args = options.build_parser().parse_args(['capacity', *argv])
    out = io.StringIO()
    found, vm = snapshot(fat)
    if segment:
        with_segment(found)
    with mock.patch.object(collect, 'full_snapshot', return_value=found), \
            mock.patch.object(nova, 'flavor_list',
                              return_value=[SMALL, FPGA, VGPU]), \
            mock.patch.object(cli.client, 'for_cloud'), \
            mock.patch.object(cli.client, 'validate_token'):
        code = cli.execute(args, out)
    return code, out.getvalue(), vm
