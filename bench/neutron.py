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

"""The bench cloud's Neutron: a port per server, a tenth with QoS.

Seeded the way :mod:`bench.cloud` seeds Nova's cell database, because
creating 10,000 ports through Neutron's API takes far too long.  Through
the real API: a VLAN network on ``physnet0`` with a subnet, a shared QoS
policy with an egress minimum bandwidth rule, and two template ports
bound as Nova binds them (``binding:host_id``, ``device_id``,
``device_owner``, and for the QoS one ``binding:profile.allocation``
naming the host's ``br-phys`` provider).  Then every row Neutron wrote for
each template (:data:`PORT_TABLES`) is cloned in SQL, one port for every
live server with a host: the QoS one for :data:`QOS_SHARE` of the cloud's
size, picked among the servers whose allocations are healthy, whose
consumers then get the bandwidth on their host's ``br-phys`` provider
through Placement's ``POST /allocations``, as Nova's scheduler writes it.
"""
import collections
import ipaddress
import json
import os
import random
import sqlite3
import time
import uuid as uuid_lib

import sqlalchemy as sa

from nova.db.main import models as main_models

from sandbox import neutron_proc

QOS_SHARE = 0.1
"""Servers on a QoS port, of the cloud's size."""
PORT_KBPS = 1000
"""The policy's egress minimum bandwidth."""
BW = 'NET_BW_EGR_KILOBIT_PER_SEC'
CIDR = '10.0.0.0/16'
SEGMENTATION_ID = 100
PORT_TABLES = (
    ('standardattributes', 'id'), ('ports', 'id'),
    ('ml2_port_bindings', 'port_id'), ('ml2_port_binding_levels', 'port_id'),
    ('portsecuritybindings', 'port_id'),
    ('securitygroupportbindings', 'port_id'),
    ('qos_port_policy_bindings', 'port_id'),
    ('ipallocations', 'port_id'), ('ipamallocations', 'ip_address'),
    ('provisioningblocks', 'standard_attr_id'))
"""Where Neutron 29 keeps a bound port (those a bound port made through
its API has rows in), and each table's key to the port."""
POST_BATCH = 500

Server = collections.namedtuple('Server', 'uuid host project_id')


def database(state_dir):
    """Neutron's sqlite file under the sandbox's state directory."""
    return os.path.join(state_dir, 'neutron', 'neutron.db')


def _rule(rule_id):
    return collections.namedtuple('Rule', 'id')(rule_id)


def group_uuid(port_id, rule_id):
    """The request group id Neutron gives ``port_id``'s bandwidth
    request: what ``binding:profile.allocation`` is keyed by."""
    from neutron_lib.placement import utils as pl_utils
    return str(pl_utils.resource_request_group_uuid(
        uuid_lib.UUID(port_id), [_rule(rule_id)]))


def _servers(cloud):
    """The cell's live servers with a host, oldest first."""
    t = main_models.Instance.__table__
    with cloud.cell_engine().connect() as conn:
        rows = conn.execute(sa.select(
            t.c.uuid, t.c.host, t.c.project_id).where(
                t.c.deleted == 0, t.c.host.isnot(None)).order_by(
                    t.c.id)).all()
    return [Server(*r) for r in rows]


