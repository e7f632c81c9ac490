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

"""The way down from a confirm to Placement: the modules of ours a row's
repair passes through, from the form that takes the click to the
Placement PUT, each entered once and few of them (``doc/source/
contributor.md``, *Where the code lives*)."""

import pathlib
import traceback
from unittest import mock
from urllib import parse

from orphan_dashboard.api import placement
from orphan_dashboard.audit import model as m
from tests.views.base import AdminViewTests
from tests.views.base import detail
from tests.views.base import REPAIR
from tests.views.base import signed_rows
from tests.views.fakes import FakeCloud
from tests.views.fakes import one_of_each

PACKAGE = pathlib.Path(placement.__file__).parents[1]

FORMS = 'orphan_dashboard.content.orphaned_allocations.forms'


def modules_walked(stack, start=FORMS):
    """The modules of ours a call ``stack`` passes through, from the
    first frame in ``start`` on: one name per stay, so a module named
    twice was left and entered again."""
    walked = []
    for frame in stack:
        path = pathlib.Path(frame.filename)
        if PACKAGE not in path.parents:
            continue
        name = '.'.join(path.relative_to(PACKAGE.parent).with_suffix(
            '').parts)
        if (walked or name == start) and walked[-1:] != [name]:
            walked.append(name)
    return walked


class WalkTests(AdminViewTests):
    databases = {'default', 'orphan_journal'}

    def test_a_repair_goes_down_to_placement_once_through_each_module(self):
        snapshot, rows = one_of_each()
        cloud = FakeCloud(snapshot)
        self.patched(*cloud.patches())
        stacks = []

        def put(*args):
            stacks.append(traceback.extract_stack())
            return placement_put(*args)

        placement_put = cloud.put_allocations
        consumer, provider = rows[m.MOVED]
        with mock.patch.object(placement, 'put_allocations', put):
            preview = self.client.get('%s?%s' % (REPAIR, parse.urlencode({
                'sel': '%s:%s:%s' % (consumer, provider, m.TRIM),
                'next': detail(provider)})))
            res = self.client.post(REPAIR, {'rows': signed_rows(preview)})
        self.assertEqual(302, res.status_code)
        self.assertEqual(1, len(stacks))
        walked = modules_walked(stacks[0]) + [placement.__name__]
        self.assertEqual(FORMS, walked[0])
        self.assertEqual(len(walked), len(set(walked)), walked)
        self.assertLessEqual(len(walked), 10, walked)


def test_a_module_left_and_entered_again_is_named_twice():
    frames = [traceback.FrameSummary(str(PACKAGE / path), 1, 'f')
              for path in ('views.py',
                           'content/orphaned_allocations/forms.py',
                           'content/orphaned_allocations/forms.py',
                           'writing/write.py', 'writing/journal.py',
                           'writing/write.py')]
    assert modules_walked(frames) == [
        FORMS, 'orphan_dashboard.writing.write',
        'orphan_dashboard.writing.journal', 'orphan_dashboard.writing.write']
