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

"""Placement calls the audit and the repairs need.

Horizon's own ``api.placement`` is read-only and stops at 1.14.  Every
function takes a keystoneauth ``Adapter`` first (see
:mod:`orphan_dashboard.api.client`), so the panel and ``orphan-audit`` share
them.  Errors propagate as keystoneauth ``HttpError`` subclasses.
"""

import email.utils

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import microversions as mv
from orphan_dashboard.api import trace

SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'
OWNER_PREFIX = 'OWNER_'
CONCURRENT_UPDATE = 'placement.concurrent_update'


def _get(client, path, version, **params):
    return client.get(path, microversion=version, params=params or None)


@trace
def provider_list(client, **filters):
    """All resource providers with their root and parent (no paging)."""
    resp = _get(client, '/resource_providers', mv.PROVIDERS, **filters)
    return resp.json()['resource_providers']


@trace
def sharing_provider_uuids(client):
    providers = provider_list(client, required=SHARING_TRAIT)
    return {p['uuid'] for p in providers}


@trace
def trait_exists(client, name):
    try:
        _get(client, '/traits/%s' % name, mv.PROVIDER_RECORD)
    except ks_exc.NotFound:
        return False
    return True


@trace
def owner_traits(client):
    """The ``OWNER_*`` traits Placement's os-traits knows (``OWNER_NOVA``,
    ``OWNER_CYBORG``, ...): none where it predates them."""
    resp = _get(client, '/traits', mv.TRAITS,
                name='startswith:%s' % OWNER_PREFIX)
    return resp.json()['traits']


@trace
def trait_holders(client, trait):
    """The uuids of the providers carrying ``trait``.  Placement answers a
    trait it does not know with 400, but also, rarely, one it knows while
    another request refreshes its trait cache: then the listing is asked
    again."""
    try:
        providers = provider_list(client, required=trait)
    except ks_exc.BadRequest:
        if not trait_exists(client, trait):
            return set()
        providers = provider_list(client, required=trait)
    return {p['uuid'] for p in providers}


def _provider_part(client, provider_uuid, part):
    """One of a provider's sub-resources (``allocations``, ``usages``,
    ``inventories``): the body's member of that name."""
    resp = _get(client, '/resource_providers/%s/%s' % (provider_uuid, part),
                mv.ALLOCATIONS)
    return resp.json()[part]


@trace
def provider_allocations(client, provider_uuid):
    """``{consumer: {"resources": {...}, "consumer_generation": n}}``."""
    return _provider_part(client, provider_uuid, 'allocations')


@trace
def provider_inventories(client, provider_uuid):
    return _provider_part(client, provider_uuid, 'inventories')


@trace
def provider_usages(client, provider_uuid):
    """``{class: amount}`` every consumer holds of the provider."""
    return _provider_part(client, provider_uuid, 'usages')


@trace
def max_microversion(client):
    """The newest microversion ``GET /`` names, as ``(1, 39)``: all
    Placement says of its release."""
    versions = client.get('/').json()['versions']
    return max(tuple(int(n) for n in v['max_version'].split('.'))
               for v in versions)


@trace
def port_candidates(client, groups, root):
    """Placement's allocation candidates in ``root``'s tree for
    ``groups`` (``{group id: (resources, required traits)}``), each group
    its own numbered request group: ``[{group id: provider uuid}]``."""
    params = {'group_policy': 'none'}
    for group, (resources, required) in sorted(groups.items()):
        params['resources_' + group] = ','.join(
            '%s:%d' % (rc, n) for rc, n in sorted(resources.items()))
        params['in_tree_' + group] = root
        if required:
            params['required_' + group] = ','.join(required)
    found = _get(client, '/allocation_candidates', mv.CANDIDATES, **params)
    return [{group[1:] if group.startswith('_') else group: providers[0]
             for group, providers in request['mappings'].items()}
            for request in found.json()['allocation_requests']]


@trace
def consumer_allocations(client, consumer_uuid):
    """One consumer, with ``last_modified`` parsed from the response header.

    An unknown consumer answers ``{"allocations": {}}``, never 404.
    """
    resp = _get(client, '/allocations/%s' % consumer_uuid, mv.ALLOCATIONS)
    body = resp.json()
    header = resp.headers.get('last-modified')
    body['last_modified'] = (email.utils.parsedate_to_datetime(header)
                             if header and body.get('allocations') else None)
    return body