class Seeder:
    """The network, policy and templates through the API, then clones."""

    def __init__(self, running):
        self.running = running
        self.cloud = running.cloud
        self.api = running.api
        self.nics = dict(running.nics)
        self.rng = random.Random(self.cloud.size)
        self.path = database(running.state_dir)

    def neutron(self, method, path, body=None):
        return self.api.neutron(method, path, body)

    def seed(self):
        t0 = time.monotonic()
        servers = _servers(self.cloud)
        flagged = {c for c, _, _ in self.cloud.meta['expected']}
        healthy = [s for s in servers if s.uuid not in flagged]
        qos = set(s.uuid for s in self.rng.sample(
            healthy, min(len(healthy), round(QOS_SHARE * self.cloud.size))))
        net = self.neutron('POST', '/networks', {'network': {
            'name': 'bench-net', 'shared': True,
            'provider:network_type': 'vlan',
            'provider:physical_network': neutron_proc.PHYSNET,
            'provider:segmentation_id': SEGMENTATION_ID}})['network']
        subnet = self.neutron('POST', '/subnets', {'subnet': {
            'network_id': net['id'], 'name': 'bench-subnet', 'cidr': CIDR,
            'ip_version': 4}})['subnet']
        policy = self.neutron('POST', '/qos/policies', {'policy': {
            'name': 'bench-min-bw', 'shared': True}})['policy']
        rule = self.neutron(
            'POST', '/qos/policies/%s/minimum_bandwidth_rules' % policy['id'],
            {'minimum_bandwidth_rule': {'min_kbps': PORT_KBPS,
                                        'direction': 'egress'}})[
            'minimum_bandwidth_rule']
        self.rule_id = rule['id']
        qos_tpl = next(s for s in servers if s.uuid in qos)
        plain_tpl = next(s for s in servers if s.uuid not in qos)
        templates = {True: self.template(net['id'], qos_tpl, policy['id']),
                     False: self.template(net['id'], plain_tpl)}
        rest = [s for s in servers if s not in (qos_tpl, plain_tpl)]
        self.clone(templates, [(s, s.uuid in qos) for s in rest])
        expected = self.allocate(sorted(
            (s.uuid, s.host) for s in servers if s.uuid in qos))
        return {'network': net['id'], 'subnet': subnet['id'],
                'policy': policy['id'], 'rule': rule['id'],
                'kbps': PORT_KBPS, 'nics': self.nics,
                'ports': len(servers), 'qos_ports': len(qos),
                'expected': expected,
                'seed_seconds': time.monotonic() - t0}

    def template(self, network, server, policy=None):
        """A port made and bound through the API, as Nova binds it: its
        id."""
        body = {'network_id': network, 'name': 'port-%s' % server.uuid[:8]}
        if policy:
            body['qos_policy_id'] = policy
        port = self.neutron('POST', '/ports', {'port': body})['port']
        binding = {'binding:host_id': server.host,
                   'device_id': server.uuid, 'device_owner': 'compute:nova'}
        if policy:
            group = port['resource_request']['request_groups'][0]['id']
            if group != group_uuid(port['id'], self.rule_id):
                raise RuntimeError('request group %s is not the one '
                                   'group_uuid() computes' % group)
            binding['binding:profile'] = {
                'allocation': {group: self.nics[server.host]}}
        port = self.neutron('PUT', '/ports/%s' % port['id'],
                            {'port': binding})['port']
        if port['binding:vif_type'] != 'ovs':
            raise RuntimeError('template port %s not bound: %s' % (
                port['id'], port['binding:vif_type']))
        return port['id']

    def clone(self, templates, servers):
        """Each template's rows again for each ``(server, qos)``."""
        with sqlite3.connect(self.path, timeout=60) as conn:
            conn.row_factory = sqlite3.Row
            rows = {qos: self._rows(conn, port)
                    for qos, port in templates.items()}
            ip = self._addresses(conn)
            macs = self._macs(conn)
            next_id = conn.execute(
                'SELECT MAX(id) FROM standardattributes').fetchone()[0] + 1
            out = collections.defaultdict(list)
            for server, qos in servers:
                port = str(uuid_lib.UUID(int=self.rng.getrandbits(128),
                                         version=4))
                fields = {
                    'id': port, 'port_id': port, 'standard_attr_id': next_id,
                    'mac_address': next(macs), 'device_id': server.uuid,
                    'project_id': server.project_id,
                    'name': 'port-%s' % server.uuid[:8],
                    'host': server.host, 'ip_address': next(ip)}
                if qos:
                    fields['profile'] = json.dumps({'allocation': {
                        group_uuid(port, self.rule_id):
                            self.nics[server.host]}})
                for table, key in PORT_TABLES:
                    for row in rows[qos][table]:
                        new = dict(row)
                        new.update((k, v) for k, v in fields.items()
                                   if k in new)
                        if table == 'standardattributes':
                            new['id'] = next_id
                        out[table].append(new)
                next_id += 1
            for table, _ in PORT_TABLES:
                new = out[table]
                if not new:
                    continue
                cols = list(new[0])
                conn.executemany('INSERT INTO %s (%s) VALUES (%s)' % (
                    table, ', '.join(cols), ', '.join('?' * len(cols))),
                    [tuple(r[c] for c in cols) for r in new])

    @staticmethod
    def _rows(conn, port):
        """``{table: [rows]}`` Neutron wrote for ``port``."""
        sa_id, = conn.execute('SELECT standard_attr_id FROM ports '
                              'WHERE id = ?', (port,)).fetchone()
        addresses = [r[0] for r in conn.execute(
            'SELECT ip_address FROM ipallocations WHERE port_id = ?',
            (port,))]
        keys = {'id': port, 'port_id': port, 'standard_attr_id': sa_id}
        rows = {}
        for table, key in PORT_TABLES:
            if table == 'standardattributes':
                value = [sa_id]
            elif key == 'ip_address':
                value = addresses
            else:
                value = [keys[key]]
            rows[table] = [dict(r) for v in value for r in conn.execute(
                'SELECT * FROM %s WHERE %s = ?' % (table, key), (v,))]
        return rows

    @staticmethod
    def _macs(conn):
        """Free MAC addresses with Neutron's default prefix, in order."""
        taken = {r[0] for r in conn.execute('SELECT mac_address FROM ports')}
        for n in range(1, 2 ** 24):
            mac = 'fa:16:3e:%02x:%02x:%02x' % tuple(n.to_bytes(3, 'big'))
            if mac not in taken:
                yield mac

    @staticmethod
    def _addresses(conn):
        """Free addresses of the subnet, in order."""
        taken = {r[0] for r in conn.execute(
            'SELECT ip_address FROM ipallocations')}
        net = ipaddress.ip_network(CIDR)
        for address in list(net.hosts())[1:]:      # .1 is the gateway
            if str(address) not in taken:
                yield str(address)

    def allocate(self, servers):
        """The bandwidth of the QoS ports of ``servers`` (uuid, host)
        added to their consumers: the expected ``(consumer, provider,
        'ok')``."""
        cloud = self.cloud
        bodies, expected = {}, []
        for uuid, host in servers:
            body = cloud._placement('GET', '/allocations/%s' % uuid)
            nic = self.nics[host]
            allocations = {rp: {'resources': a['resources']}
                           for rp, a in body['allocations'].items()}
            allocations[nic] = {'resources': {BW: PORT_KBPS}}
            bodies[uuid] = {'allocations': allocations,
                            'consumer_generation': body['consumer_generation'],
                            'project_id': body['project_id'],
                            'user_id': body['user_id']}
            expected.append((uuid, nic, 'ok'))
        items = sorted(bodies.items())
        for i in range(0, len(items), POST_BATCH):
            cloud._placement('POST', '/allocations',
                             dict(items[i:i + POST_BATCH]))
        return expected


def seed(running):
    """Seed the running bench cloud's Neutron; what ``meta['neutron']``
    records."""
    return Seeder(running).seed()
