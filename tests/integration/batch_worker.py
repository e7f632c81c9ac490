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

"""A separate process applying a batch of plans, as the web process would.

``python -m tests.integration.batch_worker URL PLANS_JSON [CLOUD_URL]``:
writes through ``URL`` (a fault proxy, say) and journals them as written
to the cloud whose Placement is at ``CLOUD_URL`` (default ``URL``), as
``orphan-audit`` with an admin token names it.  The journal goes to
``ORPHAN_AUDIT_JOURNAL_DIR``.  Killed mid-batch by the tests.
"""

import json
import sys

from keystoneauth1 import adapter
from keystoneauth1 import session
from keystoneauth1 import token_endpoint

from orphan_dashboard.api import client as clients
from orphan_dashboard.audit import model as m
from orphan_dashboard.cli import handlers
from tests.integration.batches import write_plan


def main(url, plans_file, cloud_url=None):
    handlers.setup_django()
    from orphan_dashboard.writing import journal

    client = adapter.Adapter(session.Session(), service_type='placement',
                             auth=token_endpoint.Token(url, 'admin'))
    named = adapter.Adapter(session.Session(), service_type='placement',
                            auth=token_endpoint.Token(cloud_url or url,
                                                      'admin'))
    cloud = clients.cloud_for_clients(clients.Clients(named, named))
    log = journal.Journal('worker', cloud, user_name='worker')
    with open(plans_file) as plans:
        for plan in json.load(plans):
            outcome = write_plan(client, log, m.Plan(**plan))
            print(outcome.status, outcome.selection.consumer, flush=True)


if __name__ == '__main__':
    main(*sys.argv[1:])
