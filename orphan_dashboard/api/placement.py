"""Placement calls the audit and the repairs need.

Horizon's own ``api.placement`` is read-only and stops at 1.14.  Every
function takes a keystoneauth ``Adapter`` first (see
:mod:`orphan_dashboard.api.client`), so the panel and ``orphan-audit`` share
them.  Errors propagate as keystoneauth ``HttpError`` subclasses.
"""

import email.utils

from orphan_dashboard.api import trace

from orphan_dashboard.api import microversions as mv

SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'
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
def provider_allocations(client, provider_uuid):
    """``{consumer: {"resources": {...}, "consumer_generation": n}}``."""
    resp = _get(client, '/resource_providers/%s/allocations' % provider_uuid,
                mv.ALLOCATIONS)
    return resp.json()['allocations']


@trace
def provider_inventories(client, provider_uuid):
    resp = _get(client, '/resource_providers/%s/inventories' % provider_uuid,
                mv.ALLOCATIONS)
    return resp.json()['inventories']


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
    """Write several consumers in one transaction.

    ``consumers`` maps a consumer uuid to a dict with ``allocations``,
    ``generation``, ``project_id`` and ``user_id``.
    """
    body = {uuid: _body(c['allocations'], c['generation'], c['project_id'],
                        c['user_id'])
            for uuid, c in consumers.items()}
    client.post('/allocations', microversion=mv.WRITE, json=body)


@trace
def delete_provider(client, provider_uuid):
    client.delete('/resource_providers/%s' % provider_uuid,
                  microversion=mv.PROVIDERS)


def error_detail(exc):
    """Placement's own words from an HttpError, and its error code."""
    response = getattr(exc, 'response', None)
    try:
        error = response.json()['errors'][0]
        return error.get('detail') or error.get('title'), error.get('code')
    except Exception:
        return str(exc), None
