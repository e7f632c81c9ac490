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

"""Write-ahead journal of every Placement write, and what Restore needs.

:meth:`Journal.begin` records the consumer's full allocations before and the
intended after *before* the write; :meth:`Journal.finish` records the
outcome.  An entry left ``pending`` is a write whose outcome was never
recorded (the process died, or the journal did); one ``unknown``, a write
whose answer was lost and whose subject, read back, proved nothing either
way.  Both may have been applied: their effect can be read from
Placement, and Restore handles them like any other entry.
"""

import getpass
import os
import threading
import uuid

from django.conf import settings
from django.core import exceptions
from django.core import management
from django.db import models
from django.db import transaction
from django.utils import timezone

from orphan_dashboard.api import client
from orphan_dashboard.audit import restore
from orphan_dashboard import conf

DATABASE = conf.JOURNAL_DATABASE
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
        db = settings.DATABASES.get(DATABASE)
        if db is None:
            raise exceptions.ImproperlyConfigured(
                "DATABASES has no '%s' alias for the repair journal, so "
                "nothing is written: copy %s into openstack_dashboard/local/"
                "local_settings.d/" % (DATABASE, conf.SNIPPET))
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
    """The journal as one actor (a Horizon user or a CLI run) writes it,
    against one cloud (:class:`~api.client.Cloud`)."""

    def __init__(self, source, cloud, user_id='', user_name='', project_id='',
                 project_name=''):
        self.cloud = cloud
        self.batch = uuid.uuid4().hex
        self.actor = dict(source=source, batch=self.batch,
                          user_id=user_id or '',
                          user_name=user_name or '',
                          project_id=project_id or '',
                          project_name=project_name or '',
                          cloud=cloud.key, auth_url=cloud.auth_url,
                          region=cloud.region,
                          placement_url=cloud.placement_url)

    @classmethod
    def for_clients(cls, clients):
        """The journal of whoever ``clients`` authenticated as, on a
        command line, in their cloud (a token knows no names: then the
        local user's)."""
        adapter = clients.placement
        try:
            access = (adapter.auth or adapter.session.auth).get_access(
                adapter.session)
            user_name, project_name = access.username, access.project_name
        except Exception:  # token-only auth knows no names
            user_name = project_name = None
        return cls('cli', client.cloud_for_clients(clients),
                   user_id=adapter.get_user_id(),
                   user_name=user_name or getpass.getuser(),
                   project_id=adapter.get_project_id(),
                   project_name=project_name or '')

    def begin(self, plan, restores=None):
        """Durably record a consumer write about to happen; its entry.
        The other consumer the same write changes (its ``partner``) gets
        an entry of its own, recorded with it, restorable on its own:
        :meth:`finish` and :meth:`discard` take both."""
        model = _model()
        with transaction.atomic(using=DATABASE):
            entry = model.objects.create(
                kind=model.ALLOCATIONS, subject=plan.consumer,
                touched=' '.join(sorted(set(plan.before) | set(plan.after) |
                                        {plan.provider})),
                action=plan.action, verdict=plan.verdict, reason=plan.reason,
                provider=plan.provider, consumer=plan.consumer,
                consumer_project=plan.project_id, consumer_user=plan.user_id,
                before_project=plan.before_project,
                before_user=plan.before_user,
                generation=plan.generation, before=plan.before,
                after=plan.after, ports=plan.ports, restores=restores,
                **self.actor)
            partner = plan.partner
            entry.partner = partner and model.objects.create(
                kind=model.ALLOCATIONS, subject=partner['consumer'],
                touched=' '.join(sorted(set(partner['before']) |
                                        set(partner['after']))),
                action=plan.action, verdict=plan.verdict, reason=plan.reason,
                provider=sorted(partner['before'] or partner['after'] or
                                [plan.provider])[0],
                consumer=partner['consumer'],
                consumer_project=partner['project_id'],
                consumer_user=partner['user_id'],
                generation=partner['generation'], before=partner['before'],
                after=partner['after'], ports={}, **self.actor)
        return entry

    def begin_provider(self, action, record, after, reason, restores=None):
        """Durably record a provider delete (``after`` empty) or re-create
        (``record`` empty) about to happen, with everything it holds."""
        provider = record or after
        return self._begin_record(
            _model().PROVIDER, provider['uuid'], provider['uuid'], action,
            record, after, reason, restores)

    def begin_service(self, action, service, provider, reason):
        """Durably record a compute service delete about to happen."""
        return self._begin_record(_model().SERVICE, service['uuid'], provider,
                                  action, service, {}, reason)

    def _begin_record(self, kind, subject, provider, action, before, after,
                      reason, restores=None):
        with transaction.atomic(using=DATABASE):
            return _model().objects.create(
                kind=kind, subject=subject, touched=provider, action=action,
                verdict='', reason=reason, provider=provider, consumer='',
                generation=(before or {}).get('generation'), before=before,
                after=after, restores=restores, **self.actor)

    def discard(self, entry):
        """Forget an entry whose write changed nothing at all."""
        if getattr(entry, 'partner', None):
            entry.partner.delete()
        entry.delete()

    def applied_twin(self, entry):
        """Another entry of this cloud, applied, that wrote the same
        consumer from the same generation to the same after."""
        model = _model()
        return any(twin.after == entry.after for twin in model.objects.filter(
            cloud=entry.cloud, kind=model.ALLOCATIONS,
            consumer=entry.consumer, generation=entry.generation,
            status=model.APPLIED).exclude(id=entry.id))

    def finish(self, entry, status, message='', new_generation=None):
        partner = getattr(entry, 'partner', None)
        if partner:
            unchanged = new_generation is not None and \
                new_generation == entry.generation
            self.finish(partner, status, message, new_generation=(
                partner.generation if unchanged else None))
        entry.status = status
        entry.message = message
        entry.new_generation = new_generation
        entry.finished = timezone.now()
        entry.save(update_fields=['status', 'message', 'new_generation',
                                  'finished'])
        return entry


