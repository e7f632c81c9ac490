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

"""Nova (API, conductor, scheduler, 3 fake computes) and Placement in-process.

With ``cells=2``, a second cell with one more compute (host5) that the
control API can take down and bring back.  With ``pci=True``, computes
that report PCI devices in Placement and a scheduler that allocates them
(:data:`PCI_DEVICES`).

Built from Nova's own functional-test fixtures, with the Nova API and
Placement WSGI apps served on real loopback ports behind keystonemiddleware.
Compute periodic tasks never run on their own (``periodic_enable`` is False
in Nova's ConfFixture); ``run_periodic`` runs one on demand.

Import this module only after ``OS_NOVA_DISABLE_EVENTLET_PATCHING`` is set
(``sandbox.up`` does it).
"""
import os

os.environ.setdefault('OS_NOVA_DISABLE_EVENTLET_PATCHING', '1')
import nova.tests.functional  # noqa: E402,F401  (monkey_patch decision first)

import contextlib  # noqa: E402
import copy
import inspect
import io
import logging
import sys
import threading
import time
from unittest import mock
import uuid as uuid_lib

import fixtures
from futurist import _thread as futurist_thread
from keystoneauth1 import loading as ks_loading
from keystonemiddleware.auth_token import _opts as ksm_opts
from oslo_config import cfg
from oslo_messaging import opts as oslo_messaging_opts
from oslo_serialization import jsonutils
from werkzeug import serving

from nova.api.openstack import wsgi_app
from nova.api import wsgi as nova_wsgi
from nova.compute import manager as compute_manager
import nova.conf
from nova import context as nova_context
from nova.db.api import api as api_db_api
from nova.db.main import api as main_db_api
from nova import exception
from nova import objects
from nova.objects import host_mapping
from nova import test as nova_test
from nova.tests import fixtures as nova_fixtures
from nova.tests.functional import fixtures as func_fixtures
from nova.virt import fake as fake_virt
from placement import db_api as placement_db
from placement import deploy as placement_deploy

from sandbox import common

CONF = nova.conf.CONF
LOG = logging.getLogger('sandbox')

HOSTS = ('host1', 'host2', 'host3')
TRACKED = ('compute_nodes', 'stats', 'tracked_instances',
           'tracked_migrations', 'is_bfv', 'old_resources',
           'assigned_resources')
"""What a compute's resource tracker knows of its node and instances
(copied into a snapshot with the databases it was read from)."""
SHARED = ('pci_tracker', 'provider_tree')
"""Resource tracker attributes a snapshot keeps as they are."""
CELL2_HOSTS = ('host5',)
"""Computes of the second cell, started only with ``cells=2``."""
SLOW_CELL_TIMEOUT = common.SLOW_CELL_TIMEOUT
SLOW_CELL_DELAY = 6
"""Seconds each call to a slow cell waits first: past
:data:`SLOW_CELL_TIMEOUT`."""


class ComputeGone(BaseException):
    """A hung driver call let go as the cloud shuts down.  Its compute
    crashed long before: no ``except Exception`` of Nova's runs (nothing
    reverts the move it was part of)."""


class SandboxFakeDriver(fake_virt.FakeDriver):
    """Nova's fake virt driver with a plausible hypervisor size.

    ``MIGRATE_DISK_FAULTS`` lets the incident stager make one operation
    fail the way the seed incidents did (e.g. a disk copy that times out
    on the source), ``MIGRATE_DISK_HANGS`` one never end.
    """
    vcpus = 64
    memory_mb = 262144
    local_gb = 4000

    # instance uuid -> exception to raise from migrate_disk_and_power_off
    MIGRATE_DISK_FAULTS = {}
    # instance uuid -> callable(instance) run by migrate_disk_and_power_off,
    # which then never returns: a disk copy under way when its compute
    # crashed (the callable restarts it), until the cloud shuts down
    MIGRATE_DISK_HANGS = {}
    HANGS_RELEASED = threading.Event()
    """Set by :meth:`SandboxCloud.shutdown`: what hangs gives up."""
    # node name -> dedicated CPUs it offers (PCPU), as a libvirt node with
    # a cpu_dedicated_set does; Nova's fake driver reports none
    PCPUS = {}
    NODE_IDENTITIES = {}
    """node name -> its compute node uuid where that is not the fake
    driver's own: a reinstalled host's new ``compute_id`` file (kept in
    a snapshot's memory)."""

    def get_available_resource(self, nodename):
        resources = super().get_available_resource(nodename)
        resources['uuid'] = self.NODE_IDENTITIES.get(nodename,
                                                     resources['uuid'])
        return resources

    def get_nodenames_by_uuid(self, refresh=False):
        return {self.NODE_IDENTITIES.get(name, uuid): name for uuid, name in
                super().get_nodenames_by_uuid(refresh).items()}

    def update_provider_tree(self, provider_tree, nodename, allocations=None):
        super().update_provider_tree(provider_tree, nodename, allocations)
        pcpus = self.PCPUS.get(nodename)
        if pcpus:
            provider_tree.update_inventory(nodename, dict(
                provider_tree.data(nodename).inventory, PCPU={
                    'total': pcpus, 'min_unit': 1, 'max_unit': pcpus,
                    'step_size': 1, 'allocation_ratio': 1.0,
                    'reserved': 0}))

    def migrate_disk_and_power_off(self, context, instance, dest, flavor,
                                   network_info, block_device_info=None,
                                   timeout=0, retry_interval=0):
        hang = self.MIGRATE_DISK_HANGS.pop(instance.uuid, None)
        if hang is not None:
            LOG.info('migrate_disk_and_power_off of %s hangs', instance.uuid)
            hang(instance)
            self.HANGS_RELEASED.wait()
            raise ComputeGone(instance.uuid)
        exc = self.MIGRATE_DISK_FAULTS.pop(instance.uuid, None)
        if exc is not None:
            raise exc
        return super().migrate_disk_and_power_off(
            context, instance, dest, flavor, network_info,
            block_device_info, timeout, retry_interval)


