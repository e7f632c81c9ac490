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

"""History: a cloud's journal, read page by page or exported."""

import logging

from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import export
from orphan_dashboard.reading import collect
from orphan_dashboard.writing import journal

LOG = logging.getLogger(__name__)


NAMED = {'consumer': 'servers', 'provider': 'providers',
         'project': 'projects'}
"""Which of the cloud's names (:func:`current_names`) each History filter
finds by name."""


def named(read_names, **texts):
    """``{filter: ids}``: for each filter of ``texts`` (``consumer``,
    ``provider``, ``project``, see :data:`NAMED`), the ids whose names
    hold its text, case-insensitive, as History names them
    (``read_names()``: the cloud's names, read once, only when a filter
    has a text).  The filter finds what History shows; where the names
    cannot be read, parts of ids still match."""
    wanted = {field: text.lower() for field, text in texts.items() if text}
    if not wanted:
        return {}
    try:
        names = read_names()
    except Exception:
        LOG.exception('names unavailable to the History filter')
        return {}
    return {field: sorted(uuid for uuid, name in
                          (names.get(NAMED[field]) or {}).items()
                          if name and text in name.lower())
            for field, text in wanted.items()}


def provider_names(clients):
    """``{provider uuid: name}`` as Placement names them now; empty when
    it will not say (names are shown beside ids, never a reason to
    fail)."""
    return _listed('providers', lambda: placement.provider_list(
        clients.placement))


def current_names(clients):
    """``{'providers', 'servers', 'projects', 'users'}``, each ``{uuid:
    name}`` as the cloud names them now, for a command line's History (the
    panel has its last audit's); empty where a service will not say."""
    return dict(collect.owner_names(clients.identity),
                providers=provider_names(clients),
                servers=_listed('servers', lambda: nova.server_list(
                    clients.nova)))


def _listed(kind, read):
    try:
        return {item.get('uuid') or item['id']: item['name']
                for item in read() if item.get('name')}
    except Exception as exc:
        LOG.warning('%s not listed (%s): their ids are shown without names',
                    kind, exc)
        return {}


def entry_names(cloud, names, entries=None):
    """``{uuid: name}`` for the consumers and providers of ``cloud``'s
    entries: the cloud's ``names`` (:func:`current_names`, or what the
    panel's last sweep read), and the journaled record's name of a
    provider that is gone (a decommissioned host's), from ``entries`` when
    given (the page shown), else from every entry of ``cloud``."""
    journaled = (journal.provider_names(cloud) if entries is None
                 else _recorded_names(entries))
    return dict(journaled, **names.get('servers', {}),
                **names.get('providers', {}))


def _recorded_names(entries):
    """``{provider uuid: name}`` of the provider records among
    ``entries``."""
    return {e.provider: (e.before or e.after or {}).get('name')
            for e in entries if e.kind == e.PROVIDER and
            (e.before or e.after or {}).get('name')}


def page(cloud, provider=None, consumer=None, batch=None, project=None,
         marker=None, prev_marker=None, limit=None, named_=None):
    """``cloud``'s entries (every cloud's when None), newest first, a page
    at a time: ``(entries, has_prev, has_more, {subject: restorable entry
    ids})``; ``named_`` as :func:`named` finds them.  Every cloud's are
    read-only: a restore writes to the cloud it is asked from, so nothing
    is restorable among them."""
    found, has_prev, has_more = journal.entries(
        cloud, provider=provider, consumer=consumer, batch=batch,
        project=project, marker=marker, prev_marker=prev_marker,
        limit=limit, named=named_)
    if cloud is None:
        return found, has_prev, has_more, {}
    return found, has_prev, has_more, journal.restorable(
        cloud, {e.subject for e in found})


def entries_by_id(cloud, entry_ids):
    """``cloud``'s entries with these ids; others raise ``DoesNotExist``."""
    return [journal.get(cloud, entry_id) for entry_id in entry_ids]


def batch_of(cloud, outcomes):
    """The journal batch these outcomes were written in, or None when
    nothing was journaled."""
    for outcome in outcomes:
        if outcome.entry_id is not None:
            return journal.get(cloud, outcome.entry_id).batch
    return None


def exported(found, fmt, names=None):
    """Journal entries as CSV lines (``fmt`` ``csv``) or as the pieces of
    one JSON array; with ``names`` (:func:`entry_names`) the consumer's
    and the provider's names beside their ids."""
    fields = journal.FIELDS + (journal.NAME_FIELDS if names is not None
                               else ())
    return export.pieces(fmt, fields, (journal.as_dict(entry, names)
                                       for entry in found))
