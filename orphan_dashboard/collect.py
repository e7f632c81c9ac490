"""Reading Nova and Placement into a :class:`~audit.model.Snapshot` (I/O).

Two shapes: the full sweep behind the index and ``orphan-audit``, and the
narrow re-read of a few consumers that every repair does at submit time.
"""

import concurrent.futures
import datetime

from orphan_dashboard.api import nova
from orphan_dashboard.api import placement
from orphan_dashboard.audit import classify
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse

DEFAULT_CONCURRENCY = 8


def _map(func, items, concurrency):
    """``{item: func(item)}`` with at most ``concurrency`` calls in flight."""
    items = list(items)
    if not items:
        return {}
    workers = max(1, min(concurrency, len(items)))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return dict(zip(items, pool.map(func, items)))


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def _topology(placement_client, nova_client):
    providers = {p['uuid']: parse.provider(p)
                 for p in placement.provider_list(placement_client)}
    return dict(
        providers=providers,
        sharing_providers=frozenset(
            placement.sharing_provider_uuids(placement_client)),
        hypervisors={h.uuid: h for h in map(
            parse.hypervisor, nova.hypervisor_list(nova_client))},
        services={s.host: s for s in map(
            parse.service, nova.service_list(nova_client))},
    )


def _identify(snapshot, placement_client, nova_client, uuids, concurrency):
    """Read details of consumers the audit may act on.

    Project, user and age come only from ``GET /allocations/{consumer}``;
    whether Nova knew a non-server consumer only from its instance actions.
    """
    details = _map(lambda u: placement.consumer_allocations(
        placement_client, u), uuids, concurrency)
    for uuid, body in details.items():
        snapshot.consumers[uuid] = parse.consumer(uuid, body)
    strangers = [u for u in uuids if u not in snapshot.servers and
                 u not in snapshot.migrations and
                 snapshot.consumers.get(u) and snapshot.consumers[u].allocations]
    known = _map(lambda u: nova.instance_known(nova_client, u), strangers,
                 concurrency)
    snapshot.known_instances = frozenset(u for u, k in known.items() if k)


def full_snapshot(placement_client, nova_client,
                  concurrency=DEFAULT_CONCURRENCY):
    """Everything, once: the input of the index page and ``orphan-audit``."""
    taken_at = _now()
    topology = _topology(placement_client, nova_client)
    allocations = _map(
        lambda rp: placement.provider_allocations(placement_client, rp),
        topology['providers'], concurrency)
    snapshot = m.Snapshot(
        consumers=parse.consumers_from_providers(allocations),
        servers={s.uuid: s for s in map(
            parse.server, nova.server_list(nova_client))},
        migrations={g.uuid: g for g in map(
            parse.migration, nova.migration_list(nova_client))},
        taken_at=taken_at, **topology)
    suspects = {f.consumer for f in classify.audit(snapshot, min_age=0).problems}
    _identify(snapshot, placement_client, nova_client, suspects, concurrency)
    return snapshot


def consumer_snapshot(placement_client, nova_client, consumer_uuids,
                      migration_instances=(), concurrency=DEFAULT_CONCURRENCY):
    """Just these consumers, read now, for a preview or a submit.

    ``migration_instances`` are the instance uuids of consumers believed to
    be migrations: Nova can only list migrations by instance, and if the
    migration is no longer there the consumer simply becomes unknown.
    """
    taken_at = _now()
    uuids = sorted(set(consumer_uuids))
    topology = _topology(placement_client, nova_client)
    servers = {u: parse.server(b) for u, b in _map(
        lambda u: nova.server_get(nova_client, u), uuids,
        concurrency).items() if b is not None}
    instances = set(servers) | set(migration_instances)
    migrations = {}
    for found in _map(lambda u: nova.migration_list(
            nova_client, instance_uuid=u), instances, concurrency).values():
        migrations.update((g.uuid, g) for g in map(parse.migration, found))
    snapshot = m.Snapshot(consumers={}, servers=servers,
                          migrations=migrations, taken_at=taken_at, **topology)
    _identify(snapshot, placement_client, nova_client, uuids, concurrency)
    return snapshot
