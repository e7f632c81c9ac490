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

"""Which journal entries may be restored, and what a restore would
bring back (pure).

Journal entries are read by :mod:`orphan_dashboard.writing.journal`; an
entry here is anything with its fields (``id``, ``kind``, ``status``,
``subject``, ``before``...) and its kind and status names (``SERVICE``,
``REFUSED``...), as the journal's model has them.
"""

import dataclasses

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons
from orphan_dashboard.audit.reasons import reason as why


def in_effect(rows, applied):
    """``{subject: ids of the entries that may be restored}`` from journal
    ``rows`` (``{'id', 'subject', 'restores_id', 'status'}``, newest
    first), those that changed nothing left out; ``applied`` is the
    journal's status of a write that went through.

    Changes are undone the way an editor's undo works: the latest change
    still in effect can be restored, and so can the newest entry (when it
    is a restore, restoring it is a redo).  A change is in effect unless
    an odd number of applied restores goes back to it (a restore, a
    restore of that restore...).  An older change never jumps the queue:
    restoring it would clobber every change made since.
    """
    by_subject = {}
    for row in rows:
        by_subject.setdefault(row['subject'], []).append(row)
    found = {}
    for subject, rows in by_subject.items():
        undoes = {r['id']: r['restores_id'] for r in rows}

        def origin(entry_id):
            while undoes.get(entry_id):
                entry_id = undoes[entry_id]
            return entry_id

        toggles = {}
        for row in rows:
            if row['restores_id'] and row['status'] == applied:
                root = origin(row['id'])
                toggles[root] = toggles.get(root, 0) + 1
        latest = [r['id'] for r in rows if not r['restores_id'] and
                  toggles.get(r['id'], 0) % 2 == 0]
        found[subject] = {rows[0]['id']} | set(latest[:1])
    return found


def refusal(entry, allowed):
    """Why journal ``entry`` may not be restored (a reason), or None;
    ``allowed`` are the ids :func:`in_effect` gives its subject."""
    if entry.kind == entry.SERVICE:
        return why('restore.service', host=(entry.before or {}).get(
            'host', ''))
    if entry.status == entry.REFUSED:
        return why('restore.refused', entry=entry.id)
    if entry.changed_nothing:
        return why('write.changed_nothing', entry=entry.id)
    if entry.id not in allowed:
        first = dict(entry=entry.id, subject=entry.subject,
                     allowed=' or '.join(map(str, sorted(allowed))) or '-')
        if entry.kind == entry.PROVIDER:
            return why('restore.not_latest_provider', **first)
        return why('restore.not_latest_consumer', **first)
    return None


def restorable(entry, allowed):
    """``entry`` may be restored: its *before* can be put back."""
    return refusal(entry, allowed) is None


def unreadable(error):
    """The note of every restore when Nova could not be asked."""
    return why('restore.nova_unreadable', error=error)


def notes(snapshot, entry):
    """What Nova says of ``entry``'s consumer now (``snapshot``, read just
    before), and the verdict the restore would leave it with, when not
    ``ok``, whatever its age (the restore writes it anew: no minimum age
    would ever be met)."""
    found = []
    server = snapshot.servers.get(entry.consumer)
    migration = snapshot.migrations.get(entry.consumer)
    if server is None and entry.consumer in snapshot.known_instances:
        found.append(why('restore.deleted_server', server=entry.consumer))
    elif migration is not None and migration.status in m.MIGRATION_FINAL:
        found.append(why('restore.ended_migration',
                         migration=migration.uuid, status=migration.status))
    restored = dataclasses.replace(snapshot, consumers={
        **snapshot.consumers, entry.consumer: m.Consumer(
            entry.consumer, None, dict(entry.before),
            entry.before_project or entry.consumer_project,
            entry.before_user or entry.consumer_user)})
    auditor = classify.Auditor(restored, min_age=0)
    for finding in auditor.consumer_findings(entry.consumer):
        if finding.problem:
            found.append(why('restore.would_be',
                             verdict=reasons.verdict_name(finding.verdict),
                             reason=finding.reason))
            break
    return tuple(found)
