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

"""The sandbox cloud itself: the run's real Keystone/Nova/Placement
(``tests/clouds.py``) as it started, then each incident staged and what
Nova really left behind checked against the manifest.
"""
import concurrent.futures
import os
import re
import subprocess
import sys
import time
import urllib.request

import pytest

pytest.importorskip('nova')
pytest.importorskip('placement')
pytest.importorskip('keystone')

from sandbox import __main__ as sandbox_cli  # noqa: E402
from sandbox import harness  # noqa: E402
from sandbox import incidents_names  # noqa: E402
from tests import clouds  # noqa: E402

SMALL = {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}
MEDIUM = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}
BIG = {'VCPU': 12, 'MEMORY_MB': 32768, 'DISK_GB': 80}


sb = clouds.module_sandbox()


def nova(sess, sb, path, mv='2.94', method='GET', **kw):
    return sess.request(sb.nova_url + path, method, raise_exc=False,
                        headers={'OpenStack-API-Version': 'compute ' + mv},
                        **kw)


def placement(sess, sb, path, mv='1.28', method='GET', **kw):
    return sess.request(sb.placement_url + path, method, raise_exc=False,
                        headers={'OpenStack-API-Version': 'placement ' + mv},
                        **kw)


def allocs(sb, consumer):
    r = placement(sb.admin_session(), sb, '/allocations/%s' % consumer)
    assert r.status_code == 200
    return {rp: a['resources'] for rp, a in r.json()['allocations'].items()}


def verdicts(entry):
    return {(e['consumer'], e['host']): e['verdict']
            for e in entry['expected']}


def test_up_help_names_every_incident(capsys):
    """Without a cloud: the help is the incident list's, not a copy."""
    with pytest.raises(SystemExit):
        sandbox_cli.main(['up', '--help'])
    shown = re.findall(r'\w+', capsys.readouterr().out)
    known = incidents_names.NAMES + incidents_names.OPT_IN
    assert [name for name in known if name not in shown] == []


def test_config_written(sb):
    cfg = sb.config
    for key in ('keystone', 'nova', 'placement', 'control'):
        assert cfg[key]['url'].startswith('http://127.0.0.1:')
    assert set(cfg['hosts']) == {'host1', 'host2', 'host3'}
    for f in ('clouds.yaml', 'openrc', 'sandbox.json'):
        assert os.path.exists(os.path.join(sb.state_dir, f))
    assert sb.ready_seconds < 180


@pytest.mark.parametrize('service', ['nova', 'placement'])
@pytest.mark.parametrize('token', [None, 'not-a-token'])
def test_401_without_valid_token(sb, service, token):
    import requests
    url = (sb.nova_url + '/servers' if service == 'nova'
           else sb.placement_url + '/resource_providers')
    headers = {'X-Auth-Token': token} if token else {}
    assert requests.get(url, headers=headers, timeout=30).status_code == 401


def test_admin_token_accepted(sb):
    sess = sb.admin_session()
    r = placement(sess, sb, '/resource_providers')
    assert r.status_code == 200
    assert {p['name'] for p in r.json()['resource_providers']} == {
        'host1', 'host2', 'host3'}
    assert nova(sess, sb, '/os-hypervisors', mv='2.53').status_code == 200


def test_member_is_not_admin(sb):
    sess = sb.member_session()
    rp = sb.config['hosts']['host2']
    assert placement(sess, sb, '/resource_providers').status_code == 403
    assert placement(sess, sb, '/resource_providers/%s/allocations'
                     % rp).status_code == 403
    assert nova(sess, sb, '/os-hypervisors', mv='2.53').status_code == 403
    assert nova(sess, sb, '/servers').status_code == 200


def test_second_up_on_same_state_dir_refused(sb):
    res = subprocess.run(
        [sys.executable, '-m', 'sandbox', 'up', '--state-dir', sb.state_dir,
         '--keystone-port', '0', '--nova-port', '0', '--placement-port', '0',
         '--control-port', '0'],
        cwd=harness.REPO, capture_output=True, text=True, timeout=60)
    assert res.returncode != 0
    assert 'already running' in res.stderr


def _switches(pid):
    """How often every thread of ``pid`` has slept so far (its voluntary
    context switches)."""
    total = 0
    for task in os.listdir('/proc/%d/task' % pid):
        try:
            with open('/proc/%d/task/%s/status' % (pid, task)) as f:
                total += sum(int(line.split()[1]) for line in f
                             if line.startswith('voluntary_ctxt_switches'))
        except OSError:
            pass
    return total