def _query(cloud, provider=None, consumer=None, batch=None, project=None,
           named=None):
    model = _model()
    query = model.objects.all()
    if cloud is not None:
        query = query.filter(cloud=cloud.key)
    named = named or {}
    held = query
    if consumer:
        query = query.filter(
            models.Q(consumer__contains=consumer.lower()) |
            _held(held, 'consumer', named.get('consumer')))
    if provider:
        text = provider.lower()
        query = query.filter(
            models.Q(touched__contains=text) |
            _held(held, 'provider', named.get('provider')) |
            models.Q(kind=model.PROVIDER, before__name__icontains=text) |
            models.Q(kind=model.PROVIDER, after__name__icontains=text))
    if project:
        query = query.filter(
            models.Q(consumer_project__icontains=project) |
            models.Q(before_project__icontains=project) |
            _held(held, 'consumer_project', named.get('project')) |
            _held(held, 'before_project', named.get('project')))
    if batch:
        query = query.filter(batch__startswith=batch.lower())
    return query


def _held(query, field, ids):
    """Entries whose ``field`` is one of ``ids`` (found by name), asked
    for as the ones ``query``'s entries hold: a short name can match
    thousands of a cloud's servers the journal never wrote, more than a
    database takes in one ``IN``."""
    if not ids:
        return models.Q(pk__in=())
    found = set(query.values_list(field, flat=True).distinct()) & set(ids)
    return models.Q(**{field + '__in': sorted(found)})


