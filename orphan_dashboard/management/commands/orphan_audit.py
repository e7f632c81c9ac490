"""``manage.py orphan_audit``: ``orphan-audit`` on a Horizon node."""

import sys

from django.conf import settings
from django.core.management.base import BaseCommand

from orphan_dashboard.audit import classify
from orphan_dashboard import cli


class Command(BaseCommand):
    help = cli.build_parser().description

    def add_arguments(self, parser):
        cli.build_parser(parser)
        parser.set_defaults(min_age=getattr(
            settings, 'ORPHAN_AUDIT_MIN_AGE', classify.DEFAULT_MIN_AGE))

    def handle(self, *args, **options):
        argv = []
        for name in ('os_cloud', 'provider', 'min_age', 'concurrency'):
            if options.get(name) is not None:
                argv += ['--' + name.replace('_', '-'), str(options[name])]
        argv += ['--' + flag for flag in ('json', 'apply', 'debug')
                 if options[flag]]
        sys.exit(cli.main(argv))
