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

"""Restores (use case): putting journaled changes back, previewed first."""

from orphan_dashboard.writing import journal
from orphan_dashboard.writing import restore as restore_writes


def restorable(cloud, entries):
    """``{subject: restorable entry ids}`` of ``entries``' subjects."""
    return journal.restorable(cloud, {e.subject for e in entries})


def preview(clients, entries, restorable_):
    """``[(entry, row)]``: a fresh restore plan per entry, with what Nova
    says of its consumer now in the row's notes and its server's name."""
    rows = restore_writes.preview_restore(clients.placement, entries,
                                          restorable_, clients.network)
    notes, servers = restore_writes.restore_notes(
        clients.placement, clients.nova, entries, clients.network)
    for entry, row in rows:
        row.notes = notes.get(entry.id, ())
        row.server = servers.get(entry.consumer)
    return rows


def restore(clients, journal_, entries, confirmed, restorable_):
    """Put each entry's subject back as ``confirmed`` previewed it;
    journaled as well."""
    return restore_writes.restore(clients.placement, journal_, entries,
                                  confirmed, restorable_, clients.network)


def changes_providers(entries):
    """Whether restoring ``entries`` re-creates or deletes providers."""
    return any(e.kind != e.ALLOCATIONS for e in entries)
