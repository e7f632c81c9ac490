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

"""Reasons as codes: every message used, each part translated, all of them
extractable with the shipped Babel configuration."""

import pathlib
import pickle
import re

from babel.messages import frontend
from babel.messages import pofile
import pytest

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import messages
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons
from tests.unit.cloud import Cloud
from tests.unit.cloud import uid

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / 'orphan_dashboard'
CODE = re.compile(r"""\b(?:why|reason)\(\s*'([a-z_.]+)'""")
NAMED_CODE = re.compile(r"""^[A-Z_]+ = '([a-z_]+\.[a-z_.]+)'$""", re.M)
"""A code named once where a rule gives it and a check compares it."""


def _used_codes():
    used = set()
    for path in PACKAGE.rglob('*.py'):
        text = path.read_text()
        used |= set(CODE.findall(text))
        used |= set(NAMED_CODE.findall(text)) & set(messages.MESSAGES)
    used |= {'action.' + a for a in m.ACTIONS + (
        m.RESTORE, m.DELETE_PROVIDER, m.DELETE_SERVICE)}
    used |= {'verdict.' + v for v in m.VERDICTS}
    return used


def test_every_message_is_used_and_every_code_has_one():
    used = _used_codes()
    assert used - set(messages.MESSAGES) == set()
    assert set(messages.MESSAGES) - used == set()


def test_unknown_code_is_refused():
    try:
        reasons.reason('no.such.code')
    except KeyError as exc:
        assert 'no.such.code' in str(exc)
    else:
        raise AssertionError('an unknown code was accepted')


def _marked(message):
    return '«%s»' % message


def test_every_part_of_a_nested_reason_goes_through_gettext():
    cloud = Cloud()
    vm = cloud.server('vm', 'host2', status='VERIFY_RESIZE')
    cloud.allocate(vm, uid('host2'))
    mig = cloud.migration('mig', vm, 'finished', kind='resize',
                          source='host1', dest='host2')
    cloud.allocate(mig, uid('host1'))
    finding = classify.Auditor(cloud.snapshot(), min_age=600).finding(
        mig, uid('host1'))
    assert finding.reason.code == 'protected.source_awaiting_confirm'
    assert str(finding.reason) == (
        'source side of resize %s (host1 → host2) of server vm (%s), '
        'awaiting confirm or revert' % (mig, vm))
    # The sentence and the migration inside it are each translated.
    assert finding.reason.render(_marked) == (
        '«source side of «resize %s (host1 → host2)» of server vm (%s), '
        'awaiting confirm or revert»' % (mig, vm))
    assert finding.nova.render(_marked) == '«resize host1 → host2 (finished)»'


def test_a_reason_is_plain_data():
    one = reasons.reason('moved', host='host2')
    assert one == reasons.reason('moved', host='host2')
    assert len({one, reasons.reason('moved', host='host2')}) == 1
    assert reasons.render('as it is') == 'as it is'
    assert str(reasons.listing([])) == 'nothing'
    assert str(reasons.listing(['a', reasons.action_name(m.TRIM), 'c'])) == (
        'a, trim to current host, c')
    assert reasons.action_name('not-an-action') == 'not-an-action'


@pytest.mark.horizon
def test_every_message_is_extracted_by_the_shipped_babel_config(tmp_path):
    # The config names Horizon's own template extractor
    # (translators work on the current Horizon; Horizon 24 has none).
    pytest.importorskip('horizon.utils.babel_extract_django')
    pot = tmp_path / 'django.pot'
    frontend.CommandLineInterface().run([
        'pybabel', '-q', 'extract', '-F', str(ROOT / 'babel-django.cfg'),
        '--input-dirs', str(PACKAGE), '-o', str(pot)])
    with open(pot, 'rb') as f:
        ids = {message.id if isinstance(message.id, str) else message.id[0]
               for message in pofile.read_po(f)}
    assert set(messages.MESSAGES.values()) - ids == set()
    # Python's gettext_lazy and the templates' {% trans %} too.
    assert 'Orphaned Allocations' in ids
    assert 'Not possible:' in ids


def test_a_listing_of_thousands_renders_in_every_form():
    """A decommission preview lists every server of an Ironic compute
    service: thousands of parts, one sentence, translated part by part."""
    parts = ['vm-%d' % i for i in range(5000)]
    listed = reasons.listing(parts)
    assert str(listed) == ', '.join(parts)
    marked = listed.render(_marked)
    assert marked.startswith('«vm-0, «vm-1, «vm-2, ')
    assert marked.endswith('vm-4998, vm-4999' + '»' * 4999)
    blocker = reasons.reason('blocker.servers', servers=listed)
    assert str(blocker).endswith(', vm-4999')
    # Still plain data: compared, hashed and pickled (the cache) whole.
    assert listed == reasons.listing(iter(parts))
    assert len({listed, reasons.listing(parts)}) == 1
    assert pickle.loads(pickle.dumps(blocker)) == blocker


def test_a_nested_listing_cached_before_still_renders():
    nested = reasons.Reason('list', (('first', 'a'), ('rest', reasons.Reason(
        'list', (('first', 'b'), ('rest', 'c'))))))
    assert str(nested) == str(reasons.listing('abc')) == 'a, b, c'


def _cell_report(**fields):
    import types
    return types.SimpleNamespace(**dict(dict(
        skipped_hosts=('host5',), down_cell_servers=2, unconfirmed=(),
        cell_wait=0, cell_slow=False), **fields))


def test_a_down_cell_says_what_it_cost_and_only_what_it_hides():
    """Nova answers at once without a cell it cannot reach: no "after 0
    s"; the providers Nova could not confirm are named only where there
    are some."""
    at_once = str(reasons.down_cells(_cell_report()))
    assert at_once == (
        'A cell is down: Nova could not reach it and answered at once '
        'without it, so this audit is partial. Until it is back, these are '
        'protected: the allocations on the compute hosts of the down cells: '
        'host5 (their servers Nova returned as partial records: 2); and '
        'every consumer Nova does not know.')
    waited = str(reasons.down_cells(_cell_report(
        cell_wait=12, unconfirmed=('node9',))))
    assert 'Nova answered without it after 12 s' in waited
    assert ('could not confirm as compute nodes: node9; and every '
            'consumer') in waited
    slow = str(reasons.down_cells(_cell_report(cell_wait=5, cell_slow=True)))
    assert slow.startswith('A cell is slow: Nova waited its whole cell '
                           'timeout for it and answered without it after '
                           '5 s')
    assert 'compute hosts of the slow cells: host5' in slow
    assert 'could not confirm' not in slow
