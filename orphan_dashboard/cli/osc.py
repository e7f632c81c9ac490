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

"""The OpenStackClient plugin: ``openstack placement orphan ...``.

A service of its own (``placement_orphan``, command group
``openstack.placement_orphan.v1``) rather than commands in
osc-placement's ``openstack.placement.v1`` group: that group is loaded
only when osc-placement is installed, and only for the major version its
own option selects.  The commands are in :mod:`osc_commands`; the client
is the pair of adapters ``orphan-audit`` uses, on ``openstack``'s session.
"""

import logging

from orphan_dashboard.api import client
from orphan_dashboard import conf

LOG = logging.getLogger(__name__)

API_NAME = 'placement_orphan'
API_VERSION_OPTION = 'os_placement_orphan_api_version'
DEFAULT_API_VERSION = '1'
API_VERSIONS = ('1',)


def make_client(instance):
    """The Placement, Nova and Keystone adapters of the cloud
    ``openstack`` logged in to."""
    LOG.debug('placement orphan clients on the openstack session')
    return client.for_session(
        instance.session, instance.region_name, instance.interface,
        getattr(instance.auth, 'auth_url', None),
        timeout=instance.session.timeout,
        listing_timeout=conf.NOVA_LISTING_TIMEOUT.get(),
        cell_timeout=conf.NOVA_CELL_TIMEOUT.get())


def build_option_parser(parser):
    """No global options: the commands take their own."""
    return parser
