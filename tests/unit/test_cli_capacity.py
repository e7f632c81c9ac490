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

"""``orphan-audit capacity``: per hypervisor and class, and whether a
flavor fits."""

import io
import json
from unittest import mock

import pytest

from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.cli import commands as cli
from orphan_dashboard.cli import options
from orphan_dashboard.reading import collect
from tests.unit.capacity_cli import run
from tests.unit.capacity_cli import SMALL
from tests.unit.capacity_cli import snapshot
from tests.unit.cloud import uid

pytestmark = pytest.mark.horizon

H1, H2, H3 = uid('host1'), uid('host2'), uid('host3')


def test_json_has_one_row_per_hypervisor_with_its_state():
    code, out, vm = run('--flavor', 'm1.small', '--json', '--min-age', '0')
    assert code == options.NOTHING
    found = json.loads(out)
    assert found['flavor'] == {'id': 'f1', 'name': 'm1.small', 'resources': {
        'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}
    assert found['counts'] == {'fits_now': 1, 'fits_after_repair': 1,
                               'does_not_fit': 1}
    rows = {r['hypervisor']: r for r in found['hypervisors']}
    assert {h: r['state'] for h, r in rows.items()} == {
        'host1': 'fits_after_repair', 'host2': 'does_not_fit',
        'host3': 'fits_now'}
    # Every id, with the server's and the provider's names beside.
    assert rows['host1']['repairs'] == [{
        'consumer': vm, 'instance': vm, 'server_name': 'vm1',
        'provider': H1, 'provider_name': 'host1', 'action': 'trim',
        'verdict': 'evacuated_source',
        'frees': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}]
    assert found['held'] == {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
    assert found['affected'] == 1


def test_the_min_age_protects_and_then_nothing_fits_after_repair():
    """An allocation younger than --min-age offers no repair: host1 then
    fits after none."""
    code, out, _ = run('--flavor', 'f1', '--json', '--min-age', '999999999')
    assert json.loads(out)['counts'] == {
        'fits_now': 1, 'fits_after_repair': 0, 'does_not_fit': 2}


def test_a_custom_class_no_hypervisor_has_fits_nowhere():
    code, out, _ = run('--flavor', 'fpga', '--min-age', '0')
    assert code == options.NOTHING
    assert 'fits now: 0, fits after repair: 0, does not fit: 3' in out
    assert 'flavor fpga: CUSTOM_FPGA_X=1, DISK_GB=1' in out


def test_the_text_names_the_repair_that_makes_room():
    code, out, vm = run('--flavor', 'm1.small', '--min-age', '0')
    lines = out.splitlines()
    # The server by its name, its uuid beside.
    assert lines[4] == ('  trim to current host server vm1 (%s) frees '
                        'DISK_GB=1, MEMORY_MB=512, VCPU=1 (evacuated '
                        'source)' % vm)
    assert lines[3].split() == ['host1', 'fits', 'after', 'repair']
    assert lines[0] == ('held by findings: DISK_GB=1, MEMORY_MB=512, '
                        'VCPU=1 on 1 hypervisor')


def test_what_a_wrong_amount_frees_is_held_by_findings():
    """fat's delete and heal frees the 512 MB it holds beyond its need:
    those are held by findings, in the first line as in the JSON."""
    code, out, _ = run('--flavor', 'm1.small', '--min-age', '0', fat=True)
    lines = out.splitlines()
    assert lines[0] == ('held by findings: DISK_GB=1, MEMORY_MB=1024, '
                        'VCPU=1 on 2 hypervisors')
    assert lines[lines.index('host3                    fits after '
                             'repair') + 1] == (
        '  delete and heal server fat (%s) frees MEMORY_MB=512 (wrong '
        'amount)' % uid('fat'))
    code, out, _ = run('--min-age', '0', '--json', fat=True)
    host3 = {t['hypervisor']: t for t in json.loads(out)['hypervisors']}[
        'host3']
    memory = {c['resource_class']: c for c in host3['classes']}['MEMORY_MB']
    assert (memory['needed'], memory['held'], memory['free'],
            memory['free_after']) == (512, 512, 0, 512)


def test_the_text_in_the_language_the_environment_asks_for(monkeypatch):
    monkeypatch.setenv('LANGUAGE', 'ru')
    code, out, vm = run('--flavor', 'm1.small', '--min-age', '0')
    lines = out.splitlines()
    assert lines[0].startswith('занято находками: ')
    assert lines[3].split()[0] == 'host1'
    assert 'vm1 (%s)' % vm in lines[4]
    assert 'trim' not in out and 'fits' not in out


def test_without_a_flavor_the_numbers_per_class():
    code, out, _ = run('--min-age', '0', '--provider', 'host1')
    assert out.splitlines()[1:3] == [
        'host1',
        '  VCPU           capacity 1        used 1        needed 0        '
        'held 1        free 0        free after repair 1']


def test_a_segment_provider_is_no_hypervisor():
    code, out, _ = run('--min-age', '0', '--json', segment=True)
    assert [t['hypervisor'] for t in json.loads(out)['hypervisors']] == [
        'host1', 'host2', 'host3']
    code, out, _ = run('--min-age', '0', segment=True)
    assert 'Neutron segment' not in out


@pytest.mark.parametrize('flavor, message', [
    ('nope', 'orphan-audit: no flavor nope'),
    ('vgpu', 'orphan-audit: flavor vgpu: '),
])
def test_a_flavor_it_cannot_judge_is_a_bad_argument(capsys, flavor,
                                                    message):
    code, out, _ = run('--flavor', flavor)
    assert code == options.BAD_ARGUMENTS
    assert capsys.readouterr().err.startswith(message)
    assert out == ''


class Response:
    def __init__(self, body):
        self.body = body

    def json(self):
        return self.body


NOVA_URL = 'http://nova.one:8774/v2.1'
CATALOG = [
    {'id': 'nova', 'type': 'compute', 'endpoints': [
        {'url': NOVA_URL + '/', 'region_id': 'RegionOne',
         'interface': 'public'},
        {'url': 'http://nova.two:8774/v2.1', 'region_id': 'RegionTwo',
         'interface': 'public'}]},
    {'id': 'placement', 'type': 'placement', 'endpoints': [
        {'url': 'http://placement.one', 'region_id': 'RegionOne',
         'interface': 'public'}]}]


def limit(name, value, project=None, region='RegionOne', service='nova'):
    found = {'service_id': service, 'region_id': region,
             'resource_name': name}
    if project is None:
        found['default_limit'] = value
    else:
        found.update(project_id=project, resource_limit=value)
    return found


class Keystone:
    """Keystone's catalog and limit listings, filtered as Keystone filters
    them (by the service and region asked for)."""

    def __init__(self, limits=(), catalog=CATALOG, list_limit=None):
        self.limits, self.catalog = limits, catalog
        self.list_limit = list_limit

    def get(self, path, params=None):
        if path == '/v3/auth/catalog':
            return Response({'catalog': self.catalog})
        key = path.rsplit('/', 1)[1]
        found = [
            found for found in self.limits
            if ('default_limit' in found) == (key == 'registered_limits') and
            all(found.get(k) == v for k, v in (params or {}).items())]
        body = {key: found[:self.list_limit]}
        if self.list_limit is not None and len(found) > self.list_limit:
            body['truncated'] = True
        return Response(body)


def test_keystone_limits_registered_as_the_default():
    from orphan_dashboard.api import keystone
    defaults, limits = keystone.class_limits(Keystone([
        limit('class:VCPU', 4, project='p'),
        limit('servers', 9, project='p'),
        limit('class:VCPU', 20), limit('class:CUSTOM_FPGA_X', 1)]),
        'nova', 'RegionOne')
    assert defaults == {'VCPU': 20, 'CUSTOM_FPGA_X': 1}
    assert limits == {'p': {'VCPU': 4}}


def test_a_listing_keystone_cut_short_is_asked_project_by_project():
    """With ``[DEFAULT] list_limit`` Keystone cuts ``/v3/limits`` and says
    ``truncated``: a project left out of it still gets its own limit."""
    from orphan_dashboard.operations import capacity as capacity_ops
    keystone = Keystone([limit('class:VCPU', 4, project='a'),
                         limit('class:VCPU', 6, project='b'),
                         limit('class:VCPU', 20)], list_limit=1)
    clients = mock.Mock(identity=keystone)
    clients.nova.get_endpoint.return_value = NOVA_URL
    getter = capacity_ops.limits(clients.identity, clients.nova)
    assert (getter('a'), getter('b'), getter('c')) == (
        {'VCPU': 4}, {'VCPU': 6}, {'VCPU': 20})


@pytest.mark.parametrize('url, scope', [
    (NOVA_URL, ('nova', 'RegionOne')),
    ('http://nova.two:8774/v2.1/', ('nova', 'RegionTwo')),
    # An endpoint the catalog does not list: two regions to choose from.
    ('http://elsewhere/v2.1', None),
])
def test_the_limits_of_the_compute_endpoint_in_use(url, scope):
    from orphan_dashboard.operations import capacity as capacity_ops
    assert capacity_ops.compute_scope(CATALOG, url) == scope
    only = [dict(CATALOG[0], endpoints=CATALOG[0]['endpoints'][:1])]
    assert capacity_ops.compute_scope(only, url) == ('nova', 'RegionOne')
    assert capacity_ops.compute_scope(CATALOG[1:], url) is None


def run_by_project(*argv, identity_client=None):
    args = options.build_parser().parse_args(['report', '--by', 'project',
                                              *argv])
    out = io.StringIO()
    found, vm = snapshot()
    clients = mock.Mock(identity=identity_client)
    clients.nova.get_endpoint.return_value = NOVA_URL
    with mock.patch.object(collect, 'full_snapshot', return_value=found), \
            mock.patch.object(placement, 'project_usages',
                              return_value={'VCPU': 2, 'MEMORY_MB': 1024,
                                            'DISK_GB': 2}), \
            mock.patch.object(cli.client, 'for_cloud',
                              return_value=clients), \
            mock.patch.object(cli.client, 'validate_token'):
        code = cli.execute(args, out)
    return code, out.getvalue()


def test_report_by_project_json():
    code, out = run_by_project('--json', '--min-age', '0',
                               identity_client=Keystone([
                                   limit('class:VCPU', 20),
                                   limit('class:MEMORY_MB', 4096)]))
    assert code == options.FOUND
    (row,) = json.loads(out)['projects']
    assert row == {'project_id': 'p', 'project_name': None,
                   'held': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1},
                   'usage': {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 2},
                   'needed': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1},
                   'freed': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1},
                   'limits': {'VCPU': 20, 'MEMORY_MB': 4096},
                   'headroom': {'VCPU': 18, 'MEMORY_MB': 3072},
                   'headroom_after': {'VCPU': 19, 'MEMORY_MB': 3584}}


