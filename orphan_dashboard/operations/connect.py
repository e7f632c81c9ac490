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

"""What a front end connects with: the clients of the services, the cloud
they belong to, and the journal that records the writes made there.  The
panel builds them from Horizon's request, the CLI from ``clouds.yaml`` or
its environment; the use cases of this package then take them as they
are."""

import getpass

from orphan_dashboard.api import client
from orphan_dashboard.writing import journal

DEFAULT_TIMEOUT = client.DEFAULT_TIMEOUT


def for_request(request, timeout):
    """The clients of the Horizon user behind ``request``."""
    return client.for_request(request, timeout)


def credentials_for_request(request):
    """What a background sweep needs to act as that user."""
    return client.credentials_for_request(request)


def cloud_for_request(request):
    """The cloud that user is logged in to."""
    return client.cloud_for_request(request)


def for_cloud(cloud=None, timeout=None):
    """The clients ``clouds.yaml`` or ``OS_*`` name (as ``openstack``)."""
    return client.for_cloud(cloud, timeout=timeout)


def for_session(session, region_name, interface, auth_url, timeout=None):
    """The clients on a session ``openstack`` authenticated (its plugin):
    the same cloud as :func:`for_cloud` given the same configuration."""
    return client.for_session(session, region_name, interface, auth_url,
                              timeout=timeout)


def cloud_for_clients(clients):
    """The cloud of :func:`for_cloud`'s clients."""
    return client.cloud_for_clients(clients)


def validate_token(clients):
    """Have each service validate the token once, up front."""
    return client.validate_token(clients)


def journal_for_request(request, cloud):
    """The journal of the Horizon user behind ``request``."""
    return journal.Journal.for_request(request, cloud)


def journal_for_clients(clients):
    """The journal of whoever ``clients`` authenticated as (a token knows
    no names: then the local user's)."""
    adapter = clients.placement
    try:
        access = (adapter.auth or adapter.session.auth).get_access(
            adapter.session)
        user_name, project_name = access.username, access.project_name
    except Exception:  # token-only auth knows no names
        user_name = project_name = None
    return journal.Journal(
        'cli', client.cloud_for_clients(clients),
        user_id=adapter.get_user_id(),
        user_name=user_name or getpass.getuser(),
        project_id=adapter.get_project_id(),
        project_name=project_name or '')