class SandboxPciFakeDriver(fake_virt.FakeDriverWithPciResources):
    """Nova's fake driver with PCI devices (three PFs, each with a VF, the
    same addresses on every node) at the sandbox's hypervisor size."""
    vcpus = SandboxFakeDriver.vcpus
    memory_mb = SandboxFakeDriver.memory_mb
    local_gb = SandboxFakeDriver.local_gb


# Nova loads drivers as 'nova.virt.<name>': make ours 'fake.SandboxFakeDriver'.
fake_virt.SandboxFakeDriver = SandboxFakeDriver
fake_virt.SandboxPciFakeDriver = SandboxPciFakeDriver

PCI_DEVICES = {
    # bus of the PF: (its resource class, the alias asking for one)
    '01': ('CUSTOM_SANDBOX_PCI_A', 'sandbox-pci-a'),
    '02': ('CUSTOM_SANDBOX_PCI_B', 'sandbox-pci-b'),
    '03': ('CUSTOM_SANDBOX_PCI_OTU', 'sandbox-pci-otu'),
}
"""The PCI cloud's PFs, one class each: bus 03's is one-time-use.  A class
must be set: Nova's default, ``CUSTOM_PCI_<vendor>_<product>``, is not
normalised, and the fake driver's ``fake-vendor_id`` makes it a name
Placement refuses.  One device of a class per node, so that Nova's PCI
tracker has one device to claim: with two alike, a cold migration's claim
on the destination may take the other one than the scheduler allocated,
and nova-compute then adds it to the server's allocation (seen: a server
migrated to host2 holding both its devices)."""
PCI_OTU_BUS = '03'


def _pf_spec(bus, resource_class, **tags):
    """A ``[pci] device_spec`` entry matching only the PF at ``bus``: its
    VF on the same provider would make Nova raise
    PlacementPciDependentDeviceException.  The function is a regex, not a
    digit: a single address makes Nova read sysfs to tell a PF."""
    return jsonutils.dumps(dict(
        address={'domain': '0000', 'bus': bus, 'slot': '00',
                 'function': '[0]'},
        resource_class=resource_class, **tags))


def _device_spec(buses):
    """The ``[pci] device_spec`` of the PFs at ``buses`` (keys of
    :data:`PCI_DEVICES`)."""
    return [_pf_spec(bus, PCI_DEVICES[bus][0], **(
        {'one_time_use': 'true'} if bus == PCI_OTU_BUS else {}))
        for bus in sorted(buses)]


def _alias(name, resource_class):
    """A ``[pci] alias`` by class alone (the fake vendor and product ids
    are not the 4 hex digits an alias allows)."""
    return jsonutils.dumps({'name': name, 'device_type': 'type-PF',
                            'resource_class': resource_class})


def _register_authtoken_opts(conf, settings):
    """Register keystonemiddleware's options on conf, then set them."""
    group = 'keystone_authtoken'
    opts = (list(ksm_opts._OPTS) +
            ks_loading.get_auth_common_conf_options() +
            ks_loading.get_auth_plugin_conf_options('password'))
    for opt in opts:
        try:
            conf.register_opt(opt, group=group)
        except cfg.DuplicateOptError:
            pass
    for key, value in settings.items():
        conf.set_override(key, value, group=group)


