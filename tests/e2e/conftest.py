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

"""The sandbox cloud (real Keystone, Nova and Placement) for e2e tests."""

import contextlib
import os
import subprocess
import sys
import time
from unittest import mock

from django.test import Client
from django.test.utils import override_settings
import pytest

from orphan_dashboard.api import placement
from tests import clouds

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


class Cloud:
    """A test module's view of the run's sandbox (``tests/clouds.py``):
    what it staged, its control API and its clients."""

    def __init__(self, sandbox):
        self.sandbox = sandbox
        self.state_dir = sandbox.state_dir
        self.config = sandbox.config

    @property
    def incidents(self):
        return self.config['incidents']

    def control(self, method, path):
        status, body = self.sandbox.control(method, path, timeout=300)
        assert status == 200, '%s %s -> %s: %s' % (method, path, status, body)
        return body

    def clients(self):
        return clouds.clients(self.sandbox)


def module_cloud(incidents):
    """A ``cloud`` fixture: the run's sandbox of the module's topology
    (its ``topology`` marker) with ``incidents`` staged and nothing any
    other module did; what a module caches of a cloud goes with it."""
    @pytest.fixture(scope='module')
    def cloud(request):
        from django.core.cache import caches
        for cache in caches.all():
            cache.clear()
        return Cloud(clouds.staged(request, incidents))
    return cloud


cloud = module_cloud('all')


def orphan_audit(cloud, journal_dir, *args, clouds_yaml=None):
    """``orphan-audit --os-cloud sandbox ARGS`` in its own process, with
    its journal in ``journal_dir`` (and its cloud in ``clouds_yaml``,
    else the sandbox's), the sandbox's share limit unless a test set
    one."""
    env = dict(os.environ,
               OS_CLIENT_CONFIG_FILE=str(clouds_yaml or
                                         cloud.config['clouds_yaml']),
               ORPHAN_AUDIT_JOURNAL_DIR=str(journal_dir),
               ORPHAN_AUDIT_NOVA_CELL_TIMEOUT=str(
                   cloud.config['nova_cell_timeout']))
    env.setdefault('ORPHAN_AUDIT_MAX_SHARE', str(cloud.config['max_share']))
    env.setdefault('ORPHAN_AUDIT_STUCK_MIGRATION_AGE',
                   str(cloud.config['stuck_migration_age']))
    env.pop('DJANGO_SETTINGS_MODULE', None)
    return subprocess.run(
        [sys.executable, '-m', 'orphan_dashboard.cli', '--os-cloud',
         'sandbox', *args], env=env, cwd=ROOT, capture_output=True,
        text=True, timeout=300)


def decommissioned(clients, journal, host):
    """``host`` decommissioned by ``clients`` as its preview shows it now
    (no unknown consumer chosen, every allocation judged whatever its
    age): the outcomes."""
    from orphan_dashboard import conf
    from orphan_dashboard.operations import decommission

    settings = conf.RunSettings(min_age=0)
    plan = decommission.preview(clients, host, settings)
    return decommission.apply(clients, journal, host, plan.plans(), (),
                              settings)


@contextlib.contextmanager
def over_capacity(clients, provider, resource_class):
    """``provider``'s ``resource_class`` reserved whole (a capacity of 0),
    as an operator who reserves a host's memory leaves it; its inventory
    put back after."""
    path = '/resource_providers/%s/inventories/%s' % (provider,
                                                      resource_class)
    kept = clients.placement.get(path, microversion='1.28').json()
    clients.placement.put(path, microversion='1.28', json=dict(
        kept, reserved=kept['total'], allocation_ratio=1.0))
    try:
        yield
    finally:
        now = clients.placement.get(path, microversion='1.28').json()
        clients.placement.put(path, microversion='1.28', json=dict(
            kept, resource_provider_generation=now[
                'resource_provider_generation']))


def young_findings(cloud):
    """A wrong amount and an incomplete consumer staged now, through the
    Placement API: ``(the wrong amount's server, its name, its provider,
    the incomplete consumer)``."""
    wrong = cloud.control('POST', '/incidents/wrong_amount')
    legacy = cloud.control('POST', '/incidents/pre_pike_consumer')
    (server,) = wrong['servers']
    return (server['uuid'], server['name'], wrong['expected'][0]['provider'],
            legacy['servers'][0]['uuid'])


