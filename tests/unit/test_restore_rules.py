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

"""Which journal entries may be restored and what a restore would bring
back (:mod:`audit.restore`), and the messages the shell shows."""

import types

from orphan_dashboard.audit import reasons
from orphan_dashboard.audit import restore
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid

H1, H2 = uid('host1'), uid('host2')
SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


# -- restore -----------------------------------------------------------------

def _row(entry_id, subject='c', restores=None, status='applied'):
    return {'id': entry_id, 'subject': subject, 'restores_id': restores,
            'status': status}


def test_in_effect_is_the_latest_change_and_the_newest_entry():
    # 3 restores 2; 1 is older: only 2 (undone, so 1 is next) and 3.
    rows = [_row(3, restores=2), _row(2), _row(1)]
    assert restore.in_effect(rows, 'applied') == {'c': {3, 1}}
    # A failed restore undoes nothing.
    rows = [_row(3, restores=2, status='failed'), _row(2), _row(1)]
    assert restore.in_effect(rows, 'applied') == {'c': {3, 2}}
    assert restore.in_effect([_row(5, 'a'), _row(4, 'b')], 'applied') == {
        'a': {5}, 'b': {4}}


class Entry(types.SimpleNamespace):
    SERVICE, PROVIDER, ALLOCATIONS = 'service', 'provider', 'allocations'
    REFUSED = 'refused'


def _entry(**fields):
    return Entry(**dict(dict(
        id=7, kind=Entry.ALLOCATIONS, status='applied', subject='c',
        changed_nothing=False, before={}), **fields))


def test_refusal_says_why_an_entry_cannot_be_restored():
    assert restore.refusal(_entry(), {7}) is None
    assert restore.restorable(_entry(), {7})
    assert not restore.restorable(_entry(), {8})
    said = {
        'service': restore.refusal(_entry(kind=Entry.SERVICE,
                                          before={'host': 'h1'}), {7}),
        'refused': restore.refusal(_entry(status='refused'), {7}),
        'nothing': restore.refusal(_entry(changed_nothing=True), {7}),
        'consumer': restore.refusal(_entry(), {8, 9}),
        'provider': restore.refusal(_entry(kind=Entry.PROVIDER), set()),
    }
    assert {k: str(v) for k, v in said.items()} == {
        'service': 'compute service h1 was deleted for good: a restore '
                   'does not re-create it',
        'refused': 'entry 7 changed nothing: Placement refused it',
        'nothing': 'entry 7 changed nothing: Placement answered it with an '
                   'error',
        'consumer': 'entry 7 is not the latest change of consumer c still '
                    'in effect (restore entry 8 or 9 first)',
        'provider': 'entry 7 is not the latest change of provider c still '
                    'in effect (restore entry - first)'}
    assert all(isinstance(v, reasons.Reason) for v in said.values())


def test_notes_say_what_nova_says_of_the_consumer_now():
    cloud = Cloud()
    ghost = uid('ghost')
    cloud.known.add(ghost)
    owner = cloud.server('owner', 'host2')
    cloud.allocate(owner, H2)
    ended = cloud.migration('ended', owner, 'error')
    snapshot = cloud.snapshot()

    def entry(consumer):
        return _entry(consumer=consumer, before={H1: SMALL},
                      before_project=None, before_user=None,
                      consumer_project='p', consumer_user='u')

    ghost_notes = list(map(str, restore.notes(snapshot, entry(ghost))))
    assert ghost_notes[0] == ('server %s is deleted: restoring gives a '
                              'deleted server its allocations back' % ghost)
    assert ghost_notes[1].startswith('after the restore it would be '
                                     'deleted instance: ')
    (first, _would_be) = restore.notes(snapshot, entry(ended))
    assert str(first) == ('migration %s has ended (error): restoring puts '
                          'back a stale migration allocation' % ended)
    assert str(restore.unreadable('boom')).startswith(
        'Nova could not be asked what this consumer is now (boom)')


def test_sentences_join_clauses_with_semicolons_each_translated():
    parts = [reasons.reason('write.done'), 'b', 'c']
    assert str(reasons.sentences(parts)) == 'done; b; c'
    assert reasons.sentences(['a']) == 'a'
    french = {'done': 'fait', '%(first)s; %(rest)s': '%(first)s ; %(rest)s'}
    assert reasons.sentences(parts).render(
        lambda text: french.get(text, text)) == 'fait ; b ; c'
