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

"""What a repair leaves in Cyborg: which writes ask it, what the preview
says of a server's ARQs, and that Cyborg absent, down or holding nothing
bound neither hides a note nor invents one."""

import dataclasses
import types
from unittest import mock

from keystoneauth1 import exceptions as ks_exc
import pytest

from orphan_dashboard.audit import accelerators
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons
from orphan_dashboard import conf
from orphan_dashboard.operations import repairs

SERVER = '3f0c8a35-1111-4e3a-9b55-1c1f0c7d2a01'
ARQ = '9d6a0b8e-2222-4f6b-8a3c-7e5d4c3b2a10'
URL = 'http://cyborg/v2/accelerator_requests?instance=' + SERVER


def plan(after, before=None):
    before = before or {'host1': {'VCPU': 1}, 'dev1': {'FPGA': 1}}
    return m.Plan(m.DELETE, SERVER, 'host1', 'deleted_instance', '', 3,
                  'p', 'u', before, after)


def arq(state='Bound', uuid=ARQ):
    return {'uuid': uuid, 'state': state, 'device_profile_name': 'sb-fpga',
            'hostname': 'host1', 'instance_uuid': SERVER}


def test_only_a_write_that_empties_the_server_asks_cyborg():
    assert accelerators.asked(plan({}))
    assert not accelerators.asked(plan({'host1': {'VCPU': 1}}))
    assert not accelerators.asked(None)
    assert not accelerators.asked(dataclasses.replace(
        plan({}), verdict=m.STALE_MIGRATION))


def test_a_bound_arq_is_named_with_the_call_nova_would_make():
    (note,) = accelerators.notes([arq(), arq('Unbound', 'other')], URL)
    text = reasons.render(note)
    assert text.startswith('Cyborg keeps accelerator requests bound')
    assert '%s (Bound, device profile sb-fpga, on host1)' % ARQ in text
    assert 'other' not in text
    assert "curl -X DELETE '%s'" % URL in text
    assert 'X-Service-Token: $SERVICE_TOKEN' in text


@pytest.mark.parametrize('found', [[], [arq('Unbound')], [arq('Initial')]])
def test_nothing_bound_says_nothing(found):
    assert accelerators.notes(found, URL) == ()


def test_an_arq_whose_state_cyborg_did_not_say_is_named():
    unsaid = arq()
    del unsaid['state']
    (note,) = accelerators.notes([unsaid], URL)
    assert '%s (-, device profile sb-fpga' % ARQ in reasons.render(note)


def test_cyborg_unread_is_unknown_not_nothing():
    (note,) = accelerators.notes(None, None)
    assert note.code == 'accelerator.unread'


@dataclasses.dataclass
class Item:
    plan: object
    notes: tuple = ()


class FakeCyborg:
    """A Cyborg adapter answering ``answer`` (a list of ARQs or an
    exception) for every server, counting what it was asked."""

    def __init__(self, answer):
        self.answer = answer
        self.asked = []

    def get(self, path, params=None):
        self.asked.append((path, params))
        if isinstance(self.answer, Exception):
            raise self.answer
        return types.SimpleNamespace(json=lambda: {'arqs': self.answer})

    def get_endpoint(self):
        return 'http://cyborg/v2/'


SETTINGS = conf.RunSettings(min_age=0)


def noted(answer, after=None):
    cyborg = FakeCyborg(answer)
    items = [Item(plan({} if after is None else after))]
    repairs.note_accelerators(types.SimpleNamespace(accelerator=cyborg),
                              items, SETTINGS)
    return cyborg, items[0].notes


def test_the_preview_reads_the_servers_arqs_and_notes_them():
    cyborg, (note,) = noted([arq()])
    assert cyborg.asked == [('/accelerator_requests', {'instance': SERVER})]
    assert URL in reasons.render(note)


def test_a_write_that_keeps_the_server_reads_nothing():
    cyborg, notes = noted([arq()], after={'host1': {'VCPU': 1}})
    assert cyborg.asked == [] and notes == ()


@pytest.mark.parametrize('fault', [ks_exc.ServiceUnavailable(),
                                   ks_exc.ConnectionError(),
                                   ks_exc.Forbidden()])
def test_cyborg_down_or_refusing_is_said(fault):
    _cyborg, (note,) = noted(fault)
    assert note.code == 'accelerator.unread'


def test_an_answer_without_its_list_is_unread():
    cyborg = FakeCyborg([])
    cyborg.get = lambda path, params=None: types.SimpleNamespace(
        json=lambda: {'error': 'proxy page'})
    items = [Item(plan({}))]
    repairs.note_accelerators(types.SimpleNamespace(accelerator=cyborg),
                              items, SETTINGS)
    assert [n.code for n in items[0].notes] == ['accelerator.unread']


def test_no_cyborg_in_the_catalog_is_no_note():
    _cyborg, notes = noted(ks_exc.EndpointNotFound())
    assert notes == ()
    items = [Item(plan({}))]
    repairs.note_accelerators(types.SimpleNamespace(accelerator=None),
                              items, SETTINGS)
    assert items[0].notes == ()


@pytest.mark.horizon     # the decommission's use case imports the journal
def test_a_decommissions_step_that_deletes_a_server_names_its_arqs():
    """host1 dead: the step deleting the server deleted behind Nova's
    back there says what Cyborg keeps for it; a step that keeps its
    server's allocation elsewhere, or deletes a migration's, reads
    nothing."""
    from orphan_dashboard.operations import decommission
    from tests.unit.staged import dead_host1
    from tests.unit.staged import H1

    cloud, who = dead_host1()
    cyborg = FakeCyborg([arq()])
    clients = types.SimpleNamespace(accelerator=cyborg)
    with mock.patch.object(decommission, 'read',
                           return_value=cloud.snapshot()), \
            mock.patch.object(repairs, 'note_capacity'):
        plan = decommission.preview(clients, H1, SETTINGS)
    noted = {step.plan.consumer: [n.code for n in step.notes]
             for step in plan.steps if step.plan}
    assert noted[who['ghost']] == ['accelerator.bound']
    assert who['stale'] in noted
    assert noted[who['evacuated']] == []
    asked = {params['instance'] for _path, params in cyborg.asked}
    assert who['evacuated'] not in asked and who['stale'] not in asked
