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

"""The benchmark cloud: the sandbox's Nova API and Placement, seeded big.

No compute service runs: hypervisors are compute node, service and host
mapping rows plus their resource providers, and servers are rows in the
cell database (cloned from a server created through Nova's objects, so
every column is what Nova writes) with their allocations written through
Placement's ``POST /allocations``.  Nova's API, ``nova-manage placement
audit`` and our audit read them like any other.

The databases are file-backed SQLite (Nova's fixtures under native
threading); once seeded they are copied with SQLite's backup API to
``~/.cache/orphan-dashboard-bench/v1/<size>/`` and copied back on the next
start, so a size is seeded once.  With ``neutron`` (``python -m bench
--neutron``) the same cloud gets a real Neutron's ports and NIC
allocations (:mod:`bench.neutron`), cached with Neutron's database in
``v1/<size>-neutron/``.

Import only after ``OS_NOVA_DISABLE_EVENTLET_PATCHING`` is set.
"""
import datetime
import json
import os
import random
import sqlite3
import time
import uuid as uuid_lib

from sandbox import cloud as sb_cloud

import sqlalchemy as sa

from nova import context as nova_context
from nova.db.api import api as api_db_api
from nova.db.api import models as api_models
from nova.db.main import api as main_db_api
from nova.db.main import models as main_models
from nova import objects
from nova.tests import fixtures as nova_fixtures
from nova.tests.functional import fixtures as func_fixtures

CACHE_VERSION = 1
"""Bump when the seeded data changes, so old caches are not reused."""

IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'
FLAVOR_IDS = ('1', '2', '3')      # m1.tiny, m1.small, m1.medium
INVENTORY = {'VCPU': {'total': 64, 'allocation_ratio': 16.0},
             'MEMORY_MB': {'total': 262144, 'allocation_ratio': 1.5},
             'DISK_GB': {'total': 16000, 'allocation_ratio': 1.0}}
POST_BATCH = 500
"""Consumers per ``POST /allocations`` while seeding."""

# Share of the seeded servers for each kind of orphan (of ``size``).
ORPHANS = {
    'evacuated_source': 0.01,   # evacuation done, source never cleaned up
    'moved': 0.005,             # holds its old node too, no migration
    'moved_only': 0.0025,       # holds only its old node (+ missing here)
    'deleted_instance': 0.01,   # deleted the Nova way, allocation left
    'deleted_by_hand': 0.0025,  # deleted=1 set by hand in SQL
    'stale_migration': 0.01,    # migration error/confirmed, consumer left
    'missing': 0.005,           # no allocation at all
    'wrong_amount': 0.005,      # not what the flavor needs
    'verify_resize': 0.01,      # protected: resize waiting for confirm
    'building': 0.0025,         # protected: scheduled, no host yet
    'unknown_consumer': 0.005,  # nobody knows it
}


