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

"""Restores (use case): putting journaled changes back, previewed first.

A restore is previewed from a fresh read and written only if the plan is
still the one the operator confirmed, journaled like any repair
(:func:`write.allocations`), so it can be undone too.
"""

from orphan_dashboard.audit.reasons import reason as why
from orphan_dashboard.writing import journal
from orphan_dashboard.writing import providers
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import restore as restore_writes
from orphan_dashboard.writing import write


def restorable(cloud, entries):
    """``{subject: restorable entry ids}`` of ``entries``' subjects."""
    return journal.restorable(cloud, {e.subject for e in entries})


def preview(clients, entries, restorable_):
    """``[(entry, row)]``: a fresh restore plan per entry, with what Nova
    says of its consumer now in the row's notes and its server's name."""
    rows = restore_writes.preview_restore(clients, entries, restorable_)
    notes, servers = restore_writes.restore_notes(clients, entries)
    for entry, row in rows:
        row.notes = notes.get(entry.id, ())
        row.server = servers.get(entry.consumer)
    return rows


def restore(clients, journal_, entries, confirmed, restorable_):
    """Put each entry's subject back as it was before; one outcome each.

    ``confirmed`` maps an entry id to the plan the operator confirmed.  A
    restore is itself journaled, so it can be undone too.
    """
    outcomes = []
    for entry, row in restore_writes.preview_restore(clients, entries,
                                                     restorable_):
        expected = confirmed.get(entry.id)
        if row.error:
            outcomes.append(write.Outcome(row.selection, write.SKIPPED,
                                          row.error))
        elif expected is None or row.plan != expected:
            outcomes.append(write.Outcome(row.selection, write.SKIPPED,
                                          why('restore.changed'), row.plan))
        elif isinstance(row.plan, repair.ProviderPlan):
            outcomes.append(providers.recreate_provider(
                clients.placement, journal_, row.plan, entry))
        else:
            outcomes.append(write.allocations(
                clients.placement, journal_, row.plan, row.selection,
                restores=entry, network_client=clients.network))
    return outcomes


def changes_providers(entries):
    """Whether restoring ``entries`` re-creates or deletes providers."""
    return any(e.kind != e.ALLOCATIONS for e in entries)
