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

"""``python -m bench --sizes 1000,5000,10000``: the panel's benchmark.

For each size, one bench cloud (see :mod:`bench.cloud`; seeded once, then
restored from ``~/.cache/orphan-dashboard-bench``) and a memcached shared
by the page and the cron command, and on the same data: our cold sweep and
its floor, peak memory and snapshot size, nova-manage placement audit and
the agreement with it, the panel's page on a cold cache, during the
background sweep, warm, and during a *Refresh*, Horizon's
``get_providers``, the server list split by host, then rounds of 1 % churn
each followed (past the refresh's clock margin) by a refresh, ``manage.py
orphan_audit refresh`` (cron) and a full sweep that must find the same.
Timings are medians of ``--repeat`` runs.  Prints five tables (the
numbers, the details, the targets met or missed, the pages and cron, the
Nova listings, which ``--no-listings`` leaves out); raw numbers go to
``--json``.

``--neutron`` measures instead what reading Neutron's ports adds: on the
bench cloud with a real Neutron (a port per server, a tenth on a QoS
policy with a minimum bandwidth rule, their bandwidth allocated on the
hosts' NIC providers; see :mod:`bench.neutron`), cold sweeps with and
without Neutron alternately, then the sweep's port read against listings
of every port and with other page sizes.  Prints two tables.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

from bench import measure
from orphan_dashboard.reading import refresh as incremental
from sandbox import common
from sandbox import harness

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.expanduser('~/.cache/orphan-dashboard-bench')


def log(msg):
    sys.stderr.write('[bench] %s\n' % msg)
    sys.stderr.flush()


class BenchSandbox(harness.Sandbox):
    """``python -m bench.server`` instead of ``python -m sandbox up``.  Never
    reset: its seeded databases are kept in the bench's own cache."""

    resettable = False

    def __init__(self, size, cache_dir, **kwargs):
        super().__init__(timeout=3600, **kwargs)
        self.size = size
        self.cache_dir = cache_dir

    def command(self):
        return [self.python, '-m', 'bench.server', '--size', str(self.size),
                '--state-dir', self.state_dir, '--cache-dir',
                self.cache_dir] + (['--neutron'] if self.neutron else [])


def horizon_env(sandbox, cache_dir, cache=None):
    """The page's and the cron command's environment: Horizon's settings
    over the bench cloud, sharing ``cache`` (a memcached) if given."""
    env = dict(os.environ)
    env.update(
        PYTHONPATH=REPO + os.pathsep + env.get('PYTHONPATH', ''),
        DJANGO_SETTINGS_MODULE='bench.horizon_settings',
        SANDBOX_JSON=os.path.join(sandbox.state_dir, 'sandbox.json'),
        SANDBOX_HORIZON_OFFLINE='1',
        SANDBOX_HORIZON_STATIC_ROOT=os.path.join(cache_dir, 'horizon-static'),
        SANDBOX_ORPHAN_SETTINGS=json.dumps({
            'ORPHAN_AUDIT_FULL_SWEEP': 86400}),
        OS_CLIENT_CONFIG_FILE=os.path.join(sandbox.state_dir, 'clouds.yaml'),
        ORPHAN_AUDIT_JOURNAL_DIR=os.path.join(sandbox.state_dir, 'journal'))
    if cache:
        env['SANDBOX_HORIZON_CACHE'] = cache
    return env


def start_memcached():
    """Debian's memcached on a free port, or (None, None) without it."""
    binary = shutil.which('memcached')
    if binary is None:
        return None, None
    port = common.choose_port(0)
    user = ['-u', 'nobody'] if os.geteuid() == 0 else []
    proc = subprocess.Popen([binary, '-l', '127.0.0.1', '-p', str(port),
                             '-U', '0', '-m', '512', *user])
    common.wait_for_port(port, timeout=30, proc=proc)
    return proc, '127.0.0.1:%d' % port


