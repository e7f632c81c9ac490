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

"""The benchmark reads the index page as it is rendered: its "attention"
column is the count the page says; a slow page's trace says how much of
it the garbage collector took; its test client leaves the collector
nothing a Horizon behind a web server would not have."""

import gc
import time
import weakref

from django.test import Client
import requests

from bench import page
from orphan_dashboard.content.orphaned_allocations import service
from tests.views.base import AdminViewTests
from tests.views.base import helpers
from tests.views.base import Incidents
from tests.views.base import INDEX


class BenchPageTests(AdminViewTests):

    @helpers.create_mocks({service: ['report', 'capacity']})
    def test_the_bench_reads_how_many_hypervisors_need_attention(self):
        report = Incidents().report
        self.mock_report.return_value = report
        self.mock_capacity.return_value = None
        res = self.client.get(INDEX)
        attention = sum(1 for p in report.providers if p.needs_attention)
        self.assertGreater(attention, 1)
        self.assertEqual(attention, page.attention(res.content))

    @helpers.create_mocks({service: ['report', 'capacity']})
    def test_one_hypervisor_needing_attention(self):
        report = Incidents().report
        report.providers = [next(p for p in report.providers
                                 if p.needs_attention)]
        self.mock_report.return_value = report
        self.mock_capacity.return_value = None
        self.assertEqual(1, page.attention(self.client.get(INDEX).content))

    @helpers.create_mocks({service: ['report', 'capacity']})
    def test_before_the_first_sweep_nothing_to_read(self):
        self.mock_report.return_value = None
        self.mock_capacity.return_value = None
        self.assertIsNone(page.attention(self.client.get(INDEX).content))


def test_a_slow_pages_trace_counts_the_garbage_collectors_passes():
    send = requests.Session.request
    tracer = page._Tracer()
    try:
        def load():
            gc.collect()
            time.sleep(page.SLOW + 0.05)
        tracer.page('refresh', time.perf_counter(), 'index', load, None)
        tracer.page('refresh', time.perf_counter(), 'index', lambda: None,
                    None)
    finally:
        gc.callbacks.remove(tracer._collecting)
        requests.Session.request = send
    (slow,) = tracer.slow
    assert slow['gc_full'] >= 1
    assert 0 < slow['gc_s'] < slow['seconds']


def _finalizers():
    return len(weakref.finalize._registry)


def test_the_bench_leaves_no_finalizer_per_request():
    client = Client()
    client.get('/auth/login/')
    page.forget_reconnections(client)
    before = _finalizers()
    for _ in range(10):
        client.get('/auth/login/')
    assert _finalizers() - before >= 10
    page.forget_reconnections(client)
    assert _finalizers() <= before
    client.get('/auth/login/')
    page.forget_reconnections(client)
    assert _finalizers() <= before
