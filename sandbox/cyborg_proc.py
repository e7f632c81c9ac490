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

"""Cyborg (API and conductor) in a child process of the sandbox.

Run by ``python -m sandbox up --neutron --cyborg``; not meant to be used
alone.  Cyborg's API behind its keystonemiddleware, and its conductor on an
in-process ``fake:`` transport, as one service: the conductor writes the
device providers in Placement and tells Nova when an ARQ is bound
(``os-server-external-events``), logging in as the sandbox's admin, which
has the ``service`` role that Cyborg and Nova want of each other.

There is no agent: ``POST /_sandbox/agents/<host>`` on the same port
(loopback, no token) hands the conductor what Cyborg's agent on that host
would report with Cyborg's fake driver (one FPGA device of
:data:`ACCELERATORS` accelerators, trait ``CUSTOM_FAKE_DEVICE``), so the
conductor puts the host's ``<host>_FakeDevice`` provider under its compute
node.
"""
import os
import shutil
import sys
import threading
import time

from sandbox import common

DEVICE_TRAIT = 'CUSTOM_FAKE_DEVICE'
"""The trait Cyborg's fake driver gives its device provider."""
DEVICE_NAME = '%s_FakeDevice'
"""A host's device provider, as Cyborg's conductor names it."""

CONF_TEMPLATE = """[DEFAULT]
debug = false
use_stderr = true
transport_url = fake:/
host = sandbox-cyborg

[api]
api_paste_config = {dir}/api-paste.ini
port = {port}

[database]
connection = sqlite:///{dir}/cyborg.db

[oslo_policy]
policy_file = {dir}/policy.yaml

[keystone_authtoken]
www_authenticate_uri = {keystone}
service_token_roles = service
service_token_roles_required = true
{auth}
[placement]
{auth}
[nova]
{auth}
[service_user]
send_service_user_token = true
{auth}
"""


def write_config(cdir, port, keystone_url, password):
    conf = os.path.join(cdir, 'cyborg.conf')
    for name in ('api-paste.ini', 'policy.yaml'):
        shutil.copy(os.path.join(sys.prefix, 'etc', 'cyborg', name), cdir)
    auth = common.ADMIN_AUTH.format(keystone=keystone_url, password=password)
    with open(conf, 'w') as f:
        f.write(CONF_TEMPLATE.format(dir=cdir, port=port,
                                     keystone=keystone_url, auth=auth))
    return conf


def create_schema(cdir):
    """The schema from Cyborg's models, as ``cyborg-dbsync create_schema``
    makes it."""
    from cyborg.db.sqlalchemy import models
    import sqlalchemy
    engine = sqlalchemy.create_engine(
        'sqlite:///%s' % os.path.join(cdir, 'cyborg.db'))
    models.Base.metadata.create_all(engine)
    engine.dispose()


_CONDUCTOR = []
_CONDUCTOR_LOCK = threading.Lock()


def start_conductor():
    """Cyborg's conductor on the process's transport, as ``cyborg-conductor``
    starts it (its periodic tasks aside), once: at the first agent report,
    since its Placement client looks Placement up in the catalog the
    sandbox writes after this process starts."""
    with _CONDUCTOR_LOCK:
        if not _CONDUCTOR:
            _CONDUCTOR.append(_conductor())


def _conductor():
    from cyborg.common import constants
    from cyborg.common import rpc
    from cyborg.conductor import manager
    from cyborg.conf import CONF
    from cyborg.objects import base as objects_base
    import oslo_messaging as messaging
    conductor = manager.ConductorManager(constants.CONDUCTOR_TOPIC,
                                         CONF.host)
    server = rpc.get_server(
        messaging.Target(topic=constants.CONDUCTOR_TOPIC, server=CONF.host),
        [conductor], objects_base.CyborgObjectSerializer())
    server.start()
    return conductor


def report_agent(host):
    """What Cyborg's agent on ``host`` reports with the fake driver
    (``ResourceTracker.update_usage``), through the conductor's RPC API."""
    from cyborg.accelerator.drivers import fake
    from cyborg.conductor import rpcapi
    from cyborg.conf import CONF
    from cyborg import context
    start_conductor()
    CONF.set_override('host', host)     # the fake driver names its device
    try:
        devices = fake.FakeDriver().discover()
    finally:
        CONF.clear_override('host')
    rpcapi.ConductorAPI().report_data(context.get_admin_context(), host,
                                      devices)
    return {'host': host, 'devices': len(devices)}


def main():
    p = common.child_arguments()
    a = p.parse_args()
    cdir = os.path.join(os.path.abspath(a.state_dir), 'cyborg')
    shutil.rmtree(cdir, ignore_errors=True)     # a fresh cloud each time
    os.makedirs(cdir)
    t0 = time.monotonic()
    conf = write_config(cdir, a.port, a.keystone_url, a.password)
    create_schema(cdir)
    common.log('cyborg schema created in %.1fs' % (time.monotonic() - t0))
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.argv = ['cyborg-api', '--config-file', conf]
    from cyborg.api import wsgi_app
    app = wsgi_app.init_application()
    common.serve_wsgi(common.with_agent_hook(app, report_agent), a.port,
                      'cyborg')


if __name__ == '__main__':
    main()