def cron_refresh(env):
    """``manage.py orphan_audit refresh`` as cron runs it: its own seconds
    (it prints them) and the command's wall time, start-up included."""
    started = time.monotonic()
    out = run_python(['-m', 'django', 'orphan_audit', '--os-cloud',
                      'sandbox', 'refresh'], env, 'orphan_audit refresh')
    wall = time.monotonic() - started
    match = re.search(r'(full|incremental) sweep in ([0-9.]+) s', out)
    return {'kind': match.group(1), 'sweep_s': float(match.group(2)),
            'wall_s': wall}


def run_python(args, env, what):
    proc = subprocess.run([sys.executable, '-W', 'ignore'] + args, cwd=REPO,
                          env=env, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError('%s failed:\n%s' % (what, proc.stderr[-3000:]))
    return proc.stdout


def compress_static(sandbox, cache_dir):
    """collectstatic + compress, as production and the browser tests."""
    env = horizon_env(sandbox, cache_dir)
    run_python(['-m', 'django', 'collectstatic', '--noinput', '-v', '0'],
               env, 'collectstatic')
    run_python(['-m', 'django', 'compress', '--force'], env, 'compress')


def bench_size(size, repeat, cache_dir, static_ready, listings=True,
               gc_freeze=False):
    result = {'size': size}
    sandbox = BenchSandbox(size, cache_dir)
    memcached, cache = start_memcached()
    t0 = time.monotonic()
    sandbox.start()
    result['start_s'] = time.monotonic() - t0
    try:
        status, info = sandbox.control('GET', '/bench/info')
        result.update(hosts=len(info['hosts']), seed_s=info['seed_seconds'],
                      restore_s=info['restored_seconds'],
                      seeded=info['counts'])
        log('%d servers on %d hypervisors (seeded in %s s, restored in %s s)'
            % (size, len(info['hosts']), _round(info['seed_seconds']),
               _round(info['restored_seconds'])))
        clients = measure.Clients(sandbox)

        log('peak memory (also warms the services up)')
        result['peak_bytes'] = measure.peak_memory(clients)
        log('cold sweeps and floors, alternating')
        colds, floors = [], []
        for _ in range(repeat):
            colds.append(measure.cold_sweep(clients))
            floors.append(measure.floor(clients, colds[0][3]))
        result['cold_s'] = [c[0] for c in colds]
        result['floor_s'] = floors
        result['requests'] = len(colds[0][3])
        _, snapshot, report, _ = colds[-1]
        result['snapshot_bytes'] = measure.snapshot_bytes(snapshot)
        result['servers_listed'] = len(snapshot.servers)
        result['findings'] = len(report.findings)
        found = {(f.consumer, f.provider): f.verdict
                 for f in report.findings}
        expected = info['expected']
        result['seeded_verdicts_found'] = sum(
            found.get((c, p)) == v for c, p, v in expected)
        result['seeded_verdicts'] = len(expected)

        log('nova-manage placement audit')
        audits = []
        for _ in range(repeat):
            seconds, (status, body) = measure.timed(lambda: sandbox.control(
                'POST', '/nova-manage/placement-audit', timeout=1800))
            audits.append(seconds)
        result['nova_manage_s'] = audits
        result['nova_manage_exit'] = body['exit_code']
        result['agreement'] = measure.agreement(
            report, measure.nova_manage_pairs(body['output']))

        log('Horizon page (cold, during the sweep, warm) and get_providers')
        env = horizon_env(sandbox, cache_dir, cache)
        if not static_ready:
            compress_static(sandbox, cache_dir)
        result['page'] = json.loads(run_python(
            ['-m', 'bench.page', '--repeat', str(repeat)] +
            (['--gc-freeze'] if gc_freeze else []), env, 'bench.page'))

        if listings:
            log('Nova listings: raw REST and python-novaclient')
            raw_s, novaclient_s, _ = measure.nova_reads(clients)
            result['nova_raw_s'] = raw_s
            result['nova_novaclient_s'] = novaclient_s

            log('server list split by host (once)')
            split = measure.server_list_split(clients, sorted(info['hosts']))
            result['list_serial_s'] = [split[0]]
            result['list_by_host_s'] = [split[1]]
            result['list_counts'] = split[2:]

        log('churn, refresh, full sweep')
        churn = max(1, size // 100)
        old, last = snapshot, report
        rounds = []
        for i in range(repeat):
            status, counts = sandbox.control(
                'POST', '/bench/churn?count=%d&seed=%d' % (churn, i + 1))
            # A refresh lists Nova's changes since a margin before the last
            # one began: churn older than it is read by this round alone.
            time.sleep(incremental.CLOCK_MARGIN.total_seconds())
            seconds, fresh, fresh_report, requests = measure.refresh(
                clients, old, last)
            full_s, full, full_report, _ = measure.cold_sweep(clients)
            same = (measure.findings(fresh_report) ==
                    measure.findings(full_report))
            same_usage = (measure.usage(fresh_report) ==
                          measure.usage(full_report))
            diff = measure.findings(fresh_report) ^ measure.findings(
                full_report)
            cron = cron_refresh(env) if cache else None
            rounds.append({'churn': counts, 'refresh_s': seconds,
                           'cron': cron,
                           'refresh_requests': len(requests),
                           'full_s': full_s, 'same_findings': same,
                           'same_usage': same_usage,
                           'differences': sorted(map(str, diff))[:10]})
            old, last = fresh, fresh_report
        result['rounds'] = rounds
        result['refresh_s'] = [r['refresh_s'] for r in rounds]
        result['refresh_requests'] = [r['refresh_requests'] for r in rounds]
        result['refresh_equals_full'] = all(
            r['same_findings'] and r['same_usage'] for r in rounds)
        if cache:
            result['cron_s'] = [r['cron']['sweep_s'] for r in rounds]
            result['cron_wall_s'] = [r['cron']['wall_s'] for r in rounds]
            result['cron_kinds'] = [r['cron']['kind'] for r in rounds]
    finally:
        sandbox.stop()
        if memcached is not None:
            common.stop_process(memcached, 10)
    return result


def bench_neutron(size, repeat, cache_dir):
    """Cold sweeps with and without Neutron's ports on the same cloud,
    alternately (the order flipped each round, so the machine's load
    falls on both), after one unmeasured sweep; then the port reads."""
    result = {'size': size, 'load_start': os.getloadavg()}
    sandbox = BenchSandbox(size, cache_dir, neutron=True)
    t0 = time.monotonic()
    sandbox.start()
    result['start_s'] = time.monotonic() - t0
    try:
        status, info = sandbox.control('GET', '/bench/info')
        seeded = info['neutron']
        result.update(hosts=len(info['hosts']), seed_s=info['seed_seconds'],
                      restore_s=info['restored_seconds'],
                      neutron_seed_s=seeded['seed_seconds'],
                      ports=seeded['ports'], qos_ports=seeded['qos_ports'])
        log('%d servers, %d ports (%d with QoS) on %d hypervisors' % (
            size, seeded['ports'], seeded['qos_ports'], len(info['hosts'])))
        clients = measure.Clients(sandbox)
        result['api_check'] = measure.qos_port_check(
            clients, seeded['expected'][0])
        log('one sweep with Neutron (warms every service up)')
        measure.cold_sweep(clients, network=True)
        runs = []
        for i in range(repeat):
            for network in ((False, True) if i % 2 == 0 else (True, False)):
                load = os.getloadavg()
                seconds, snapshot, report, requests = measure.cold_sweep(
                    clients, network=network)
                log('sweep %s Neutron: %.2f s' % (
                    'with' if network else 'without', seconds))
                runs.append({
                    'neutron': network, 's': seconds,
                    'requests': len(requests),
                    'neutron_requests': sum(
                        '/v2.0/' in r[1] for r in requests),
                    'ports_read': len(snapshot.ports or ()),
                    'load_before': load, 'load_after': os.getloadavg()})
                if network:
                    result['verdicts'] = _seeded_found(
                        report, info['expected'], seeded['expected'])
        result['runs'] = runs
        result['with_s'] = [r['s'] for r in runs if r['neutron']]
        result['without_s'] = [r['s'] for r in runs if not r['neutron']]
        log('port read against listings of every port')
        result['port_reads'] = measure.port_reads(clients, repeat)
    finally:
        sandbox.stop()
    result['load_end'] = os.getloadavg()
    return result


def _seeded_found(report, expected, nics):
    """Seeded verdicts the report has: Nova's, and the QoS servers' NIC
    rows (``ok``)."""
    found = {(f.consumer, f.provider): f.verdict for f in report.findings}
    return {'nova': sum(found.get((c, p)) == v for c, p, v in expected),
            'nova_of': len(expected),
            'nic_ok': sum(found.get((c, p)) == v for c, p, v in nics),
            'nic_of': len(nics)}


def neutron_table(results):
    med = measure.median
    head = ('servers', 'hyp', 'ports (QoS)', 'without Neutron s',
            'with Neutron s', 'with/without', 'req without / with',
            'port read s', 'req', 'plain listing s', 'req',
            'fields listing s', 'req', 'read/plain', 'seeded verdicts found',
            'NIC rows ok', 'with <= 1.10x without')
    rows = []
    for r in results:
        without, with_ = med(r['without_s']), med(r['with_s'])
        reads = r['port_reads']
        req = {n: [x['requests'] for x in r['runs'] if x['neutron'] is n]
               for n in (False, True)}
        read = med(reads['resource_ports']['s'])
        plain = med(reads['plain_listing']['s'])
        v = r['verdicts']
        rows.append((
            str(r['size']), str(r['hosts']),
            '%d (%d)' % (r['ports'], r['qos_ports']), _fmt(without),
            _fmt(with_), '%.3f' % (with_ / without),
            '%d / %d' % (med(req[False]), med(req[True])), _fmt(read),
            str(reads['resource_ports']['requests']), _fmt(plain),
            str(reads['plain_listing']['requests']),
            _fmt(med(reads['fields_listing']['s'])),
            str(reads['fields_listing']['requests']),
            '%.2f' % (read / plain),
            '%d/%d' % (v['nova'], v['nova_of']),
            '%d/%d' % (v['nic_ok'], v['nic_of']),
            _verdict(with_ <= 1.1 * without, '%.3fx' % (with_ / without))))
    out = [_table(head, rows)]
    sizes = [(s, 'resource_ports_page_%d' % s) for s in measure.PAGE_SIZES]
    head = ('servers',) + tuple(
        'page %s s (req)' % (size or 'none') for size, _ in sizes)
    rows = []
    for r in results:
        reads = r['port_reads']
        cells = []
        for size, name in sizes:
            read = reads.get(name) or reads['resource_ports']
            cells.append('%s (%d)' % (_fmt(med(read['s'])),
                                      read['requests']))
        rows.append((str(r['size']), *cells))
    out.append(_table(head, rows))
    for r in results:
        out.append('%d: runs (s, in order) %s; load average %s at start, '
                   '%s at end' % (
                       r['size'], ', '.join(
                           '%s %s' % ('with' if x['neutron'] else 'without',
                                      _fmt(x['s'])) for x in r['runs']),
                       _load(r['load_start']), _load(r['load_end'])))
        check = r['api_check']
        out.append('%d: GET /v2.0/ports?device_id=%s: %d port(s), '
                   'resource_request %s, binding:profile.allocation on the '
                   "host's br-phys: %s" % (
                       r['size'], check['server'], check['ports'],
                       check['resources'],
                       'yes' if check['placed_on_nic'] else 'NO'))
    return '\n\n'.join(out)


def _load(load):
    return '/'.join('%.2f' % x for x in load)


def _round(value, digits=1):
    return '-' if value is None else round(value, digits)


def _fmt(seconds):
    if seconds < 1:
        return '%.3f' % seconds
    return '%.2f' % seconds


def tables(results):
    med = measure.median
    head = ('servers', 'hyp', 'cold sweep s', 'req', 'floor s',
            'cold/floor', 'peak MB', 'refresh s', 'refresh/cold',
            'refresh req', 'warm page s', 'nova-manage s',
            'get_providers s', 'refresh==full', 'agree nova-manage',
            'pickle MB/10k')
    rows = []
    for r in results:
        cold, floor = med(r['cold_s']), med(r['floor_s'])
        refresh = med(r['refresh_s'])
        a = r['agreement']
        rows.append((
            str(r['size']), str(r['hosts']), _fmt(cold), str(r['requests']),
            _fmt(floor), '%.2f' % (cold / floor),
            '%.0f' % (r['peak_bytes'] / 2 ** 20), _fmt(refresh),
            '%.1f%%' % (100 * refresh / cold),
            '%d' % med(r['refresh_requests']),
            _fmt(r['page']['warm_page_median_s']),
            _fmt(med(r['nova_manage_s'])),
            _fmt(r['page']['get_providers_median_s']),
            'yes' if r['refresh_equals_full'] else 'NO',
            '%d=%d' % (a['ours'], a['nova_manage']) if
            a['ours'] == a['nova_manage'] == a['both'] else
            '%d/%d both %d' % (a['ours'], a['nova_manage'], a['both']),
            '%.1f' % (r['snapshot_bytes'] * 10000 / r['size'] / 2 ** 20)))
    out = [_table(head, rows)]
    head2 = ('servers', 'seed s', 'restore s', 'cold page s',
             'report warm s', 'rows/listed', 'list paged s', 'list by host s',
             'nova-manage only (our verdict)', 'seeded verdicts found')
    rows = []
    for r in results:
        page = r['page']
        rows.append((
            str(r['size']), str(_round(r['seed_s'])),
            str(_round(r['restore_s'])), _fmt(page['cold_page_s']),
            _fmt(measure.median(page['warm_report_s'])),
            '%s/%s' % (page['rows'], page['attention']),
            *((_fmt(med(r['list_serial_s'])), _fmt(med(r['list_by_host_s'])))
              if 'list_serial_s' in r else ('-', '-')),
            ', '.join('%s %d' % kv for kv in sorted(
                r['agreement']['only_nova_manage_our_verdicts'].items())) or
            '-',
            '%d/%d' % (r['seeded_verdicts_found'], r['seeded_verdicts'])))
    out.append(_table(head2, rows))
    head3 = ('servers', 'cold <= 1.05x floor', 'warm page < 0.5 s',
             'refresh <= 10% cold', 'refresh <= 0.5x nova-manage',
             'refresh == full', 'sweeper < 1 GB resident')
    rows = []
    for r in results:
        cold, refresh = med(r['cold_s']), med(r['refresh_s'])
        nova_manage = med(r['nova_manage_s'])
        warm = r['page']['warm_page_median_s']
        rss = r['page'].get('sweeper_peak_rss_mb')
        rows.append((
            str(r['size']),
            _verdict(cold <= 1.05 * med(r['floor_s']),
                     '%.2fx' % (cold / med(r['floor_s']))),
            _verdict(warm < 0.5, _fmt(warm) + ' s'),
            _verdict(refresh <= 0.1 * cold, '%.1f%%' % (100 * refresh / cold)),
            _verdict(refresh <= 0.5 * nova_manage, '%.2fx: %s vs %s s' % (
                refresh / nova_manage, _fmt(refresh), _fmt(nova_manage))),
            _verdict(r['refresh_equals_full'], '%d rounds' % len(
                r['rounds'])),
            _verdict(rss < 1024, '%.0f MB' % rss) if rss else '-'))
    out.append(_table(head3, rows))
    head4 = ('servers', 'cold page s', 'first sweep s',
             'pages during it (max s)', 'refresh click s',
             'pages during refresh (max index / hypervisor s)',
             'after refresh (index / hypervisor s)', 'warm page s',
             'hypervisor page (first / warm s)', 'cron refresh s',
             'cron wall s', 'cron/cold', 'every page < 0.5 s')
    rows = []
    for r in results:
        page = r['page']
        pages = [page['cold_page_s'], page['first_loaded_page_s'],
                 page['refresh_click_s'], page['first_detail_page_s'],
                 page['after_refresh_page_s'],
                 page['after_refresh_detail_page_s'], *page['sweep_page_s'],
                 *page['warm_page_s'], *page['warm_detail_page_s']]
        pages += [s for s in (page['refresh_page_max_s'],
                              page['refresh_detail_page_max_s'])
                  if s is not None]
        cron = med(r['cron_s']) if r.get('cron_s') else None
        rows.append((
            str(r['size']), _fmt(page['cold_page_s']),
            _fmt(page['first_sweep_s']),
            '%d (%s)' % (page['sweep_pages'], _fmt(page['sweep_page_max_s'])
                         if page['sweep_page_max_s'] is not None else '-'),
            _fmt(page['refresh_click_s']),
            '%d (%s / %s)' % (page['refresh_pages'], *(
                _fmt(v) if v is not None else '-'
                for v in (page['refresh_page_max_s'],
                          page['refresh_detail_page_max_s']))),
            '%s / %s' % (_fmt(page['after_refresh_page_s']),
                         _fmt(page['after_refresh_detail_page_s'])),
            _fmt(page['warm_page_median_s']),
            '%s / %s' % (_fmt(page['first_detail_page_s']),
                         _fmt(med(page['warm_detail_page_s']))),
            _fmt(cron) if cron is not None else '-',
            _fmt(med(r['cron_wall_s'])) if cron is not None else '-',
            '%.1f%%' % (100 * cron / med(r['cold_s'])) if cron is not None
            else '-',
            _verdict(max(pages) < 0.5, 'max %s s' % _fmt(max(pages)))))
    out.append(_table(head4, rows))
    head5 = ('servers', 'Nova listings raw s', 'with novaclient s',
             'novaclient extra s', 'extra / cold sweep')
    rows = []
    for r in results:
        if 'nova_raw_s' not in r:
            continue
        extra = r['nova_novaclient_s'] - r['nova_raw_s']
        rows.append((
            str(r['size']), _fmt(r['nova_raw_s']),
            _fmt(r['nova_novaclient_s']), '%.2f' % extra,
            '%.1f%%' % (100 * extra / med(r['cold_s']))))
    if rows:
        out.append(_table(head5, rows))
    return '\n\n'.join(out)


def _verdict(met, detail):
    return '%s (%s)' % ('met' if met else 'MISSED', detail)


def _table(head, rows):
    widths = [max(len(head[i]), *(len(row[i]) for row in rows))
              for i in range(len(head))]
    line = lambda cells: '| ' + ' | '.join(  # noqa: E731
        c.rjust(w) for c, w in zip(cells, widths)) + ' |'
    return '\n'.join([line(head), '|' + '|'.join(
        '-' * (w + 1) + ':' for w in widths) + '|'] + [line(r) for r in rows])


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m bench',
                                     description=__doc__.split('\n\n')[0])
    parser.add_argument('--sizes', default='1000,5000,10000',
                        help='comma list of server counts')
    parser.add_argument('--repeat', type=int, default=3,
                        help='runs per timing (the median is shown)')
    parser.add_argument('--cache-dir', default=CACHE,
                        help='seeded clouds and compressed static files')
    parser.add_argument('--json', help='write the raw results here')
    parser.add_argument('--neutron', action='store_true',
                        help='only the sweep with and without a real '
                        "Neutron's ports, and the port read")
    parser.add_argument('--no-listings', dest='listings',
                        action='store_false',
                        help="without the Nova listings' timings (raw REST "
                        'against python-novaclient, paged against split by '
                        'host): a diagnosis, not a target, and most of the '
                        'time at 100,000 servers')
    parser.add_argument('--gc-freeze', action='store_true',
                        help="the page process freezes Horizon's objects "
                        'once warm, as doc/source/operations.md shows')
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(',') if s.strip()]
    results = []
    if args.neutron:
        for size in sizes:
            log('size %d, with Neutron' % size)
            results.append(bench_neutron(size, args.repeat, args.cache_dir))
            if args.json:
                with open(args.json, 'w') as f:
                    json.dump(results, f, indent=2)
        print(neutron_table(results))
        return 0
    for n, size in enumerate(sizes):
        log('size %d' % size)
        results.append(bench_size(size, args.repeat, args.cache_dir,
                                  static_ready=n > 0,
                                  listings=args.listings,
                                  gc_freeze=args.gc_freeze))
        if args.json:
            with open(args.json, 'w') as f:
                json.dump(results, f, indent=2)
    print(tables(results))
    return 0


if __name__ == '__main__':
    sys.exit(main())