def entries(cloud, provider=None, consumer=None, batch=None, project=None,
            marker=None, prev_marker=None, limit=None, named=None):
    """Newest first, of ``cloud`` (None: every cloud).

    The filters match the way the other tables do, on what History shows:
    ``provider`` a part of the id of any provider an entry touched, of the
    name of a provider it recorded whole, or one of ``named['provider']``
    (the providers whose names the caller found it in); ``consumer`` a
    part of the consumer's id, or one of ``named['consumer']`` (the
    servers found by name); ``project`` a part of the id of the project
    the consumer had or was given, or one of ``named['project']``;
    ``batch`` the start of a batch id.  Pages the Horizon way: ``marker``
    is the last id of the page before, ``prev_marker`` the first id of
    the page after.  Returns ``(entries, has_prev, has_more)``.
    """
    query = _query(cloud, provider, consumer, batch, project,
                   named).order_by('-id')
    if prev_marker is not None:
        found = list(query.filter(id__gt=prev_marker).order_by('id')[
            :limit + 1 if limit else None])
        has_prev = limit is not None and len(found) > limit
        found = found[:limit] if limit else found
        return found[::-1], has_prev, True
    if marker is not None:
        query = query.filter(id__lt=marker)
    found = list(query[:limit + 1] if limit else query)
    has_more = limit is not None and len(found) > limit
    return found[:limit] if limit else found, marker is not None, has_more


def all_entries(cloud, provider=None, consumer=None, batch=None,
                project=None, named=None):
    """Every entry :func:`entries` matches, newest first, read in chunks
    (for export)."""
    return _query(cloud, provider, consumer, batch, project,
                  named).order_by('-id').iterator(chunk_size=500)


def batch_entries(cloud, batch):
    """The entries of exactly this batch, newest first: a restore of a
    batch must never take in another that starts the same way."""
    return list(_query(cloud).filter(batch=(batch or '').lower()).order_by(
        '-id'))


def restorable(cloud, subjects):
    """``{subject: ids of the entries that may be restored}``
    (:func:`audit.restore.in_effect`).  Refused writes, and failed ones
    that left the consumer as it was, changed nothing: they are neither
    restorable nor in the way.  A write of unknown outcome may have
    changed it: restorable.
    """
    model = _model()
    rows = _query(cloud).filter(subject__in=set(subjects)).exclude(
        status=model.REFUSED).exclude(kind=model.SERVICE).exclude(
        status=model.FAILED,
        new_generation=models.F('generation')).order_by('-id').values(
        'id', 'subject', 'restores_id', 'status')
    return restore.in_effect(rows, model.APPLIED)


def get(cloud, entry_id):
    """The entry with this id in ``cloud``; ``DoesNotExist`` otherwise."""
    return _query(cloud).get(pk=entry_id)


def deleted_names(cloud):
    """Compute hosts, provider names and uuids, lowercased, whose delete
    ``cloud``'s journal holds: a host gone through us is no typo."""
    model = _model()
    names = set()
    for before in model.objects.filter(
            cloud=cloud.key, kind__in=(model.SERVICE, model.PROVIDER)
    ).values_list('before', flat=True):
        names.update(str(before.get(key) or '').lower()
                     for key in ('host', 'name', 'uuid'))
    return names - {''}


def provider_names(cloud):
    """``{provider uuid: name}`` of the providers whose record ``cloud``'s
    journal holds (every cloud's when None): a deleted host is still
    named."""
    model = _model()
    names = {}
    for provider, record in _query(cloud).filter(
            kind=model.PROVIDER).values_list('provider', 'before'):
        if record and record.get('name'):
            names[provider] = record['name']
    return names


FIELDS = ('id', 'created', 'finished', 'auth_url', 'region', 'placement_url',
          'batch', 'source', 'user_name', 'user_id', 'project_name',
          'project_id',
          'kind', 'action', 'verdict', 'reason', 'provider', 'consumer',
          'consumer_project', 'consumer_user', 'before_project',
          'before_user', 'generation', 'before', 'after', 'ports', 'status',
          'new_generation', 'message', 'restores_id')


NAME_FIELDS = ('consumer_name', 'provider_name')
"""Beside the ids when the exporter knows names (``{uuid: name}``)."""


def as_dict(entry, names=None):
    row = {f: getattr(entry, f) for f in FIELDS}
    if names is not None:
        row.update(consumer_name=names.get(entry.consumer),
                   provider_name=names.get(entry.provider))
    for field in ('created', 'finished'):
        row[field] = row[field].isoformat() if row[field] else None
    return row