def test_report_by_project_reads_the_limits_nova_enforces():
    """Keystone holds every region's and every service's limits: the
    project's own of the compute endpoint's region, else that region's
    default."""
    code, out = run_by_project('--json', '--min-age', '0',
                               identity_client=Keystone([
                                   limit('class:VCPU', 20),
                                   limit('class:MEMORY_MB', 4096),
                                   limit('class:VCPU', 8, project='p'),
                                   limit('class:VCPU', 50,
                                         region='RegionTwo'),
                                   limit('class:MEMORY_MB', 999,
                                         project='p', region='RegionTwo'),
                                   limit('class:DISK_GB', 7,
                                         service='placement')]))
    (row,) = json.loads(out)['projects']
    assert row['limits'] == {'VCPU': 8, 'MEMORY_MB': 4096}


def test_report_by_project_without_a_compute_endpoint_shows_no_limit(
        caplog):
    code, out = run_by_project('--json', '--min-age', '0',
                               identity_client=Keystone(
                                   [limit('class:VCPU', 20)],
                                   catalog=CATALOG[1:]))
    assert code == options.FOUND
    (row,) = json.loads(out)['projects']
    assert row['limits'] == {}
    assert 'no limits are shown' in caplog.text


def test_report_by_project_without_keystone_limits_is_no_error():
    broken = mock.Mock(get=mock.Mock(side_effect=RuntimeError('404')))
    code, out = run_by_project('--min-age', '0', identity_client=broken)
    assert code == options.FOUND
    assert out.splitlines()[1].split() == [
        'VCPU', 'held', 'by', 'findings', '1', 'usage', '2', 'needed', '1',
        'limit', '-', 'freed', 'by', 'the', 'repairs', '1']


