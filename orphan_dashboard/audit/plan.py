"""Repairs as data: a consumer's allocations before and after.

A plan is computed from the consumer as Placement holds it *now* (the caller
re-reads it) and is written in one generation-checked PUT, so there is never
a moment where a running server holds nothing.
"""

import shlex

from orphan_dashboard.audit import classify
from orphan_dashboard.audit import heal
from orphan_dashboard.audit import model as m

PLACEMENT_CLI_VERSION = '1.28'


class PlanError(Exception):
    """This repair cannot be planned; the message says why."""


def _heal_target(auditor, server, before, root):
    """The healed allocation on ``root``, leaving what we cannot rebuild."""
    if server.flavor is None or server.flavor.extra_specs is None:
        raise PlanError('Nova does not show the flavor of server %s with its '
                        'extra specs: cannot compute what it needs' %
                        server.uuid)
    try:
        candidates = heal.expected_resources(server)
    except heal.CannotHeal as exc:
        raise PlanError('cannot heal server %s: %s' % (server.uuid, exc))
    current = before.get(root, {})
    needs = next((c for c in candidates
                  if c.get(heal.DISK_GB) == current.get(heal.DISK_GB)),
                 candidates[0])
    topology = auditor.topology
    after = {}
    on_sharing = set()
    for provider, resources in before.items():
        if topology.is_sharing(provider):
            after[provider] = dict(resources)
            on_sharing.update(resources)
        elif provider != root and topology.root(provider) == root:
            # Nested children (vGPU, ports, PCI): not rebuildable from the
            # API, so kept exactly as they are.
            after[provider] = dict(resources)
    in_children = {rc for p, r in after.items()
                   if not topology.is_sharing(p) for rc in r}
    root_needs = {rc: n for rc, n in needs.items()
                  if rc not in on_sharing and rc not in in_children}
    if root_needs:
        after[root] = root_needs
    return after


def make_plan(snapshot, finding, action, now=None, min_age=0):
    """Plan ``action`` for ``finding`` against the consumer in ``snapshot``.

    ``snapshot`` must hold the consumer as just re-read from Placement; the
    finding is re-derived from it, so a plan is never built on stale data.
    """
    auditor = classify.Auditor(snapshot, now=now, min_age=min_age)
    consumer = snapshot.consumers.get(finding.consumer) or m.Consumer(
        uuid=finding.consumer, generation=None, allocations={})
    before = {p: dict(r) for p, r in consumer.allocations.items()}
    server = snapshot.servers.get(finding.consumer)
    root = auditor.topology.server_root(server) if server else None

    if action == m.DELETE:
        after = {}
    elif action == m.TRIM:
        if root is None:
            raise PlanError('server has no current compute node to trim to')
        after = {p: dict(r) for p, r in before.items()
                 if auditor.topology.legitimate(root, p)}
        if not any(auditor.topology.root(p) == root for p in after):
            raise PlanError('trimming would leave the server with nothing on '
                            'its current host; use delete and heal')
    elif action in (m.DELETE_AND_HEAL, m.HEAL):
        if server is None or root is None:
            after = {}
        else:
            after = _heal_target(auditor, server, before, root)
            if action == m.HEAL:
                after = {**before, **after}
    else:
        raise PlanError('unknown action %r' % action)

    if after == before:
        raise PlanError('nothing to change')
    project = consumer.project_id or (server.project_id if server else None)
    user = consumer.user_id or (server.user_id if server else None)
    if after and not (project and user):
        raise PlanError('project and user of consumer %s are unknown' %
                        finding.consumer)
    return m.Plan(action=action, consumer=finding.consumer,
                  provider=finding.provider, verdict=finding.verdict,
                  reason=finding.reason, generation=consumer.generation,
                  project_id=project, user_id=user,
                  before=before, after=after)


def restore_plan(entry, consumer):
    """Undo a journaled write: ``entry.after`` back to ``entry.before``.

    ``consumer`` is the consumer as just re-read.  Refused unless it is
    exactly as the entry left it, so a restore never clobbers a later
    change by Nova or another admin.
    """
    now = consumer.allocations if consumer else {}
    if now == entry.before:
        raise PlanError('consumer %s is already as it was before' %
                        entry.consumer)
    if now != entry.after:
        raise PlanError('consumer %s changed since this repair: it now holds '
                        '%s, not %s' % (entry.consumer, _fmt_allocations(now),
                                        _fmt_allocations(entry.after)))
    return m.Plan(action=m.RESTORE, consumer=entry.consumer,
                  provider=entry.provider, verdict=entry.verdict,
                  reason='restore of journal entry %s' % entry.id,
                  generation=consumer.generation if now else None,
                  project_id=entry.consumer_project,
                  user_id=entry.consumer_user,
                  before={p: dict(r) for p, r in now.items()},
                  after={p: dict(r) for p, r in entry.before.items()})


def _fmt_allocations(allocations):
    if not allocations:
        return 'nothing'
    return '; '.join('%s: %s' % (p, ', '.join(
        '%s=%s' % (rc, n) for rc, n in sorted(r.items())))
        for p, r in sorted(allocations.items()))


def osc_commands(plan):
    """The osc-placement commands that leave Placement as ``plan.after``."""
    base = ['openstack', '--os-placement-api-version', PLACEMENT_CLI_VERSION,
            'resource', 'provider', 'allocation']
    if not plan.after:
        return [shlex.join(base + ['delete', plan.consumer])]
    removed = sorted(set(plan.before) - set(plan.after))
    kept_as_is = all(plan.before.get(p) == r for p, r in plan.after.items())
    if removed and kept_as_is:
        args = base + ['unset', plan.consumer]
        for provider in removed:
            args += ['--provider', provider]
        return [shlex.join(args)]
    args = base + ['set', plan.consumer, '--project-id', plan.project_id,
                   '--user-id', plan.user_id]
    for provider in sorted(plan.after):
        resources = plan.after[provider]
        args += ['--allocation', ','.join(
            ['rp=%s' % provider] +
            ['%s=%s' % (rc, resources[rc]) for rc in sorted(resources)])]
    return [shlex.join(args)]


_PRIORITY = (m.DELETE_AND_HEAL, m.DELETE, m.TRIM, m.HEAL)


def recommended(findings):
    """One recommended repair per consumer: ``[(finding, action)]``.

    A consumer can have several findings (left on an old host *and*
    missing on its current one, as after the failed cold migration of the
    seeds): one write must fix them all, or the second would be refused for
    a generation the first one moved.  Trim cannot add what is missing, so
    that pair becomes a delete and heal.
    """
    groups = {}
    for finding in findings:
        if finding.action:
            groups.setdefault(finding.consumer, []).append(finding)
    chosen = []
    for group in groups.values():
        actions = {f.action for f in group}
        if m.HEAL in actions and len(actions) > 1:
            actions.add(m.DELETE_AND_HEAL)
        for action in _PRIORITY:
            candidates = [f for f in group if action in f.actions]
            if action in actions and candidates:
                chosen.append((candidates[0], action))
                break
    return chosen