def test_an_idle_cloud_lets_its_threads_sleep(sb):
    """Nova's test base wakes every idle pool worker each 10 ms, undone by
    ``sandbox.cloud.lasting_test_setup``: once a few listings at once have
    started its workers, an idle cloud's threads sleep, where with the
    10 ms wake-up they switched thousands of times a second and took the
    CPU the tests that ran beside it needed."""
    sess = sb.admin_session()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(
            lambda path: nova(sess, sb, path).status_code,
            ['/servers/detail', '/os-hypervisors/detail',
             '/os-migrations', '/os-services'] * 8))
    assert answers == [200] * 32
    time.sleep(1)
    before = _switches(sb.proc.pid)
    time.sleep(2)
    per_second = (_switches(sb.proc.pid) - before) / 2
    assert per_second < 3000, per_second


def test_unknown_incident_is_404(sb):
    status, body = sb.control('POST', '/incidents/no-such-thing')
    assert status == 404
    assert 'evacuation' in body['known']


def _service(sb, host):
    r = nova(sb.admin_session(), sb, '/os-services?binary=nova-compute'
             '&host=%s' % host, mv='2.53')
    return r.json()['services'][0]


def test_compute_stop_start(sb):
    # host3 before any incident is staged on it
    assert _service(sb, 'host3')['state'] == 'up'
    assert sb.stop_compute('host3')['state'] == 'stopped'
    assert _service(sb, 'host3')['state'] == 'down'
    assert sb.start_compute('host3')['state'] == 'running'
    assert _service(sb, 'host3')['state'] == 'up'


def test_evacuation(sb):
    e = sb.stage('evacuation')
    h = sb.config['hosts']
    s = e['servers'][0]
    assert (s['status'], s['host'], s['task_state']) == ('ACTIVE', 'host2',
                                                         None)
    (m,) = e['migrations']
    assert (m['migration_type'], m['status'], m['source_compute'],
            m['dest_compute']) == ('evacuation', 'done', 'host1', 'host2')
    assert allocs(sb, s['uuid']) == {h['host1']: SMALL, h['host2']: SMALL}
    assert allocs(sb, m['uuid']) == {}
    assert verdicts(e) == {(s['uuid'], 'host1'): 'evacuated_source',
                           (s['uuid'], 'host2'): 'ok'}
    assert _service(sb, 'host1')['forced_down'] is True


def test_deleted_behind_nova(sb):
    e = sb.stage('deleted_behind_nova')
    h = sb.config['hosts']
    uuid = e['servers'][0]['uuid']
    assert allocs(sb, uuid) == {h['host2']: BIG}
    sess = sb.admin_session()
    assert nova(sess, sb, '/servers/%s' % uuid).status_code == 404
    r = nova(sess, sb, '/servers/%s/os-instance-actions' % uuid, mv='2.21')
    assert r.status_code == 200
    assert [a['action'] for a in r.json()['instanceActions']] == ['create']
    assert e['checks']['listed_with_deleted_true'] is False
    assert verdicts(e) == {(uuid, 'host2'): 'deleted_instance'}


def test_failed_migration(sb):
    e = sb.stage('failed_migration')
    h = sb.config['hosts']
    a, b = e['servers']
    mig_a, mig_b = e['migrations']
    # (a) the seed: SHUTOFF on its source, its allocation on the target
    assert (a['status'], a['host'], a['task_state']) == ('SHUTOFF', 'host2',
                                                         None)
    assert (mig_a['migration_type'], mig_a['status'], mig_a['source_compute'],
            mig_a['dest_compute']) == ('migration', 'error', 'host2', 'host3')
    assert allocs(sb, a['uuid']) == {h['host3']: SMALL}
    assert allocs(sb, mig_a['uuid']) == {h['host2']: SMALL}
    # (b) confirm failed with a 409: the migration consumer is leaked
    assert (b['status'], b['host']) == ('ERROR', 'host2')
    assert (mig_b['status'], mig_b['source_compute'],
            mig_b['dest_compute']) == ('error', 'host3', 'host2')
    assert allocs(sb, b['uuid']) == {h['host2']: SMALL}
    assert allocs(sb, mig_b['uuid']) == {h['host3']: SMALL}
    assert verdicts(e) == {
        (a['uuid'], 'host3'): 'moved',
        (a['uuid'], 'host2'): 'missing',
        (mig_a['uuid'], 'host2'): 'stale_migration',
        (mig_b['uuid'], 'host3'): 'stale_migration',
        (b['uuid'], 'host2'): 'ok',
    }
    assert len(e['checks']['races_fired']) == 2


