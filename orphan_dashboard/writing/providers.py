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

"""Deleting a provider and re-creating one (I/O), each journaled whole
first (:func:`write.provider`)."""

from orphan_dashboard.audit import model as m
from orphan_dashboard.writing import write


def delete_provider(placement_client, journal, plan, entry=None):
    """Journal a provider whole (unless ``entry`` already does), then
    delete it."""
    def begin():
        return entry or journal.begin_provider(
            m.DELETE_PROVIDER, plan.record, {}, 'provider %s' % plan.name)

    return write.provider(placement_client, journal, plan, begin)


def recreate_provider(placement_client, journal, plan, entry):
    """Re-create a deleted provider as its journal entry recorded it."""
    return write.provider(placement_client, journal, plan, lambda: (
        journal.begin_provider(m.RESTORE, {}, plan.record,
                               'provider %s' % plan.name, restores=entry)))
