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

"""``manage.py orphan_audit``: ``orphan-audit`` on a Horizon node.

The same parser (:func:`options.build_parser`) and the same code
(:func:`commands.execute`), with the journal in Horizon's settings and
the ``ORPHAN_AUDIT_*`` settings as defaults (:mod:`orphan_dashboard.conf`).
"""

import argparse
import sys

from django.core.management.base import BaseCommand

from orphan_dashboard.cli import commands
from orphan_dashboard.cli import options as cli_options


class Command(BaseCommand):
    help = 'Find and repair orphaned allocations in Placement (see ' \
           '"orphan-audit --help").'

    def add_arguments(self, parser):
        cli_options.build_parser(parser)

    def run_from_argv(self, argv):
        super().run_from_argv(argv[:2] + cli_options.normalize(argv[2:]))

    def handle(self, *args, **options):
        sys.exit(commands.execute(argparse.Namespace(**options),
                                  out=self.stdout))
