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

"""Keystone calls: project and user names, shown next to their ids, and
the unified limits of Nova's resource classes.

The names are read by the background sweep, never by a page
(:mod:`snapshots`); one request each, as Keystone lists without paging (a
``list_limit`` may cut the list: the ids without a name are then shown as
they are).
"""

from orphan_dashboard.api import trace


def _names(client, collection):
    body = client.get('/v3/%s' % collection).json()
    return {item['id']: item.get('name') or item['id']
            for item in body.get(collection, ())}


@trace
def project_names(client):
    """``{project id: name}`` of every project the token may list."""
    return _names(client, 'projects')


@trace
def user_names(client):
    """``{user id: name}`` of every user the token may list."""
    return _names(client, 'users')


@trace
def catalog(client):
    """The token's service catalog: ``[{'id', 'type', 'endpoints':
    [{'url', 'region_id', 'interface'}]}]``, as any token may read it."""
    return client.get('/v3/auth/catalog').json().get('catalog', [])


LIMIT_PREFIX = 'class:'
"""Nova's unified limits name a resource class ``class:VCPU``."""


def _limits(body, key, value):
    found = {}
    for limit in body.get(key, ()):
        name = limit.get('resource_name') or ''
        if name.startswith(LIMIT_PREFIX):
            found.setdefault(limit.get('project_id'), {})[
                name[len(LIMIT_PREFIX):]] = limit[value]
    return found


@trace
def class_limits(client, service_id, region_id):
    """``(defaults, {project id: {resource class: limit}})``: Keystone's
    registered limits of Nova's resource classes, and the limits set per
    project over them, of the compute service ``service_id`` in
    ``region_id``, as Nova's ``oslo.limit`` asks for them (Keystone holds
    every service's and every region's).  Both empty where none are
    set; the second None where Keystone cut its listing short."""
    scope = _scope(service_id, region_id)
    defaults = _limits(
        client.get('/v3/registered_limits', params=scope).json(),
        'registered_limits', 'default_limit').get(None, {})
    body = client.get('/v3/limits', params=scope).json()
    if body.get('truncated'):
        # A ``list_limit`` cut the listing: projects missing from it may
        # have limits of their own (:func:`project_class_limits`).
        return defaults, None
    return defaults, _limits(body, 'limits', 'resource_limit')


def _scope(service_id, region_id):
    scope = {'service_id': service_id}
    if region_id:
        scope['region_id'] = region_id
    return scope


@trace
def project_class_limits(client, project_id, service_id, region_id):
    """``{resource class: limit}`` set for one project over the registered
    ones (:func:`class_limits`'s, asked project by project where
    Keystone's ``list_limit`` cut the whole listing)."""
    body = client.get('/v3/limits', params=dict(
        _scope(service_id, region_id), project_id=project_id)).json()
    return _limits(body, 'limits', 'resource_limit').get(project_id, {})
