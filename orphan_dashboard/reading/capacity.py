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

"""What a capacity question reads beyond the snapshot: Nova's flavors,
the projects' Placement usages and Keystone's unified limits (I/O)."""

import logging

from orphan_dashboard.api import keystone
from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import parse
from orphan_dashboard.reading import collect

LOG = logging.getLogger(__name__)


def flavors(nova_client):
    """``[(id, Flavor)]`` of every flavor Nova lists (public and
    private)."""
    return [(body['id'], parse.listed_flavor(body))
            for body in nova.flavor_list(nova_client)]


def project_usages(placement_client, projects, concurrency):
    """``{project: {class: used}}`` from Placement, ``concurrency`` read
    at a time."""
    return collect.concurrently(
        lambda p: placement.project_usages(placement_client, p),
        projects, concurrency)


def compute_scope(catalog, compute_url):
    """``(service id, region id)`` whose unified limits Nova enforces: the
    catalog's compute endpoint at ``compute_url`` (the one these clients
    call), as Nova's ``oslo.limit`` is pointed at its own endpoint; else
    the only compute service and region the catalog has.  None when the
    catalog does not tell them apart."""
    services = [s for s in catalog if s.get('type') == 'compute']
    wanted = (compute_url or '').rstrip('/')
    for service in services:
        for endpoint in service.get('endpoints', ()):
            if (endpoint.get('url') or '').rstrip('/') == wanted:
                return service['id'], endpoint.get('region_id')
    scopes = {(s['id'], e.get('region_id'))
              for s in services for e in s.get('endpoints', ())}
    return scopes.pop() if len(scopes) == 1 else None


def limits(identity_client, nova_client):
    """``{project: {class: limit}}`` getter from Keystone's unified limits
    of this cloud's compute service and region (:func:`compute_scope`),
    registered limits as every project's default; none where Keystone has
    none, or will not say (no endpoint, no permission, too old, no compute
    endpoint it can tell)."""
    if identity_client is None:
        return lambda project: {}
    try:
        compute_url = nova_client.get_endpoint()
        scope = compute_scope(keystone.catalog(identity_client),
                              compute_url)
        if scope is None:
            LOG.warning('the catalog names no compute endpoint at %s: '
                        'no limits are shown', compute_url)
            return lambda project: {}
        defaults, per_project = keystone.class_limits(identity_client,
                                                      *scope)
    except Exception as exc:
        LOG.warning('Keystone gave no limits (%s): none are shown', exc)
        return lambda project: {}
    if per_project is None:
        return lambda project: dict(defaults, **_project_limits(
            identity_client, project, scope))
    return lambda project: dict(defaults, **per_project.get(project, {}))


def _project_limits(identity_client, project, scope):
    """One project's own limits, asked alone; none where Keystone will
    not say."""
    try:
        return keystone.project_class_limits(identity_client, project,
                                             *scope)
    except Exception as exc:
        LOG.warning('Keystone gave no limits of project %s (%s)', project,
                    exc)
        return {}
