"""Write-ahead journal of every Placement write, and what Restore needs.

:meth:`Journal.begin` records the consumer's full allocations before and the
intended after *before* the write; :meth:`Journal.finish` records the
outcome.  An entry left ``pending`` is a write whose answer never came back
(the process died, or the network did): its effect can be read from
Placement, and Restore handles it like any other entry.
"""

import csv
import io
import json
import os
import threading

from django.conf import settings
from django.core import management
from django.db import transaction
from django.utils import timezone

DATABASE = 'orphan_journal'
APP_LABEL = 'orphan_dashboard'

_migrated = set()
_migrate_lock = threading.Lock()


class Router:
    """Keeps the journal in its own database and nothing else there."""

    def db_for_read(self, model, **hints):
        if model._meta.app_label == APP_LABEL:
            return DATABASE
        return None

    db_for_write = db_for_read

    def allow_relation(self, obj1, obj2, **hints):
        return None

    def allow_migrate(self, db, app_label, **hints):
        if db == DATABASE or app_label == APP_LABEL:
            return db == DATABASE and app_label == APP_LABEL
        return None


def ensure_ready():
    """Create the embedded database and apply migrations once per process."""
    if DATABASE in _migrated:
        return
    with _migrate_lock:
        if DATABASE in _migrated:
            return
        db = settings.DATABASES[DATABASE]
        if db['ENGINE'].endswith('sqlite3') and db['NAME'] != ':memory:':
            os.makedirs(os.path.dirname(db['NAME']) or '.', exist_ok=True)
        management.call_command('migrate', APP_LABEL, database=DATABASE,
                                verbosity=0, interactive=False)
        _migrated.add(DATABASE)


def _model():
    from orphan_dashboard.models import JournalEntry
    ensure_ready()
    return JournalEntry


class Journal:
    """The journal as one actor (a Horizon user or a CLI run) writes it."""

    def __init__(self, source, user_id='', user_name='', project_id='',
                 project_name=''):
        self.actor = dict(source=source, user_id=user_id or '',
                          user_name=user_name or '',
                          project_id=project_id or '',
                          project_name=project_name or '')

    @classmethod
    def for_request(cls, request):
        user = request.user
        return cls('panel', user.id, user.username, user.project_id,
                   user.project_name)

    def begin(self, plan, restores=None):
        """Durably record a write about to happen; returns its entry."""
        model = _model()
        with transaction.atomic(using=DATABASE):
            return model.objects.create(
                action=plan.action, verdict=plan.verdict, reason=plan.reason,
                provider=plan.provider, consumer=plan.consumer,
                consumer_project=plan.project_id, consumer_user=plan.user_id,
                generation=plan.generation, before=plan.before,
                after=plan.after, restores=restores, **self.actor)

    def finish(self, entry, status, message='', new_generation=None):
        entry.status = status
        entry.message = message
        entry.new_generation = new_generation
        entry.finished = timezone.now()
        entry.save(update_fields=['status', 'message', 'new_generation',
                                  'finished'])
        return entry


def entries(provider=None, consumer=None, limit=500):
    """Newest first; ``provider`` matches any provider an entry touched."""
    query = _model().objects.all()
    if consumer:
        query = query.filter(consumer=consumer)
    found = list(query[:limit * 4 if provider else limit])
    if provider:
        found = [e for e in found if provider in e.providers][:limit]
    return found


def get(entry_id):
    return _model().objects.get(pk=entry_id)


FIELDS = ('id', 'created', 'finished', 'source', 'user_name', 'user_id',
          'project_name', 'project_id', 'action', 'verdict', 'reason',
          'provider', 'consumer', 'consumer_project', 'consumer_user',
          'generation', 'before', 'after', 'status', 'new_generation',
          'message', 'restores_id')


def as_dict(entry):
    row = {f: getattr(entry, f) for f in FIELDS}
    for field in ('created', 'finished'):
        row[field] = row[field].isoformat() if row[field] else None
    return row


def export_json(found):
    return json.dumps([as_dict(e) for e in found], indent=2, sort_keys=True)


def export_csv(found):
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=FIELDS)
    writer.writeheader()
    for entry in found:
        row = as_dict(entry)
        row['before'] = json.dumps(row['before'], sort_keys=True)
        row['after'] = json.dumps(row['after'], sort_keys=True)
        writer.writerow(row)
    return out.getvalue()