def test_report_by_project_in_the_language_the_environment_asks_for(
        monkeypatch):
    monkeypatch.setenv('LANGUAGE', 'ru')
    code, out = run_by_project('--min-age', '0', identity_client=Keystone(
        [limit('class:VCPU', 20)]))
    assert out.splitlines()[1].split() == [
        'VCPU', 'занято', 'находками', '1', 'использование', '2', 'нужно',
        '1', 'лимит', '20', 'освободят', 'исправления', '1', 'запас', '18',
        'сейчас,', '19', 'после']


def test_report_by_project_is_for_the_whole_cloud(capsys):
    code, _ = run_by_project('--provider', 'host1')
    assert code == options.BAD_ARGUMENTS


def test_metrics_hold_per_class_and_project_and_the_flavor_fits(
        monkeypatch):
    from prometheus_client import parser
    monkeypatch.setenv('ORPHAN_AUDIT_METRIC_FLAVORS', 'm1.small, nope')
    args = options.build_parser().parse_args(['metrics', '--min-age', '0'])
    out = io.StringIO()
    found, _ = snapshot()
    with mock.patch.object(collect, 'full_snapshot', return_value=found), \
            mock.patch.object(nova, 'flavor_list', return_value=[SMALL]), \
            mock.patch.object(cli.client, 'for_cloud'), \
            mock.patch.object(cli.client, 'validate_token'):
        assert cli.execute(args, out) == options.NOTHING
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in parser.text_string_to_metric_families(
                   out.getvalue()) for s in family.samples}
    assert samples[('orphan_audit_held_by_findings',
                    (('resource_class', 'MEMORY_MB'),))] == 512
    assert samples[('orphan_audit_project_held_by_findings',
                    (('project', 'p'), ('resource_class', 'VCPU')))] == 1
    assert samples[('orphan_audit_flavor_fits_after_repair',
                    (('flavor', 'm1.small'),))] == 1
    assert not any(name == 'orphan_audit_flavor_fits_after_repair' and
                   dict(labels)['flavor'] == 'nope'
                   for name, labels in samples)
