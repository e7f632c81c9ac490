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

"""What a server's flavor and boot image need on its compute node (pure).

Mirrors what Nova's scheduler asks Placement for
(``nova.scheduler.utils.ResourceRequest.from_request_spec``): the flavor,
its extra specs, and the image's properties as ``nova.virt.hardware``
reads them.  An image's ``hw_cpu_policy`` (``dedicated``, or ``mixed``
with the flavor's ``hw:cpu_dedicated_mask`` or a realtime mask, the
image's ``hw_cpu_realtime_mask`` before the flavor's) turns VCPU into PCPU,
the flavor's ``hw:emulator_threads_policy=isolate`` then adds one PCPU
(Nova reads no image property for it), and ``hw_mem_encryption`` adds a
``MEM_ENCRYPTION_CONTEXT``; where flavor and image disagree, Nova refuses
the server, and so do we.  ``nova-manage placement heal_allocations``
applies the flavor alone (``resources_from_flavor_and_bfv``): it would
rewrite an image-pinned server's PCPU as VCPU, so we do not follow it
there.

The image's properties are those Nova copied at boot and allocated from
(compute API 2.98), never Glance's, which the image's owner may change
since; where Nova did not show them, :func:`explained_by_image` tells the
differences that one could explain, which are never rewritten.
"""

import math
import re

from orphan_dashboard.audit import reasons

VCPU = 'VCPU'
PCPU = 'PCPU'
MEMORY_MB = 'MEMORY_MB'
DISK_GB = 'DISK_GB'
MEM_ENCRYPTION_CONTEXT = 'MEM_ENCRYPTION_CONTEXT'
DEDICATED, MIXED, SHARED = 'dedicated', 'mixed', 'shared'
_TRUE = ('1', 't', 'true', 'on', 'y', 'yes')
"""What ``oslo_utils.strutils.bool_from_string`` calls true."""

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


def _true(value):
    return str(value).strip().lower() in _TRUE


def _conflict(key, flavor_value, image_value):
    return CannotHeal(reasons.reason(
        'cannot.image_conflict', flavor_key='hw:' + key,
        flavor_value=flavor_value, image_key='hw_' + key,
        image_value=image_value))


def _cpu_policy(specs, image):
    """``hardware.get_cpu_policy_constraint``: the flavor's policy wins;
    an image asking for more pinning than the flavor allows is refused."""
    flavor_policy = specs.get('hw:cpu_policy')
    image_policy = image.get('hw_cpu_policy')
    if flavor_policy == DEDICATED:
        return flavor_policy
    if (flavor_policy == MIXED and image_policy == DEDICATED) or (
            flavor_policy == SHARED and image_policy in (DEDICATED, MIXED)):
        raise _conflict('cpu_policy', flavor_policy, image_policy)
    if flavor_policy in (MIXED, SHARED):
        return flavor_policy
    return image_policy if image_policy in (DEDICATED, MIXED, SHARED) \
        else None


def _masked(vcpus, mask):
    if mask.strip().startswith('^'):
        return parse_cpu_spec('0-%d,%s' % (vcpus - 1, mask))
    return parse_cpu_spec(mask)


def _pinned_cpus(flavor, specs, image):
    """PCPU count of a ``mixed`` server: the flavor's dedicated mask, else
    its realtime CPUs (the image's mask before the flavor's)."""
    mask = specs.get('hw:cpu_dedicated_mask')
    if mask:
        return len(_masked(flavor.vcpus, mask))
    if not _true(specs.get('hw:cpu_realtime')):
        return 0
    mask = image.get('hw_cpu_realtime_mask') or specs.get(
        'hw:cpu_realtime_mask')
    return len(_masked(flavor.vcpus, mask)) if mask else flavor.vcpus


def _encrypted(specs, image):
    """``hardware.get_mem_encryption_constraint``: either asks for it, and
    neither says no where the other says yes."""
    flavor_value = specs.get('hw:mem_encryption')
    image_value = image.get('hw_mem_encryption')
    flavor_wants = None if flavor_value is None else _true(flavor_value)
    image_wants = None if image_value is None else _true(image_value)
    if not flavor_wants and not image_wants:
        return False
    if None not in (flavor_wants, image_wants) and \
            flavor_wants != image_wants:
        raise _conflict('mem_encryption', flavor_value, image_value)
    return True


def resources_from_flavor(flavor, volume_backed=False, image=None):
    """Return ``{resource class: amount}`` for one server, zeros dropped;
    ``image`` is its image's properties (none: the flavor alone).

    Raises :class:`CannotHeal` where ``heal_allocations`` refuses too, or
    where Nova would have refused the flavor with that image.
    """
    specs = flavor.extra_specs or {}
    image = image or {}
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

    policy = _cpu_policy(specs, image)
    if policy in (DEDICATED, MIXED):
        pcpus = flavor.vcpus
        if policy == MIXED:
            pcpus = _pinned_cpus(flavor, specs, image)
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
    if _encrypted(specs, image):
        resources[MEM_ENCRYPTION_CONTEXT] = 1
    return {rc: amount for rc, amount in resources.items() if amount}


def _imaginable_images(flavor):
    """Every image whose properties change what ``flavor`` needs: each
    CPU policy, each realtime mask where the flavor enables realtime, each
    with and without memory encryption."""
    cpu = [{}, {'hw_cpu_policy': DEDICATED}, {'hw_cpu_policy': MIXED}]
    if _true((flavor.extra_specs or {}).get('hw:cpu_realtime')):
        cpu += [{'hw_cpu_policy': policy,
                 'hw_cpu_realtime_mask': '0-%d' % (count - 1)}
                for policy in (None, MIXED)
                for count in range(1, flavor.vcpus + 1)]
    for properties in cpu:
        properties = {k: v for k, v in properties.items() if v}
        yield properties
        yield dict(properties, hw_mem_encryption='true')


def _holds(held, needs):
    """``held`` is ``needs`` in every class the flavor or the image could
    ask for (what else a consumer holds, a port's bandwidth, is judged
    elsewhere)."""
    return all(held.get(rc, 0) == needs.get(rc, 0)
               for rc in set(needs) | _IMAGE_CLASSES)


_IMAGE_CLASSES = frozenset({VCPU, PCPU, MEMORY_MB, DISK_GB,
                            MEM_ENCRYPTION_CONTEXT})


def explained_by_image(server, held, needs):
    """True where ``server``'s image could not be read and some image
    Nova would accept with its flavor makes it need what it ``held`` (the
    totals of one provider tree), which ``needs`` (its flavor's alone)
    would rewrite: a pinned CPU, an emulator thread, memory encryption."""
    if not server.image_unknown or _holds(held, needs):
        return False
    backed = volume_backed(server)
    for image in _imaginable_images(server.flavor):
        for backing in ((False, True) if backed is None else (backed,)):
            try:
                if _holds(held, resources_from_flavor(server.flavor,
                                                      backing, image)):
                    return True
            except CannotHeal:
                continue
    return False


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
    image = server.image_properties
    if backed is None:
        return [resources_from_flavor(server.flavor, False, image),
                resources_from_flavor(server.flavor, True, image)]
    return [resources_from_flavor(server.flavor, backed, image)]
