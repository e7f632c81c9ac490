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

"""``python -m orphan_dashboard.reading.sweeper``: one background sweep a page
asked for, in a process of its own (see :func:`sweeps.start`), which
starts it isolated (:data:`sweeps.SWEEPER`).

Reads the job as JSON on stdin, sets up Django with the settings module
of the Horizon process that started it (its cache, its ``ORPHAN_AUDIT_*``)
and runs :func:`sweeps.run` at a lower CPU priority; its log goes
where Horizon's goes.
"""

import json
import os
import sys


NICENESS = 10
"""Pages first: the sweep takes what CPU the Horizon node's pages leave."""

AUTOGROUP = '/proc/self/autogroup'


def lower_priority():
    """Niceness for the process and for its session's autogroup.

    With Linux's autogroup scheduling a session of its own is a scheduling
    group of its own, which gets as much CPU as all of Horizon's session:
    the process's niceness only ranks it within that group.
    """
    os.nice(NICENESS)
    try:
        with open(AUTOGROUP, 'w') as autogroup:
            autogroup.write(str(NICENESS))
    except OSError:
        pass  # no autogroup scheduling in this kernel


def main():
    lower_priority()
    job = json.load(sys.stdin)
    import django
    django.setup()
    from orphan_dashboard.reading import snapshots
    from orphan_dashboard.reading import sweeps

    store = snapshots.Store(job['cloud'], timeout=job['timeout'])
    try:
        sweeps.run(store, job)
    except Exception:
        sweeps.LOG.exception('background sweep failed')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
