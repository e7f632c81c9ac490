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

"""Staged incidents: each one reproduced through real Nova code paths.

Everything goes through the public Nova / Placement APIs with the admin's
Keystone token, except where the incident itself began behind Nova's back
(an instance marked deleted by hand in SQL, a crashed host) or with a fault
(a disk copy timing out, a concurrent writer making Nova's Placement write
fail with a 409).
"""
import contextlib
import logging
import threading
import time

from nova import exception as nova_exc
from nova.scheduler.client import report

from orphan_dashboard.audit import model as verdicts
from sandbox import cloud as sb_cloud
from sandbox import cyborg_proc
from sandbox.incidents_names import NAMES  # noqa: F401
from sandbox.incidents_names import OPT_IN

IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'   # GlanceFixture.image1

FLAVORS = {
    # id: (name, vcpus, ram MB, disk GB)
    'sb-small': ('sb.small', 1, 1024, 10),
    'sb-medium': ('sb.medium', 2, 2048, 20),
    'sb-big': ('sb.big-12c-32g', 12, 32768, 80),
}

PCI_FLAVORS = {
    # id: (name, vcpus, ram MB, disk GB)
    'sb-pci-%s' % bus: ('sb.pci-%s' % bus, 1, 1024, 10)
    for bus in sb_cloud.PCI_DEVICES}
"""The PCI cloud's flavors (``up --pci``), one per PF of
``sb_cloud.PCI_DEVICES``: its ``pci_passthrough:alias`` asks one device of
that PF's alias, which Nova's scheduler allocates on a ``<node>_<address>``
provider."""
PCI_A, PCI_B, PCI_OTU = ('sb-pci-%s' % bus
                         for bus in sorted(sb_cloud.PCI_DEVICES))
PCI_OTU_CLASS = sb_cloud.PCI_DEVICES[sb_cloud.PCI_OTU_BUS][0]
ACCEL_FLAVOR = 'sb-fpga'
ACCEL_FLAVORS = {ACCEL_FLAVOR: ('sb.fpga', 1, 1024, 10)}
"""The Cyborg cloud's flavor (``up --cyborg``): its ``accel:device_profile``
names :data:`DEVICE_PROFILE`."""
DEVICE_PROFILE = 'sb-fpga'
"""One FPGA of Cyborg's fake driver (``sandbox.cyborg_proc``)."""
PGPU_NAME = '%s_pci_0000_84_00_0'
"""A physical GPU as Nova's libvirt driver names it: the node, then the
device's libvirt name (``_ensure_pgpu_providers``)."""
SEV_NAME = '%s_amd_sev'
"""AMD SEV's memory encryption slots as Nova's libvirt driver names them
since Nova 32 (``_ensure_memory_encryption_providers``)."""

VERDICTS = tuple(verdicts.VERDICT_KINDS)
BANDWIDTH = 'NET_BW_EGR_KILOBIT_PER_SEC'
NIC_NAME = '%s:Open vSwitch agent:br-phys'
"""The bandwidth provider Neutron's placement plugin makes per host."""
PORT_KBPS = 1000
"""Egress minimum bandwidth of the sandbox's QoS ports."""
CHANGED_KBPS = 2000


class IncidentError(Exception):
    status = 409


@contextlib.contextmanager
def _warnings_of(logger):
    """The warnings Nova's ``logger`` logs inside the block: what Nova
    itself says it did."""
    seen = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: seen.append(record.getMessage())
    logging.getLogger(logger).addHandler(handler)
    try:
        yield seen
    finally:
        logging.getLogger(logger).removeHandler(handler)


class _PlacementRace:
    """Make one of Nova's own Placement writes lose a race, for real.

    Armed with a consumer uuid, just before Nova's next write touching that
    consumer (POST /allocations or PUT /allocations/<uuid>), another writer
    rewrites the consumer's allocations unchanged (a PUT at 1.28 with its
    current generation), so the consumer generation moves and Placement
    answers Nova's write with a genuine 409 placement.concurrent_update
    ("consumer generation conflict").
    """

    def __init__(self, cloud):
        self.cloud = cloud
        self.armed = set()
        self.fired = []
        self.lock = threading.Lock()
        cls = report.SchedulerReportClient
        self._post = cls.post
        self._put = cls.put
        race = self

        def post(client, url, data, *a, **kw):
            if url == '/allocations' and isinstance(data, dict):
                for consumer, body in list(data.items()):
                    # only a POST that gives this consumer allocations (the
                    # revert of a move), not the one that empties it
                    if isinstance(body, dict) and body.get('allocations'):
                        race._maybe_fire(consumer, 'POST /allocations',
                                         'post')
            return race._post(client, url, data, *a, **kw)

        def put(client, url, data, *a, **kw):
            if url.startswith('/allocations/'):
                race._maybe_fire(url.split('/')[2], 'PUT ' + url, 'put')
            return race._put(client, url, data, *a, **kw)

        cloud.useFixture(_MonkeyPatch(cls, 'post', post))
        cloud.useFixture(_MonkeyPatch(cls, 'put', put))

    def arm(self, consumer, kind):
        """kind: 'post' (a POST /allocations moving allocations *to* the
        consumer) or 'put' (a PUT /allocations/<consumer>)."""
        with self.lock:
            self.armed.add((consumer, kind))

    def disarm(self):
        """Forget what an earlier staging armed and fired: each staging
        reports its own races (the run's cloud stages many, reset between
        modules)."""
        with self.lock:
            self.armed.clear()
            self.fired = []

    def _maybe_fire(self, consumer, what, kind):
        with self.lock:
            if (consumer, kind) not in self.armed:
                return
            self.armed.discard((consumer, kind))
        pl = self.cloud.placement
        cur = pl.get('/allocations/%s' % consumer, version='1.28').body
        body = {
            'allocations': {rp: {'resources': a['resources']}
                            for rp, a in cur['allocations'].items()},
            'consumer_generation': cur['consumer_generation'],
            'project_id': cur['project_id'], 'user_id': cur['user_id'],
        }
        pl.put('/allocations/%s' % consumer, body, version='1.28')
        self.fired.append({'consumer': consumer, 'before': what})


def _MonkeyPatch(cls, name, func):
    import fixtures
    return fixtures.MonkeyPatch(
        '%s.%s.%s' % (cls.__module__, cls.__name__, name), func)


