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

""""Would it fit?" against Placement's own answer, on the real sandbox.

host1 was evacuated: its compute is down and forced down, and the
server's allocation stays there.  Its VCPU inventory is then reserved
down to exactly that allocation.  For each flavor, the hypervisors that
*fit now* must be exactly those ``GET /allocation_candidates`` returns,
less the hosts whose compute service Nova's scheduler refuses: host1
fits nothing, and says why, even once ``orphan-audit apply`` has trimmed
its leftover and Placement offers it; with its compute back up, the small
flavor fits host1 now, in both answers.  A server on host3 holding 3072
MB more than its flavor needs: what findings hold there is what its
repair frees.
"""

import json

import pytest

pytest.importorskip('nova')
pytest.importorskip('placement')
pytest.importorskip('keystone')

from orphan_dashboard.audit import capacity  # noqa: E402
from orphan_dashboard.audit import server_needs  # noqa: E402
from orphan_dashboard import conf  # noqa: E402
from orphan_dashboard.operations import capacity as capacity_ops  # noqa
from tests import clouds  # noqa: E402
from tests.e2e.conftest import orphan_audit  # noqa: E402

FLAVORS = {
    # name: (vcpus, ram, disk, extra specs)
    'cap-small': (1, 512, 1, {}),
    'cap-two-vcpus': (1, 512, 1, {'resources:VCPU': '2'}),
    'cap-huge': (1, 10 ** 7, 1, {}),
}


sb = clouds.module_sandbox()


def api(sb, service, path, method='GET', version=None, **kwargs):
    url = {'nova': sb.nova_url, 'placement': sb.placement_url}[service]
    header = '%s %s' % ('compute' if service == 'nova' else 'placement',
                        version or ('2.61' if service == 'nova' else '1.36'))
    response = sb.admin_session().request(
        url + path, method, headers={'OpenStack-API-Version': header},
        raise_exc=False, **kwargs)
    assert response.status_code < 300, (path, response.text)
    return response.json() if response.text else None


@pytest.fixture(scope='module')
def staged(sb):
    """The evacuation, host1's VCPU reserved down to what the orphan
    holds, and the flavors."""
    entry = sb.stage('evacuation')
    host1 = sb.config['hosts']['host1']
    path = '/resource_providers/%s/inventories/VCPU' % host1
    vcpu = api(sb, 'placement', path)
    api(sb, 'placement', path, 'PUT', json={
        'resource_provider_generation': vcpu['resource_provider_generation'],
        'total': vcpu['total'], 'reserved': vcpu['total'] - 1,
        'allocation_ratio': 1.0, 'min_unit': 1, 'max_unit': vcpu['total'],
        'step_size': 1})
    ids = {}
    for name, (vcpus, ram, disk, specs) in FLAVORS.items():
        flavor = api(sb, 'nova', '/flavors', 'POST', json={'flavor': {
            'name': name, 'vcpus': vcpus, 'ram': ram, 'disk': disk}})
        ids[name] = flavor['flavor']['id']
        if specs:
            api(sb, 'nova', '/flavors/%s/os-extra_specs' % ids[name], 'POST',
                json={'extra_specs': specs})
    return entry['servers'][0], ids


def candidates(sb, resources):
    """The root providers (by name) Placement offers for ``resources``."""
    query = ','.join('%s:%d' % item for item in sorted(resources.items()))
    found = api(sb, 'placement', '/allocation_candidates?resources=' + query,
                version='1.29')
    names = {p['uuid']: p['name'] for p in api(
        sb, 'placement', '/resource_providers')['resource_providers']}
    return {names[found['provider_summaries'][rp]['root_provider_uuid']]
            for request in found['allocation_requests']
            for rp in request['allocations']}


def states(sb):
    """``{flavor: {hypervisor: state}}`` and the rows, audited now."""
    connected = clouds.clients(sb)
    _, found = capacity_ops.audit(
        connected, conf.RunSettings(min_age=0, concurrency=4))
    listed = capacity_ops.flavors(connected)
    result = {}
    for name in FLAVORS:
        flavor = capacity_ops.find_flavor(listed, name)
        rows, _ = capacity_ops.fit(
            found, server_needs.resources_from_flavor(flavor.flavor))
        result[name] = (server_needs.resources_from_flavor(flavor.flavor),
                        {r['hypervisor']: r for r in rows})
    return result


