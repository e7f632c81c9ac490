"""A separate process applying a batch of plans, as the web process would.

``python -m tests.integration.batch_worker PLACEMENT_URL PLANS_JSON``; the
journal goes to ``ORPHAN_JOURNAL_DIR``.  Killed mid-batch by the tests.
"""

import json
import sys

from keystoneauth1 import adapter
from keystoneauth1 import session
from keystoneauth1 import token_endpoint

from orphan_dashboard.audit import model as m
from orphan_dashboard import cli
from orphan_dashboard import repair


def main(url, plans_file):
    cli.setup_django()
    from orphan_dashboard import journal

    client = adapter.Adapter(session.Session(), service_type='placement',
                             auth=token_endpoint.Token(url, 'admin'))
    log = journal.Journal('worker', user_name='worker')
    with open(plans_file) as plans:
        for plan in json.load(plans):
            outcome = repair.write(client, log, m.Plan(**plan))
            print(outcome.status, outcome.selection.consumer, flush=True)


if __name__ == '__main__':
    main(*sys.argv[1:])
