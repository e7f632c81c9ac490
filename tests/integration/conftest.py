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

import socket
import subprocess
import sys
import time
import uuid

from keystoneauth1 import adapter
from keystoneauth1 import session
from keystoneauth1 import token_endpoint
import pytest

from orphan_dashboard.api import client
from sandbox.common import free_port


@pytest.fixture(scope='session')
def placement_url(tmp_path_factory):
    """A real Placement server for the whole session."""
    state = tmp_path_factory.mktemp('placement')
    port = free_port()
    log = open(state / 'placement.log', 'w')
    proc = subprocess.Popen(
        [sys.executable, '-m', 'tests.integration.placement_server',
         str(state), str(port)], stdout=log, stderr=subprocess.STDOUT)
    url = 'http://127.0.0.1:%d' % port
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(('127.0.0.1', port), 1).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError('placement did not start: %s' %
                                   (state / 'placement.log').read_text())
            time.sleep(0.2)
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def placement(placement_url):
    """An admin adapter, as the panel and the CLI build them."""
    return adapter.Adapter(
        session.Session(), service_type='placement',
        auth=token_endpoint.Token(placement_url, 'admin'))


class Builder:
    """Creates providers with inventory and allocations through the API."""

    def __init__(self, client):
        self.client = client

    def provider(self, name, parent=None, vcpus=64, ram=131072, disk=2000):
        rp = str(uuid.uuid4())
        body = {'name': '%s-%s' % (name, rp[:8]), 'uuid': rp}
        if parent:
            body['parent_provider_uuid'] = parent
        self.client.post('/resource_providers', json=body,
                         microversion='1.20')
        inventories = {'VCPU': {'total': vcpus},
                       'MEMORY_MB': {'total': ram},
                       'DISK_GB': {'total': disk}}
        self.client.put('/resource_providers/%s/inventories' % rp,
                        json={'resource_provider_generation': 0,
                              'inventories': inventories})
        return rp

    def allocate(self, allocations, consumer=None, project='p', user='u'):
        consumer = consumer or str(uuid.uuid4())
        self.client.put('/allocations/%s' % consumer, microversion='1.28',
                        json={'allocations': {rp: {'resources': r} for rp, r
                                              in allocations.items()},
                              'consumer_generation': None,
                              'project_id': project, 'user_id': user})
        return consumer


@pytest.fixture
def build(placement):
    return Builder(placement)


JOURNAL_DB = 'orphan_journal'


def pytest_collection_modifyitems(items):
    """Tests using the journal get its database (known at collection, so
    pytest-django creates and migrates it before any test runs)."""
    for item in items:
        if 'journal' in getattr(item, 'fixturenames', ()):
            item.add_marker(pytest.mark.django_db(databases=[JOURNAL_DB]))


CLOUD = client.Cloud('http://keystone.test:5000/v3', 'RegionOne',
                     'http://placement.test', 'placement-service-id')
"""The cloud the journal fixture writes to."""


@pytest.fixture
def journal(db):
    """A real journal, in the test database of its own alias."""
    from orphan_dashboard.writing import journal as journal_module
    assert journal_module.DATABASE == JOURNAL_DB
    return journal_module.Journal('test', CLOUD, 'uid', 'tester', 'pid',
                                  'admin')


def logged(**filters):
    """The journal fixture's entries, newest first."""
    from orphan_dashboard.writing import journal as journal_module
    return journal_module.entries(CLOUD, **filters)[0]


def restore_entries(placement, journal, entries):
    """Preview, then confirm exactly what was previewed, as the panel does."""
    from orphan_dashboard.api import client
    from orphan_dashboard.operations import restore
    from orphan_dashboard.writing import journal as journal_module
    restorable = journal_module.restorable(CLOUD,
                                           {e.subject for e in entries})
    clients = client.Clients(placement, None)
    pairs = restore.fresh_plans(clients, entries, restorable)
    return [row for _entry, row in pairs], restore.restore(
        clients, journal, entries,
        {entry.id: row.plan for entry, row in pairs if row.plan},
        restorable)
