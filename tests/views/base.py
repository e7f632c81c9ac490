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

"""Horizon-style view tests: engine objects in, service calls mocked.

``tests/views/conftest.py`` makes any call to a cloud fail the test and
fails on unexpected error messages.
"""

import html
import re
from unittest import mock
from urllib import parse

from django.urls import reverse

from openstack_dashboard.test import helpers
from openstack_dashboard.test.test_data import exceptions as exceptions_data
from openstack_dashboard.test.test_data import keystone_data

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.writing import repair
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid

PLACEMENT = {
    'type': 'placement', 'name': 'placement',
    'id': 'f0b5e7a4c1d94e2f8a3b6c7d8e9f0a1b',
    'endpoints_links': [],
    'endpoints': [{'region': 'RegionOne', 'interface': interface,
                   'url': 'http://placement.example.com/placement'}
                  for interface in ('admin', 'internal', 'public')],
}

INDEX = reverse('horizon:admin:orphaned_allocations:index')
REPAIR = reverse('horizon:admin:orphaned_allocations:repair')
RESTORE = reverse('horizon:admin:orphaned_allocations:restore')
DELETE_PROVIDER = reverse(
    'horizon:admin:orphaned_allocations:delete_provider')
H1, H2, H3, H4 = uid('host1'), uid('host2'), uid('host3'), uid('host4')
GONE, GONE_BUSY = uid('gone'), uid('gone-busy')
EVIL = '<script>alert(1)</script>'


def detail(provider):
    return reverse('horizon:admin:orphaned_allocations:detail',
                   args=[provider])


