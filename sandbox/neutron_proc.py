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

"""Neutron in its own process: sqlite schema from the models, then serve.

    python -m sandbox.neutron_proc --state-dir DIR --port N \
        --keystone-url URL --password PW [--database SEEDED.sqlite]

Run by ``python -m sandbox up --neutron``; not meant to be used alone.
Neutron cannot share a process with Nova (both register ``host``).

ML2 with the Open vSwitch mechanism driver, the ``qos``, ``placement`` and
``segments`` service plugins, behind keystonemiddleware; Neutron's own
Placement and Nova clients log in to the sandbox's Keystone.  There is no
agent: ``POST /_sandbox/agents/<host>`` on the same port (loopback, no
token) hands the ML2 plugin the state report an Open vSwitch agent on that
host would send, so the placement plugin creates the host's agent and
``br-phys`` providers under its compute node, and ports bind there.
"""
import os
import shutil
import sys
import time

from sandbox import common

PHYSNET = 'physnet0'
BRIDGE = 'br-phys'
BANDWIDTH_KBPS = 10000000
"""Egress and ingress inventory of each host's ``br-phys`` provider."""
BANDWIDTH_CLASSES = frozenset({'NET_BW_EGR_KILOBIT_PER_SEC',
                               'NET_BW_IGR_KILOBIT_PER_SEC'})
"""The classes of that inventory, as Neutron's placement plugin names them."""

CONF_TEMPLATE = """[DEFAULT]
debug = false
use_stderr = true
state_path = {dir}
core_plugin = ml2
service_plugins = qos,placement,segments
auth_strategy = keystone
transport_url = fake:/
api_workers = 0
rpc_workers = 0
rpc_state_report_workers = 0
agent_down_time = 2147483
send_events_interval = 1
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = true
bind_host = 127.0.0.1
bind_port = {port}
[database]
# A busy machine's writers wait for sqlite's lock rather than fail.
connection = sqlite:///{dir}/neutron.db?timeout=60
[oslo_concurrency]
lock_path = {dir}/lock
[keystone_authtoken]
www_authenticate_uri = {keystone}
{auth}[placement]
{auth}[nova]
{auth}[ml2]
type_drivers = flat,vlan
project_network_types = vlan
mechanism_drivers = openvswitch
extension_drivers = port_security,qos
[ml2_type_vlan]
network_vlan_ranges = {physnet}:100:200
[ml2_type_flat]
flat_networks = {physnet}
"""


def write_config(ndir, port, keystone_url, password):
    os.makedirs(os.path.join(ndir, 'lock'), exist_ok=True)
    conf = os.path.join(ndir, 'neutron.conf')
    # Neutron finds api-paste.ini next to its configuration file.
    shutil.copy(os.path.join(sys.prefix, 'etc', 'neutron', 'api-paste.ini'),
                ndir)
    with open(conf, 'w') as f:
        auth = common.ADMIN_AUTH.format(keystone=keystone_url,
                                        password=password)
        f.write(CONF_TEMPLATE.format(
            dir=ndir, port=port, keystone=keystone_url, auth=auth,
            physnet=PHYSNET))
    return conf


def create_schema(ndir):
    """The schema from Neutron's models: its alembic migrations alter
    constraints, which sqlite cannot."""
    from neutron.db.migration.models import head  # noqa: F401
    from neutron_lib.db import model_base
    import sqlalchemy
    engine = sqlalchemy.create_engine(
        'sqlite:///%s' % os.path.join(ndir, 'neutron.db'))
    model_base.BASEV2.metadata.create_all(engine)
    engine.dispose()


def agent_state(host):
    """What an Open vSwitch agent on ``host`` with ``br-phys`` on
    ``physnet0`` and a bandwidth-reporting config reports at start-up."""
    from neutron_lib import constants as n_const
    return {
        'binary': n_const.AGENT_PROCESS_OVS,
        'host': host,
        'topic': n_const.L2_AGENT_TOPIC,
        'agent_type': n_const.AGENT_TYPE_OVS,
        'start_flag': True,
        'configurations': {
            'bridge_mappings': {PHYSNET: BRIDGE},
            n_const.RP_BANDWIDTHS: {BRIDGE: {
                'egress': BANDWIDTH_KBPS, 'ingress': BANDWIDTH_KBPS}},
            n_const.RP_INVENTORY_DEFAULTS: {
                'allocation_ratio': 1.0, 'min_unit': 1, 'step_size': 1,
                'reserved': 0},
            n_const.RP_PP_WITHOUT_DIRECTION: {},
            n_const.RP_PP_WITH_DIRECTION: {},
            n_const.RP_PP_INVENTORY_DEFAULTS: {},
            'resource_provider_hypervisors': {BRIDGE: host},
            'integration_bridge': 'br-int',
            'tunnel_types': [],
            'l2_population': False,
            'arp_responder_enabled': False,
            'enable_distributed_routing': False,
            'extensions': ['qos'],
            'datapath_type': 'system',
            'ovs_capabilities': {
                'datapath_types': ['netdev', 'system'],
                'iface_types': ['geneve', 'internal', 'patch', 'system',
                                'tap', 'vxlan']},
            'vhostuser_socket_dir': '/var/run/openvswitch',
            'ovs_hybrid_plug': False,
            'baremetal_smartnic': False,
        },
    }


def report_agent(host):
    """Hand the ML2 plugin ``host``'s agent state report, as the RPC
    ``report_state`` would."""
    from neutron_lib import context as n_context
    from neutron_lib.plugins import directory
    from oslo_utils import timeutils
    plugin = directory.get_plugin()
    status, agent = plugin.create_or_update_agent(
        n_context.get_admin_context(), agent_state(host),
        timeutils.utcnow().isoformat())
    return {'host': host, 'status': status, 'agent_id': agent['id']}


def serve(conf, port):
    os.environ['OS_NEUTRON_CONFIG_FILES'] = conf
    os.environ['OS_NEUTRON_CONFIG_DIR'] = os.path.dirname(conf)
    sys.argv = ['neutron-api']       # neutron parses sys.argv
    from neutron.wsgi import api as neutron_wsgi
    common.serve_wsgi(common.with_agent_hook(neutron_wsgi.application,
                                             report_agent), port, 'neutron')


def main():
    p = common.child_arguments()
    p.add_argument('--database', help='start from a copy of this seeded '
                   'database (the bench\'s cache), not a fresh schema')
    a = p.parse_args()
    ndir = os.path.join(os.path.abspath(a.state_dir), 'neutron')
    shutil.rmtree(ndir, ignore_errors=True)     # a fresh cloud each time
    os.makedirs(ndir)
    t0 = time.monotonic()
    conf = write_config(ndir, a.port, a.keystone_url, a.password)
    if a.database:
        shutil.copyfile(a.database, os.path.join(ndir, 'neutron.db'))
        common.log('neutron database copied in %.1fs'
                   % (time.monotonic() - t0))
    else:
        create_schema(ndir)
        common.log('neutron schema created in %.1fs'
                   % (time.monotonic() - t0))
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve(conf, a.port)


if __name__ == '__main__':
    main()
