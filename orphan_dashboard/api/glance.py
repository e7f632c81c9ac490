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

"""Glance calls the audit needs: one image's properties.

Nova builds a server's request from its image's properties as well as its
flavor (:mod:`orphan_dashboard.audit.heal`), and the compute API does not
show them.  Glance's v2 API has no microversions; its catalog endpoint is
unversioned, so the path names ``/v2``.  Errors leave this module as
keystoneauth's exceptions.
"""

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import trace


@trace
def image_get(client, image_id):
    """``GET /v2/images/{id}``: the image as Glance shows it (its
    properties are top-level keys), or None where it is deleted (Glance
    answers 404 for a deleted image as for one that never was)."""
    try:
        return client.get('/v2/images/%s' % image_id).json()
    except ks_exc.NotFound:
        return None