class _QuietHandler(serving.WSGIRequestHandler):
    def log_request(self, *args, **kwargs):
        if LOG.isEnabledFor(logging.DEBUG):
            super().log_request(*args, **kwargs)


def _serve(app, port, name):
    server = serving.make_server('127.0.0.1', port, app, threaded=True,
                                 request_handler=_QuietHandler)
    t = threading.Thread(target=server.serve_forever, name='sandbox-' + name,
                         daemon=True)
    t.start()
    return server


def lasting_test_setup(case):
    """``nova.test.TestCase.setUp`` for a cloud that serves a whole test
    run, without two things it does for a test of seconds:

    - every idle worker thread of every pool woken each 10 ms, so that a
      test's executors end at once (its "XXX(gibi)" for futurist bug
      2160159): a cloud's many workers then take CPU while it waits, and
      the GIL from every request it serves;
    - ``StandardLogging``: every DEBUG record formatted (to prove its
      format string) and every INFO one kept in memory.  ``sandbox.up``
      logs to ``sandbox.log`` instead (DEBUG with ``--debug``)."""
    idle_for = futurist_thread.ThreadWorker.MAX_IDLE_FOR
    nova_test.TestCase.setUp(case)
    futurist_thread.ThreadWorker.MAX_IDLE_FOR = idle_for
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(logging.INFO)