def _body(allocations, generation, project_id, user_id):
    return {
        'allocations': {rp: {'resources': dict(resources)}
                        for rp, resources in allocations.items()},
        'consumer_generation': generation,
        'project_id': project_id,
        'user_id': user_id,
    }


@trace
def put_allocations(client, consumer_uuid, allocations, generation,
                    project_id, user_id):
    """Replace one consumer's allocations if its generation still matches.

    ``allocations == {}`` empties the consumer (a generation-checked delete).
    """
    client.put('/allocations/%s' % consumer_uuid, microversion=mv.WRITE,
               json=_body(allocations, generation, project_id, user_id))


@trace
def post_allocations(client, consumers):
    """Replace several consumers' allocations at once, each only if its
    generation still matches: all are written, or none.

    ``consumers``: ``{consumer: (allocations, generation, project_id,
    user_id)}``; ``allocations == {}`` empties that consumer.
    """
    client.post('/allocations', microversion=mv.WRITE, json={
        uuid: _body(*values) for uuid, values in consumers.items()})


@trace
def project_usages(client, project_id):
    """``{resource class: amount}`` a project's consumers hold, zeros left
    out: what Nova counts against its quota where it counts from
    Placement."""
    resp = _get(client, '/usages', mv.USAGES, project_id=project_id)
    return {rc: n for rc, n in resp.json()['usages'].items() if n}


@trace
def provider_record(client, provider_uuid):
    """All of a provider Placement would lose on delete, or None if gone:
    name, parent, generation, inventories, traits and aggregates."""
    path = '/resource_providers/%s' % provider_uuid
    try:
        provider = _get(client, path, mv.PROVIDER_RECORD).json()
    except ks_exc.NotFound:
        return None
    reads = {name: _get(client, path + '/' + name, mv.PROVIDER_RECORD).json()
             for name in ('inventories', 'traits', 'aggregates')}
    return {
        'uuid': provider['uuid'], 'name': provider['name'],
        'parent_provider_uuid': provider.get('parent_provider_uuid'),
        'root_provider_uuid': provider.get('root_provider_uuid'),
        'generation': provider['generation'],
        'inventories': reads['inventories']['inventories'],
        'traits': sorted(reads['traits']['traits']),
        'aggregates': sorted(reads['aggregates']['aggregates']),
    }


@trace
def delete_provider(client, provider_uuid):
    client.delete('/resource_providers/%s' % provider_uuid,
                  microversion=mv.PROVIDERS)


@trace
def create_provider(client, record):
    """Re-create a provider from :func:`provider_record`, same uuid and
    name, then its inventories, traits and aggregates."""
    body = {'uuid': record['uuid'], 'name': record['name']}
    if record.get('parent_provider_uuid'):
        body['parent_provider_uuid'] = record['parent_provider_uuid']
    client.post('/resource_providers', json=body,
                microversion=mv.PROVIDER_RECORD)
    path = '/resource_providers/%s' % record['uuid']
    generation = _get(client, path, mv.PROVIDER_RECORD).json()['generation']
    for rc in record['inventories']:
        if rc.startswith('CUSTOM_'):
            client.put('/resource_classes/%s' % rc,
                       microversion=mv.PROVIDER_RECORD)
    for trait in record['traits']:
        if trait.startswith('CUSTOM_'):
            client.put('/traits/%s' % trait, microversion=mv.PROVIDER_RECORD)
    for name, value in (('inventories', record['inventories']),
                        ('traits', record['traits']),
                        ('aggregates', record['aggregates'])):
        if value:
            generation = client.put(path + '/' + name, json={
                name: value, 'resource_provider_generation': generation},
                microversion=mv.PROVIDER_RECORD).json()[
                'resource_provider_generation']


def error_detail(exc):
    """Placement's own words from an HttpError, and its error code."""
    response = getattr(exc, 'response', None)
    try:
        error = response.json()['errors'][0]
        return error.get('detail') or error.get('title'), error.get('code')
    except Exception:
        return str(exc), None