def fits_now(rows):
    return {h for h, r in rows.items() if r['state'] == capacity.FITS_NOW}


FORCED_DOWN = ('its compute service is forced down: Nova schedules no '
               'server there')


def test_fits_now_is_placements_answer_and_the_repair_makes_room(
        sb, staged, tmp_path):
    server, ids = staged
    before = states(sb)
    for name, (resources, rows) in before.items():
        assert fits_now(rows) == candidates(sb, resources) - {'host1'}, name
    small = before['cap-small'][1]
    assert (small['host1']['state'], str(small['host1']['why']),
            small['host1']['repairs']) == (
        capacity.DOES_NOT_FIT, FORCED_DOWN, [])
    assert fits_now(small) == {'host2', 'host3'}
    # Two VCPUs never fit host1's capacity of one, repaired or not.
    assert before['cap-two-vcpus'][0]['VCPU'] == 2
    assert before['cap-two-vcpus'][1]['host1']['state'] == \
        capacity.DOES_NOT_FIT
    assert {r['state'] for r in before['cap-huge'][1].values()} == {
        capacity.DOES_NOT_FIT}

    # The CLI says the same, one row per hypervisor.
    done = orphan_audit(sb, tmp_path, 'capacity', '--flavor', ids[
        'cap-small'], '--json', '--min-age', '0')
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)['hypervisors']
    assert {r['hypervisor']: r['state'] for r in rows} == {
        h: r['state'] for h, r in small.items()}
    assert {r['hypervisor']: r['why'] for r in rows}['host1'] == FORCED_DOWN
    done = orphan_audit(sb, tmp_path, 'capacity', '--flavor', 'cap-small',
                        '--min-age', '0')
    assert 'does not fit: %s' % FORCED_DOWN in done.stdout, done.stdout

    done = orphan_audit(sb, tmp_path, 'apply', '--provider', 'host1',
                        '--min-age', '0')
    assert done.returncode == 4, (done.stdout, done.stderr)
    trimmed = states(sb)['cap-small']
    assert 'host1' in candidates(sb, trimmed[0])
    assert trimmed[1]['host1']['state'] == capacity.DOES_NOT_FIT

    # host1's compute back up: it takes servers again.
    sb.start_compute('host1')
    service = api(sb, 'nova', '/os-services?binary=nova-compute&host=host1',
                  version='2.53')['services'][0]
    api(sb, 'nova', '/os-services/%s' % service['id'], 'PUT',
        version='2.53', json={'forced_down': False})
    after = states(sb)
    for name, (resources, rows) in after.items():
        assert fits_now(rows) == candidates(sb, resources), name
    assert after['cap-small'][1]['host1']['state'] == capacity.FITS_NOW


@pytest.fixture(scope='module')
def wrong(sb):
    """The wrong_amount incident: wrong-amount-vm on host3 holds 4096 MB
    where sb.small needs 1024."""
    return sb.stage('wrong_amount')['servers'][0]['uuid']


def test_what_a_wrong_amount_holds_too_many_is_held_by_its_finding(
        sb, staged, wrong, tmp_path):
    """The 3072 MB too many are held by findings on host3, in the CLI's
    first line, and exactly what the delete and heal frees there; every
    charged project's findings hold what its recommended repairs free."""
    done = orphan_audit(sb, tmp_path, 'capacity', '--provider', 'host3',
                        '--min-age', '0')
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        'held by findings: MEMORY_MB=3072 on 1 hypervisor'), done.stdout
    _, found = capacity_ops.audit(
        clouds.clients(sb), conf.RunSettings(min_age=0, concurrency=4))
    host3 = found.trees[sb.config['hosts']['host3']]
    memory = {c.resource_class: c for c in host3.classes}['MEMORY_MB']
    assert memory.held == memory.free_after - memory.free == 3072
    assert [(r.consumer, r.action, r.freed) for r in host3.repairs] == [
        (wrong, 'delete_and_heal', {'MEMORY_MB': 3072})]
    done = orphan_audit(sb, tmp_path, 'report', '--by', 'project', '--json',
                        '--min-age', '0')
    assert done.returncode == 3, done.stderr
    projects = json.loads(done.stdout)['projects']
    assert any(p['held'].get('MEMORY_MB', 0) >= 3072 for p in projects)
    for project in projects:
        assert project['held'] == project['freed'], project