def held(clients, consumer):
    """What ``consumer`` holds in Placement now, by provider."""
    body = placement.consumer_allocations(clients.placement, consumer)
    return {rp: a['resources'] for rp, a in body['allocations'].items()}


def every_allocation(clients):
    """``{provider: (generation, its allocations)}`` of every provider in
    Placement now, each consumer's generation included: a run that wrote
    nothing leaves it as it was."""
    return {p['uuid']: (p['generation'], placement.provider_allocations(
        clients.placement, p['uuid']))
        for p in placement.provider_list(clients.placement)}


def owner(clients, consumer):
    """``(project, user)`` Placement records for ``consumer`` now."""
    body = placement.consumer_allocations(clients.placement, consumer)
    return body.get('project_id'), body.get('user_id')


def login(cloud, who):
    """A Django test client logged in through the real Keystone."""
    client = Client()
    response = client.post('/auth/login/', {
        'username': cloud.config[who]['username'], 'region': 'default',
        'password': cloud.config[who]['password']})
    assert response.status_code == 302, 'login failed'
    return client


@pytest.fixture
def keystone(cloud):
    with override_settings(
            OPENSTACK_KEYSTONE_URL=cloud.config['auth_url'],
            AVAILABLE_REGIONS=[], OPENSTACK_KEYSTONE_DEFAULT_DOMAIN='Default',
            OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT=False,
            ORPHAN_AUDIT_MIN_AGE=0,
            ORPHAN_AUDIT_NOVA_CELL_TIMEOUT=cloud.config['nova_cell_timeout'],
            ORPHAN_AUDIT_STUCK_MIGRATION_AGE=cloud.config[
                'stuck_migration_age']):
        yield


@pytest.fixture
def horizon(cloud, keystone):
    return login(cloud, 'admin')


INDEX = '/admin/orphaned_allocations/'


@contextlib.contextmanager
def behind_gateway(cloud, service, fault, prefix, method='GET'):
    """The panel's and ``orphan-audit``'s ``service`` (``'compute'`` or
    ``'placement'``) behind a gateway (:class:`FaultProxy`) answering its
    first ``method`` to ``prefix`` with ``fault``: for the panel Horizon's
    catalog names the gateway, for ``orphan-audit`` its ``clouds.yaml``
    (``<service>_endpoint_override``).  Yields ``(proxy, clouds.yaml)``;
    the panel's cached snapshot is dropped first, so its next sweep is a
    cold one through the gateway."""
    import tempfile

    from django.core.cache import caches
    import yaml

    from orphan_dashboard.content.orphaned_allocations import service as svc
    from tests.integration.fault_proxy import FaultProxy

    url = cloud.config['nova' if service == 'compute' else service]['url']
    path = '/v2.1' if url.endswith('/v2.1') else ''
    proxy = FaultProxy(url[:len(url) - len(path)])
    proxy.inject(method, prefix, 1, fault)
    with open(cloud.config['clouds_yaml']) as f:
        config = yaml.safe_load(f)
    config['clouds']['sandbox']['%s_endpoint_override' % service] = \
        proxy.url + path
    real = svc.credentials_for_request
    for cache in caches.all():
        cache.clear()
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(
            svc, 'credentials_for_request', lambda request: real(
                request)._replace(**{service: proxy.url + path})):
        clouds_yaml = os.path.join(tmp, 'clouds.yaml')
        with open(clouds_yaml, 'w') as f:
            yaml.safe_dump(config, f)
        try:
            yield proxy, clouds_yaml
        finally:
            proxy.close()
            for cache in caches.all():
                cache.clear()


def audited(client, refresh=False, timeout=180):
    """The index page once the panel's background sweep is done (pages
    never wait for one: the first only starts it); with ``refresh``, after
    the operator's *Refresh* (changes made outside the panel)."""
    deadline = time.monotonic() + timeout
    before = client.get(INDEX + 'sweep/').json()['version']
    if refresh:
        client.post(INDEX, {'action': 'providers__refresh'})
    else:
        client.get(INDEX)
    while True:
        state = client.get(INDEX + 'sweep/').json()
        if state['version'] and not state['sweeping'] and (
                not refresh or state['version'] != before):
            return client.get(INDEX)
        assert time.monotonic() < deadline, state
        time.sleep(0.3)
