"""A separate process applying a batch of plans, as the web process would.

``python -m tests.integration.batch_worker URL PLANS_JSON [CLOUD_URL]``:
writes through ``URL`` (a fault proxy, say) and journals them as written
to the cloud whose Placement is at ``CLOUD_URL`` (default ``URL``), as
``orphan-audit`` with an admin token names it.  The journal goes to
``ORPHAN_JOURNAL_DIR``.  Killed mid-batch by the tests.
"""

import json
import sys

from keystoneauth1 import adapter
from keystoneauth1 import session
from keystoneauth1 import token_endpoint

from orphan_dashboard.api import client as clients
from orphan_dashboard.audit import model as m
from orphan_dashboard import cli
from orphan_dashboard import repair


def main(url, plans_file, cloud_url=None):
    cli.setup_django()
    from orphan_dashboard import journal

    client = adapter.Adapter(session.Session(), service_type='placement',
                             auth=token_endpoint.Token(url, 'admin'))
    named = adapter.Adapter(session.Session(), service_type='placement',
                            auth=token_endpoint.Token(cloud_url or url,
                                                      'admin'))
    cloud = clients.cloud_for_clients(clients.Clients(named, named))
    log = journal.Journal('worker', cloud, user_name='worker')
    with open(plans_file) as plans:
        for plan in json.load(plans):
            outcome = repair.write(client, log, m.Plan(**plan))
            print(outcome.status, outcome.selection.consumer, flush=True)


if __name__ == '__main__':
    main(*sys.argv[1:])
