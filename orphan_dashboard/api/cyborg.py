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

"""Cyborg calls the preview needs: the accelerator requests (ARQs) a server
holds.  Read only; errors leave this module as keystoneauth's exceptions
(``EndpointNotFound`` where the catalog has no Cyborg)."""

from orphan_dashboard.api import trace

REQUESTS = '/accelerator_requests'
"""Under the catalog's ``accelerator`` endpoint (``.../v2``), as Nova's
Cyborg client calls it."""


@trace
def instance_requests(client, instance_uuid):
    """The ARQs Cyborg holds for ``instance_uuid``, in any state (the
    filter Nova's ``get_arqs_for_instance`` uses)."""
    return client.get(REQUESTS, params={'instance': instance_uuid}).json()[
        'arqs']


def requests_url(client, instance_uuid):
    """The URL Nova's delete path calls to delete a server's ARQs
    (``delete_arqs_for_instance``)."""
    return '%s%s?instance=%s' % (client.get_endpoint().rstrip('/'),
                                 REQUESTS, instance_uuid)
