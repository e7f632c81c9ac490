"""``manage.py orphan_audit``: ``orphan-audit`` on a Horizon node.

The same parser (:func:`cli.build_parser`) and the same code
(:func:`cli.execute`), with the journal in Horizon's settings and
``ORPHAN_AUDIT_MIN_AGE`` as the default minimum age.
"""

import argparse
import sys

from django.core.management.base import BaseCommand

from orphan_dashboard import cli
from orphan_dashboard import conf


class Command(BaseCommand):
    help = 'Find and repair orphaned allocations in Placement (see ' \
           '"orphan-audit --help").'

    def add_arguments(self, parser):
        cli.build_parser(parser,
                         defaults={'min_age': conf.setting('MIN_AGE')})

    def run_from_argv(self, argv):
        super().run_from_argv(argv[:2] + cli.normalize(argv[2:]))

    def handle(self, *args, **options):
        sys.exit(cli.execute(argparse.Namespace(**options), out=self.stdout))