class SandboxCloud(nova_test.TestCase):
    """A Nova functional test that never ends: the sandbox cloud."""

    compute_driver = 'fake.SandboxFakeDriver'
    NEUTRON = None
    """``{url, keystone_url, password}`` of a real Neutron for Nova, else
    Nova's in-process ``NeutronFixture``."""
    PCI = False
    """Computes with PCI devices in Placement (``_report_pci``)."""
    CYBORG = None
    """``{url, keystone_url, password}`` of a real Cyborg for Nova, else
    none (Nova refuses a flavor's ``accel:device_profile``)."""

    def runTest(self):  # testtools wants a test method name
        pass

    def setUp(self):
        if self.PCI:
            self.compute_driver = 'fake.SandboxPciFakeDriver'
        self.flags(compute_driver=self.compute_driver)
        lasting_test_setup(self)
        if self.PCI:
            self._report_pci()
        # Nova's test ConfFixture turns a response that fails its schema
        # into a 500; production's default only logs it.  Rows staged by
        # hand (an instance marked deleted in SQL) fail it in the tenant
        # usage Project > Overview shows.
        self.flags(response_validation='warn', group='api')
        # Nova's API, conductor and scheduler share this process's one pool
        # of scatter-gather workers, where production gives each API worker
        # its own: a slow cell's workers, left to finish after Nova's
        # CELL_TIMEOUT, must not leave a healthy cell's reads without one.
        self.flags(cell_worker_thread_pool_size=32)
        self._small_rpc_pools()
        self.useFixture(nova_fixtures.RealPolicyFixture())
        if self.NEUTRON:
            self._use_real_neutron(**self.NEUTRON)
        if self.CYBORG:
            self._use_real_cyborg(**self.CYBORG)
        else:
            self.neutron = self.useFixture(
                nova_fixtures.NeutronFixture(self))
        self.glance = self.useFixture(nova_fixtures.GlanceFixture(self))
        self.cinder = self.useFixture(nova_fixtures.CinderFixture(self))
        self.placement_fixture = self.useFixture(
            func_fixtures.PlacementFixture())
        self.placement = self.placement_fixture.api
        self.useFixture(nova_fixtures.AllServicesCurrent())
        self.notifier = self.useFixture(
            nova_fixtures.NotificationFixture(self))
        self.start_service('conductor')
        self.scheduler_service = self.start_service('scheduler')
        for host in HOSTS:
            self._start_compute(host)
        if self.NUMBER_OF_CELLS > 1:
            for host in CELL2_HOSTS:
                self._start_compute(host, cell_name='cell2')
        self.down_cells = {}
        self.stopped = set()
        self.servers = []
        SandboxFakeDriver.HANGS_RELEASED.clear()

    def _report_pci(self):
        """Nova's PCI in Placement, before any service starts (``CONF`` is
        global: every compute reports the same devices): the PFs of
        :data:`PCI_DEVICES` and a scheduler that allocates an alias's
        device on its ``<node>_<address>`` provider."""
        self.flags(report_in_placement=True, group='pci')
        self.flags(device_spec=_device_spec(PCI_DEVICES), group='pci')
        self.flags(alias=[_alias(alias, resource_class) for resource_class,
                          alias in PCI_DEVICES.values()], group='pci')
        self.flags(pci_in_placement=True, group='filter_scheduler')
        self.flags(enabled_filters=CONF.filter_scheduler.enabled_filters +
                   ['PciPassthroughFilter'], group='filter_scheduler')

    def _small_rpc_pools(self):
        """Four workers per RPC server, not oslo.messaging's 64: every
        service runs in this one process, and an idle worker thread wakes
        each second for the GIL: a staged cloud's idle threads would take
        CPU from the tests while it waits."""
        for group, opts in oslo_messaging_opts.list_opts():
            if group is None:
                CONF.register_opts(opts)
        self.flags(executor_thread_pool_size=4)

    def _use_real_neutron(self, url, keystone_url, password):
        """Nova's ``[neutron]`` section at the sandbox's Neutron, instead
        of the in-process fixture that stubs Nova's Neutron client.

        No agent plugs a VIF, so no ``network-vif-plugged`` event ever
        comes: Nova must not wait for one.
        """
        self.neutron = None
        self._as_admin('neutron', keystone_url, password)
        self.flags(region_name='RegionOne', endpoint_override=url,
                   group='neutron')
        self.flags(vif_plugging_is_fatal=False, vif_plugging_timeout=0)

    def _use_real_cyborg(self, url, keystone_url, password):
        """Nova's ``[cyborg]`` section at the sandbox's Cyborg, and a
        service token on every call Nova makes for a user, as a deployment
        sends it: Cyborg binds an ARQ only for a request that carries
        one."""
        self.flags(endpoint_override=url, region_name='RegionOne',
                   group='cyborg')
        self._as_admin('service_user', keystone_url, password)
        self.flags(send_service_user_token=True, group='service_user')

    def _as_admin(self, group, keystone_url, password):
        """Nova's ``[group]`` logs in to the sandbox's Keystone as admin."""
        for opt in ks_loading.get_auth_plugin_conf_options('password'):
            try:
                CONF.register_opt(opt, group=group)
            except cfg.DuplicateOptError:
                pass
        self.flags(auth_type='password', auth_url=keystone_url,
                   username='admin', password=password,
                   project_name='admin', user_domain_name='Default',
                   project_domain_name='Default', group=group)

    # ----------------------------------------------------------- serving
    def serve(self, nova_port, placement_port, keystone_url, password):
        settings = {
            'www_authenticate_uri': keystone_url,
            'auth_url': keystone_url,
            'auth_type': 'password',
            'username': 'admin',
            'password': password,
            'project_name': 'admin',
            'user_domain_name': 'Default',
            'project_domain_name': 'Default',
            'region_name': 'RegionOne',
            'service_token_roles_required': True,
        }
        # Nova API: the real paste pipeline, 'keystone' flavour.
        _register_authtoken_opts(CONF, settings)
        paste = os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')
        if os.path.exists(paste):
            self.flags(api_paste_config=paste, group='wsgi')
        nova_app = nova_wsgi.Loader().load_app('osapi_compute')
        wsgi_app._setup_service(CONF.host, 'osapi_compute')
        # Placement: the same database as the in-process fixture Nova uses,
        # a second app built with auth_strategy=keystone.
        pconf = self.placement_fixture.conf_fixture.conf
        _register_authtoken_opts(pconf, settings)
        pconf.set_override('auth_strategy', 'keystone', group='api')
        try:
            placement_app = placement_deploy.deploy(pconf)
        finally:
            pconf.set_override('auth_strategy', 'noauth2', group='api')
        self.servers.append(_serve(nova_app, nova_port, 'nova'))
        self.servers.append(_serve(placement_app, placement_port,
                                   'placement'))

    def shutdown(self):
        SandboxFakeDriver.HANGS_RELEASED.set()
        for s in self.servers:
            try:
                s.shutdown()
                s.server_close()
            except Exception:
                pass
        self.servers = []

    # ------------------------------------------------------------ control
    def admin_ctxt(self):
        return nova_context.get_admin_context()

    def cell_ctxt(self, host=None):
        """An admin context targeted at ``host``'s cell (else cell1)."""
        ctxt = self.admin_ctxt()
        cell = (self.host_mappings[host].cell_mapping if host
                else self.cell_mappings['cell1'])
        nova_context.set_target_cell(ctxt, cell)
        return ctxt

    def cell_down(self, name):
        """Nova's ``DownCellFixture`` on cell ``name``: every scatter-gather
        and target_cell of it fails with a DBError, as when its database is
        unreachable (os-hypervisors answers 500, servers come back partial,
        os-services lists its hosts UNKNOWN).  It patches module functions,
        so the API's request threads see it too."""
        if name not in self.cell_mappings or name == 'cell0':
            raise KeyError(name)
        if name in self.down_cells:
            return {'cell': name, 'state': 'down', 'changed': False}
        fixture = nova_fixtures.DownCellFixture([self.cell_mappings[name]])
        fixture.setUp()
        self.down_cells[name] = fixture
        return {'cell': name, 'state': 'down', 'changed': True,
                'hosts': self._cell_hosts(name)}

    def cell_slow(self, name):
        """Cell ``name``'s database slow rather than unreachable (a long
        lock, a failover): each call to it waits :data:`SLOW_CELL_DELAY`
        first, past Nova's ``CELL_TIMEOUT``, shortened to
        :data:`SLOW_CELL_TIMEOUT`.  A scatter-gather gives up
        on the cell after that timeout (``os-services`` lists its hosts
        UNKNOWN, a server listing leaves its servers out or, unpaged,
        returns them partial); what targets the cell alone (one server,
        the hypervisor listing's walk of the cells) waits for it."""
        if name not in self.cell_mappings or name == 'cell0':
            raise KeyError(name)
        if name in self.down_cells:
            return {'cell': name, 'state': 'down', 'changed': False}
        slow = _SlowCell(self.cell_mappings[name])
        slow.setUp()
        self.down_cells[name] = slow
        return {'cell': name, 'state': 'slow', 'changed': True,
                'hosts': self._cell_hosts(name),
                'cell_timeout': SLOW_CELL_TIMEOUT, 'delay': SLOW_CELL_DELAY}

    def cell_up(self, name):
        if name not in self.cell_mappings:
            raise KeyError(name)
        fixture = self.down_cells.pop(name, None)
        if fixture is not None:
            fixture.cleanUp()
        return {'cell': name, 'state': 'up', 'changed': fixture is not None,
                'hosts': self._cell_hosts(name)}

    def _cell_hosts(self, name):
        return sorted(h for h, hm in self.host_mappings.items()
                      if hm.cell_mapping.name == name)

    def unmap_host(self, host):
        """``host`` as a compute host added before ``nova-manage cell_v2
        discover_hosts``: its host mapping deleted, its service and compute
        node kept in its cell, its provider in Placement.  Nova's API then
        leaves its node out of ``os-hypervisors`` and answers 404 for it
        alone, while ``os-services`` still lists its service."""
        objects.HostMapping.get_by_host(self.admin_ctxt(), host).destroy()
        return {'host': host, 'mapped': False}

    def map_host(self, host):
        """What ``nova-manage cell_v2 discover_hosts`` does for ``host``:
        its host mapping, to the cell it was in."""
        mapping = objects.HostMapping(
            self.admin_ctxt(), host=host,
            cell_mapping=self.host_mappings[host].cell_mapping)
        mapping.create()
        self.host_mappings[host] = mapping
        return {'host': host, 'mapped': True}

    def reinstall(self, host):
        """``host`` reprovisioned under its old name (Nova bug 1817833):
        its stopped nova-compute starts again with a fresh node identity
        (the ``compute_id`` file a reinstall loses), so Nova's resource
        tracker creates a compute node of a new uuid and fails to create
        its provider while the old one keeps the name; then ``nova-manage
        cell_v2 discover_hosts`` maps the host again (a compute service
        delete unmapped it).  A reinstalled hypervisor runs no guests
        (nova-compute refuses to start as a new service on one that
        does)."""
        node = str(uuid_lib.uuid4())
        SandboxFakeDriver.NODE_IDENTITIES[host] = node
        self.computes[host].manager.driver.instances.clear()
        self.start_compute(host)
        ctxt = self.admin_ctxt()
        host_mapping.discover_hosts(ctxt)
        self.host_mappings[host] = objects.HostMapping.get_by_host(ctxt, host)
        return {'host': host, 'node': node}

    def add_compute(self, host):
        """One more fake compute, for an incident that retires it."""
        if host not in self.computes:
            self._start_compute(host)
        return {'host': host, 'state': 'running'}

    def provider_uuids(self):
        """host name -> compute node (= resource provider) uuid, for the
        hosts that still have one: a decommission deletes host4's compute
        service, and its node with it, under its running fake compute."""
        out = {}
        for host in self.computes:
            try:
                nodes = objects.ComputeNodeList.get_all_by_host(
                    self.cell_ctxt(host), host)
            except exception.ComputeHostNotFound:
                continue
            out[host] = nodes[0].uuid
        return out

    def stop_compute(self, host):
        if host not in self.computes:
            raise KeyError(host)
        if host in self.stopped:
            return {'host': host, 'state': 'stopped', 'changed': False}
        self.computes[host].stop()
        self.stopped.add(host)
        # A crashed host stops heartbeating: make the servicegroup see the
        # last heartbeat long ago so the service reports 'down' now rather
        # than after service_down_time.
        self._heartbeat(host, "'-1 day'")
        return {'host': host, 'state': 'stopped', 'changed': True}

    def start_compute(self, host):
        if host not in self.computes:
            raise KeyError(host)
        if host not in self.stopped:
            return {'host': host, 'state': 'running', 'changed': False}
        self._start_again(host, 'cell1')
        self.stopped.discard(host)
        return {'host': host, 'state': 'running', 'changed': True}

    def _start_again(self, host, cell):
        """A new compute service for ``host`` in ``cell``, through its
        start-up, with the driver (and so the guests) its last one had;
        it reports in at once."""
        driver = self.computes[host].manager.driver
        with mock.patch('nova.virt.driver.load_compute_driver') as load:
            load.return_value = driver
            self.computes[host] = self.start_service(
                'compute', host=host, cell_name=cell)
        self._heartbeat(host, "'+0 seconds'")

    def restart_compute(self, host):
        """``host``'s nova-compute crashed and started again, as Nova's
        ``restart_compute_service`` does it: the service stopped, a new
        one (a new ComputeManager, through its start-up: ``init_host``)
        started with the same driver, whose guests survive.  A crash does
        not wait for what it was doing: the stop leaves the requests under
        way on its ``compute-alt`` RPC server (a hung
        ``migrate_disk_and_power_off``, maybe the caller itself) as they
        are, where oslo.messaging's ``wait()`` would wait for them."""
        if host not in self.computes:
            raise KeyError(host)
        if host in self.stopped:
            raise RuntimeError('%s is stopped' % host)
        old = self.computes[host]
        if old.rpcserver_alt is not None:
            with mock.patch.object(old.rpcserver_alt, 'wait'):
                old.stop()
        else:
            old.stop()
        self._start_again(host, self.host_mappings[host].cell_mapping.name)
        return {'host': host, 'state': 'running', 'restarted': True}

    def restart_with_pci_devices(self, host, buses):
        """``host``'s nova-compute restarted with a ``[pci] device_spec``
        of the PFs at ``buses`` only, as an operator edits that host's
        nova.conf and restarts it.  ``CONF`` is global: the spec is set
        only while the compute starts, where its PCI tracker reads it
        (``PciDevTracker.dev_filter``); the other computes keep theirs."""
        full = CONF.pci.device_spec
        self.stop_compute(host)
        self.flags(device_spec=_device_spec(buses), group='pci')
        try:
            return self.start_compute(host)
        finally:
            self.flags(device_spec=full, group='pci')

    def _heartbeat(self, host, offset):
        engine = main_db_api.get_engine(context=self.cell_ctxt(host))
        with engine.begin() as conn:
            conn.exec_driver_sql(
                "UPDATE services SET last_seen_up = datetime('now', %s), "
                "updated_at = datetime('now', %s) WHERE host = ? AND "
                "\"binary\" = 'nova-compute'" % (offset, offset), (host,))

    def run_periodic(self, host):
        compute = self.computes[host]
        if host in self.stopped:
            raise RuntimeError('%s is stopped' % host)
        compute.manager.update_available_resource(self.cell_ctxt())
        return {'host': host, 'ran': 'update_available_resource'}

    def offer_pcpus(self, host, count):
        """``host``'s node offers ``count`` dedicated CPUs (PCPU) from its
        next resource update on, reported by its driver as Nova's resource
        tracker reports any inventory; the update runs now."""
        SandboxFakeDriver.PCPUS[host] = count
        return self.run_periodic(host)

    def create_boot_volume(self, image_metadata):
        """A bootable volume in Nova's ``CinderFixture`` whose
        ``volume_image_metadata`` is ``image_metadata``: what Nova copies
        into a server booted from it (its system metadata's ``image_*``)
        and allocates from.  Its id."""
        volume_id = str(uuid_lib.uuid4())
        self.cinder.volumes[volume_id] = {
            'id': volume_id, 'display_name': 'boot-' + volume_id[:8],
            'size': 1, 'multiattach': False, 'bootable': True,
            'availability_zone': self.cinder.az,
            'volume_image_metadata': dict(image_metadata)}
        return volume_id

    def copy_boot_image_properties(self, uuid, properties, host=None):
        """Write ``properties`` into the server's system metadata as Nova's
        boot copies its image's (``image_<name>``): what it allocates
        from, and what compute API 2.98 shows as ``image.properties``,
        whatever Glance shows of the image since."""
        instance = objects.Instance.get_by_uuid(
            self.cell_ctxt(host), uuid, expected_attrs=['system_metadata'])
        for name, value in properties.items():
            instance.system_metadata['image_' + name] = value
        instance.save()
        return {'uuid': uuid, 'copied': sorted(properties)}

    def soft_delete_behind_nova(self, uuid, host=None):
        """Marked deleted by hand in SQL (``deleted=1``, as in the operator
        post "Placement: управление ресурсами"), not Nova's ``deleted=id``,
        in ``host``'s cell (else cell1)."""
        ctxt = self.cell_ctxt(host)
        engine = main_db_api.get_engine(context=ctxt)
        with engine.begin() as conn:
            res = conn.exec_driver_sql(
                "UPDATE instances SET deleted=1, deleted_at=CURRENT_TIMESTAMP,"
                " vm_state='deleted' WHERE uuid=?", (uuid,))
            count = res.rowcount
        return {'uuid': uuid, 'rows': count}

    def last_instance_id(self, host=None):
        """The highest id in ``host``'s cell's instances table (else
        cell1's), deleted rows included; None when it is empty."""
        engine = main_db_api.get_engine(context=self.cell_ctxt(host))
        with engine.connect() as conn:
            return conn.exec_driver_sql(
                'SELECT MAX(id) FROM instances').scalar()

    # ---------------------------------------------------------- snapshots
    def databases(self):
        """label -> (engine, sqlite file) of every database the cloud
        uses: the API's, each cell's and Placement's."""
        ctxt = self.admin_ctxt()
        engines = {'api': api_db_api.get_engine(),
                   'placement': placement_db.placement_context_manager
                   .writer.get_engine()}
        for name, cell in self.cell_mappings.items():
            with nova_context.target_cell(ctxt, cell) as cctxt:
                engines[name] = main_db_api.get_engine(context=cctxt)
        return {label: (engine, engine.url.database)
                for label, engine in engines.items()}

    def save_snapshot(self, directory):
        """Every database copied into ``directory`` (SQLite's backup API),
        and what the computes hold in memory about them; returns the
        in-memory part, for ``restore_snapshot``."""
        if self.down_cells:
            raise RuntimeError('cells %s are down' % sorted(self.down_cells))
        os.makedirs(directory, exist_ok=True)
        for label, (engine, path) in self.databases().items():
            common.copy_sqlite(path, os.path.join(directory,
                                                  label + '.sqlite'))
        return {'stopped': set(self.stopped),
                'services': dict(self.computes),
                'mappings': dict(self.host_mappings),
                'identities': dict(SandboxFakeDriver.NODE_IDENTITIES),
                'computes': {host: self._compute_memory(service)
                             for host, service in self.computes.items()}}

    @staticmethod
    def _compute_memory(service):
        rt = service.manager.rt
        return {'instances': copy.deepcopy(service.manager.driver.instances),
                'tracked': copy.deepcopy({a: getattr(rt, a) for a in TRACKED}),
                'shared': {a: getattr(rt, a) for a in SHARED}}

    def restore_snapshot(self, directory, memory):
        """Back to what ``save_snapshot`` saw: the databases copied back
        under the running services, each compute running, stopped or
        absent as it was (a compute stopped since resumed with its
        driver), its driver and resource tracker given back what they
        held.  Nothing runs a compute's start-up or periodic update
        (either would rewrite the staged allocations)."""
        for name in list(self.down_cells):
            self.cell_up(name)
        running = set(self.computes) - self.stopped
        for host in sorted(running):
            if host not in memory['services'] or host in memory['stopped']:
                self.computes[host].stop()
                running.discard(host)
        for label, (engine, path) in self.databases().items():
            engine.dispose()
            common.copy_sqlite(os.path.join(directory, label + '.sqlite'),
                               path)
        # Host mappings live in the API database: a compute started again
        # must find its own, not create another.
        self.host_mappings.clear()
        self.host_mappings.update(memory['mappings'])
        SandboxFakeDriver.NODE_IDENTITIES.clear()
        SandboxFakeDriver.NODE_IDENTITIES.update(memory['identities'])
        services = {}
        for host, service in memory['services'].items():
            if host in memory['stopped']:
                services[host] = service
            elif host in running:
                services[host] = self.computes[host]
            else:
                services[host] = self._resume_compute(
                    host, service.manager.driver)
        self.computes.clear()
        self.computes.update(services)
        self.stopped = set(memory['stopped'])
        for host, held in memory['computes'].items():
            manager = self.computes[host].manager
            manager.driver.instances = copy.deepcopy(held['instances'])
            for attr, value in copy.deepcopy(held['tracked']).items():
                setattr(manager.rt, attr, value)
            for attr, value in held['shared'].items():
                setattr(manager.rt, attr, value)
            manager.reportclient.clear_provider_cache()
            if host not in self.stopped:
                # The snapshot's heartbeat is as old as the snapshot: the
                # scheduler would take a running host for a dead one.
                self._heartbeat(host, "'+0 seconds'")

    def _resume_compute(self, host, driver):
        """A new compute service for ``host`` with ``driver``, without the
        start-up that would heal its allocations."""
        with mock.patch('nova.virt.driver.load_compute_driver') as load, \
                mock.patch.object(compute_manager.ComputeManager,
                                  'init_host'), \
                mock.patch.object(compute_manager.ComputeManager,
                                  'pre_start_hook'):
            load.return_value = driver
            cell = self.host_mappings[host].cell_mapping.name
            return self.start_service('compute', host=host, cell_name=cell)

    def archive_deleted_rows(self):
        """``nova-manage db archive_deleted_rows --until-complete --purge
        --all-cells``, Nova's own: the rows of deleted servers moved to
        the shadow tables and purged, their instance mappings and request
        specs deleted from the API database."""
        from nova.cmd import manage
        return self._nova_manage(
            lambda: manage.DbCommands().archive_deleted_rows(
                max_rows=1000, until_complete=True, purge=True,
                all_cells=True, verbose=True))

    _manage_lock = threading.Lock()

    def _nova_manage(self, command):
        """``{'exit_code', 'output'}`` of a ``nova-manage`` command run
        in process (``command``, a callable), one at a time: what it
        prints is its output."""
        out = io.StringIO()
        with self._manage_lock, contextlib.redirect_stdout(out):
            rc = command()
        return {'exit_code': rc, 'output': out.getvalue()}

    def placement_audit(self):
        from nova.cmd import manage

        def audit():
            try:
                return manage.PlacementCommands().audit(verbose=True)
            except Exception as e:  # report, don't crash the control API
                print('audit raised %r' % e)
                return 255
        return self._nova_manage(audit)


