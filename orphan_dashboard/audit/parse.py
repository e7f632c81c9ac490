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

"""API JSON to engine data: pure, so recorded responses test it."""

import datetime

from orphan_dashboard.audit import model as m


def seconds_since(when, now):
    """Seconds from ``when`` (a time, or ISO text as Nova and Placement
    give it; naive is UTC) to ``now``; None where either is unknown or
    ``when`` is not a time."""
    if not when or now is None:
        return None
    if isinstance(when, str):
        try:
            when = datetime.datetime.fromisoformat(
                when.replace('Z', '+00:00'))
        except ValueError:
            return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return (now - when).total_seconds()


def provider(body):
    return m.Provider(uuid=body['uuid'], name=body['name'],
                      generation=body['generation'],
                      root_uuid=body.get('root_provider_uuid') or body['uuid'],
                      parent_uuid=body.get('parent_provider_uuid'))


def flavor(body):
    if not body or 'vcpus' not in body:
        return None
    return _flavor(body, 'ephemeral', 'original_name')


def listed_flavor(body):
    """A flavor of Nova's flavor list (not a server's embedded copy)."""
    return _flavor(body, 'OS-FLV-EXT-DATA:ephemeral', 'name')


def _flavor(body, ephemeral_key, name_key):
    """The two copies of a flavor Nova gives name the ephemeral disk and
    the name differently; the rest is the same."""
    return m.Flavor(vcpus=body['vcpus'], ram=body['ram'], disk=body['disk'],
                    ephemeral=body.get(ephemeral_key) or 0,
                    swap=body.get('swap') or 0,
                    extra_specs=body.get('extra_specs'),
                    name=body.get(name_key, ''))


HOST_KEYS = ('OS-EXT-SRV-ATTR:host', 'OS-EXT-SRV-ATTR:hypervisor_hostname')


def server(body):
    """A server of Nova's.  A key Nova left out is unknown, not None: the
    host and node a policy hides are named in ``hidden``, the image
    properties a listing, an older Nova or a volume-backed server does
    not show in ``image_fault``."""
    image = body.get('image')
    image_ref = image.get('id') if isinstance(image, dict) else None
    properties = image_properties(image) if image_ref else None
    partial = body.get('status') == m.DOWN_CELL_STATUS and \
        'flavor' not in body
    fault = None
    if properties is None and not partial:
        fault = m.IMAGE_VOLUME if image == '' else m.IMAGE_UNSHOWN
    return m.Server(
        uuid=body['id'], name=body.get('name') or '',
        status=body.get('status') or '',
        host=body.get(HOST_KEYS[0]), node=body.get(HOST_KEYS[1]),
        task_state=body.get('OS-EXT-STS:task_state'),
        vm_state=body.get('OS-EXT-STS:vm_state'),
        project_id=body.get('tenant_id'), user_id=body.get('user_id'),
        flavor=flavor(body.get('flavor')), created=body.get('created'),
        image_ref=image_ref, image_properties=properties, image_fault=fault,
        hidden=() if partial or all(k in body for k in HOST_KEYS)
        else (m.EXTENDED_ATTRIBUTES_RULE,),
        volumes_attached=len(
            body.get('os-extended-volumes:volumes_attached') or []))


def image_properties(image):
    """The ``hw_*`` properties of a server's ``image`` as Nova copied them
    at boot (2.98's ``image.properties``), or None where Nova did not
    show them."""
    properties = image.get('properties')
    if not isinstance(properties, dict):
        return None
    return {key: value for key, value in properties.items()
            if key.startswith('hw_')}


def migration(body):
    return m.Migration(uuid=body['uuid'], instance_uuid=body['instance_uuid'],
                       status=body['status'],
                       migration_type=body.get('migration_type', ''),
                       source_node=body.get('source_node'),
                       dest_node=body.get('dest_node'),
                       source_compute=body.get('source_compute'),
                       dest_compute=body.get('dest_compute'),
                       updated_at=body.get('updated_at'))


def hypervisor(body):
    service = body.get('service') or {}
    return m.Hypervisor(uuid=body['id'], hostname=body['hypervisor_hostname'],
                        host=service.get('host'), state=body.get('state'),
                        status=body.get('status'))


def service(body):
    return m.Service(host=body['host'], state=body.get('state', ''),
                     status=body.get('status', ''),
                     forced_down=bool(body.get('forced_down')),
                     uuid=body.get('id'))


def consumers_from_providers(allocations_by_provider):
    """Invert ``{provider: {consumer: {...}}}`` into consumers.

    The per-provider listing has no project, user or age: those come from
    :func:`consumer` for the consumers that need them.
    """
    consumers = {}
    for rp, allocations in allocations_by_provider.items():
        for uuid, alloc in allocations.items():
            entry = consumers.get(uuid)
            if entry is None:
                entry = consumers[uuid] = m.Consumer(
                    uuid=uuid, generation=alloc.get('consumer_generation'),
                    allocations={})
            entry.allocations[rp] = dict(alloc['resources'])
    return consumers


def consumer(uuid, body):
    """``GET /allocations/{uuid}`` (with ``last_modified`` added)."""
    return m.Consumer(
        uuid=uuid, generation=body.get('consumer_generation'),
        allocations={rp: dict(a['resources'])
                     for rp, a in body.get('allocations', {}).items()},
        project_id=body.get('project_id'), user_id=body.get('user_id'),
        modified=body.get('last_modified'))


def port(body):
    """A port with a ``resource_request``: request groups (Neutron's
    ``port-resource-request-groups``, the allocation a dict by group) or
    the older single request (the allocation one provider uuid)."""
    request = body.get('resource_request') or {}
    profile = dict(body.get('binding:profile') or {})
    allocation = profile.get('allocation')
    grouped = 'request_groups' in request
    if grouped:
        groups = {g['id']: g for g in request['request_groups']}
        placed = dict(allocation) if isinstance(allocation, dict) else {}
    else:
        groups = {body['id']: request}
        placed = {body['id']: allocation} if isinstance(
            allocation, str) else {}
    requests = {g: dict(group.get('resources') or {})
                for g, group in groups.items()}
    requests = {g: r for g, r in requests.items() if r}
    return m.Port(id=body['id'], name=body.get('name') or '',
                  device_id=body.get('device_id') or '',
                  host=body.get('binding:host_id') or '',
                  requests=requests,
                  allocation={g: p for g, p in placed.items()
                              if g in requests and p},
                  required={g: tuple(sorted(groups[g].get('required') or ()))
                            for g in requests},
                  profile=profile, revision=body.get('revision_number'),
                  grouped=grouped)
