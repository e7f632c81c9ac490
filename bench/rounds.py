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

"""``python -m bench.rounds --size 1000 --rounds 3``: where a refresh's
time goes, without Horizon.

On the bench cloud of ``--size`` servers: a cold sweep, two refreshes
with nothing changed (what every refresh costs: the token, the listings,
judging the consumers), then ``--rounds`` times 1 % churn, a refresh (its
requests by kind) and a full sweep that must find the same.  Each
refresh is set beside the floor of its own requests (the same requests
from a bare session, on the sweep's schedule: :func:`measure.floor`),
with the part of it that is its report (which judges again only the
consumers that may have changed: how many is printed), timed again
alone, and the loading of the last report's findings a sweep does
beside it (:func:`measure.findings_load`).  Prints one line each and
the medians, then the time of ``nova-manage placement audit`` on the
same cloud, a reference: it reads Nova's databases in its own process.
"""
import argparse
import collections
import re
import statistics
import sys
import time

from bench import __main__ as bench
from bench import measure
from orphan_dashboard.audit import refresh as reconsidering
from orphan_dashboard.reading import refresh as incremental

UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  r'[0-9a-f]{12}')


def kinds(requests):
    """``{path with each uuid as {u}: count}``, the most frequent first."""
    return dict(collections.Counter(
        UUID.sub('{u}', re.sub(r'^https?://[^/]+', '', url).split('?')[0])
        for _method, url, _version in requests).most_common())


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m bench.rounds')
    parser.add_argument('--size', type=int, default=1000)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--cache-dir', default=bench.CACHE)
    args = parser.parse_args(argv)
    sandbox = bench.BenchSandbox(args.size, args.cache_dir)
    sandbox.start()
    try:
        clients = measure.Clients(sandbox)
        seconds, snapshot, report, requests = measure.cold_sweep(clients)
        print('cold sweep %.2f s, %d requests' % (seconds, len(requests)))
        time.sleep(incremental.CLOCK_MARGIN.total_seconds())
        for _ in range(2):
            seconds, snapshot, report, requests = measure.refresh(
                clients, snapshot, report)
            print('refresh, nothing changed: %.3f s, %d requests (floor '
                  '%.3f s)' % (seconds, len(requests),
                               measure.floor(clients, requests)))
        times, floors, audits, loads = [], [], [], []
        for i in range(args.rounds):
            sandbox.control('POST', '/bench/churn?count=%d&seed=%d' % (
                max(1, args.size // 100), 100 + i))
            time.sleep(incremental.CLOCK_MARGIN.total_seconds())
            seconds, fresh, fresh_report, requests = measure.refresh(
                clients, snapshot, report)
            floors.append(measure.floor(clients, requests))
            audits.append(measure.timed(lambda: measure.report_after(
                snapshot, report, fresh))[0])
            again = len(fresh.consumers) - len(reconsidering.reusable(
                snapshot, fresh, lambda: report.findings))
            loads.append(measure.findings_load(snapshot, report))
            _full_s, _full, full_report, _ = measure.cold_sweep(clients)
            same = (measure.findings(fresh_report) ==
                    measure.findings(full_report) and
                    measure.usage(fresh_report) ==
                    measure.usage(full_report))
            print('round %d: refresh %.3f s (its report %.3f s, judging '
                  'again %d of %d consumers; the last findings loaded '
                  '%.3f s), %d requests (floor %.3f s: %.2fx), %s full '
                  'sweep; %s'
                  % (i, seconds, audits[-1], again, len(fresh.consumers),
                     loads[-1], len(requests), floors[-1],
                     seconds / floors[-1],
                     'same as a' if same else 'NOT the same as a',
                     kinds(requests)))
            times.append(seconds)
            snapshot, report = fresh, fresh_report
        print('median refresh %.3f s, its report %.3f s, the last findings '
              'loaded %.3f s, floor of its requests %.3f s, refresh / floor '
              '%.2fx, with the load %.2fx' % (
                  statistics.median(times), statistics.median(audits),
                  statistics.median(loads), statistics.median(floors),
                  statistics.median(t / f for t, f in zip(times, floors)),
                  statistics.median((t + load) / f for t, load, f in zip(
                      times, loads, floors))))
        seconds, (_status, body) = measure.timed(lambda: sandbox.control(
            'POST', '/nova-manage/placement-audit', timeout=1800))
        print('nova-manage placement audit %.3f s (exit %d), a reference'
              % (seconds, body['exit_code']))
    finally:
        sandbox.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
