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

"""The audit report of a cloud read now (the CLI), and the findings as
both front ends export them (use case)."""

import typing

from orphan_dashboard.api import client
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import export
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons
from orphan_dashboard.reading import collect
from orphan_dashboard.reading.progress import NO_PROGRESS


class NoSuchProvider(LookupError):
    """A provider the report does not have."""


def read(clients, settings, progress=NO_PROGRESS):
    """The whole cloud's snapshot, read now as ``settings``
    (:class:`conf.RunSettings`) say; ``progress`` follows the reading and
    is closed when it ends."""
    try:
        client.validate_token(clients)
        return collect.full_snapshot(clients.placement, clients.nova,
                                     concurrency=settings.concurrency,
                                     progress=progress,
                                     network_client=clients.network)
    finally:
        progress.close()


class Swept(typing.NamedTuple):
    """A report and the snapshot it judged, read after the click: a
    repair plans from that snapshot and re-reads only what it writes."""

    snapshot: m.Snapshot
    report: object


def swept(clients, settings, progress=NO_PROGRESS, provider=None):
    """The :class:`Swept` report of the whole cloud read now, or of
    ``provider``'s tree (a uuid or a name; :class:`NoSuchProvider` where
    it has none).  ``progress`` follows the reading and is closed when it
    ends."""
    snapshot = read(clients, settings, progress)
    return Swept(snapshot, narrowed(classify.audit(
        snapshot, min_age=settings.min_age,
        stuck_after=settings.stuck_after), provider))


def narrowed(report, provider):
    """``report`` of ``provider``'s tree only (a uuid or a name;
    :class:`NoSuchProvider` where it has none), or whole without one."""
    if provider:
        wanted = provider.lower()
        report.providers = [p for p in report.providers
                            if wanted in (p.provider.uuid,
                                          p.provider.name.lower())]
        if not report.providers:
            raise NoSuchProvider(provider)
    return report


FINDING_FIELDS = (
    'provider_name', 'provider', 'consumer', 'verdict', 'reason',
    'reason_code', 'action', 'actions', 'blocked', 'resources', 'nova',
    'host', 'instance', 'project_id', 'project_name', 'user_id', 'user_name')


def finding_rows(summary, owners, tree=None):
    """The findings as the panel lists them, as dicts of
    :data:`FINDING_FIELDS`: every problem of ``summary``, or every row of
    one provider ``tree``; ``owners`` as :func:`snapshot.names` returns
    them."""
    if tree is not None:
        findings = tree.findings
    else:
        findings = [f for f in summary.findings if f.verdict != m.OK]
    return [dict(f.as_dict(), provider_name=summary.names.get(f.provider),
                 reason=str(reasons.owner_named(f.reason, owners)),
                 project_name=owners['projects'].get(f.project_id),
                 user_name=owners['users'].get(f.user_id))
            for f in findings]


def owners(clients, shown):
    """Keystone's project and user names (empty where it will not say),
    read now for a command line that shows ``shown`` (findings, plans);
    None, and nothing read, when it shows none."""
    return collect.owner_names(clients.identity) if shown else None


def server_name(finding):
    """The name of the server ``finding``'s Nova reason names, or None (a
    server that is gone has no name left)."""
    nova = getattr(finding, 'nova', None)
    if getattr(nova, 'code', None) == 'nova.server':
        return dict(nova.params).get('name') or None
    return None


def server_names(findings):
    """``{consumer uuid: server name}`` of the findings naming a server."""
    return {f.consumer: server_name(f) for f in findings if server_name(f)}


def findings_exported(rows, fmt):
    """:func:`finding_rows` as CSV lines (``fmt`` ``csv``) or as the
    pieces of one JSON array."""
    return export.pieces(fmt, FINDING_FIELDS, rows)


def overview(clients, tree):
    """:func:`overview_rows` of a provider ``tree`` (a
    :class:`~audit.report.ProviderReport`) with its inventory read now."""
    return overview_rows(tree, placement.provider_inventories(
        clients.placement, tree.provider.uuid))


def overview_rows(tree, inventories):
    """A row per resource class of ``tree``'s provider: its inventory
    (``-`` where ``inventories`` has none), what Placement says it uses
    and what its servers need."""
    def field(rc, name):
        return inventories.get(rc, {}).get(name, '-')

    return [dict(rc=rc, total=field(rc, 'total'),
                 reserved=field(rc, 'reserved'),
                 ratio=field(rc, 'allocation_ratio'),
                 usage=tree.usage.get(rc, 0), needed=tree.needed.get(rc, 0))
            for rc in sorted(set(inventories) | set(tree.usage) |
                             set(tree.needed))]
