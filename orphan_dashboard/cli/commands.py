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

"""``orphan-audit``: the panel's engine for cron, monitoring and scripts.

Subcommands: ``report`` (the default), ``apply``, ``history``,
``restore``, ``decommission``, ``refresh`` (the panel's cached snapshot,
from cron), ``metrics`` (Prometheus) and ``capacity`` (what findings
hold, and whether a flavor fits).  ``manage.py orphan_audit`` is the
same parser and the same code (``management/commands/orphan_audit.py``).
The options and exit codes are :mod:`options`, the subcommands
:mod:`handlers`, their output :mod:`rendering`; this module runs one
command line and turns every error into one line.
"""

import logging
import os
import sys

from keystoneauth1 import exceptions as ks_exc

from orphan_dashboard.api import client
from orphan_dashboard.cli import handlers
from orphan_dashboard.cli.i18n import _
from orphan_dashboard.cli import options


def execute(args, out=sys.stdout):
    """Run parsed ``args``; the exit code, errors as one line on stderr."""
    logging.basicConfig(level=logging.DEBUG if args.debug
                        else logging.CRITICAL)
    command = args.command or 'report'
    try:
        options.check_arguments(args)
        chosen = handlers.COMMANDS[command]
        if chosen.needs_django:
            handlers.setup_django()
        clients = None
        if not (command == 'history' and args.all_clouds):
            settings = options.settings(args)
            clients = client.for_cloud(
                args.os_cloud, timeout=args.timeout,
                listing_timeout=settings.nova_listing_timeout,
                cell_timeout=settings.nova_cell_timeout)
        return chosen.handler(args, clients, out)
    except options.BadArguments as exc:
        print('orphan-audit: %s' % exc, file=sys.stderr)
        return options.BAD_ARGUMENTS
    except options.Failure as exc:
        print('orphan-audit: %s' % exc, file=sys.stderr)
    except ks_exc.Unauthorized:
        print('orphan-audit: %s' % _('authentication failed: check the '
                                     'credentials'), file=sys.stderr)
    except ks_exc.Forbidden:
        print('orphan-audit: %s' % _('forbidden: an admin role is needed'),
              file=sys.stderr)
    except ks_exc.EndpointNotFound as exc:
        print('orphan-audit: %s' % _('service missing from the catalog: '
                                     '%s') % exc, file=sys.stderr)
    except (ks_exc.ConnectFailure, ks_exc.ConnectTimeout,
            ks_exc.DiscoveryFailure) as exc:
        print('orphan-audit: %s' % _('cannot reach the cloud: %s') % exc,
              file=sys.stderr)
    except ks_exc.ClientException as exc:
        print('orphan-audit: %s' % exc, file=sys.stderr)
    except Exception as exc:
        if type(exc).__module__.startswith(('openstack', 'orphan_dashboard')):
            print('orphan-audit: %s' % exc, file=sys.stderr)
        else:
            raise
    return options.ERROR


def main(argv=None):
    argv = options.normalize(sys.argv[1:] if argv is None else argv)
    try:
        code = execute(options.build_parser().parse_args(argv))
        sys.stdout.flush()
    except BrokenPipeError:
        return reader_gone()
    return code


def reader_gone():
    """End quietly when stdout's reader left (``| head``): what is still
    buffered goes nowhere, so Python's own flush at exit cannot fail."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return options.READER_GONE
