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

"""python -m sandbox {up,demo} ..."""
import argparse
import sys

from sandbox import incidents_names


def _incidents(value):
    try:
        return incidents_names.parse(value)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def _incidents_help():
    """From the incident lists, so that a new incident is in the help."""
    named_only = [n for n in incidents_names.OPT_IN
                  if n not in incidents_names.NEUTRON + incidents_names.PCI +
                  incidents_names.CYBORG]
    return ("'all' (%s), 'none' or a comma list of those and of the ones "
            "staged only when named: %s (second_cell needs --cells 2); "
            "with --neutron, %s; with --pci, %s; with --cyborg, %s" % (
                ', '.join(incidents_names.NAMES), ', '.join(named_only),
                ', '.join(incidents_names.NEUTRON),
                ', '.join(incidents_names.PCI),
                ', '.join(incidents_names.CYBORG)))


def _common(p):
    p.add_argument('--state-dir', default='./.sandbox',
                   help='where openrc, clouds.yaml, sandbox.json and the '
                        'databases go (default ./.sandbox)')
    p.add_argument('--keystone-port', type=int, default=5000)
    p.add_argument('--nova-port', type=int, default=8774)
    p.add_argument('--placement-port', type=int, default=8778)
    p.add_argument('--control-port', type=int, default=8799)
    p.add_argument('--password', default='sandbox-admin',
                   help='the Keystone admin password')
    p.add_argument('--neutron-port', type=int, default=9696)
    p.add_argument('--cyborg-port', type=int, default=6666)
    p.add_argument('--debug', action='store_true')


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m sandbox')
    sub = parser.add_subparsers(dest='cmd', required=True)
    up = sub.add_parser('up', help='start Keystone, Nova and Placement')
    _common(up)
    up.add_argument('--incidents', type=_incidents, default=[],
                    help=_incidents_help())
    up.add_argument('--cells', type=int, choices=(1, 2), default=1,
                    help='Nova cells; 2 adds host5 in cell2, which the '
                         'control API can take down (default 1)')
    up.add_argument('--neutron', action='store_true',
                    help='run a real Neutron (ML2/OVS, QoS, placement, '
                         'segments) that Nova uses, with an Open vSwitch '
                         'agent and br-phys bandwidth provider per host')
    up.add_argument('--cyborg', action='store_true',
                    help="run a real Cyborg (API and conductor) that Nova "
                         "uses, with its fake driver's FPGA device "
                         'provider (<host>_FakeDevice) under each host')
    up.add_argument('--pci', action='store_true',
                    help="Nova's FakeDriverWithPciResources with [pci] "
                         'report_in_placement and [filter_scheduler] '
                         'pci_in_placement: each host reports its PFs on '
                         'buses 01, 02 and 03 (CUSTOM_SANDBOX_PCI_A, _B and '
                         'the one-time-use _OTU; aliases sandbox-pci-a, -b, '
                         '-otu) as <host>_<address> child providers')
    demo = sub.add_parser('demo', help='the sandbox with all incidents, '
                                       'plus Horizon')
    _common(demo)
    demo.add_argument('--no-neutron', dest='neutron', action='store_false',
                      help='without the real Neutron and Cyborg (see up '
                           '--neutron, --cyborg) and their incidents')
    demo.add_argument('--cells', type=int, choices=(1, 2), default=1,
                      help='Nova cells; 2 adds host5 in cell2 with the '
                           'second_cell incident, and prints the control '
                           'calls that take it down, slow or up (default 1)')
    demo.add_argument('--port', type=int, default=8000,
                      help='Horizon port (default 8000)')
    args = parser.parse_args(argv)
    if args.cmd == 'up':
        from sandbox import up as up_mod
        return up_mod.main(args)
    from sandbox import demo as demo_mod
    return demo_mod.main(args)


if __name__ == '__main__':
    sys.exit(main())