def test_unconfirmed_resize(sb):
    e = sb.stage('unconfirmed_resize')
    h = sb.config['hosts']
    s = e['servers'][0]
    (m,) = e['migrations']
    assert s['status'] == 'VERIFY_RESIZE'
    assert (m['migration_type'], m['status']) == ('resize', 'finished')
    assert s['host'] == m['dest_compute'] != m['source_compute']
    assert allocs(sb, s['uuid']) == {h[m['dest_compute']]: MEDIUM}
    assert allocs(sb, m['uuid']) == {h[m['source_compute']]: SMALL}
    assert set(verdicts(e).values()) == {'protected'}


def test_healed_away(sb):
    e = sb.stage('healed_away')
    s = e['servers'][0]
    assert (s['status'], s['host']) == ('ACTIVE', 'host3')
    assert allocs(sb, s['uuid']) == {}
    assert verdicts(e) == {(s['uuid'], 'host3'): 'missing'}


def test_healthy(sb):
    e = sb.stage('healthy')
    h = sb.config['hosts']
    for s in e['servers']:
        assert allocs(sb, s['uuid']) == {h[s['host']]: SMALL}
    assert set(verdicts(e).values()) == {'ok'}


def test_wrong_amount(sb):
    e = sb.stage('wrong_amount')
    s = e['servers'][0]
    h = sb.config['hosts']
    assert allocs(sb, s['uuid']) == {h['host3']: dict(SMALL, MEMORY_MB=4096)}
    assert verdicts(e) == {(s['uuid'], 'host3'): 'wrong_amount'}


def test_port_bandwidth_left(sb):
    e = sb.stage('port_bandwidth_left')
    s = e['servers'][0]
    h = sb.config['hosts']
    nics = e['checks']['nics']
    assert allocs(sb, s['uuid']) == {
        h['host2']: SMALL, h['host3']: SMALL,
        nics['host3:br-phys']: {'NET_BW_EGR_KILOBIT_PER_SEC': 1000}}
    sess = sb.admin_session()
    nic = placement(sess, sb, '/resource_providers/%s' %
                    nics['host3:br-phys'], mv='1.14').json()
    assert nic['parent_provider_uuid'] == h['host3']
    assert verdicts(e) == {(s['uuid'], 'host2'): 'ok',
                           (s['uuid'], 'host3'): 'moved',
                           (s['uuid'], 'host3:br-phys'): 'moved'}


def test_pre_pike_consumer(sb):
    """A PUT without a microversion records the incomplete-consumer
    placeholders, as Placement before 1.8 did."""
    e = sb.stage('pre_pike_consumer')
    s = e['servers'][0]
    h = sb.config['hosts']
    assert allocs(sb, s['uuid']) == {h['host2']: SMALL}
    body = placement(sb.admin_session(), sb, '/allocations/%s' %
                     s['uuid']).json()
    placeholder = '00000000-0000-0000-0000-000000000000'
    assert (body['project_id'], body['user_id']) == (placeholder,
                                                     placeholder)
    assert verdicts(e) == {(s['uuid'], 'host2'): 'incomplete_consumer'}


def test_retired_host(sb):
    """host4 dies with one leftover of each kind that blocks deleting it."""
    e = sb.stage('retired_host')
    host4 = e['hosts']['host4']
    services = nova(sb.admin_session(), sb, '/os-services?binary='
                    'nova-compute&host=host4', mv='2.53').json()['services']
    assert services[0]['state'] == 'down' and services[0]['forced_down']
    for expected in e['expected']:
        if expected['host'] == 'host4':
            assert host4 in allocs(sb, expected['consumer']), expected
    assert sorted(v for (c, host), v in verdicts(e).items()
                  if host == 'host4') == [
        'deleted_instance', 'evacuated_source', 'stale_migration',
        'unknown_consumer']


def test_manifest_and_placement_audit(sb):
    manifest = sb.incidents_manifest()
    assert set(manifest) == {'evacuation', 'deleted_behind_nova',
                             'failed_migration', 'unconfirmed_resize',
                             'healed_away', 'wrong_amount',
                             'port_bandwidth_left', 'pre_pike_consumer',
                             'retired_host', 'healthy'}
    assert sb.reload()['incidents'] == manifest
    audit = sb.placement_audit()
    out = audit['output']
    assert audit['exit_code'] == 3, out
    deleted = manifest['deleted_behind_nova']['servers'][0]['uuid']
    stale = manifest['failed_migration']['migrations'][1]['uuid']
    assert deleted in out and stale in out
    # audit never flags the VERIFY_RESIZE migration, healthy servers, nor
    # the wrong amount or the incomplete consumer (nothing it can see)
    for name in ('unconfirmed_resize', 'healthy', 'wrong_amount',
                 'pre_pike_consumer'):
        for s in manifest[name]['servers']:
            assert s['uuid'] not in out
        for m in manifest[name]['migrations']:
            assert m['uuid'] not in out


