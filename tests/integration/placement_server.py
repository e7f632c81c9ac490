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

"""Run a real Placement (openstack-placement) on loopback with sqlite.

``python -m tests.integration.placement_server DIR PORT``: noauth2, so the
token ``admin`` is an admin.  Used by the integration tests as a subprocess.
"""

import os
import sys

from werkzeug import serving


def main(state_dir, port):
    with open(os.path.join(state_dir, 'placement.conf'), 'w') as conf:
        conf.write('[DEFAULT]\nuse_stderr = true\n'
                   '[api]\nauth_strategy = noauth2\n'
                   '[placement_database]\n'
                   'connection = sqlite:///%s/placement.db\n'
                   'sync_on_startup = true\n' % state_dir)
    os.environ['OS_PLACEMENT_CONFIG_DIR'] = state_dir
    from placement import wsgi
    app = wsgi.init_application()
    serving.run_simple('127.0.0.1', port, app, threaded=True)


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]))