class Incidents:
    """A small cloud with one of each verdict, audited by the real engine.

    host1: dead and forced down; ``vm`` (named ``EVIL``) was evacuated from
    it to host2 and still holds host1 (evacuated_source: trim).
    host2: a resize in progress (protected) and a confirmed migration that
    left its allocation (stale_migration, instance ``old``).
    host3: ``bare`` has no allocation (missing: heal); ``stranger`` is a
    consumer nobody knows (unknown_consumer: delete, never recommended).
    ``legacy``, written before Placement 1.8 (incomplete_consumer: set
    project and user).
    host4: healthy.
    gone: a provider whose compute node is gone, empty (deletable).
    gone-busy: one without compute node still holding a deleted server.
    """

    def __init__(self, down_cell=False, bandwidth_left=False):
        cloud = Cloud()
        cloud.host('host1', state='down', forced_down=True)
        self.vm = cloud.server(EVIL, 'host2')
        cloud.allocate(self.vm, H1)
        cloud.allocate(self.vm, H2)
        if bandwidth_left:
            cloud.allocate(self.vm, cloud.child(H1, 'host1-nic'),
                           {'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
        cloud.migration('evac', self.vm, 'done', kind='evacuation')
        self.ok = cloud.server('ok', 'host3')
        cloud.allocate(self.ok, H3)
        self.resizing = cloud.server('resizing', 'host3')
        cloud.allocate(self.resizing, H3)
        self.resize = cloud.migration('resize', self.resizing, 'finished',
                                      kind='resize', source='host2',
                                      dest='host3')
        cloud.allocate(self.resize, H2)
        self.old = cloud.server('old', 'host3')
        cloud.allocate(self.old, H3)
        self.stale = cloud.migration('stale', self.old, 'confirmed',
                                     source='host2', dest='host3')
        cloud.allocate(self.stale, H2)
        self.bare = cloud.server('bare', 'host3')
        self.stranger = uid('stranger')
        cloud.allocate(self.stranger, H3)
        cloud.host('host4')
        self.legacy = cloud.server('legacy', 'host3')
        cloud.allocate(self.legacy, H3, owner=(m.INCOMPLETE, m.INCOMPLETE))
        self.fine = cloud.server('fine', 'host4')
        cloud.allocate(self.fine, H4)
        cloud.providers[GONE] = m.Provider(GONE, 'gone', 1, GONE)
        cloud.providers[GONE_BUSY] = m.Provider(GONE_BUSY, 'gone-busy', 1,
                                                GONE_BUSY)
        for gone in (GONE, GONE_BUSY):
            cloud.tag(gone)   # Nova made them
        self.dead = uid('dead')
        cloud.allocate(self.dead, GONE_BUSY)
        cloud.known.add(self.dead)
        if down_cell:
            cloud.servers[uid('lost')] = m.Server(uid('lost'),
                                                  status='UNKNOWN')
        if down_cell == 'host5':
            # Its cell down: os-services lists host5 UNKNOWN, Nova could
            # not list hypervisors; node9 is a provider nothing confirms.
            for name in ('host5', 'node9'):
                cloud.providers[uid(name)] = m.Provider(uid(name), name, 1,
                                                        uid(name))
            cloud.services['host5'] = m.Service('host5', '',
                                                status='UNKNOWN')
        self.snapshot = cloud.snapshot()
        if down_cell == 'host5':
            self.snapshot.hypervisors_listed = False
        self.report = classify.audit(self.snapshot, min_age=600)


def plan_row(consumer, provider=H1, action=m.TRIM, before=None, after=None,
             reason='evacuated', nova='server vm (ACTIVE)'):
    before = before or {H1: {'VCPU': 1}, H2: {'VCPU': 1}}
    after = {H2: {'VCPU': 1}} if after is None else after
    plan = m.Plan(action, consumer, provider, m.EVACUATED_SOURCE, reason, 1,
                  'p', 'u', before, after)
    finding = m.Finding(consumer, provider, m.EVACUATED_SOURCE, reason,
                        before.get(provider, {}), (action,), nova=nova)
    return repair.Row(m.Selection(consumer, provider, action),
                      plan=plan, finding=finding)


def encoded(consumer, provider, action):
    return '%s:%s:%s' % (consumer, provider, action)


def preview_link(response):
    """``(path, next)`` of a batch action's redirect to its preview, which
    names the selection the server kept and nothing else of it."""
    url = parse.urlsplit(response['location'])
    query = parse.parse_qs(url.query)
    assert set(query) == {'selection', 'next'}, query
    return url.path, query['next'][0]


def flat(response):
    """A page's HTML with each run of white space one space."""
    return re.sub(r'\s+', ' ', response.content.decode())


def alerts(response):
    """The warnings a page says above its tables of its one report (a
    partial audit, what Nova hid or did not answer), as text."""
    return [re.sub(r'\s+', ' ', html.unescape(text)).strip()
            for text in re.findall(
                r'<p class="orphan-partial alert alert-warning" '
                r'role="alert">(.*?)</p>', response.content.decode(), re.S)]


def signed_rows(response):
    """The signed rows a preview page hands its confirm."""
    return response.context['form'].initial['rows']


def provider_row(plan):
    """A provider delete's preview row offering ``plan``."""
    return repair.Row(m.Selection('', plan.provider, m.DELETE_PROVIDER),
                      plan=plan)


def signed_for(client, *plans):
    """What a provider delete's preview offering ``plans`` (the first the
    tree's root) signed, as an older preview may have: the rows a
    confirm posts."""
    with mock.patch.object(service, 'preview_provider_delete',
                           return_value=[provider_row(p) for p in plans]):
        return signed_rows(client.get(DELETE_PROVIDER,
                                      {'provider': plans[-1].provider}))


def hidden_ids_removed(response):
    """The page's visible text without the ids the panel shows beside a
    name (a hover or a small grey id away) and without the equivalent
    commands: where a uuid is left, the panel shows it instead of a name
    it knows."""
    text = re.sub(r'<small class="text-muted orphan-provider-id">.*?'
                  r'</small>', '', response.content.decode(), flags=re.S)
    text = re.sub(r'<script.*?</script>', '', text, flags=re.S)
    text = re.sub(r'<code class="orphan-command">.*?</code>', '', text,
                  flags=re.S)
    return html.unescape(re.sub(r'<[^>]*>', '', text))


def assert_named(response, *uuids):
    """None of ``uuids`` is shown where the panel knows its name: the
    message quotes where one was."""
    text = hidden_ids_removed(response)
    for uuid in uuids:
        at = text.find(uuid)
        assert at < 0, 'uuid shown instead of its name: %r' % ' '.join(
            text[max(at - 80, 0):at + 80].split())


BATCH_LINK = re.compile(
    r'<a class="orphan-batch-link" href="([^"]+)">See every row of this '
    r'batch in History.</a>')


def batch_message(seen):
    """The one message a confirm leaves (``seen``, the test's
    ``messages_seen``): ``(level, its lines, the batch its link shows in
    History)``."""
    ((level, text),) = seen
    lines = text.split('<br>')
    link = BATCH_LINK.fullmatch(lines.pop())
    assert link, text
    url = parse.urlparse(html.unescape(link.group(1)))
    query = parse.parse_qs(url.query)
    assert (url.path, query['tab']) == (
        INDEX, ['orphaned_allocations__history']), url
    return level, lines, query['batch'][0]


def preview_cells(response, row=0):
    """The visible text of a preview row's Before and After cells."""
    rows = re.findall(r'<tr class="orphan-preview-row.*?</tr>',
                      response.content.decode(), flags=re.S)
    cells = re.findall(r'<td[^>]*>(.*?)</td>', rows[row], flags=re.S)
    return [' '.join(html.unescape(re.sub(r'<[^>]*>', '', re.sub(
        r'<(div|br)\b', r' \g<0>', cell))).split()) for cell in cells[-2:]]


def tree_of_report(request, provider_uuid):
    """``service.provider_report`` as the store serves it: the tree of the
    report ``service.report`` (mocked by the test) gives."""
    report = service.report(request)
    return report and report.provider(provider_uuid)


def keystone_test_data(load_onto):
    """Of Horizon's test data, what the panel's views use: Keystone's
    (the user, projects, catalog) and the exceptions.  Horizon's setup
    loads every service's, and building Neutron's and Nova's SDK
    resources was most of a view test's setup."""
    for data in (exceptions_data.data, keystone_data.data):
        data(load_onto)
    return load_onto


class KeystoneTestData:
    """Loads only :func:`keystone_test_data` as Horizon's test data."""

    def _setup_test_data(self):
        with mock.patch.object(helpers.test_utils, 'load_test_data',
                               keystone_test_data):
            super()._setup_test_data()


class AdminViewTests(KeystoneTestData, helpers.BaseAdminViewTests):
    """Admin tests with a placement endpoint in the service catalog; a
    provider tree comes from the report the test gives."""

    def setUp(self):
        super().setUp()
        self.patched(mock.patch.object(service, 'provider_report',
                                       side_effect=tree_of_report))

    def reported(self, incidents=None):
        """The panel's last audit (a ``report`` mock) that of ``incidents``
        (an :class:`Incidents`, a new one where not given): the
        incidents."""
        incidents = incidents or Incidents()
        self.mock_report.return_value = incidents.report
        return incidents

    def rendered(self, response, template):
        """:func:`flat` text of ``response``, which rendered the panel's
        ``template``."""
        self.assertTemplateUsed(response, 'orphaned_allocations/' + template)
        return flat(response)

    def patched(self, *patches):
        """Each of ``patches`` started for the rest of the test."""
        for patch in patches:
            patch.start()
            self.addCleanup(patch.stop)

    def _setup_test_data(self):
        super()._setup_test_data()
        self.service_catalog.append(PLACEMENT)


class MemberViewTests(KeystoneTestData, helpers.TestCase):
    """A project member, placement in the catalog too."""

    def _setup_test_data(self):
        super()._setup_test_data()
        self.service_catalog.append(PLACEMENT)


class JournalViewTests(AdminViewTests):
    """View tests over the real journal of one cloud, the last audit
    being :class:`Incidents`'."""
    databases = {'default', 'orphan_journal'}

    def setUp(self):
        super().setUp()
        from orphan_dashboard.api import client
        self.cloud = client.Cloud('http://keystone.test/v3', 'RegionOne',
                                  'http://placement.test', 'placement-id')
        self.patched(mock.patch.object(service, 'cloud_for_request',
                                       return_value=self.cloud),
                     mock.patch.object(service, 'report',
                                       return_value=Incidents().report))

    def journaled(self, consumer, provider, batch, action, verdict):
        """An applied allocations entry of this cloud that took one VCPU
        off ``provider``."""
        from orphan_dashboard.models import JournalEntry
        from orphan_dashboard.writing import journal
        journal.ensure_ready()
        return JournalEntry.objects.create(
            cloud=self.cloud.key, batch=batch, kind=JournalEntry.ALLOCATIONS,
            subject=consumer, consumer=consumer, provider=provider,
            touched=provider, action=action, verdict=verdict, reason='',
            before={provider: {'VCPU': 1}}, after={}, generation=1,
            status=JournalEntry.APPLIED, source='test', user_name='admin',
            consumer_project='p', consumer_user='u')