class Stager:
    def __init__(self, cloud, api, nics=None, devices=None):
        self.cloud = cloud
        self.api = api
        # host -> its br-phys provider, when the sandbox runs Neutron
        self.nics = nics or {}
        # host -> its Cyborg device provider, when the sandbox runs Cyborg
        self.devices = devices or {}
        self.qos = None
        self.race = _PlacementRace(cloud)
        self.manifest = {}
        self.lock = threading.Lock()
        self.flavors_done = False
        self.rps = cloud.provider_uuids()

    def memory(self):
        """What the stager knows of the cloud beyond its databases (a
        snapshot keeps it)."""
        return {'manifest': self.manifest, 'flavors_done': self.flavors_done,
                'rps': self.rps, 'qos': self.qos}

    def recall(self, memory):
        """Back to what ``memory`` said (a snapshot restored)."""
        for attr, value in memory.items():
            setattr(self, attr, value)

    # ------------------------------------------------------------ helpers
    def _flavors(self):
        """The sandbox's flavors, and room for every incident's servers
        (the default quota is 10 instances)."""
        if self.flavors_done:
            return
        project = self.api.session.get_project_id()
        self.api.nova('PUT', '/os-quota-sets/%s' % project, {
            'quota_set': {'instances': -1, 'cores': -1, 'ram': -1}},
            mv='2.57')
        existing = {f['id'] for f in self.api.nova(
            'GET', '/flavors?is_public=None')['flavors']}
        for fid, (name, vcpus, ram, disk) in FLAVORS.items():
            if fid not in existing:
                self.api.nova('POST', '/flavors', {'flavor': {
                    'id': fid, 'name': name, 'vcpus': vcpus, 'ram': ram,
                    'disk': disk}})
        self.flavors_done = True

    def _name(self, base):
        names = {s['name'] for e in self.manifest.values()
                 for s in e['servers']}
        if base not in names:
            return base
        i = 2
        while '%s-%d' % (base, i) in names:
            i += 1
        return '%s-%d' % (base, i)

    def boot(self, name, flavor, host):
        body = {'server': {'name': self._name(name), 'imageRef': IMAGE,
                           'flavorRef': flavor, 'networks': 'none',
                           'host': host}}
        server = self.api.nova('POST', '/servers', body, mv='2.74')['server']
        return self.api.wait_server(
            server['id'], lambda s: s['status'] in ('ACTIVE', 'ERROR'),
            what='ACTIVE')

    def _server_entry(self, uuid, name=None, deleted=False):
        if deleted:
            return {'uuid': uuid, 'name': name, 'status': 'DELETED',
                    'host': None, 'task_state': None}
        s = self.api.server(uuid)
        return {'uuid': uuid, 'name': s['name'], 'status': s['status'],
                'vm_state': s.get('OS-EXT-STS:vm_state'),
                'task_state': s.get('OS-EXT-STS:task_state'),
                'host': s.get('OS-EXT-SRV-ATTR:host'),
                'flavor': s['flavor']}

    def _deleted_entry(self, server):
        """A server deleted behind Nova's back, with the flavor Nova showed
        when it booted (Nova no longer shows the server)."""
        return dict(self._server_entry(server['id'], server['name'],
                                       deleted=True),
                    flavor=server['flavor'])

    def _mig_entry(self, m):
        return {k: m.get(k) for k in (
            'uuid', 'id', 'instance_uuid', 'migration_type', 'status',
            'source_compute', 'dest_compute', 'source_node', 'dest_node')}

    def _host_of(self, rp):
        for h, u in self.rps.items():
            if u == rp:
                return h
        return None

    def _put(self, consumer, allocations, current):
        """Rewrite ``consumer``'s allocations through the Placement API,
        generation-checked, as an operator's ``allocation set`` does."""
        self.api.placement('PUT', '/allocations/%s' % consumer, {
            'allocations': {rp: {'resources': r}
                            for rp, r in allocations.items()},
            'consumer_generation': current['consumer_generation'],
            'project_id': current['project_id'],
            'user_id': current['user_id']})

    def _nic(self, host):
        """The bandwidth provider Neutron's OVS agent reports under a
        compute node (``<host>:br-phys``), created through the API."""
        name = '%s:br-phys' % host
        found = self.api.placement(
            'GET', '/resource_providers?name=%s' % name, mv='1.14')[
            'resource_providers']
        if found:
            return found[0]['uuid']
        self.rps[name], _ = self._provider(
            name, {BANDWIDTH: {'total': 10000000}}, parent=host)
        return self.rps[name]

    def _provider(self, name, inventories, parent=None):
        """A provider made through the Placement API as its owner makes
        it, under ``parent``'s node where given, with ``inventories``:
        ``(uuid, its generation now)``."""
        body = {'name': name}
        if parent:
            body['parent_provider_uuid'] = self.rps[parent]
        rp = self.api.placement('POST', '/resource_providers', body,
                                mv='1.20')
        stocked = self.api.placement(
            'PUT', '/resource_providers/%s/inventories' % rp['uuid'], {
                'resource_provider_generation': rp['generation'],
                'inventories': inventories})
        return rp['uuid'], stocked['resource_provider_generation']

    def _finish_server(self, name, description, server, verdicts, **kwargs):
        """:meth:`_finish` of an incident of one server and no migration:
        ``verdicts`` the verdict each host (or provider name) of its rows
        should get, in order."""
        return self._finish(
            name, description, [self._server_entry(server)], [],
            [self._exp(server, 'instance', where, verdict)
             for where, verdict in verdicts.items()], **kwargs)

    def _finish(self, name, description, servers, migrations, expected,
                fault=None, checks=None, flavor='sb-small'):
        consumers = ([s['uuid'] for s in servers] +
                     [m['uuid'] for m in migrations])
        allocs = {c: self.api.allocations(c) for c in consumers}
        hosts = set()
        for e in expected:
            e['host'] = self._host_of(e['provider'])
            hosts.add(e['host'])
        for s in servers:
            if s.get('host'):
                hosts.add(s['host'])
        for m in migrations:
            hosts.update(h for h in (m['source_compute'], m['dest_compute'])
                         if h)
        entry = {
            'name': name,
            'description': description,
            'flavor': dict(zip(('name', 'vcpus', 'ram', 'disk'),
                               dict(FLAVORS, **PCI_FLAVORS,
                                    **ACCEL_FLAVORS)[flavor]),
                           id=flavor),
            'servers': servers,
            'migrations': migrations,
            'hosts': {h: self.rps[h] for h in sorted(hosts) if h},
            'allocations': allocs,
            'expected': expected,
            'fault_injection': fault,
            'checks': checks or {},
        }
        self.manifest[name] = entry
        return entry

    def _exp(self, consumer, kind, host, verdict):
        assert verdict in VERDICTS
        return {'consumer': consumer, 'consumer_type': kind,
                'provider': self.rps[host], 'verdict': verdict}

    # ---------------------------------------------------------- incidents
    def stage(self, name):
        func = getattr(self, 'stage_' + name, None)
        if func is None or name not in NAMES + OPT_IN:
            raise KeyError(name)
        with self.lock:
            self.race.disarm()
            self._flavors()
            return func()

    def stage_evacuation(self):
        if 'evacuation' in self.manifest:
            raise IncidentError('evacuation is already staged (host1 is down)'
                                '; start a fresh sandbox to stage it again')
        s = self.boot('evacuation-vm', 'sb-small', 'host1')
        mig = self._evacuate(s['id'], 'host1', 'host2')
        return self._finish(
            'evacuation',
            'host1 crashed (compute stopped, service forced down); the '
            'server was evacuated to host2; its allocation on host1 stays '
            'until host1 compute restarts.',
            [self._server_entry(s['id'])], [self._mig_entry(mig)],
            [self._exp(s['id'], 'instance', 'host1', 'evacuated_source'),
             self._exp(s['id'], 'instance', 'host2', 'ok')],
            fault='host1 nova-compute stopped + os-services forced_down')

    def stage_deleted_behind_nova(self):
        s = self.boot('deleted-behind-nova-vm', 'sb-big', 'host2')
        res = self.cloud.soft_delete_behind_nova(s['id'])
        show = self.api.nova_raw('GET', '/servers/%s' % s['id'])
        actions = self.api.nova_raw(
            'GET', '/servers/%s/os-instance-actions' % s['id'], mv='2.21')
        deleted_list = self.api.nova(
            'GET', '/servers/detail?all_tenants=1&deleted=True', mv='2.69')
        entry = self._deleted_entry(s)
        return self._finish(
            'deleted_behind_nova',
            "Marked deleted in the cell DB by hand in SQL "
            "(deleted=1, deleted_at=now(), vm_state='deleted'); Nova never "
            "deleted it, so its allocation on host2 stays.",
            [entry], [],
            [self._exp(s['id'], 'instance', 'host2', 'deleted_instance')],
            fault="UPDATE instances SET deleted=1 ... (rows=%s)" % res['rows'],
            flavor='sb-big',
            checks={
                'server_show_status': show.status_code,
                'instance_actions_status_2_21': actions.status_code,
                'instance_actions': [a.get('action') for a in (
                    actions.json().get('instanceActions', [])
                    if actions.status_code == 200 else [])],
                'listed_with_deleted_true': s['id'] in [
                    x['id'] for x in deleted_list['servers']],
            })

    def stage_failed_migration(self):
        # (a) the seed: a cold migration to host3 whose disk copy times out
        # on the source; the server stays SHUTOFF on host2.  Nova 34 would
        # then swap the allocations back (migration consumer -> server);
        # that revert's POST /allocations loses a race (real 409), which
        # leaves the server's consumer on host3.
        a = self.boot('failed-migration-vm', 'sb-small', 'host2')
        self.api.act(a['id'], {'os-stop': None}, 'SHUTOFF')
        sb_cloud.SandboxFakeDriver.MIGRATE_DISK_FAULTS[a['id']] = (
            nova_exc.InstanceFaultRollback(
                inner_exception=nova_exc.MigrationError(
                    reason='Timeout copying ephemeral disk to host3')))
        self.race.arm(a['id'], 'post')
        self.api.nova('POST', '/servers/%s/action' % a['id'],
                      {'migrate': {'host': 'host3'}}, mv='2.56')
        mig_a = self.api.wait_migration(a['id'], ('error', 'failed'))
        self.api.wait_settled(a['id'], 'SHUTOFF', 'ACTIVE', 'ERROR')
        # the revert (and its 409) runs after the migration is set to error
        self._wait_race(a['id'])
        # (b) a cold migration host3 -> host2 whose confirm fails: the
        # confirm's PUT /allocations/<migration> {} loses a race (real 409,
        # AllocationDeleteFailed), leaking the migration consumer on host3.
        b = self.boot('failed-confirm-vm', 'sb-small', 'host3')
        mig_b = self._confirm_losing_a_race(b['id'], 'host2')

        servers = [self._server_entry(a['id']), self._server_entry(b['id'])]
        migs = [self._mig_entry(mig_a), self._mig_entry(mig_b)]
        expected = []
        # What Nova actually left behind decides the expected verdicts.
        a_alloc = self.api.allocations(a['id'])
        for rp in a_alloc:
            host = self._host_of(rp)
            verdict = 'ok' if host == servers[0]['host'] else 'moved'
            expected.append(self._exp(a['id'], 'instance', host, verdict))
        if self.rps[servers[0]['host']] not in a_alloc:
            expected.append(self._exp(a['id'], 'instance', servers[0]['host'],
                                      'missing'))
        for m in (mig_a, mig_b):
            for rp in self.api.allocations(m['uuid']):
                expected.append(self._exp(m['uuid'], 'migration',
                                          self._host_of(rp),
                                          'stale_migration'))
        for rp in self.api.allocations(b['id']):
            host = self._host_of(rp)
            expected.append(self._exp(
                b['id'], 'instance', host,
                'ok' if host == servers[1]['host'] else 'moved'))
        return self._finish(
            'failed_migration',
            '(a) cold migration host2->host3 of a SHUTOFF server fails in '
            'migrate_disk_and_power_off (timeout); the allocation revert '
            'hits a 409, so the server keeps its allocation on host3 while '
            'it stays on host2. (b) cold migration host3->host2 whose '
            'confirm hits a 409 deleting the migration consumer on host3.',
            servers, migs, expected,
            fault='(a) SandboxFakeDriver.migrate_disk_and_power_off raises '
                  'InstanceFaultRollback(MigrationError timeout) + concurrent '
                  'PUT /allocations/<server> just before ComputeManager.'
                  '_revert_allocation\'s POST /allocations (409); (b) '
                  'concurrent PUT /allocations/<migration> just before '
                  '_delete_allocation_after_move\'s PUT (409)',
            checks={'races_fired': list(self.race.fired)})

    def _evacuate(self, server, dead, dest):
        """Stop ``dead``'s compute, force its service down and evacuate
        ``server`` to ``dest``, as an operator does; the evacuation's
        migration once done."""
        self.cloud.stop_compute(dead)
        service = self.api.nova('GET', '/os-services?binary=nova-compute'
                                '&host=%s' % dead, mv='2.53')['services'][0]
        self.api.nova('PUT', '/os-services/%s' % service['id'],
                      {'forced_down': True}, mv='2.53')
        # < 2.95 so the evacuated server ends ACTIVE, not SHUTOFF.
        self.api.act(server, {'evacuate': {'host': dest}}, 'ACTIVE',
                     host=dest, mv='2.94')
        return self.api.wait_migration(server, ('done',))

    def _confirm_losing_a_race(self, server, dest):
        """Cold-migrate ``server`` to ``dest`` and confirm, the confirm's
        PUT /allocations/<migration> {} losing a race (a real 409,
        AllocationDeleteFailed): the migration consumer leaks on the
        source.  Returns the migration."""
        self.api.act(server, {'migrate': {'host': dest}}, 'VERIFY_RESIZE',
                     mv='2.56')
        migration = self.api.wait_migration(server, ('finished',))
        self.race.arm(migration['uuid'], 'put')
        # The resource tracker sets the migration 'confirmed' before the
        # allocation delete fails; @errors_out_migration then sets 'error'.
        self.api.act(server, {'confirmResize': None}, 'ERROR', 'ACTIVE',
                     'SHUTOFF')
        try:
            return self.api.wait_migration(server, ('error', 'failed'),
                                           timeout=15)
        except TimeoutError:
            return self.api.migrations(server)[0]

    def _wait_race(self, consumer, timeout=15):
        import time
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(f['consumer'] == consumer for f in self.race.fired):
                time.sleep(0.5)   # let Nova's failing write land
                return
            time.sleep(0.1)

    def stage_unconfirmed_resize(self):
        s = self.boot('unconfirmed-resize-vm', 'sb-small', 'host2')
        self.api.act(s['id'], {'resize': {'flavorRef': 'sb-medium'}},
                     'VERIFY_RESIZE')
        mig = self.api.wait_migration(s['id'], ('finished',))
        return self._finish(
            'unconfirmed_resize',
            'resize sb.small -> sb.medium left in VERIFY_RESIZE (migration '
            'finished): the server holds the destination, the migration '
            'consumer holds the source. Nothing may be touched.',
            [self._server_entry(s['id'])], [self._mig_entry(mig)],
            [self._exp(s['id'], 'instance', mig['dest_compute'], 'protected'),
             self._exp(mig['uuid'], 'migration', mig['source_compute'],
                       'protected')],
            flavor='sb-medium')

    def stage_healed_away(self):
        s = self.boot('healed-away-vm', 'sb-small', 'host3')
        self.api.placement('DELETE', '/allocations/%s' % s['id'], mv='1.28')
        return self._finish_server(
            'healed_away',
            'allocations deleted through the public Placement API '
            '(openstack resource provider allocation delete) and never '
            'healed.',
            s['id'], {'host3': 'missing'},
            fault='DELETE /allocations/<server> via the Placement API')

    def stage_wrong_amount(self):
        s = self.boot('wrong-amount-vm', 'sb-small', 'host3')
        current = self.api.placement('GET', '/allocations/%s' % s['id'])
        rp = self.rps['host3']
        held = dict(current['allocations'][rp]['resources'], MEMORY_MB=4096)
        self._put(s['id'], {rp: held}, current)
        return self._finish_server(
            'wrong_amount',
            'its allocation on host3 rewritten by hand with MEMORY_MB=4096 '
            '(an allocation set typo) where sb.small needs 1024.',
            s['id'], {'host3': 'wrong_amount'},
            fault='PUT /allocations/<server> with MEMORY_MB=4096')

    def stage_port_bandwidth_left(self):
        s = self.boot('bandwidth-vm', 'sb-small', 'host2')
        nic2, nic3 = self._nic('host2'), self._nic('host3')
        current = self.api.placement('GET', '/allocations/%s' % s['id'])
        held = {rp: a['resources']
                for rp, a in current['allocations'].items()}
        small = held[self.rps['host2']]
        self._put(s['id'], dict(held, **{self.rps['host3']: small,
                                         nic3: {BANDWIDTH: 1000}}), current)
        return self._finish_server(
            'port_bandwidth_left',
            "moved from host3 to host2 with a QoS port whose bandwidth "
            "stayed on host3's NIC provider (host3:br-phys) along with the "
            "server's leftover on host3, and none on host2:br-phys: no "
            "flavor can rebuild the bandwidth, so trim and delete-and-heal "
            "refuse and name the heal_allocations command.",
            s['id'], {'host2': 'ok', 'host3': 'moved',
                      'host3:br-phys': 'moved'},
            fault='PUT /allocations/<server> holding host3 and '
                  'host3:br-phys %s=1000' % BANDWIDTH,
            checks={'nics': {'host2:br-phys': nic2, 'host3:br-phys': nic3}})

    def stage_pre_pike_consumer(self):
        s = self.boot('pre-pike-vm', 'sb-small', 'host2')
        current = self.api.placement('GET', '/allocations/%s' % s['id'])
        self.api.placement('DELETE', '/allocations/%s' % s['id'])
        # Placement before 1.8 knew no project or user: it records the
        # incomplete-consumer placeholders.
        self.api.placement('PUT', '/allocations/%s' % s['id'], {
            'allocations': [
                {'resource_provider': {'uuid': rp},
                 'resources': a['resources']}
                for rp, a in current['allocations'].items()]},
            mv=None)
        now = self.api.placement('GET', '/allocations/%s' % s['id'])
        return self._finish_server(
            'pre_pike_consumer',
            'its allocation written again without a microversion (as before '
            'Placement 1.8): project and user are the incomplete-consumer '
            'placeholders, so quota counted from Placement charges nobody.',
            s['id'], {'host2': 'incomplete_consumer'},
            fault='DELETE, then PUT /allocations/<server> at microversion 1.0',
            checks={'project_id': now['project_id'],
                    'user_id': now['user_id']})

    def stage_retired_host(self):
        """A fourth compute, host4, dies holding one leftover of each kind
        that blocks deleting it: the decommission incident."""
        if 'retired_host' in self.manifest:
            raise IncidentError('retired_host is already staged (host4 is '
                                'down)')
        self.cloud.add_compute('host4')
        self.rps = self.cloud.provider_uuids()
        evacuated = self.boot('retired-evacuated-vm', 'sb-small', 'host4')
        ghost = self.boot('retired-deleted-vm', 'sb-small', 'host4')
        moved = self.boot('retired-migrated-vm', 'sb-small', 'host4')
        migration = self._confirm_losing_a_race(moved['id'], 'host2')
        self.cloud.soft_delete_behind_nova(ghost['id'])
        stranger = '5e1f3a0c-4b7d-4f2e-9c61-0d2a7b8e9f13'
        self.api.placement('PUT', '/allocations/%s' % stranger, {
            'allocations': {self.rps['host4']: {'resources': {
                'VCPU': 2, 'MEMORY_MB': 2048}}},
            'consumer_generation': None, 'project_id': 'another-service',
            'user_id': 'another-service'})
        evacuation = self._evacuate(evacuated['id'], 'host4', 'host3')
        servers = [self._server_entry(evacuated['id']),
                   self._server_entry(ghost['id'], ghost['name'],
                                      deleted=True),
                   self._server_entry(moved['id'])]
        return self._finish(
            'retired_host',
            'host4 held an evacuated server, a server deleted behind '
            "Nova's back, the leaked source side of a cold migration and "
            'a consumer of another service when it died (compute stopped, '
            'forced down): everything that blocks deleting it.',
            servers, [self._mig_entry(evacuation),
                      self._mig_entry(migration)],
            [self._exp(evacuated['id'], 'instance', 'host4',
                       'evacuated_source'),
             self._exp(evacuated['id'], 'instance', 'host3', 'ok'),
             self._exp(ghost['id'], 'instance', 'host4', 'deleted_instance'),
             self._exp(migration['uuid'], 'migration', 'host4',
                       'stale_migration'),
             self._exp(moved['id'], 'instance', 'host2', 'ok'),
             self._exp(stranger, 'unknown', 'host4', 'unknown_consumer')],
            fault='host4 compute stopped + forced_down; server deleted with '
                  "hand-written SQL; confirm of a cold migration losing a "
                  'race; PUT /allocations of an unknown consumer',
            checks={'races_fired': list(self.race.fired)})

    def stage_second_cell(self):
        """host5, the second cell's compute, with what must stay untouched
        while that cell is down (``POST /cells/cell2/down``), each of which
        a repair would touch once it is back."""
        if 'host5' not in self.cloud.computes:
            raise IncidentError('second_cell needs the sandbox started with '
                                '--cells 2')
        if 'second_cell' in self.manifest:
            raise IncidentError('second_cell is already staged')
        self.rps = self.cloud.provider_uuids()
        kept = self.boot('cell2-vm', 'sb-small', 'host5')
        ghost = self.boot('cell2-deleted-vm', 'sb-small', 'host5')
        self.cloud.soft_delete_behind_nova(ghost['id'], host='host5')
        straddling = self.boot('cell1-straddling-vm', 'sb-small', 'host2')
        current = self.api.placement('GET',
                                     '/allocations/%s' % straddling['id'])
        held = {rp: a['resources']
                for rp, a in current['allocations'].items()}
        host2 = held[self.rps['host2']]
        self._put(straddling['id'], {
            self.rps['host2']: dict(host2, MEMORY_MB=host2['MEMORY_MB'] * 2),
            self.rps['host5']: host2}, current)
        servers = [self._server_entry(kept['id']),
                   self._server_entry(ghost['id'], ghost['name'],
                                      deleted=True),
                   self._server_entry(straddling['id'])]
        return self._finish(
            'second_cell',
            'host5, in cell2: a server, a server deleted behind Nova\'s '
            'back, and a leftover on host5 of a cell1 server living on '
            'host2, which holds a wrong amount there.',
            servers, [],
            [self._exp(kept['id'], 'instance', 'host5', 'ok'),
             self._exp(ghost['id'], 'instance', 'host5', 'deleted_instance'),
             self._exp(straddling['id'], 'instance', 'host2',
                       'wrong_amount'),
             self._exp(straddling['id'], 'instance', 'host5', 'moved')],
            fault='cell2 server deleted with hand-written SQL; PUT '
                  '/allocations doubling a host2 server\'s memory there and '
                  'adding host5')

    def stage_foreign_providers(self):
        """Providers other services make, created through the Placement
        API as they do: a routed network's segment (Neutron's segments
        plugin: a root with IPV4_ADDRESS in the segment's aggregate) and
        a Blazar reservation provider under host3.  Neither is Nova's:
        never orphaned, never deleted."""
        if 'foreign_providers' in self.manifest:
            raise IncidentError('foreign_providers is already staged')
        segment_id = '2c1f7d3a-6b8e-4f0a-9d5c-1e7b3a9f4c62'
        segment, generation = self._provider(
            'Neutron segment id %s' % segment_id, {'IPV4_ADDRESS': {
                'total': 253, 'reserved': 2, 'min_unit': 1, 'max_unit': 1,
                'step_size': 1, 'allocation_ratio': 1.0}})
        self.api.placement(
            'PUT', '/resource_providers/%s/aggregates' % segment, {
                'resource_provider_generation': generation,
                'aggregates': [segment_id]}, mv='1.19')
        reservation = 'CUSTOM_RESERVATION_8F1D2C3B'
        self.api.placement('PUT', '/resource_classes/%s' % reservation,
                           mv='1.7')
        blazar, _ = self._provider('blazar_host3', {reservation: {'total': 2}},
                                   parent='host3')
        return self._finish(
            'foreign_providers',
            "another service's providers: a Neutron routed network's "
            'segment provider (a root, IPV4_ADDRESS, in the segment\'s '
            'aggregate) and Blazar\'s blazar_host3 under host3 '
            "(%s): neither is Nova's, neither is orphaned nor offered for "
            'deletion.' % reservation,
            [], [], [],
            checks={'segment': segment,
                    'segment_name': 'Neutron segment id %s' % segment_id,
                    'blazar': blazar})

    def _held_child(self, parent, name, resource_class):
        """A child of ``parent`` made through the Placement API as its
        owner does, with two units of ``resource_class``."""
        self.api.placement('PUT', '/resource_classes/%s' % resource_class,
                           mv='1.7')
        self.rps[name], _ = self._provider(
            name, {resource_class: {'total': 2}}, parent=parent)
        return self.rps[name]

    def _hold(self, server, extra):
        """Add ``extra`` (``{provider: resources}``) to ``server``'s
        consumer: one generation-checked PUT."""
        current = self.api.placement('GET', '/allocations/%s' % server)
        held = {rp: a['resources']
                for rp, a in current['allocations'].items()}
        held.update(extra)
        self._put(server, held, current)

    def stage_image_pinned(self):
        """A server whose image pinned its CPUs at boot
        (``hw_cpu_policy=dedicated``) holds PCPU where its flavor alone
        says VCPU, and the image, as Glance shows it now, pins nothing (its
        owner removed the property after boot).  Nova's fake driver
        reports no PCPU and no NUMA topology, so the boot copy Nova keeps
        in the server's system metadata, host1's PCPU inventory and the
        allocation Nova would have written are made as Nova makes them
        (its database; the Placement API, generation-checked).  Nova's own
        copy (``GET /servers/{id}`` at 2.98) says the PCPU is right."""
        if 'image_pinned' in self.manifest:
            raise IncidentError('image_pinned is already staged')
        s = self.boot('image-pinned-vm', 'sb-small', 'host1')
        self.cloud.copy_boot_image_properties(
            s['id'], {'hw_cpu_policy': 'dedicated'})
        rp = self.rps['host1']
        inventory = self.api.placement(
            'GET', '/resource_providers/%s/inventories' % rp)
        self.api.placement(
            'PUT', '/resource_providers/%s/inventories' % rp, {
                'resource_provider_generation':
                    inventory['resource_provider_generation'],
                'inventories': dict(inventory['inventories'],
                                    PCPU={'total': 16})})
        current = self.api.placement('GET', '/allocations/%s' % s['id'])
        held = dict(current['allocations'][rp]['resources'])
        held['PCPU'] = held.pop('VCPU')
        self._put(s['id'], {rp: held}, current)
        return self._finish_server(
            'image_pinned',
            'its allocation on host1 holds PCPU=%d where sb.small says '
            'VCPU=%d, as Nova allocates for an image with '
            'hw_cpu_policy=dedicated, which Nova copied at boot and Glance '
            'no longer shows (written through the Placement API, with a '
            'PCPU inventory on host1: the fake driver reports none).'
            % (held['PCPU'], held['PCPU']),
            s['id'], {'host1': 'ok'},
            fault='PUT /allocations/<server> with PCPU for VCPU',
            checks={'held': held})

    def stage_volume_pinned(self):
        """A server booted from a volume whose image metadata pins its
        CPUs (``hw_cpu_policy=dedicated``), through Nova's own
        boot-from-volume path: its ``CinderFixture`` holds the volume,
        Nova copies the metadata into the server's system metadata and
        allocates PCPU on host1, whose node offers dedicated CPUs (the
        driver reports them, as a libvirt node with a
        ``cpu_dedicated_set`` does).  Nova shows the server's image as
        ``""`` and no properties: nothing in its answer says the PCPU is
        right."""
        if 'volume_pinned' in self.manifest:
            raise IncidentError('volume_pinned is already staged')
        self.cloud.offer_pcpus('host1', 16)
        volume = self.cloud.create_boot_volume(
            {'image_id': IMAGE, 'hw_cpu_policy': 'dedicated'})
        s = self._active('volume-pinned-vm', {
            'flavorRef': 'sb-small', 'networks': 'none', 'host': 'host1',
            'block_device_mapping_v2': [{
                'boot_index': 0, 'uuid': volume, 'source_type': 'volume',
                'destination_type': 'volume'}]})
        held = self.api.allocations(s['id'])[self.rps['host1']]
        return self._finish_server(
            'volume_pinned',
            'booted from volume %s, whose image metadata says '
            'hw_cpu_policy=dedicated: Nova allocated PCPU=%d on host1 '
            "where sb.small alone says VCPU, and shows its image as \"\"."
            % (volume, held.get('PCPU', 0)),
            s['id'], {'host1': 'protected'},
            fault='boot from a volume with hw_cpu_policy=dedicated',
            checks={'held': held, 'volume': volume})

    def stage_stuck_migration(self):
        """Nova bug 1836369, staged as Nova's own functional test does
        (``test_migrate_disk_and_power_off_crash_finish_revert_migration``):
        a server on host1 cold-migrated to host2, whose disk copy on the
        source (the driver's ``migrate_disk_and_power_off``) never ends;
        while it runs, host1's nova-compute restarts (a new ComputeManager
        with the same driver), whose ``_init_instance`` reverts the
        crashed migration on the hypervisor and resets the server's task.
        The server is ACTIVE on host1 with no task, its migration stays
        ``migrating`` for ever: the migration consumer holds what the
        server holds on host1, the server's own consumer the scheduler's
        claim on host2."""
        if 'stuck_migration' in self.manifest:
            raise IncidentError('stuck_migration is already staged')
        s = self.boot('stuck-migration-vm', 'sb-small', 'host1')
        if s['status'] != 'ACTIVE' or s.get('OS-EXT-SRV-ATTR:host') != 'host1':
            raise IncidentError('stuck_migration: the server did not boot '
                                'on host1: %s' % s['status'])
        restarted = threading.Event()
        failed = []

        def crash(instance):
            # In the source compute's RPC worker, as Nova's test does it:
            # the call under way survives the restart.
            try:
                self.cloud.restart_compute('host1')
            except Exception as e:
                failed.append(e)
                raise
            finally:
                restarted.set()
        hangs = sb_cloud.SandboxFakeDriver.MIGRATE_DISK_HANGS
        hangs[s['id']] = crash
        try:
            self.api.nova('POST', '/servers/%s/action' % s['id'],
                          {'migrate': {'host': 'host2'}}, mv='2.56')
            if not restarted.wait(60):
                raise IncidentError('stuck_migration: the migration never '
                                    'reached migrate_disk_and_power_off: %s'
                                    % self.api.migrations(s['id']))
        finally:
            hangs.pop(s['id'], None)
        if failed:
            raise IncidentError('stuck_migration: restarting host1 failed: '
                                '%r' % failed[0])
        self.api.wait_settled(s['id'], 'ACTIVE', host='host1')
        mig = self.api.migrations(s['id'])[0]
        if mig['status'] != 'migrating':
            raise IncidentError('stuck_migration: the migration is %s, not '
                                'migrating' % mig['status'])
        held = {'migration': self.api.allocations(mig['uuid']),
                'server': self.api.allocations(s['id'])}
        if (list(held['migration']) != [self.rps['host1']] or
                list(held['server']) != [self.rps['host2']]):
            raise IncidentError('stuck_migration: unexpected allocations %s'
                                % held)
        return self._finish(
            'stuck_migration',
            'cold migration host1->host2 whose migrate_disk_and_power_off '
            'never returns; host1 nova-compute restarted meanwhile, and its '
            '_init_instance reset the task: the server is ACTIVE on host1, '
            'its migration migrating for ever (Nova bug 1836369); the '
            'migration consumer holds host1, the server host2.',
            [self._server_entry(s['id'])], [self._mig_entry(mig)],
            [self._exp(mig['uuid'], 'migration', 'host1', 'stuck_migration'),
             self._exp(s['id'], 'instance', 'host2', 'stuck_migration')],
            fault='SandboxFakeDriver.migrate_disk_and_power_off hangs after '
                  'restarting host1 nova-compute (a new ComputeManager, the '
                  'same driver)',
            checks={'migration': mig['uuid'],
                    'migration_status': mig['status'],
                    'migration_updated_at': mig.get('updated_at'),
                    'held': held})

    def stage_reinstalled_host(self):
        """Nova bug 1817833, staged through Nova's own paths: host6 holds
        the allocation of a server deleted behind Nova's back when its
        compute service is deleted (``DELETE /os-services/{id}``, which
        deletes its compute node and host mapping and swallows the
        provider delete's 409: the provider stays, seed 001); the host is
        then reinstalled under its old name (:meth:`~sandbox.cloud.
        SandboxCloud.reinstall`): a compute node of a new uuid, whose
        provider nova-compute cannot create ("Conflicting resource
        provider name"), and the host mapped again."""
        host = 'host6'
        if 'reinstalled_host' in self.manifest:
            raise IncidentError('reinstalled_host is already staged')
        sb_cloud.SandboxFakeDriver.NODE_IDENTITIES.pop(host, None)
        self.cloud.add_compute(host)
        self.rps = self.cloud.provider_uuids()
        old = self.rps[host]
        ghost = self.boot('reinstalled-deleted-vm', 'sb-small', host)
        self.cloud.soft_delete_behind_nova(ghost['id'])
        self.cloud.stop_compute(host)
        service = self.api.nova(
            'GET', '/os-services?binary=nova-compute&host=%s' % host,
            mv='2.53')['services'][0]
        self.api.nova('DELETE', '/os-services/%s' % service['id'],
                      mv='2.53')
        self.api.placement('GET', '/resource_providers/%s' % old)
        new = self.cloud.reinstall(host)['node']
        providers = self.api.placement(
            'GET', '/resource_providers?name=%s' % host)['resource_providers']
        if [p['uuid'] for p in providers] != [old]:
            raise IncidentError('reinstalled_host: providers named %s: %s'
                                % (host, providers))
        node = self.api.nova('GET', '/os-hypervisors/%s' % new,
                             mv='2.53')['hypervisor']
        self.rps = dict(self.cloud.provider_uuids(), **{host: old})
        return self._finish(
            'reinstalled_host',
            "host6's compute service was deleted while its provider held a "
            "server deleted behind Nova's back (Nova kept the provider), "
            'and host6 was reinstalled under its old name: Nova has a new '
            'compute node for it, whose provider nova-compute cannot '
            'create while the old one keeps the name (Nova bug 1817833).',
            [self._deleted_entry(ghost)], [],
            [self._exp(ghost['id'], 'instance', host, 'deleted_instance')],
            fault="server deleted with hand-written SQL; DELETE "
                  '/os-services/{id}; nova-compute started with a new '
                  'compute node uuid; discover_hosts',
            checks={'old_provider': old, 'new_node': new,
                    'new_node_state': node.get('state')})

    def stage_archived_instances(self):
        """Three servers on host2 deleted behind Nova's back (their
        allocations left), then Nova's own ``archive_deleted_rows
        --purge``: their rows and instance mappings gone, their instance
        actions answer 404 as for a consumer Nova never knew, and each
        leftover is an unknown consumer."""
        if 'archived_instances' in self.manifest:
            raise IncidentError('archived_instances is already staged')
        servers = [self.boot('archived-vm-%d' % i, 'sb-small', 'host2')
                   for i in range(3)]
        for s in servers:
            self.cloud.soft_delete_behind_nova(s['id'])
        archived = self.cloud.archive_deleted_rows()
        if archived['exit_code'] not in (0, 1):
            raise IncidentError('archived_instances: archive_deleted_rows '
                                'exited %s: %s' % (archived['exit_code'],
                                                   archived['output']))
        for s in servers:
            status = self.api.nova_raw(
                'GET', '/servers/%s/os-instance-actions' % s['id'])
            if status.status_code != 404:
                raise IncidentError('archived_instances: %s still has its '
                                    'instance actions' % s['id'])
        return self._finish(
            'archived_instances',
            "three servers on host2 deleted behind Nova's back, then "
            "archived with Nova's archive_deleted_rows --purge: Nova "
            'no longer knows them, and their leftovers are unknown '
            'consumers.',
            [self._deleted_entry(s) for s in servers], [],
            [self._exp(s['id'], 'unknown', 'host2', 'unknown_consumer')
             for s in servers],
            fault="servers deleted with hand-written SQL; nova-manage db "
                  'archive_deleted_rows --until-complete --purge '
                  '--all-cells',
            checks={'archive_exit_code': archived['exit_code']})

    def stage_buried_in_cell0(self):
        """Nova's ``_bury_in_cell0`` after the scheduler's claim: host7, a
        compute started and not mapped to a cell yet (its host mapping
        deleted, as before ``discover_hosts``), is forced as a server's
        host (``availability_zone`` ``nova:host7``, which the API does not
        check against host mappings); the scheduler claims on its node,
        the conductor finds no host mapping for it and buries the server
        in cell0, ERROR with no host, and never deletes the claim."""
        host = 'host7'
        if 'buried_in_cell0' in self.manifest:
            raise IncidentError('buried_in_cell0 is already staged')
        self.cloud.add_compute(host)
        self.rps = self.cloud.provider_uuids()
        self.cloud.unmap_host(host)
        body = {'server': {'name': self._name('buried-in-cell0-vm'),
                           'imageRef': IMAGE, 'flavorRef': 'sb-small',
                           'networks': 'none',
                           'availability_zone': 'nova:%s' % host}}
        created = self.api.nova('POST', '/servers', body, mv='2.74')['server']
        s = self.api.wait_server(created['id'],
                                 lambda s: s['status'] == 'ERROR',
                                 what='ERROR')
        if s.get('OS-EXT-SRV-ATTR:host') is not None:
            raise IncidentError('buried_in_cell0: the server is on %s'
                                % s.get('OS-EXT-SRV-ATTR:host'))
        held = self.api.allocations(s['id'])
        if list(held) != [self.rps[host]]:
            raise IncidentError('buried_in_cell0: unexpected allocations %s'
                                % held)
        return self._finish(
            'buried_in_cell0',
            'a server forced onto host7, a compute not mapped to a cell '
            'yet: the scheduler claimed on its node, the conductor found no '
            'host mapping and buried the server in cell0 (ERROR, no host), '
            'leaving the claim.',
            [self._server_entry(s['id'])], [],
            [self._exp(s['id'], 'instance', host, 'moved')],
            fault='host7 host mapping deleted; availability_zone nova:host7',
            checks={'held': held, 'fault': (s.get('fault') or {}).get(
                'message')})

    def stage_shelved_offloaded(self):
        """A server shelved and offloaded through the compute API (Nova's
        default ``shelved_offload_time = 0`` offloads it at once, removing
        its allocation), whose allocation is then written back through the
        Placement API as a cleanup that failed would have left it: the
        periodic task skips a consumer whose instance has no host."""
        s = self.boot('shelved-offloaded-vm', 'sb-small', 'host3')
        current = self.api.placement('GET', '/allocations/%s' % s['id'])
        self.api.act(s['id'], {'shelve': None}, 'SHELVED_OFFLOADED')
        emptied = self.api.allocations(s['id'])
        self.api.placement('PUT', '/allocations/%s' % s['id'], {
            'allocations': current['allocations'],
            'consumer_generation': None,
            'project_id': current['project_id'],
            'user_id': current['user_id']})
        return self._finish_server(
            'shelved_offloaded',
            'shelved and offloaded through the compute API, which removed '
            "its allocation on host3; that allocation then written back "
            'through the Placement API, as a shelve offload whose cleanup '
            'failed leaves it (Nova allocates again when it unshelves).',
            s['id'], {'host3': 'shelved_offloaded'},
            fault='shelve (offloaded at once), then PUT /allocations/<server> '
                  'writing back what the offload removed',
            checks={'emptied_by_offload': emptied,
                    'held': {rp: a['resources'] for rp, a in
                             current['allocations'].items()}})

    def stage_held_children(self):
        """Blazar's ``blazar_host2`` (``CUSTOM_RESERVATION_*``) and a
        PCI-in-Placement ``host2_0000:81:00.0`` (``CUSTOM_PCI_8086_1563``)
        under host2, made through the Placement API, each held by two
        servers booted on host2; one is then cold-migrated to host3, and
        its host2 side (root and both children) written back onto it, as
        a cleanup that never finished leaves it: what no flavor rebuilds
        stays named, never dropped."""
        if 'held_children' in self.manifest:
            raise IncidentError('held_children is already staged')
        reservation = 'CUSTOM_RESERVATION_5A7E9C21'
        pci_class = 'CUSTOM_PCI_8086_1563'
        blazar = self._held_child('host2', 'blazar_host2', reservation)
        pci = self._held_child('host2', 'host2_0000:81:00.0', pci_class)
        extra = {blazar: {reservation: 1}, pci: {pci_class: 1}}
        kept = self.boot('held-children-vm', 'sb-small', 'host2')
        self._hold(kept['id'], extra)
        moved = self.boot('held-children-moved-vm', 'sb-small', 'host2')
        self._hold(moved['id'], extra)
        source = {rp: dict(r) for rp, r in self.api.allocations(
            moved['id']).items()}
        mig = self._migrate_and_confirm(moved['id'], 'host3')
        self._hold(moved['id'], source)
        return self._finish(
            'held_children',
            "Blazar's blazar_host2 (%s) and a PCI device in Placement "
            'host2_0000:81:00.0 (%s) under host2, created through the '
            'Placement API, each held by a server on host2; a second '
            'server holding them was cold-migrated to host3 and its host2 '
            'side left on it: its trim and delete-and-heal are refused '
            'naming them.' % (reservation, pci_class),
            [self._server_entry(kept['id']),
             self._server_entry(moved['id'])], [self._mig_entry(mig)],
            [self._exp(kept['id'], 'instance', 'host2', 'ok'),
             self._exp(moved['id'], 'instance', 'host3', 'ok'),
             self._exp(moved['id'], 'instance', 'host2', 'moved')],
            fault='PUT /allocations adding blazar_host2 and '
                  'host2_0000:81:00.0 to both servers; PUT /allocations '
                  "writing the moved server's host2 side back after the "
                  'confirm',
            checks={'blazar': blazar, 'pci': pci, 'kept': kept['id'],
                    'moved': moved['id'], 'reservation': reservation,
                    'pci_class': pci_class, 'source': source})

    def stage_healthy(self):
        a = self.boot('healthy-vm-1', 'sb-small', 'host2')
        b = self.boot('healthy-vm-2', 'sb-small', 'host3')
        return self._finish(
            'healthy', 'two servers with correct allocations.',
            [self._server_entry(a['id']), self._server_entry(b['id'])], [],
            [self._exp(a['id'], 'instance', 'host2', 'ok'),
             self._exp(b['id'], 'instance', 'host3', 'ok')])

    # ------------------------------------------------------------ Neutron
    def _need_neutron(self, name):
        if not self.api.neutron_url or not self.nics:
            raise IncidentError('%s needs the sandbox started with --neutron'
                                % name)
        if name in self.manifest:
            raise IncidentError('%s is already staged' % name)
        for host, rp in self.nics.items():
            self.rps[NIC_NAME % host] = rp

    def _qos_network(self):
        """A VLAN network on physnet0 and a QoS policy whose minimum
        bandwidth rule makes every port carrying it request bandwidth."""
        if self.qos is None:
            n = self.api.neutron
            net = n('POST', '/networks', {'network': {
                'name': 'sb-qos-net', 'provider:network_type': 'vlan',
                'provider:physical_network': 'physnet0',
                'provider:segmentation_id': 101}})['network']
            n('POST', '/subnets', {'subnet': {
                'network_id': net['id'], 'name': 'sb-qos-subnet',
                'cidr': '10.10.0.0/24', 'ip_version': 4}})
            self.qos = {'network': net['id'],
                        'policy': self._qos_policy('sb-min-bw')}
        return self.qos

    def _qos_policy(self, name, kbps=PORT_KBPS):
        n = self.api.neutron
        policy = n('POST', '/qos/policies', {'policy': {
            'name': name}})['policy']
        n('POST', '/qos/policies/%s/minimum_bandwidth_rules' % policy['id'],
          {'minimum_bandwidth_rule': {'min_kbps': kbps,
                                      'direction': 'egress'}})
        return policy['id']

    def boot_on_qos_port(self, name, host, policy=None):
        """A server booted through Nova with a new port carrying the QoS
        policy: Nova's scheduler allocates the bandwidth on the host's NIC
        provider and writes the port's ``binding:profile.allocation``."""
        qos = self._qos_network()
        port = self.api.neutron('POST', '/ports', {'port': {
            'network_id': qos['network'], 'name': name + '-port',
            'qos_policy_id': policy or qos['policy']}})['port']
        return self._active(name, {
            'imageRef': IMAGE, 'flavorRef': 'sb-small', 'host': host,
            'networks': [{'port': port['id']}]}), port['id']

    def _active(self, name, server):
        """A server ``name`` made through Nova's API with the fields
        ``server``, once ACTIVE; :class:`IncidentError` if it is not."""
        body = {'server': dict(server, name=self._name(name))}
        made = self.api.nova('POST', '/servers', body, mv='2.74')['server']
        made = self.api.wait_server(
            made['id'], lambda s: s['status'] in ('ACTIVE', 'ERROR'),
            what='ACTIVE')
        if made['status'] != 'ACTIVE':
            raise IncidentError('%s did not boot: %s'
                                % (name, made.get('fault')))
        return made

    def _port(self, port_id):
        return self.api.neutron('GET', '/ports/%s' % port_id)['port']

    def stage_qos_ports_healthy(self):
        self._need_neutron('qos_ports_healthy')
        servers, ports, expected = [], {}, []
        # not on a host another incident took down (evacuation: host1)
        for host in sorted(set(self.nics) - self.cloud.stopped):
            s, port = self.boot_on_qos_port('qos-vm-%s' % host, host)
            servers.append(self._server_entry(s['id']))
            ports[s['id']] = port
            expected += [self._exp(s['id'], 'instance', host, 'ok'),
                         self._exp(s['id'], 'instance', NIC_NAME % host,
                                   'ok')]
        return self._finish(
            'qos_ports_healthy',
            'a server on each running host booted with a port whose QoS '
            'policy '
            'holds a %d kbps egress minimum bandwidth rule: Nova allocated '
            "it on the host's br-phys provider, which the port's "
            'binding:profile.allocation names.' % PORT_KBPS,
            servers, [], expected,
            checks={'ports': ports, 'nics': dict(self.nics),
                    'kbps': PORT_KBPS})

    def stage_routed_segment(self):
        """Neutron's segments plugin makes the provider itself once a
        subnet is on the segment: a root named after the segment, its
        IPV4_ADDRESS inventory, and a Nova aggregate of the hosts the
        agents map to the physnet."""
        self._need_neutron('routed_segment')
        n = self.api.neutron
        net = n('POST', '/networks', {'network': {
            'name': 'sb-routed-net', 'provider:network_type': 'vlan',
            'provider:physical_network': 'physnet0',
            'provider:segmentation_id': 150}})['network']
        segment = n('GET', '/segments?network_id=%s' % net['id'])[
            'segments'][0]
        n('POST', '/subnets', {'subnet': {
            'network_id': net['id'], 'segment_id': segment['id'],
            'name': 'sb-routed-subnet', 'cidr': '10.20.0.0/24',
            'ip_version': 4}})
        deadline = time.monotonic() + 60
        path = '/resource_providers/%s/inventories' % segment['id']
        while True:
            inv = self.api.placement('GET', path, ok=(200, 404))
            if inv and inv.get('inventories'):
                break
            if time.monotonic() > deadline:
                raise IncidentError('no segment provider for %s'
                                    % segment['id'])
            time.sleep(0.3)
        return self._finish(
            'routed_segment',
            "a routed network's segment (VLAN 150 on physnet0) with an "
            "IPv4 subnet: Neutron's segments plugin created its provider "
            '(IPV4_ADDRESS) and the Nova aggregate of host1..3. Not Nova\'s: '
            'never orphaned, never deleted.',
            [], [], [],
            checks={'segment': segment['id'], 'network': net['id'],
                    'segment_name': 'Neutron segment id %s' % segment['id']})

    def stage_port_deleted_in_neutron(self):
        """Nova bug 1820588: Nova hears of the deletion (Neutron's
        network-vif-deleted event) but leaves the port's bandwidth on the
        instance consumer until the server is deleted."""
        self._need_neutron('port_deleted_in_neutron')
        s, port = self.boot_on_qos_port('port-deleted-vm', 'host2')
        self.api.neutron('DELETE', '/ports/%s' % port)
        return self._finish_server(
            'port_deleted_in_neutron',
            'booted on host2 with a QoS port, then the port deleted through '
            "Neutron's API while bound: the server keeps its %d kbps on "
            'host2\'s br-phys provider with no port requesting it (Nova bug '
            '1820588).' % PORT_KBPS,
            s['id'], {'host2': 'ok', NIC_NAME % 'host2': 'leaked_port'},
            fault='DELETE /v2.0/ports/<bound port>',
            checks={'port': port, 'nic': self.nics['host2'],
                    'kbps': PORT_KBPS})

    def _drop_nic(self, server, host):
        """``server``'s consumer rewritten without its part on ``host``'s
        NIC provider; that provider's uuid."""
        current = self.api.placement('GET', '/allocations/%s' % server)
        nic = self.nics[host]
        self._put(server, {rp: a['resources']
                           for rp, a in current['allocations'].items()
                           if rp != nic}, current)
        return nic

    def stage_port_allocation_removed(self):
        self._need_neutron('port_allocation_removed')
        s, port = self.boot_on_qos_port('port-unallocated-vm', 'host3')
        nic = self._drop_nic(s['id'], 'host3')
        return self._finish_server(
            'port_allocation_removed',
            'booted on host3 with a QoS port, then its consumer rewritten '
            "without the br-phys part: the port's binding:profile.allocation "
            'still names host3\'s br-phys provider, which holds nothing for '
            'the server.',
            s['id'], {'host3': 'ok', NIC_NAME % 'host3': 'missing'},
            fault='PUT /allocations/<server> without the NIC provider',
            checks={'port': port, 'nic': nic, 'kbps': PORT_KBPS})

    def stage_port_binding_lost(self):
        """A port whose binding names no provider and whose bandwidth
        Placement does not hold: what a port attached before Stein, or a
        ``heal_allocations --force`` that dropped the NIC part, leaves.
        Staged for real: booted through Nova on a QoS port, then the
        ``allocation`` key removed from the port's ``binding:profile``
        through Neutron's API (as the service user) and the consumer
        rewritten without its NIC part."""
        self._need_neutron('port_binding_lost')
        s, port = self.boot_on_qos_port('port-unbound-vm', 'host3')
        body = self._port(port)
        profile = {k: v for k, v in (body.get('binding:profile') or {}).items()
                   if k != 'allocation'}
        self.api.neutron('PUT', '/ports/%s' % port,
                         {'port': {'binding:profile': profile}})
        nic = self._drop_nic(s['id'], 'host3')
        return self._finish_server(
            'port_binding_lost',
            "booted on host3 with a QoS port, then the allocation key "
            "removed from the port's binding:profile in Neutron and the "
            "NIC part from its consumer in Placement: Placement's one "
            "allocation candidate in host3's tree is host3's br-phys "
            'provider, which a heal names in the binding first, then '
            'allocates.',
            s['id'], {'host3': 'ok', NIC_NAME % 'host3': 'missing'},
            fault='PUT /v2.0/ports/<port> without binding:profile.'
                  'allocation, then PUT /allocations/<server> without the '
                  'NIC provider',
            checks={'port': port, 'nic': nic, 'kbps': PORT_KBPS})

    def stage_qos_rule_changed(self):
        """Neutron 29 refuses to change a minimum bandwidth rule under a
        bound port (501): the mismatch an older Neutron left (the rule
        changed, Placement not) is staged by trying that update, then
        writing the old amount into Placement."""
        self._need_neutron('qos_rule_changed')
        policy = self._qos_policy('sb-min-bw-changed', CHANGED_KBPS)
        s, port = self.boot_on_qos_port('qos-changed-vm', 'host2', policy)
        n = self.api.neutron
        rule = n('GET', '/qos/policies/%s/minimum_bandwidth_rules'
                 % policy)['minimum_bandwidth_rules'][0]
        refused = self.api._call(
            self.api.neutron_url + '/v2.0', 'network', 'PUT',
            '/qos/policies/%s/minimum_bandwidth_rules/%s'
            % (policy, rule['id']),
            {'minimum_bandwidth_rule': {'min_kbps': PORT_KBPS}}, None,
            None).status_code
        current = self.api.placement('GET', '/allocations/%s' % s['id'])
        nic = self.nics['host2']
        held = {rp: dict(a['resources'])
                for rp, a in current['allocations'].items()}
        held[nic][BANDWIDTH] = PORT_KBPS
        self._put(s['id'], held, current)
        return self._finish_server(
            'qos_rule_changed',
            'booted on host2 with a port whose policy asks %d kbps; the '
            "allocation on host2's br-phys provider says %d (the rule "
            'changed under the bound port, Placement not): a wrong amount.'
            % (CHANGED_KBPS, PORT_KBPS),
            s['id'], {'host2': 'ok', NIC_NAME % 'host2': 'wrong_amount'},
            fault='PUT of the minimum bandwidth rule (Neutron answers %d), '
                  'then PUT /allocations/<server> with %s=%d on the NIC'
                  % (refused, BANDWIDTH, PORT_KBPS),
            checks={'port': port, 'nic': nic, 'kbps': CHANGED_KBPS,
                    'allocated': PORT_KBPS, 'rule_update_status': refused})

    def stage_port_migrated_left(self):
        """A cold migration Nova carried out for real (the NIC allocation
        and the port's binding moved to host2), then the source's bandwidth
        written back onto the instance, as a cleanup that never finished
        leaves it."""
        self._need_neutron('port_migrated_left')
        s, port = self.boot_on_qos_port('port-migrated-vm', 'host3')
        mig = self._migrate_and_confirm(s['id'], 'host2')
        current = self.api.placement('GET', '/allocations/%s' % s['id'])
        held = {rp: a['resources']
                for rp, a in current['allocations'].items()}
        held[self.nics['host3']] = {BANDWIDTH: PORT_KBPS}
        self._put(s['id'], held, current)
        return self._finish(
            'port_migrated_left',
            'cold-migrated host3 -> host2 with a QoS port and confirmed: its '
            "bandwidth moved to host2's br-phys provider, and the old %d "
            "kbps on host3's br-phys was left on the instance." % PORT_KBPS,
            [self._server_entry(s['id'])], [self._mig_entry(mig)],
            [self._exp(s['id'], 'instance', 'host2', 'ok'),
             self._exp(s['id'], 'instance', NIC_NAME % 'host2', 'ok'),
             self._exp(s['id'], 'instance', NIC_NAME % 'host3', 'moved')],
            fault='PUT /allocations/<server> adding host3:br-phys %s=%d '
                  'after the confirm' % (BANDWIDTH, PORT_KBPS),
            checks={'port': port, 'nic': self.nics['host2'],
                    'old_nic': self.nics['host3'], 'kbps': PORT_KBPS})

    # ---------------------------------------------------------------- PCI
    def _need_pci(self, name):
        if not self.cloud.PCI:
            raise IncidentError('%s needs the sandbox started with --pci'
                                % name)
        if name in self.manifest:
            raise IncidentError('%s is already staged' % name)
        self._flavors_with(PCI_FLAVORS, lambda fid: {
            'pci_passthrough:alias': '%s:1' % sb_cloud.PCI_DEVICES[
                fid.rsplit('-', 1)[1]][1]})

    def _flavors_with(self, flavors, extra_specs):
        """``flavors`` (``{id: (name, vcpus, ram, disk)}``) Nova does not
        have yet, each created with ``extra_specs(id)``."""
        existing = {f['id'] for f in self.api.nova(
            'GET', '/flavors?is_public=None')['flavors']}
        for fid, (title, vcpus, ram, disk) in flavors.items():
            if fid in existing:
                continue
            self.api.nova('POST', '/flavors', {'flavor': {
                'id': fid, 'name': title, 'vcpus': vcpus, 'ram': ram,
                'disk': disk}})
            self.api.nova('POST', '/flavors/%s/os-extra_specs' % fid, {
                'extra_specs': extra_specs(fid)})

    def boot_pci(self, name, flavor, host):
        """A server booted through Nova with one PCI device: Nova's
        scheduler allocates it on the host's ``<host>_<address>`` child."""
        s = self.boot(name, flavor, host)
        if s['status'] != 'ACTIVE':
            raise IncidentError('%s did not boot: %s'
                                % (name, s.get('fault')))
        return s

    def _devices(self, consumer):
        """``{name: uuid}`` of the children of a node ``consumer`` holds
        (each remembered among the stager's providers)."""
        found = {}
        for rp in self.api.allocations(consumer):
            name = self._host_of(rp)
            if name is None:
                name = self.api.placement(
                    'GET', '/resource_providers/%s' % rp)['name']
                self.rps[name] = rp
            if name not in self.cloud.computes:
                found[name] = rp
        return found

    def _wait_gone(self, server, timeout=60):
        deadline = time.monotonic() + timeout
        while self.api.nova_raw('GET', '/servers/%s' % server).status_code \
                != 404:
            if time.monotonic() > deadline:
                raise IncidentError('server %s is not deleted' % server)
            time.sleep(0.2)

    def _judged(self, consumer, kind, host, verdict):
        """What ``consumer`` is expected to hold on ``host`` and its
        devices: ``verdict`` for each."""
        out = [self._exp(consumer, kind, host, verdict)]
        for name in sorted(self._devices(consumer)):
            if name.startswith(host + '_'):
                out.append(self._exp(consumer, kind, name, verdict))
        return out

    def stage_pci_deleted_behind_nova(self):
        self._need_pci('pci_deleted_behind_nova')
        s = self.boot_pci('pci-deleted-behind-nova-vm', PCI_A, 'host1')
        held = self.api.allocations(s['id'])
        res = self.cloud.soft_delete_behind_nova(s['id'])
        expected = self._judged(s['id'], 'instance', 'host1',
                                'deleted_instance')
        entry = self._deleted_entry(s)
        return self._finish(
            'pci_deleted_behind_nova',
            "booted on host1 with a PCI device (Nova's scheduler allocated "
            "it on host1's device provider), then marked deleted in the "
            "cell DB by hand in SQL: its share of host1 and its device "
            'stay held.',
            [entry], [], expected,
            fault="UPDATE instances SET deleted=1 ... (rows=%s)" % res['rows'],
            flavor=PCI_A, checks={'held': held})

    def _migrate_and_confirm(self, server, dest):
        """Cold-migrate ``server`` to ``dest`` and confirm, as an operator
        does; returns the confirmed migration."""
        self.api.act(server, {'migrate': {'host': dest}}, 'VERIFY_RESIZE',
                     mv='2.56')
        self.api.act(server, {'confirmResize': None}, 'ACTIVE')
        return self.api.wait_migration(server, ('confirmed',))

    def stage_pci_moved(self):
        """A cold migration Nova carried out for real, its scheduler
        allocating a device on the destination; then the source's share
        and device written back onto the server, as a cleanup that never
        finished leaves it.  host3's PCI tracker then counts that device
        free where Placement holds it: no PCI incident moves a server to
        host3 (Nova would claim it and fail to allocate it)."""
        self._need_pci('pci_moved')
        s = self.boot_pci('pci-moved-vm', PCI_A, 'host3')
        source = self.api.allocations(s['id'])
        source_devices = self._devices(s['id'])
        mig = self._migrate_and_confirm(s['id'], 'host2')
        current = self.api.allocations(s['id'])
        self._hold(s['id'], source)
        expected = (self._judged(s['id'], 'instance', 'host2', 'ok') +
                    self._judged(s['id'], 'instance', 'host3', 'moved'))
        return self._finish(
            'pci_moved',
            "cold-migrated host3 -> host2 with a PCI device and confirmed: "
            "Nova's scheduler gave it a device on host2; its host3 share "
            'and device were then written back onto it.',
            [self._server_entry(s['id'])], [self._mig_entry(mig)],
            expected,
            fault='PUT /allocations/<server> adding back its host3 share '
                  'and device after the confirm',
            flavor=PCI_A,
            checks={'source': source, 'current': current,
                    'source_devices': source_devices})

    def stage_pci_stale_migration(self):
        self._need_pci('pci_stale_migration')
        s = self.boot_pci('pci-stale-migration-vm', PCI_B, 'host1')
        source = self.api.allocations(s['id'])
        self._devices(s['id'])  # host1's device, named for _host_of
        mig = self._confirm_losing_a_race(s['id'], 'host2')
        expected = []
        for rp in self.api.allocations(mig['uuid']):
            expected.append(self._exp(mig['uuid'], 'migration',
                                      self._host_of(rp), 'stale_migration'))
        self._devices(s['id'])  # host2's
        for rp in self.api.allocations(s['id']):
            expected.append(self._exp(s['id'], 'instance',
                                      self._host_of(rp), 'ok'))
        return self._finish(
            'pci_stale_migration',
            'cold-migrated host1 -> host2 with a PCI device; the confirm\'s '
            'PUT /allocations/<migration> {} lost a race (a real 409), so '
            "the migration consumer still holds host1's share and device.",
            [self._server_entry(s['id'])], [self._mig_entry(mig)], expected,
            fault='concurrent PUT /allocations/<migration> just before '
                  "_delete_allocation_after_move's PUT (409)",
            flavor=PCI_B,
            checks={'source': source, 'races_fired': list(self.race.fired)})

    def _inventory(self, rp, resource_class):
        return self.api.placement(
            'GET', '/resource_providers/%s/inventories' % rp)[
            'inventories'][resource_class]

    def stage_pci_one_time_use(self):
        """Nova 2025.2 reserves a one-time-use device once it is
        allocated and never unreserves it: after the server is deleted
        through Nova, ``reserved = total`` and no allocation."""
        self._need_pci('pci_one_time_use')
        s = self.boot_pci('pci-one-time-use-vm', PCI_OTU, 'host1')
        (device,) = self._devices(s['id']).values()
        while_used = self._inventory(device, PCI_OTU_CLASS)
        self.api.nova('DELETE', '/servers/%s' % s['id'])
        self._wait_gone(s['id'])
        after = self._inventory(device, PCI_OTU_CLASS)
        entry = self._server_entry(s['id'], s['name'], deleted=True)
        return self._finish(
            'pci_one_time_use',
            "booted on host1 with the one-time-use device (Nova reserved "
            'it whole once allocated), then deleted through Nova: the '
            'device stays reserved = total with no allocation, which is no '
            'orphan.',
            [entry], [], [], flavor=PCI_OTU,
            checks={'device': device, 'while_used': while_used,
                    'after_delete': after,
                    'allocations_after_delete': self.api.allocations(
                        s['id'])})

    def _stock(self, rp, resource_class):
        """``resource_class``'s inventory on ``rp`` with what is used of
        it."""
        used = self.api.placement(
            'GET', '/resource_providers/%s/usages' % rp)['usages']
        return dict(self._inventory(rp, resource_class),
                    used=used.get(resource_class, 0))

    def _past_instance_one(self, host):
        """Nova reads an instance as deleted when its ``deleted`` column
        equals its id: the hand-written ``deleted=1`` on a cell's first
        instance is Nova's own delete, whose allocation the next periodic
        update removes.  On an empty cell, a server booted and deleted
        through Nova first takes id 1."""
        if self.cloud.last_instance_id(host) is not None:
            return
        s = self.boot('placeholder-vm', 'sb-small', host)
        self.api.nova('DELETE', '/servers/%s' % s['id'])
        self._wait_gone(s['id'])

    def stage_pci_removed_device(self):
        """Nova bug 2115905: host3's nova-compute restarted with a
        ``device_spec`` that no longer lists the device a server holds
        keeps the device's provider, its inventory adjusted up to the
        allocation; the server then deleted behind Nova's back, the next
        periodic update frees the device in Nova's PCI tracker and forgets
        it, but the inventory stays for the leftover allocation, and every
        later update of host3 fails to delete the provider, until that
        allocation goes.  host3 keeps that ``device_spec``."""
        self._need_pci('pci_removed_device')
        bus = '02'
        flavor = 'sb-pci-%s' % bus
        self._past_instance_one('host3')
        s = self.boot_pci('pci-removed-device-vm', flavor, 'host3')
        (device,) = self._devices(s['id']).values()
        resource_class = sb_cloud.PCI_DEVICES[bus][0]
        kept = set(sb_cloud.PCI_DEVICES) - {bus}
        with _warnings_of('nova') as adjusting:
            self.cloud.restart_with_pci_devices('host3', kept)
            while_held = self._stock(device, resource_class)
            res = self.cloud.soft_delete_behind_nova(s['id'])
            self.cloud.run_periodic('host3')
        after = self._stock(device, resource_class)
        with _warnings_of('nova') as failing:
            self.cloud.run_periodic('host3')
        if device not in self.api.allocations(s['id']):
            raise IncidentError('a periodic update removed the deleted '
                                "server's allocation")
        entry = self._deleted_entry(s)
        return self._finish(
            'pci_removed_device',
            "booted on host3 with a PCI device, then host3's nova-compute "
            'restarted with a [pci] device_spec without that device (Nova '
            'kept its inventory for the allocation); the server was then '
            'marked deleted in the cell DB by hand in SQL and a periodic '
            "update freed the device in Nova's PCI tracker: its inventory "
            'stays only for the leftover allocation, and each later update '
            'of host3 fails to delete it (Nova bug 2115905).',
            [entry], [],
            self._judged(s['id'], 'instance', 'host3', 'deleted_instance'),
            fault='host3 restarted without bus %s in [pci] device_spec; '
                  'UPDATE instances SET deleted=1 ... (rows=%s)'
                  % (bus, res['rows']),
            flavor=flavor,
            checks={'device': device, 'while_held': while_held,
                    'after_delete': after,
                    'after_next_update': self._stock(device,
                                                     resource_class),
                    'adjusted': [line for line in adjusting
                                 if line.startswith(
                                     'Needed to adjust inventories')],
                    'update_failed': [line for line in failing
                                      if line.startswith(
                                          'Error updating resources')]})

    def _need_cyborg(self, name):
        if not self.api.cyborg_url or not self.devices:
            raise IncidentError('%s needs the sandbox started with --cyborg'
                                % name)
        if name in self.manifest:
            raise IncidentError('%s is already staged' % name)
        if not self.api.cyborg('GET', '/device_profiles?name=%s'
                               % DEVICE_PROFILE)['device_profiles']:
            self.api.cyborg('POST', '/device_profiles', [{
                'name': DEVICE_PROFILE, 'groups': [{
                    'resources:FPGA': '1',
                    'trait:%s' % cyborg_proc.DEVICE_TRAIT: 'required'}]}])
        self._flavors_with(ACCEL_FLAVORS, lambda fid: {
            'accel:device_profile': DEVICE_PROFILE})

    def arqs(self, server):
        """The ARQs Cyborg holds for ``server``."""
        return self.api.cyborg('GET', '/accelerator_requests?instance=%s'
                               % server)['arqs']

    def stage_accelerator_deleted_behind_nova(self):
        """A server booted through Nova on host3 (up in the demo, whose
        ``evacuation`` stops host1) with one of Cyborg's FPGAs (Nova's
        conductor created its ARQ in Cyborg and bound it, the scheduler
        allocated the FPGA on host3's device provider), then marked
        deleted in the cell database by hand: its share of host3 and its
        FPGA stay held, and Cyborg keeps the ARQ bound to it, which
        Nova's delete would have deleted (``delete_arqs_if_needed``)."""
        name = 'accelerator_deleted_behind_nova'
        self._need_cyborg(name)
        s = self.boot('accelerator-deleted-behind-nova-vm', ACCEL_FLAVOR,
                      'host3')
        if s['status'] != 'ACTIVE':
            raise IncidentError('%s did not boot: %s'
                                % (s['name'], s.get('fault')))
        bound = [a for a in self.arqs(s['id']) if a['state'] == 'Bound']
        if not bound:
            raise IncidentError('%s: Cyborg bound no ARQ to %s'
                                % (name, s['id']))
        held = self.api.allocations(s['id'])
        res = self.cloud.soft_delete_behind_nova(s['id'])
        expected = self._judged(s['id'], 'instance', 'host3',
                                'deleted_instance')
        return self._finish(
            name,
            "booted on host3 with one of Cyborg's FPGAs (its ARQ bound by "
            "Nova's conductor, the FPGA allocated on host3's device "
            "provider), then marked deleted in the cell DB by hand in SQL: "
            'its share of host3 and the FPGA stay held, and Cyborg keeps '
            'the ARQ bound to it.',
            [self._deleted_entry(s)], [], expected,
            fault="UPDATE instances SET deleted=1 ... (rows=%s)" % res['rows'],
            flavor=ACCEL_FLAVOR,
            checks={'held': held, 'arqs': [a['uuid'] for a in bound]})

    def _nova_child(self, host, name, resource_class, total, traits):
        """A child of ``host``'s node made through the Placement API as
        Nova's libvirt driver makes it: ``total`` of ``resource_class``
        (one a server), ``OWNER_NOVA`` and ``traits``."""
        child, generation = self._provider(
            name, {resource_class: {'total': total, 'max_unit': 1}},
            parent=host)
        self.api.placement(
            'PUT', '/resource_providers/%s/traits' % child, {
                'resource_provider_generation': generation,
                'traits': ['OWNER_NOVA'] + list(traits)}, mv='1.6')
        self.rps[name] = child
        return child

    def stage_vgpu_and_sev_children(self):
        """No fake driver reports a physical GPU or memory encryption
        slots: both made under host2 through the Placement API as Nova's
        libvirt driver writes them, and a server on host2 given one vGPU
        and one slot there as Nova's scheduler allocates them; its host2
        memory then rewritten by hand, so that a repair of host2 has to
        keep both."""
        if 'vgpu_and_sev_children' in self.manifest:
            raise IncidentError('vgpu_and_sev_children is already staged')
        pgpu = self._nova_child('host2', PGPU_NAME % 'host2', 'VGPU', 16, ())
        sev = self._nova_child('host2', SEV_NAME % 'host2',
                               'MEM_ENCRYPTION_CONTEXT', 15,
                               ('HW_CPU_X86_AMD_SEV',))
        s = self.boot('vgpu-sev-vm', 'sb-small', 'host2')
        current = self.api.placement('GET', '/allocations/%s' % s['id'])
        root = self.rps['host2']
        node = dict(current['allocations'][root]['resources'])
        devices = {pgpu: {'VGPU': 1}, sev: {'MEM_ENCRYPTION_CONTEXT': 1}}
        self._put(s['id'], dict(devices, **{
            root: dict(node, MEMORY_MB=node['MEMORY_MB'] * 2)}), current)
        return self._finish_server(
            'vgpu_and_sev_children',
            "a server on host2 holding a vGPU on host2's physical GPU (%s, "
            'VGPU) and a slot of its AMD SEV memory encryption (%s, '
            'MEM_ENCRYPTION_CONTEXT), both made through the Placement API '
            "as Nova's libvirt driver writes them (OWNER_NOVA), then its "
            'host2 memory doubled by hand: the heal keeps both as read.'
            % (PGPU_NAME % 'host2', SEV_NAME % 'host2'),
            s['id'], {'host2': 'wrong_amount', PGPU_NAME % 'host2': 'ok',
                      SEV_NAME % 'host2': 'ok'},
            fault='POST /resource_providers of both children, then PUT '
                  '/allocations/<server> adding them and doubling '
                  'MEMORY_MB on host2',
            checks={'pgpu': pgpu, 'sev': sev, 'devices': devices})
