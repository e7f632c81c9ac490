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

"""What a server's flavor needs on its compute node.

Mirrors ``nova.scheduler.utils.resources_from_flavor_and_bfv`` as
``nova-manage placement heal_allocations`` uses it, so our heal writes what
Nova itself would.  Image properties (e.g. an image's ``hw_cpu_policy``) are
not visible through the API at the microversions we read and are not applied.
"""

import math
import re

from orphan_dashboard.audit import reasons

VCPU = 'VCPU'
PCPU = 'PCPU'
MEMORY_MB = 'MEMORY_MB'
DISK_GB = 'DISK_GB'

_RESOURCE_KEY = re.compile(r'^resources([1-9][0-9]*|_[a-zA-Z0-9_-]+)?:(.+)$')


class CannotHeal(reasons.Refusal):
    """The allocation cannot be rebuilt from what the API shows."""


def parse_cpu_spec(spec):
    """Parse a Nova CPU mask such as ``0-3,^2,5`` into a set of CPU ids."""
    include, exclude = set(), set()
    for part in spec.split(','):
        part = part.strip()
        if not part:
            continue
        target = include
        if part.startswith('^'):
            target, part = exclude, part[1:]
        if '-' in part:
            low, high = part.split('-', 1)
            target.update(range(int(low), int(high) + 1))
        else:
            target.add(int(part))
    return include - exclude


def _pinned_cpus(flavor, specs):
    """PCPU count of a ``mixed`` flavor (dedicated or realtime mask)."""
    mask = specs.get('hw:cpu_dedicated_mask')
    if not mask and specs.get('hw:cpu_realtime') in ('yes', 'true', 'True'):
        mask = specs.get('hw:cpu_realtime_mask')
    if not mask:
        return 0
    if mask.strip().startswith('^'):
        return len(parse_cpu_spec('0-%d,%s' % (flavor.vcpus - 1, mask)))
    return len(parse_cpu_spec(mask))


def resources_from_flavor(flavor, volume_backed=False):
    """Return ``{resource class: amount}`` for one server, zeros dropped.

    Raises :class:`CannotHeal` where ``heal_allocations`` refuses too.
    """
    specs = flavor.extra_specs or {}
    if 'accel:device_profile' in specs:
        raise CannotHeal(reasons.reason('cannot.accelerator'))
    resources = {}
    for key, value in specs.items():
        match = _RESOURCE_KEY.match(key)
        if not match:
            continue
        suffix, rc = match.groups()
        if rc == 'VGPU' and suffix is None:
            raise CannotHeal(reasons.reason('cannot.unsuffixed_vgpu'))
        resources[rc] = resources.get(rc, 0) + int(value)

    policy = specs.get('hw:cpu_policy')
    if policy in ('dedicated', 'mixed'):
        pcpus = flavor.vcpus
        if policy == 'mixed':
            pcpus = _pinned_cpus(flavor, specs)
            resources.setdefault(VCPU, flavor.vcpus - pcpus)
        if specs.get('hw:emulator_threads_policy') == 'isolate':
            pcpus += 1
        resources.setdefault(PCPU, pcpus)

    if VCPU not in resources and PCPU not in resources:
        resources[VCPU] = flavor.vcpus
    resources.setdefault(MEMORY_MB, flavor.ram)
    if DISK_GB not in resources:
        disk = flavor.ephemeral + math.ceil(flavor.swap / 1024)
        if not volume_backed:
            disk += flavor.disk
        resources[DISK_GB] = disk
    if specs.get('hw:mem_encryption') in ('true', 'True', 'yes', '1'):
        resources['MEM_ENCRYPTION_CONTEXT'] = 1
    return {rc: amount for rc, amount in resources.items() if amount}


def volume_backed(server):
    """True, False, or None when the API cannot tell.

    Nova shows an empty image for a volume-backed server.  A server booted
    from an image with an extra volume keeps its image, so "image set and
    volumes attached" is ambiguous.
    """
    if not server.image_ref:
        return True
    if server.volumes_attached:
        return None
    return False


def expected_resources(server):
    """The candidates for what ``server`` needs: one, or two if ambiguous."""
    backed = volume_backed(server)
    if backed is None:
        return [resources_from_flavor(server.flavor, False),
                resources_from_flavor(server.flavor, True)]
    return [resources_from_flavor(server.flavor, backed)]