def hosts_for(size):
    """About 50 servers a hypervisor (what its inventory holds), at least
    20 hypervisors."""
    return max(20, size // 50)


def _now():
    return datetime.datetime.utcnow().replace(microsecond=0)


def _uuid(rng):
    return str(uuid_lib.UUID(int=rng.getrandbits(128), version=4))


def _db_path(engine):
    return engine.url.database


def cache_dir(root, size, neutron=False):
    """Where a size's seeded databases are kept."""
    return os.path.join(root, 'v%d' % CACHE_VERSION,
                        str(size) + ('-neutron' if neutron else ''))


class BenchCloud(sb_cloud.SandboxCloud):
    """Nova API + Placement with ``size`` servers over many hypervisors."""

    size = 1000
    cache_root = os.path.expanduser('~/.cache/orphan-dashboard-bench')
    neutron = False
    """Restore the seed with Neutron's ports if cached (Neutron itself is
    seeded and saved by :mod:`bench.server` once it runs)."""

    def setUp(self):
        self.flags(compute_driver=self.compute_driver)
        sb_cloud.lasting_test_setup(self)
        self.useFixture(nova_fixtures.RealPolicyFixture())
        self.useFixture(nova_fixtures.NeutronFixture(self))
        self.useFixture(nova_fixtures.GlanceFixture(self))
        self.useFixture(nova_fixtures.CinderFixture(self))
        self.placement_fixture = self.useFixture(
            func_fixtures.PlacementFixture())
        self.placement = self.placement_fixture.api
        self.useFixture(nova_fixtures.AllServicesCurrent())
        # No compute heartbeats here: keep the seeded services 'up'.
        self.flags(service_down_time=10 ** 9)
        self.stopped = set()
        self.servers = []
        self.seed_seconds = None
        self.flavors = {fid: objects.Flavor.get_by_flavor_id(
            nova_context.get_admin_context(), fid) for fid in FLAVOR_IDS}
        t0 = time.monotonic()
        if (self.neutron and self.restore(self.cache_dir)) or \
                self.restore(self.plain_cache_dir):
            self.restored_seconds = time.monotonic() - t0
        else:
            self.restored_seconds = None
            self.seed()
            self.seed_seconds = time.monotonic() - t0
            self.save(self.plain_cache_dir)
        self.templates = self.load_templates()

    def provider_uuids(self):
        return dict(self.meta['hosts'])

    # ------------------------------------------------------------ caching
    @property
    def cache_dir(self):
        return cache_dir(self.cache_root, self.size, self.neutron)

    @property
    def plain_cache_dir(self):
        return cache_dir(self.cache_root, self.size)

    @classmethod
    def cached_neutron_database(cls):
        """The cached Neutron database of this size, if the seed with
        Neutron is complete (its ``meta.json`` is written last)."""
        path = cache_dir(cls.cache_root, cls.size, neutron=True)
        if cls.neutron and os.path.exists(os.path.join(path, 'meta.json')):
            return os.path.join(path, 'neutron.sqlite')
        return None

    def _databases(self):
        """label -> (engine, path) of every database the cloud uses."""
        ctxt = nova_context.get_admin_context()
        out = {'api': api_db_api.get_engine()}
        for name in ('cell0', 'cell1'):
            with nova_context.target_cell(
                    ctxt, self.cell_mappings[name]) as cctxt:
                out[name] = main_db_api.get_engine(context=cctxt)
        from placement import db_api as placement_db
        out['placement'] = placement_db.placement_context_manager.writer \
            .get_engine()
        return {label: (engine, _db_path(engine))
                for label, engine in out.items()}

    def save(self, cache_dir, neutron=None):
        """Every database (and ``neutron``'s, a path, if given) copied to
        ``cache_dir``, ``meta.json`` last."""
        os.makedirs(cache_dir, exist_ok=True)
        databases = {label: path for label, (engine, path) in
                     self._databases().items()}
        if neutron:
            databases['neutron'] = neutron
        for label, path in databases.items():
            target = os.path.join(cache_dir, label + '.sqlite.tmp')
            with sqlite3.connect(path) as src, sqlite3.connect(target) as dst:
                src.backup(dst)
            os.replace(target, target[:-4])
        with open(os.path.join(cache_dir, 'meta.json.tmp'), 'w') as f:
            json.dump(self.meta, f)
        os.replace(os.path.join(cache_dir, 'meta.json.tmp'),
                   os.path.join(cache_dir, 'meta.json'))

    def restore(self, cache_dir):
        meta = os.path.join(cache_dir, 'meta.json')
        if not os.path.exists(meta):
            return False
        for label, (engine, path) in self._databases().items():
            engine.dispose()
            source = os.path.join(cache_dir, label + '.sqlite')
            with sqlite3.connect(source) as src, sqlite3.connect(path) as dst:
                src.backup(dst)
        # This process's cell1 has another uuid (a sentinel) than the one
        # that seeded: point the mapping at it.
        cell1 = self.cell_mappings['cell1']
        with api_db_api.get_engine().begin() as conn:
            conn.execute(sa.text(
                "UPDATE cell_mappings SET uuid=:u, database_connection=:u "
                "WHERE name='cell1'"), {'u': cell1.uuid})
        with open(meta) as f:
            self.meta = json.load(f)
        return True

    # ------------------------------------------------------------ seeding
    def cell_engine(self):
        return main_db_api.get_engine(context=self.cell_ctxt())

    def seed(self):
        """Hypervisors, servers, migrations and allocations for ``size``."""
        rng = random.Random(self.size)
        ctxt = self.cell_ctxt()
        hosts = {}
        for i in range(hosts_for(self.size)):
            name = 'cmp%03d' % (i + 1)
            hosts[name] = self._hypervisor(ctxt, name)
        self.meta = {
            'size': self.size,
            'hosts': {h: n['uuid'] for h, n in hosts.items()},
            'node_ids': {h: n['id'] for h, n in hosts.items()},
            'projects': [uuid_lib.UUID(int=rng.getrandbits(128)).hex
                         for _ in range(20)],
            'users': [uuid_lib.UUID(int=rng.getrandbits(128)).hex
                      for _ in range(20)],
            'expected': [], 'seeded_at': _now().isoformat()}
        self.templates = self._templates(ctxt)
        plan = Plan(self, rng)
        plan.build(self.size)
        plan.write()
        self.meta['expected'] = plan.expected
        self.meta['counts'] = plan.counts

    def _hypervisor(self, ctxt, host):
        """Service, compute node, host mapping and resource provider."""
        service = objects.Service(ctxt, host=host, binary='nova-compute',
                                  topic='compute', report_count=1)
        service.create()
        node = objects.ComputeNode(
            ctxt, uuid=str(uuid_lib.uuid4()), host=host,
            hypervisor_hostname=host, service_id=service.id,
            vcpus=INVENTORY['VCPU']['total'],
            memory_mb=INVENTORY['MEMORY_MB']['total'],
            local_gb=INVENTORY['DISK_GB']['total'], vcpus_used=0,
            memory_mb_used=0, local_gb_used=0, hypervisor_type='fake',
            hypervisor_version=1000, cpu_info='{}', free_ram_mb=0,
            free_disk_gb=0, current_workload=0, running_vms=0,
            disk_available_least=0, host_ip='127.0.0.1',
            supported_hv_specs=[], pci_device_pools=None,
            cpu_allocation_ratio=16.0, ram_allocation_ratio=1.5,
            disk_allocation_ratio=1.0)
        node.create()
        objects.HostMapping(nova_context.get_admin_context(), host=host,
                            cell_mapping=self.cell_mappings['cell1']).create()
        self._placement('POST', '/resource_providers',
                        {'name': host, 'uuid': node.uuid})
        self._placement('PUT', '/resource_providers/%s/inventories' %
                        node.uuid, {'resource_provider_generation': 0,
                                    'inventories': INVENTORY})
        return {'uuid': node.uuid, 'id': node.id}

    def _placement(self, method, url, body=None, version='1.28'):
        call = getattr(self.placement, method.lower())
        resp = (call(url, version=version) if body is None
                else call(url, body, version=version))
        if resp.status >= 400:
            raise RuntimeError('placement %s %s: %s %s' % (
                method, url, resp.status, resp.body))
        return resp.body

    def _templates(self, ctxt):
        """One server per flavor made by Nova's objects: the rows to clone."""
        templates = {}
        host = sorted(self.meta['hosts'])[0]
        for fid, flavor in self.flavors.items():
            instance = objects.Instance(
                ctxt, uuid=str(uuid_lib.uuid4()),
                user_id=self.meta['users'][0],
                project_id=self.meta['projects'][0], host=host, node=host,
                compute_id=self.meta['node_ids'][host], vm_state='active',
                power_state=1, task_state=None, flavor=flavor,
                old_flavor=None, new_flavor=None,
                instance_type_id=flavor.id, vcpus=flavor.vcpus,
                memory_mb=flavor.memory_mb, root_gb=flavor.root_gb,
                ephemeral_gb=flavor.ephemeral_gb, image_ref=IMAGE,
                display_name='template', hostname='template',
                launched_at=_now(), availability_zone='nova',
                system_metadata={}, metadata={})
            instance.create()
            rows = {}
            with self.cell_engine().begin() as conn:
                for table, key in ((main_models.Instance, 'uuid'),
                                   (main_models.InstanceExtra,
                                    'instance_uuid'),
                                   (main_models.InstanceInfoCache,
                                    'instance_uuid')):
                    t = table.__table__
                    row = conn.execute(sa.select(t).where(
                        t.c[key] == instance.uuid)).mappings().one()
                    rows[t.name] = dict(row)
                    conn.execute(t.delete().where(t.c[key] == instance.uuid))
            templates[fid] = rows
        return templates

    def load_templates(self):
        """The rows of one live server per flavor, to clone from."""
        templates = {}
        instances = main_models.Instance.__table__
        with self.cell_engine().connect() as conn:
            for fid, flavor in self.flavors.items():
                row = conn.execute(sa.select(instances).where(
                    instances.c.instance_type_id == flavor.id,
                    instances.c.deleted == 0,
                    instances.c.vm_state == 'active').limit(1)).mappings() \
                    .one()
                rows = {'instances': dict(row)}
                for table in (main_models.InstanceExtra,
                              main_models.InstanceInfoCache):
                    t = table.__table__
                    rows[t.name] = dict(conn.execute(sa.select(t).where(
                        t.c.instance_uuid == row['uuid'])).mappings().one())
                templates[fid] = rows
        return templates

    # ------------------------------------------------------- control API
    def churn(self, count, seed):
        """``count`` servers created, deleted, migrated or evacuated now,
        written the way Nova would leave them (rows + allocations)."""
        plan = Plan(self, random.Random(seed), touch=True)
        plan.churn(count)
        plan.write()
        return plan.counts


class Plan:
    """Rows and allocations to write in bulk; ``expected`` verdicts."""

    def __init__(self, cloud, rng, touch=False):
        self.cloud = cloud
        self.rng = rng
        self.touch = touch
        self.now = _now()
        meta = cloud.meta
        self.hosts = sorted(meta['hosts'])
        self.rps = meta['hosts']
        self.node_ids = meta['node_ids']
        self.instances = []      # (uuid, flavor id, fields)
        self.deletes = []        # (uuid, how)
        self.updates = []        # (uuid, fields)
        self.migrations = []
        self.allocations = {}    # consumer -> body
        self.expected = []
        self.counts = {}

    # -- helpers ------------------------------------------------------------
    def _count(self, kind, n=1):
        self.counts[kind] = self.counts.get(kind, 0) + n

    def _two_hosts(self):
        a, b = self.rng.sample(self.hosts, 2)
        return a, b

    def _flavor(self):
        return self.rng.choice(FLAVOR_IDS)

    def _resources(self, fid, extra_vcpu=0):
        flavor = self.cloud.flavors[fid]
        return {'VCPU': flavor.vcpus + extra_vcpu,
                'MEMORY_MB': flavor.memory_mb,
                'DISK_GB': flavor.root_gb + flavor.ephemeral_gb}

    def _owner(self):
        return (self.rng.choice(self.cloud.meta['projects']),
                self.rng.choice(self.cloud.meta['users']))

    def server(self, host, fid=None, holds=(), extra_vcpu=0, **fields):
        """A server living on ``host`` holding its flavor on ``holds``."""
        uuid = _uuid(self.rng)
        fid = fid or self._flavor()
        project, user = self._owner()
        self.instances.append((uuid, fid, dict(
            fields, host=host, node=host, project_id=project, user_id=user,
            compute_id=self.node_ids.get(host))))
        if holds:
            self.allocate(uuid, holds, self._resources(fid, extra_vcpu),
                          project, user)
        return uuid, fid, project, user

    def allocate(self, consumer, hosts, resources, project, user):
        self.allocations[consumer] = {
            'allocations': {self.rps[h]: {'resources': dict(resources)}
                            for h in hosts},
            'consumer_generation': None,
            'project_id': project, 'user_id': user}

    def migration(self, instance, kind, status, source, dest, fid):
        uuid = _uuid(self.rng)
        self.migrations.append(dict(
            uuid=uuid, instance_uuid=instance, migration_type=kind,
            status=status, source_compute=source, dest_compute=dest,
            source_node=source, dest_node=dest, dest_host='127.0.0.1',
            old_instance_type_id=self.cloud.flavors[fid].id,
            new_instance_type_id=self.cloud.flavors[fid].id))
        return uuid

    def expect(self, consumer, host, verdict):
        self.expected.append((consumer, self.rps[host], verdict))

    # -- the seeded cloud ---------------------------------------------------
    def build(self, size):
        rng = self.rng
        counts = {kind: max(2, round(share * size))
                  for kind, share in ORPHANS.items()}
        live_kinds = ('evacuated_source', 'moved', 'moved_only',
                      'stale_migration', 'missing', 'wrong_amount',
                      'verify_resize', 'building')
        healthy = size - sum(counts[k] for k in live_kinds)
        for _ in range(healthy):
            host = rng.choice(self.hosts)
            self.server(host, holds=[host])
        self._count('ok', healthy)
        for _ in range(counts['evacuated_source']):
            a, b = self._two_hosts()
            uuid, fid, *_ = self.server(b, holds=[a, b])
            self.migration(uuid, 'evacuation', 'done', a, b, fid)
            self.expect(uuid, a, 'evacuated_source')
        for _ in range(counts['moved']):
            a, b = self._two_hosts()
            uuid, *_ = self.server(b, holds=[a, b])
            self.expect(uuid, a, 'moved')
        for _ in range(counts['moved_only']):
            a, b = self._two_hosts()
            uuid, *_ = self.server(b, holds=[a])
            self.expect(uuid, a, 'moved')
            self.expect(uuid, b, 'missing')
        for how in ('deleted_instance', 'deleted_by_hand'):
            for _ in range(counts[how]):
                host = rng.choice(self.hosts)
                uuid, *_ = self.server(host, holds=[host])
                self.deletes.append((uuid, how))
                self.expect(uuid, host, 'deleted_instance')
        for _ in range(counts['stale_migration']):
            a, b = self._two_hosts()
            uuid, fid, project, user = self.server(b, holds=[b])
            status = rng.choice(('error', 'confirmed', 'failed'))
            mig = self.migration(uuid, 'migration', status, a, b, fid)
            self.allocate(mig, [a], self._resources(fid), project, user)
            self.expect(mig, a, 'stale_migration')
        for _ in range(counts['missing']):
            host = rng.choice(self.hosts)
            uuid, *_ = self.server(host)
            self.expect(uuid, host, 'missing')
        for _ in range(counts['wrong_amount']):
            host = rng.choice(self.hosts)
            uuid, *_ = self.server(host, holds=[host], extra_vcpu=1)
            self.expect(uuid, host, 'wrong_amount')
        for _ in range(counts['verify_resize']):
            a, b = self._two_hosts()
            uuid, fid, project, user = self.server(
                b, holds=[b], vm_state='resized')
            mig = self.migration(uuid, 'resize', 'finished', a, b, fid)
            self.allocate(mig, [a], self._resources(fid), project, user)
            self.expect(uuid, b, 'protected')
            self.expect(mig, a, 'protected')
        for _ in range(counts['building']):
            a = rng.choice(self.hosts)
            uuid, fid, project, user = self.server(
                None, vm_state='building', task_state='spawning',
                launched_at=None, power_state=0)
            self.allocate(uuid, [a], self._resources(fid), project, user)
            self.expect(uuid, a, 'protected')
        for _ in range(counts['unknown_consumer']):
            host = rng.choice(self.hosts)
            project, user = self._owner()
            uuid = _uuid(rng)
            self.allocate(uuid, [host], self._resources(self._flavor()),
                          project, user)
            self.expect(uuid, host, 'unknown_consumer')
        for kind, count in counts.items():
            self._count(kind, count)

    # -- churn --------------------------------------------------------------
    def _live_servers(self, n):
        """``n`` random active servers with no task: (uuid, flavor id,
        host, project, user)."""
        engine = self.cloud.cell_engine()
        t = main_models.Instance.__table__
        with engine.connect() as conn:
            rows = conn.execute(sa.select(
                t.c.uuid, t.c.instance_type_id, t.c.host, t.c.project_id,
                t.c.user_id).where(t.c.deleted == 0,
                                   t.c.vm_state == 'active',
                                   t.c.task_state.is_(None))).all()
        by_id = {f.id: fid for fid, f in self.cloud.flavors.items()}
        rows = [r for r in rows if r.instance_type_id in by_id]
        picked = self.rng.sample(rows, min(n, len(rows)))
        return [(r.uuid, by_id[r.instance_type_id], r.host, r.project_id,
                 r.user_id) for r in picked]

    def churn(self, count):
        """1 % churn: a quarter each created, deleted, migrated, evacuated."""
        quarter = [count // 4 + (1 if i < count % 4 else 0) for i in range(4)]
        created, deleted, migrated, evacuated = quarter
        for _ in range(created):
            host = self.rng.choice(self.hosts)
            self.server(host, holds=[host])
        picked = self._live_servers(deleted + migrated + evacuated)
        for uuid, fid, host, project, user in picked[:deleted]:
            self.deletes.append((uuid, 'deleted_instance'))
            self.allocations[uuid] = {
                'allocations': {}, 'consumer_generation': self.generation(
                    uuid), 'project_id': project, 'user_id': user}
        rest = picked[deleted:]
        for i, (uuid, fid, host, project, user) in enumerate(rest):
            dest = self.rng.choice([h for h in self.hosts if h != host])
            self.updates.append((uuid, {'host': dest, 'node': dest,
                                        'compute_id': self.node_ids[dest]}))
            evacuate = i >= migrated
            kind = 'evacuation' if evacuate else 'migration'
            status = 'done' if evacuate else 'confirmed'
            self.migration(uuid, kind, status, host, dest, fid)
            holds = [host, dest] if evacuate else [dest]
            self.allocate(uuid, holds, self._resources(fid), project, user)
            self.allocations[uuid]['consumer_generation'] = \
                self.generation(uuid)
        self.counts = {'created': created, 'deleted': deleted,
                       'migrated': migrated, 'evacuated': evacuated}

    def generation(self, consumer):
        body = self.cloud._placement('GET', '/allocations/%s' % consumer)
        return body.get('consumer_generation')

    # -- writing ------------------------------------------------------------
    def write(self):
        now = self.now
        touched = now if self.touch else None
        engine = self.cloud.cell_engine()
        templates = self.cloud.templates
        instances_t = main_models.Instance.__table__
        extra_t = main_models.InstanceExtra.__table__
        cache_t = main_models.InstanceInfoCache.__table__
        mig_t = main_models.Migration.__table__
        rows, extras, caches, mappings = [], [], [], []
        cell_id = self.cloud.cell_mappings['cell1'].id
        for n, (uuid, fid, fields) in enumerate(self.instances):
            tpl = templates[fid]
            row = {k: v for k, v in tpl['instances'].items() if k != 'id'}
            name = 'vm-%s' % uuid[:8]
            row.update(uuid=uuid, display_name=name, hostname=name,
                       created_at=now, updated_at=touched, launched_at=now,
                       deleted=0, deleted_at=None)
            row.update(fields)
            rows.append(row)
            extra = {k: v for k, v in tpl['instance_extra'].items()
                     if k != 'id'}
            extra.update(instance_uuid=uuid, created_at=now)
            extras.append(extra)
            cache = {k: v for k, v in tpl['instance_info_caches'].items()
                     if k != 'id'}
            cache.update(instance_uuid=uuid, created_at=now,
                         network_info='[]')
            caches.append(cache)
            mappings.append(dict(instance_uuid=uuid, cell_id=cell_id,
                                 project_id=fields['project_id'],
                                 user_id=fields['user_id'],
                                 queued_for_delete=False, created_at=now))
        migrations = []
        for mig in self.migrations:
            migrations.append(dict(mig, created_at=now, updated_at=now,
                                   deleted=0, hidden=False,
                                   cross_cell_move=False))
        with engine.begin() as conn:
            if rows:
                conn.execute(instances_t.insert(), rows)
                conn.execute(extra_t.insert(), extras)
                conn.execute(cache_t.insert(), caches)
            if migrations:
                conn.execute(mig_t.insert(), migrations)
            for uuid, fields in self.updates:
                conn.execute(instances_t.update().where(
                    instances_t.c.uuid == uuid).values(
                        updated_at=now, **fields))
            for uuid, how in self.deletes:
                deleted = (1 if how == 'deleted_by_hand'
                           else instances_t.c.id)
                conn.execute(instances_t.update().where(
                    instances_t.c.uuid == uuid).values(
                        deleted=deleted, deleted_at=now, updated_at=now,
                        vm_state='deleted', power_state=0))
        if mappings:
            with api_db_api.get_engine().begin() as conn:
                conn.execute(api_models.InstanceMapping.__table__.insert(),
                             mappings)
        consumers = list(self.allocations.items())
        for i in range(0, len(consumers), POST_BATCH):
            self.cloud._placement('POST', '/allocations',
                                  dict(consumers[i:i + POST_BATCH]))