class _SlowCell(fixtures.Fixture):
    """Cell ``cell_mapping``'s database slow, as :meth:`SandboxCloud.cell_slow`
    says; patched where Nova's ``DownCellFixture`` patches a down cell.

    Not a sleep in the cell's database calls themselves: the sandbox's
    cells share one process under Nova's ``CellDatabases`` test fixture,
    whose lock lets one cell be worked on at a time, so a sleep inside
    one would stall every other cell, which no real cloud does.
    """

    def __init__(self, cell_mapping):
        self.cell_uuid = cell_mapping.uuid
        self.scattering = threading.local()

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'nova.context.CELL_TIMEOUT', SLOW_CELL_TIMEOUT))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.context.scatter_gather_cells',
            self._scatter_gather(nova_context.scatter_gather_cells)))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.context.target_cell',
            self._target_cell(nova_context.target_cell)))

    def _scatter_gather(self, real):
        """Each call of the slow cell waits first, in the worker thread (a
        server listing's query, a generator, at its first record, in the
        API's request thread): Nova's own timeout then applies."""
        def scatter_gather_cells(ctxt, cell_mappings, timeout, fn, *args,
                                 **kwargs):
            def slowed(cctxt, *a, **kw):
                if cctxt.cell_uuid != self.cell_uuid:
                    return fn(cctxt, *a, **kw)
                if inspect.isgeneratorfunction(getattr(fn, '__func__', fn)):
                    return _after(SLOW_CELL_DELAY, fn, cctxt, *a, **kw)
                time.sleep(SLOW_CELL_DELAY)
                return fn(cctxt, *a, **kw)
            self.scattering.active = True
            try:
                return real(ctxt, cell_mappings, timeout, slowed, *args,
                            **kwargs)
            finally:
                self.scattering.active = False
        return scatter_gather_cells

    def _target_cell(self, real):
        """What targets the slow cell alone waits before it gets there."""
        @contextlib.contextmanager
        def target_cell(ctxt, cell_mapping):
            if (cell_mapping is not None and
                    cell_mapping.uuid == self.cell_uuid and
                    not getattr(self.scattering, 'active', False)):
                time.sleep(SLOW_CELL_DELAY)
            with real(ctxt, cell_mapping) as cctxt:
                yield cctxt
        return target_cell


def _after(delay, fn, *args, **kwargs):
    """``fn``'s generator, ``delay`` seconds late."""
    time.sleep(delay)
    yield from fn(*args, **kwargs)


def build(cells=1, neutron=None, pci=False, cyborg=None):
    """Set up the cloud with ``cells`` Nova cells (and Nova pointed at
    ``neutron``, see ``SandboxCloud.NEUTRON``; with PCI devices in
    Placement, see ``SandboxCloud.PCI``); returns the SandboxCloud (call
    .cleanUp())."""
    tc = SandboxCloud('runTest')
    tc.NUMBER_OF_CELLS = cells
    tc.NEUTRON = neutron
    tc.PCI = pci
    tc.CYBORG = cyborg
    tc.setUp()
    return tc