def _settings(env, openrc=None):
    """The minimum age and journal directory ``orphan_dashboard.conf``
    gives in ``env`` (no ``OS_*`` or ``ORPHAN_AUDIT_*`` variables of this
    process), after sourcing ``openrc`` if given."""
    env = {k: v for k, v in env.items()
           if not k.startswith(('ORPHAN_AUDIT_', 'OS_'))}
    code = ('from orphan_dashboard import conf; '
            'print(conf.MIN_AGE.get(), conf.JOURNAL_DIR.get())')
    script = ('. "$2" && ' if openrc else '') + 'exec "$0" -c "$1"'
    result = subprocess.run(
        ['bash', '-c', script, sys.executable, code] + (
            [openrc] if openrc else []), cwd=harness.REPO, env=env,
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_openrc_sets_orphan_audit_as_the_demos_horizon(sb):
    """``orphan-audit`` with the sandbox's openrc judges as the demo's
    Horizon does: the same minimum age (none), the same journal."""
    from sandbox import demo
    horizon = _settings(demo.horizon_env(os.path.join(sb.state_dir,
                                                      'sandbox.json')))
    assert horizon == ['0', sb.state_dir]
    cli = dict(os.environ)
    cli.pop('DJANGO_SETTINGS_MODULE', None)
    assert _settings(cli, os.path.join(sb.state_dir, 'openrc')) == horizon


def test_staging_goes_on_once_host4_is_decommissioned(sb):
    """Deleting host4's compute service (what a decommission does) takes
    its compute node: staging another incident still answers 200 with
    its entry, and sandbox.json lists the hosts that remain."""
    if 'retired_host' not in sb.incidents_manifest():
        sb.stage('retired_host')
    deleted = nova(sb.admin_session(), sb, '/os-services/%s' %
                   _service(sb, 'host4')['id'], mv='2.53', method='DELETE')
    assert deleted.status_code == 204, deleted.text
    status, entry = sb.control('POST', '/incidents/deleted_behind_nova')
    assert status == 200, entry
    (server,) = entry['servers']
    assert sb.incidents_manifest()['deleted_behind_nova'] == entry
    assert verdicts(entry) == {(server['uuid'], 'host2'): 'deleted_instance'}
    assert set(sb.reload()['hosts']) == {'host1', 'host2', 'host3'}


def test_reset_puts_the_cloud_back_as_its_incidents_left_it(sb):
    """Modules share the run's cloud, each reset to what it staged: what
    was staged, stopped or deleted since is gone (host4's service, the
    servers of another incident, a stopped host3), the staged servers
    hold what they held, and the computes still boot servers."""
    for attempt in ('staged', 'restored'):
        evacuation = sb.reset(['evacuation'])['incidents']['evacuation']
        (server,) = evacuation['servers']
        held = allocs(sb, server['uuid'])
        healthy = [s['uuid'] for s in sb.stage('healthy')['servers']]
        sb.stop_compute('host3')
        back = sb.reset(['evacuation'])
        assert set(back['incidents']) == {'evacuation'}, attempt
        assert set(back['hosts']) == {'host1', 'host2', 'host3'}
        assert allocs(sb, server['uuid']) == held
        admin = sb.admin_session()
        for uuid in healthy:
            assert allocs(sb, uuid) == {}
            assert nova(admin, sb, '/servers/%s' % uuid).status_code == 404
        assert (_service(sb, 'host1')['state'],
                _service(sb, 'host3')['state']) == ('down', 'up')
        booted = sb.stage('healthy')['servers']
        assert {(s['status'], s['host']) for s in booted} == {
            ('ACTIVE', 'host2'), ('ACTIVE', 'host3')}


def test_nova_and_placement_held_while_keystone_answers(sb):
    """How the browser tests hold a first sweep: while Nova and Placement
    are frozen Keystone still issues tokens (Horizon's pages need it), a
    request to Placement waits, and it is answered once they are thawed."""
    with sb.nova_and_placement_held():
        assert sb.admin_session().get_token()
        with pytest.raises(OSError):
            urllib.request.urlopen(sb.placement_url, timeout=1)
    with urllib.request.urlopen(sb.placement_url, timeout=60) as answer:
        assert answer.status == 200
