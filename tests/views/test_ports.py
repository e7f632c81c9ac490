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

"""Port verdicts on the provider page: their label, their reason, the
provider of each row, and only the repairs the engine offers."""

import html
from urllib import parse

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import service
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid
from tests.views.base import AdminViewTests
from tests.views.base import alerts
from tests.views.base import detail
from tests.views.base import encoded
from tests.views.base import helpers
from tests.views.base import INDEX
from tests.views.base import REPAIR

NIC_NAME = 'host3:Open vSwitch agent:br-phys'


def leaky_report(neutron=m.NEUTRON_READ):
    """``web`` on host3 holds 1000 kbps on host3's NIC that no port of it
    requests any more (its port deleted in Neutron), or, with another
    ``neutron`` state, that nobody could check."""
    cloud = Cloud()
    nic = cloud.nic('host3')
    web = cloud.server('web', 'host3')
    cloud.allocate(web, uid('host3'))
    cloud.allocate(web, nic, {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
    cloud.ports = {} if neutron == m.NEUTRON_READ else None
    cloud.neutron = neutron
    return web, nic, classify.audit(cloud.snapshot(), min_age=600)


def link(consumer, provider, action):
    return 'href="%s?%s"' % (REPAIR, html.escape(parse.urlencode(
        {'sel': encoded(consumer, provider, action),
         'next': detail(uid('host3'))})))


class PortRowTests(AdminViewTests):
    @helpers.create_mocks({service: ['report']})
    def test_a_leak_shows_its_nic_and_offers_release_first(self):
        web, nic, report = leaky_report()
        self.mock_report.return_value = report
        res = self.client.get(detail(uid('host3')))
        self.assertContains(res, 'data-verdict="leaked_port"')
        self.assertContains(res, 'Leaked port resources')
        self.assertContains(res, 'no current port of server web requests')
        self.assertContains(res, NIC_NAME)
        content = res.content.decode()
        release = content.index(link(web, nic, m.RELEASE))
        heal = content.index(link(web, nic, m.DELETE_AND_HEAL))
        self.assertLess(release, heal)
        self.assertNotIn(link(web, nic, m.TRIM), content)
        self.assertNotIn(link(web, nic, m.DELETE), content)

    @helpers.create_mocks({service: ['report']})
    def test_neutron_unread_is_said_above_the_table(self):
        web, nic, report = leaky_report(m.NEUTRON_DOWN)
        self.mock_report.return_value = report
        [warning] = alerts(self.client.get(INDEX))
        self.assertIn('Neutron did not answer', warning)
        self.assertIn('every other verdict is made as usual', warning)
        self.mock_report.return_value = leaky_report()[2]   # read again
        self.assertEqual([], alerts(self.client.get(INDEX)))
        self.assertEqual([], self.messages_seen.texts('warning'))
