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

"""Every message of the engine, by code: what :class:`~reasons.Reason`
renders.

Each is marked with :func:`~model.N_`, one of Babel's default keywords
(the names of verdicts and actions are marked where :mod:`.model`
declares them), so ``manage.py extract_messages -m orphan_dashboard``
(``babel-django.cfg``) extracts them; the panel translates them with
``gettext``, the CLI prints them in English (:mod:`.reasons`).
"""

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit.model import N_


IDENTIFIERS = ('entry',)
"""Whole-number parameters that name something (a journal entry's id):
never written as amounts (``Reason.render``'s ``number``)."""

MESSAGES = {
    # What Nova says of a consumer.
    'nova.server': N_('server %(name)s (%(status)s)'),
    'nova.migration': N_('%(type)s %(source)s → %(dest)s (%(status)s)'),
    'nova.deleted_server': N_('deleted server'),
    'nova.unknown': N_('not known to Nova'),

    # A migration in words: "resize 1f0e... (host2 → host3)".
    'move': N_('%(type)s %(migration)s (%(source)s → %(dest)s)'),

    # Verdicts.
    'ok.lives_here': N_('server %(server)s lives on %(host)s'),
    'ok.nothing_left': N_('no longer holds anything on this provider'),
    'deleted_instance': N_(
        'server %(server)s is deleted (Nova still has its instance '
        'actions) but its allocation was left behind'),
    'deleted_instance.pci_device': N_(
        'server %(server)s is deleted (Nova still has its instance '
        'actions) but its allocation was left behind; if this device was '
        'removed from [pci] device_spec, Nova keeps its inventory only for '
        'this allocation and removes the device from Placement once it '
        'goes (Nova bug 2115905)'),
    'unknown_consumer': N_(
        'neither a server nor a migration Nova knows: it may belong to '
        'another service or to an archived instance'),
    'evacuated_source': N_(
        'evacuated from %(source)s to %(host)s (migration %(migration)s, '
        '%(status)s); the source compute never cleaned up'),
    'moved': N_('server lives on %(host)s with no migration in progress'),
    'shelved_offloaded': N_(
        'server is shelved and offloaded (Nova removed its allocations '
        'when it offloaded it and allocates again when it unshelves it) '
        'yet holds resources here'),
    'moved.buried': N_(
        'server has no compute node (status %(status)s), as Nova leaves '
        'one it buried in cell0 when the host the scheduler chose had no '
        'host mapping, yet holds resources on %(here)s: 1. run nova-manage '
        'cell_v2 discover_hosts to map the compute services %(services)s '
        'that have no node in Nova\'s listing; 2. this allocation is a '
        'leftover whichever host that node is, since Nova shows the server '
        'alone with no host: deleting it is offered now'),
    'moved.no_node': N_(
        'server has no compute node (status %(status)s) yet holds '
        'resources here'),
    'stale_migration': N_(
        '%(move)s of server %(server)s ended (%(status)s) but its '
        'allocation was left behind'),
    'stuck_migration.back': N_(
        '%(move)s of server %(server)s has been %(status)s for %(age)d s '
        '(a move idle for %(after)d s is stuck) while the server runs on '
        '%(host)s with no task: its compute restarted during the move, and '
        'Nova will never move this migration on (it will keep showing '
        '%(status)s). The migration holds what the server uses on %(host)s '
        'and the server holds %(here)s: moving back gives the server the '
        "migration's allocation and frees the destination, as Nova's "
        'revert would have'),
    'stuck_migration.arrived': N_(
        '%(move)s of server %(server)s has been %(status)s for %(age)d s '
        '(a move idle for %(after)d s is stuck) while the server runs on '
        'its destination %(host)s with no task: Nova will never move this '
        'migration on (it will keep showing %(status)s), and what the '
        'migration holds on %(here)s is its source, left behind'),
    'stuck_migration.evacuation': N_(
        '%(move)s of server %(server)s has been %(status)s for %(age)d s '
        '(a move idle for %(after)d s is stuck) while the server runs on '
        '%(host)s with no task: Nova will never move this evacuation on (it '
        'will keep showing %(status)s), and what the server holds on '
        '%(here)s is the side it does not run on'),
    'missing': N_('server lives on %(host)s but holds no allocation there'),
    'missing.elsewhere': N_(
        'server lives on %(host)s but holds no allocation there; its '
        'allocation is on %(elsewhere)s: see there'),
    'wrong_amount': N_(
        'holds %(held)s here but its flavor %(flavor)s needs %(needs)s'),
    'wrong_amount.port': N_(
        'holds %(held)s on %(provider)s but its port %(ports)s requests '
        '%(needs)s there (a QoS rule changed and Neutron could not update '
        'the allocation?)'),
    'wrong_amount.port_to_bind': N_(
        'holds %(held)s on %(provider)s but its ports %(ports)s request '
        '%(needs)s there: a binding among them places its request on no '
        "provider of %(host)s, and Placement's one allocation candidate "
        'there is this one (a repair names it in the binding in Neutron '
        'first)'),
    'missing.port': N_(
        'its port %(ports)s requests %(needs)s on %(provider)s, but the '
        'server holds nothing there'),
    'missing.port_unplaced': N_(
        'its port %(ports)s requests %(needs)s, but its binding places it '
        'on no provider of %(host)s, and %(candidates)s'),
    'missing.port_to_bind': N_(
        'its port %(ports)s requests %(needs)s, but its binding places it '
        "on no provider of %(host)s: Placement's one allocation candidate "
        'there is %(provider)s (a heal names it in the binding in Neutron '
        'first, then allocates it)'),
    'candidates.unread': N_(
        'Placement did not answer for its allocation candidates there '
        '(the next audit asks again)'),
    'candidates.none': N_(
        'Placement offers no allocation candidate there'),
    'candidates.several': N_(
        'Placement offers several allocation candidates there '
        "(%(providers)s): which one is the port's cannot be told"),
    'leaked_port': N_(
        'holds %(leaked)s on %(provider)s that no current port of server '
        '%(server)s requests there (a bound port deleted in Neutron, Nova '
        'bug 1820588, or a detach that failed to free it)'),
    'ok.port': N_('port %(ports)s of server %(server)s requests it'),
    'ok.port_unbound': N_(
        'port %(ports)s of server %(server)s requests it; its binding in '
        'Neutron names no provider of %(host)s, but this one holds it for '
        'the server and no other binding claims it (Placement is right: '
        'only the binding lacks its allocation, which a repair of this '
        'server writes first)'),
    'incomplete_consumer': N_(
        'written before Placement 1.8: its project and user are the '
        'incomplete-consumer placeholder, so quota counted from Placement '
        'charges nobody; its server belongs to project %(project)s, user '
        '%(user)s'),

    # Why a consumer is protected.
    'protected.unresolved': N_(
        'Nova could not tell what this consumer is (its instance actions '
        'could not be read)'),
    'protected.down_cell_consumer': N_(
        'not a server or migration Nova knows, but a cell is down and it '
        'could live there'),
    'protected.down_cell_server': N_(
        'server is in a cell Nova cannot reach right now'),
    'protected.hidden': N_(
        "Nova did not show where the server lives: the panel's user "
        'lacks the policy rule %(rule)s'),
    'protected.down_cell_host': N_(
        'on a compute node of host %(host)s, in a cell Nova cannot reach '
        'right now'),
    'protected.unconfirmed_node': N_(
        'Nova could not list its compute nodes (a cell is down): '
        '%(provider)s could be one of the down cell\'s'),
    'protected.unproven_node': N_(
        "Nova's listing left out compute node %(provider)s, and Nova did "
        'not answer for it alone: it may still be alive'),
    'protected.migrations_unread': N_(
        "Nova did not list host %(host)s's migrations within its cell "
        'timeout: a migration Nova left out of its listing could own it'),
    'protected.unmapped_node': N_(
        'Nova answers it has no compute node %(provider)s, but lists no '
        'node for the compute services %(services)s: it may be one of '
        'theirs, on a host not mapped to a cell yet (nova-manage cell_v2 '
        'discover_hosts maps it)'),
    'protected.resize_awaiting_confirm': N_(
        'resize awaiting confirm or revert'),
    'protected.awaiting_confirm': N_('%(move)s awaiting confirm or revert'),
    'protected.task': N_('task %(task)s in progress'),
    'protected.building': N_('server is still building'),
    'protected.moving': N_('%(move)s in progress (%(status)s)'),
    'protected.no_provider': N_(
        'its compute node %(node)s has no resource provider'),
    'protected.source_awaiting_confirm': N_(
        'source side of %(move)s of server %(server)s, awaiting confirm or '
        'revert'),
    'protected.migration': N_(
        '%(move)s of server %(server)s in progress (%(status)s)'),
    'protected.young': N_(
        'written %(age)d s ago, younger than the %(min_age)d s protection'),
    'protected.young_server': N_(
        'server created %(age)d s ago, younger than the %(min_age)d s '
        'protection'),
    'protected.young_finding': N_('%(young)s (%(reason)s)'),
    'protected.holds_nothing': N_('holds nothing here, but %(protection)s'),
    'neutron.absent': N_(
        'Neutron is not in the catalog: the allocations on NIC providers '
        'are protected, every other verdict is made as usual'),
    'neutron.down': N_(
        'Neutron did not answer: the allocations on NIC providers are '
        'protected, every other verdict is made as usual'),
    'neutron.forbidden': N_(
        'Neutron refused to list ports: the allocations on NIC providers '
        'are protected, every other verdict is made as usual'),
    'neutron.hidden': N_(
        "Neutron's policy (its get_port rules) hid fields of the ports "
        'the audit reads from this user: the allocations on NIC providers '
        'are protected, every other verdict is made as usual'),
    'protected.neutron_absent': N_(
        'Neutron is not in the catalog: which ports request these '
        'resources cannot be checked'),
    'protected.neutron_down': N_(
        'Neutron did not answer: which ports request these resources '
        'cannot be checked'),
    'protected.neutron_forbidden': N_(
        'Neutron refused to list ports: which ports request these '
        'resources cannot be checked'),
    'protected.neutron_hidden': N_(
        "Neutron's policy hid fields of the ports: which ports request "
        'these resources cannot be checked'),
    'nodes.unproven': N_(
        "Nova's listing of its compute nodes left out %(providers)s, and "
        'Nova did not answer for them alone: they may be alive, and what '
        'they hold is protected until it does'),
    'policy.hidden': N_(
        'Nova did not show where servers live (%(count)d of them): this '
        'user lacks the policy rule %(rule)s, and their allocations are '
        'protected'),

    # Why a repair cannot be planned.
    'cannot.no_flavor': N_(
        'Nova does not show the flavor of server %(server)s with its extra '
        'specs: what it needs cannot be computed'),
    'cannot.heal': N_('cannot heal server %(server)s: %(why)s'),
    'cannot.accelerator': N_(
        'flavor requests an accelerator device profile'),
    'cannot.unsuffixed_vgpu': N_(
        'flavor requests unsuffixed resources:VGPU'),
    'cannot.split_sharing': N_(
        '%(resource_class)s is split over %(count)d sharing providers: '
        'which one to heal is a choice to make by hand'),
    'cannot.not_rebuildable': N_(
        'it holds %(lost)s, which no flavor can rebuild, and its current '
        'host holds none of it: heal those allocations first (nova-manage '
        'placement heal_allocations --instance %(server)s) or move them by '
        'hand'),
    'cannot.on_child': N_('%(resources)s on %(provider)s (a child of '
                          '%(root)s)'),
    'cannot.port_unplaced': N_(
        'port %(ports)s of server %(server)s: its binding places it on no '
        'provider of %(host)s, and %(candidates)s; a migration of the '
        'server re-creates its allocations and bindings on its target, or '
        "set the port's binding:profile allocation by hand"),
    'cannot.no_node_to_trim': N_('the server has no compute node to trim to'),
    'cannot.trim_leaves_nothing': N_(
        'trimming would leave it nothing on its current host %(host)s: '
        'delete and heal instead'),
    'cannot.not_a_server': N_('not a server: there is no flavor to heal '
                              'from'),
    'cannot.no_node_to_heal': N_('the server has no compute node to heal '
                                 'on'),
    'cannot.unknown_action': N_('unknown action %(action)s'),
    'cannot.nothing_to_change': N_('nothing to change'),
    'cannot.unknown_owner': N_(
        'the project and user of consumer %(consumer)s are unknown'),
    'cannot.stall_takes': N_(
        'a stuck migration is put right by %(action)s, which writes both '
        "of its consumers, not by this repair"),
    'cannot.not_stuck': N_(
        'no stuck migration of this consumer says where its server runs'),
    'cannot.stuck_kept': N_(
        'moving back rewrites all this consumer holds, and what it holds on '
        '%(providers)s is protected'),
    'cannot.partner_protected': N_(
        'this repair writes consumer %(consumer)s too, which is protected: '
        '%(reason)s'),
    'cannot.still_wrong': N_(
        'after %(action)s it would still be %(verdict)s: %(reason)s'),
    'restore.would_be': N_(
        'after the restore it would be %(verdict)s: %(reason)s'),
    'cannot.already_restored': N_(
        'consumer %(consumer)s is already as it was before'),
    'cannot.changed_since': N_(
        'consumer %(consumer)s changed since this repair: it now holds '
        '%(now)s, not %(then)s'),
    'cannot.port_changed_since': N_(
        "port %(port)s changed since this repair: its binding's allocation "
        'is now %(now)s, not %(then)s'),

    # Why a chosen repair is refused.
    'refused.nothing_left': N_(
        'Nothing to %(action)s: consumer %(consumer)s no longer holds '
        'anything on %(provider)s.'),
    'refused.nothing_to_do': N_('Nothing to %(action)s: %(reason)s.'),
    'refused.not_now': N_('Not now: %(reason)s.'),
    'refused.cannot': N_('Cannot %(action)s: %(reason)s.'),
    'refused.other_repairs': N_(
        'Cannot %(action)s here (%(reason)s); what would put it right: '
        '%(actions)s.'),

    # What blocks a decommission.
    'blocker.service_up': N_(
        'compute service %(host)s is up: stop it or force it down first'),
    'blocker.servers': N_(
        'servers still on it (live-migrate or evacuate them first): '
        '%(servers)s'),
    'blocker.consumer': N_('consumer %(consumer)s: %(error)s'),
    'blocker.unknown_consumer': N_(
        'consumer %(consumer)s is not known to Nova: delete it by choice, or '
        'find its owner'),
    'blocker.not_now': N_('not now: %(reason)s'),
    'blocker.blocked': N_('%(reason)s, and no repair: %(blocked)s'),
    'blocker.no_repair': N_('%(reason)s, and no repair applies'),
    'blocker.still_on': N_('%(action)s would still leave it on '
                           '%(providers)s'),
    'blocker.not_nova': N_(
        "provider %(provider)s is not Nova's (likely %(owner)s's): only its "
        'owner may delete it'),
    'blocker.not_proven': N_(
        "provider %(provider)s is not proven Nova's (no OWNER_NOVA trait, "
        'not shaped like a compute node): only its owner may delete it'),
    'blocker.suspect': N_(
        "provider %(provider)s is not proven Nova's: nothing but its "
        "inventory is a compute node's (no OWNER_NOVA trait, no compute "
        "node or service of its name in Nova's records), and other "
        "services register such providers too (OpenStack Zun's compute "
        'hosts, for one): decommission it to delete it by an explicit '
        'tick, once Nova answers it has no such node'),
    'blocker.several_nodes': N_(
        'compute service %(host)s serves %(count)d nodes (%(nodes)s): '
        'decommission one of them, or choose the whole service'),
    'blocker.node_listed': N_(
        'Nova still has compute node %(node)s: only deleting compute '
        'service %(host)s, the whole service, removes it'),
    'blocker.foreign_child': N_(
        "provider %(provider)s is %(owner)s's, not Nova's: %(remedy)s, or "
        'tick it to delete it here'),
    'blocker.child_named': N_(
        'provider %(provider)s is a child provider of %(root)s, not a '
        'hypervisor: decommission %(host)s, its whole tree, instead'),
    'blocker.unproven_child': N_(
        "provider %(provider)s is not proven Nova's and no owner is "
        'proven: find who made it, or tick it to delete it here'),
    # The same two on the command line, where the tick is an option.
    'blocker.foreign_child_option': N_(
        "provider %(provider)s is %(owner)s's, not Nova's: %(remedy)s, or "
        'delete it here with --delete-foreign-child'),
    'blocker.unproven_child_option': N_(
        "provider %(provider)s is not proven Nova's and no owner is "
        'proven: find who made it, or delete it here with '
        '--delete-foreign-child'),
    'remedy.neutron': N_(
        'delete its agent in Neutron, which removes the agent\'s providers '
        '(%(command)s)'),
    'remedy.blazar': N_('remove the host from Blazar (%(command)s)'),
    'remedy.cyborg': N_(
        'remove the device from Cyborg, whose agent on %(host)s reports it '
        '(%(command)s)'),
    'remedy.other': N_("remove it with %(owner)s's own tools"),
    'changed.decommission': N_(
        'nothing written: %(changes)s since the preview; open it again'),
    'changed.service': N_(
        'compute service %(host)s is now %(uuid)s, not %(was)s'),
    'changed.added': N_('providers were added: %(providers)s'),
    'changed.gone': N_('providers are gone: %(providers)s'),
    'changed.scope': N_('the choice of the whole service differs'),

    # What became of a write, when it is not simply done.
    'write.journal_before': N_(
        'not written: the journal could not record it first (the error is '
        'in the logs)'),
    'write.journal_after': N_(
        '%(outcome)s; its journal entry %(entry)d could not be updated and '
        'stays "no answer recorded": see History (the error is in the '
        'logs)'),
    'held.max_writes': N_(
        'held, nothing written: it would write %(writes)d consumers '
        '(%(verdicts)s), more than the limit of %(limit)d '
        '(ORPHAN_AUDIT_MAX_WRITES, --max-writes)'),
    'held.max_share': N_(
        'held, nothing written: it would write %(writes)d consumers '
        '(%(verdicts)s), %(share)s %% of every consumer the audit saw, more '
        'than the limit of %(limit)s %% (ORPHAN_AUDIT_MAX_SHARE, '
        '--max-share)'),
    'write.done_after_conflict': N_(
        'done: Placement answered with a conflict, but read back, the '
        'consumer holds what this change writes (a gateway that sent the '
        'write again after Placement applied it meets its own write)'),
    'write.unknown_conflict': N_(
        'Placement answered with a conflict (%(detail)s), and the consumer '
        'now holds %(now)s: neither what it held nor what this change '
        'writes, and this write may have landed before another changed it; '
        'History keeps what it held: review it, and restore the entry if '
        'the write landed'),
    'write.already_done': N_(
        'already as this change would leave it: a concurrent write (another '
        'confirm of the same preview) got there first, and this one wrote '
        'nothing'),
    'write.refused_changed': N_(
        'Placement refused it: the consumer changed since it was read, so '
        'nothing was written; review it again'),
    'write.refused': N_(
        'Placement refused it, so nothing was written: the resources do not '
        'fit a provider (its capacity, or its minimum, maximum or step)'),
    'write.binding_changed': N_(
        'Neutron refused it: port %(port)s changed since it was read, so '
        'nothing was written; review it again'),
    'write.binding_refused': N_(
        "Neutron refused to write port %(port)s's binding (%(detail)s), so "
        "nothing was written (Neutron's default policy allows "
        'binding:profile writes to the service role only)'),
    'write.binding_failed': N_(
        "Neutron failed on port %(port)s's binding (%(detail)s), so "
        'Placement was not written'),
    'write.binding_now': N_(
        'it now names %(allocation)s, neither what it named nor what this '
        'change writes'),
    'write.bindings_left': N_(
        '%(outcome)s; the binding of port %(ports)s was left as written in '
        'Neutron: if Placement does not hold its share, put it back with '
        '%(commands)s'),
    'write.rolled_back': N_(
        '%(outcome)s; the binding of port %(ports)s was put back in '
        'Neutron'),
    'write.rollback_failed': N_(
        "%(outcome)s; but the binding of port %(port)s could not be put "
        'back in Neutron (%(detail)s): put it back with %(command)s'),
    'write.unexpected': N_(
        'an unexpected error interrupted it after it was sent: it may be '
        'partly written; see History (journal entry %(entry)d) and the '
        'logs'),
    'write.changed_nothing': N_(
        'entry %(entry)d changed nothing: Placement answered it with an '
        'error'),
    'service.unknown': N_(
        'Nova gave no clear answer to the delete of compute service '
        '%(host)s (%(detail)s), and it %(state)s: it may yet be deleted, '
        'with its providers; see History (its entries say "Outcome '
        'unknown") and check Nova before trying again'),
    'service.deleted_unjournaled': N_(
        'compute service %(host)s was deleted, but recording it in the '
        'journal failed: see History and the logs; nothing more was '
        'attempted'),
    'decommission.interrupted': N_(
        'an error interrupted the decommission of %(host)s after the steps '
        'above: see History and the logs before trying again'),
    'service.journal_before': N_(
        'not attempted: the journal could not record the delete of compute '
        'service %(host)s first, so it was not sent (the error is in the '
        'logs)'),

    # Names of repairs and verdicts inside a sentence: the registries'.
    **{'action.' + code: kind.name
       for code, kind in m.ACTION_KINDS.items()},
    **{'verdict.' + code: kind.name
       for code, kind in m.VERDICT_KINDS.items()},
    # A listing's parts, joined from the last back (see listing()).
    'list': N_('%(first)s, %(rest)s'),
    'list.semicolon': N_('%(first)s; %(rest)s'),
    'nothing': N_('nothing'),

    # What a down cell hides from an audit (reasons.down_cells).
    'cells.down': N_(
        'A cell is down: Nova could not reach it, so this audit is '
        'partial. Nova answered without it after %(seconds)d s, and each of '
        'its listings waits about as long while the cell stays down or '
        'slow. Until it is back, these are protected: %(protected)s.'),
    'cells.down_at_once': N_(
        'A cell is down: Nova could not reach it and answered at once '
        'without it, so this audit is partial. Until it is back, these are '
        'protected: %(protected)s.'),
    'cells.slow': N_(
        'A cell is slow: Nova waited its whole cell timeout for it and '
        'answered without it after %(seconds)d s, so this audit is '
        'partial, and each of its listings waits as long while the cell '
        'stays slow. Until it answers in time, these are protected: '
        '%(protected)s.'),
    'cells.down_hosts': N_(
        'the allocations on the compute hosts of the down cells: %(hosts)s '
        '(their servers Nova returned as partial records: %(servers)d)'),
    'cells.slow_hosts': N_(
        'the allocations on the compute hosts of the slow cells: %(hosts)s '
        '(their servers Nova returned as partial records: %(servers)d)'),
    'cells.unconfirmed': N_(
        'those on providers Nova could not confirm as compute nodes: '
        '%(providers)s'),
    'cells.unknown': N_('and every consumer Nova does not know'),

    # Restores: what may be restored, and what a restore brings back.
    'restore.service': N_(
        'compute service %(host)s was deleted for good: a restore does not '
        're-create it'),
    'restore.refused': N_(
        'entry %(entry)d changed nothing: Placement refused it'),
    'restore.not_latest_consumer': N_(
        'entry %(entry)d is not the latest change of consumer %(subject)s '
        'still in effect (restore entry %(allowed)s first)'),
    'restore.not_latest_provider': N_(
        'entry %(entry)d is not the latest change of provider %(subject)s '
        'still in effect (restore entry %(allowed)s first)'),
    'restore.deleted_server': N_(
        'server %(server)s is deleted: restoring gives a deleted server its '
        'allocations back'),
    'restore.ended_migration': N_(
        'migration %(migration)s has ended (%(status)s): restoring puts back '
        'a stale migration allocation'),
    'restore.nova_unreadable': N_(
        'Nova could not be asked what this consumer is now (%(error)s): the '
        'restore is checked against Placement only'),
    'restore.recreated': N_(
        'entry %(entry)d re-created provider %(provider)s; delete the '
        'provider to undo it'),
    'restore.exists_again': N_(
        'provider %(name)s (%(provider)s) exists again'),
    'restore.name_taken': N_(
        'its name %(name)s is provider %(provider)s\'s now (a host '
        'reinstalled under its old name: nova-compute created it for its '
        'new node), and Placement refuses a second provider of one name'),
    'restore.parent_gone': N_(
        'its parent provider %(parent)s is gone: restore that one first'),
    'restore.changed': N_('changed since the preview: review it again'),
    'restore.neutron_unread': N_(
        "Neutron could not be read (%(detail)s): the ports' bindings it also "
        'wrote cannot be checked now'),
    'restore.no_neutron': N_(
        "it also wrote ports' bindings in Neutron, which is not in this "
        'catalog: they cannot be put back from here'),

    # What became of a repair or a decommission, in the shell's words.
    'write.done': N_('done'),
    'write.failed': N_('Placement failed: %(detail)s'),
    'write.done_unanswered': N_(
        'done: Placement answered with an error (%(detail)s), but read back, '
        'the consumer holds what this change writes'),
    'write.failed_other': N_(
        'Placement failed (%(detail)s), and the consumer now holds %(now)s: '
        'neither what it held nor what this change writes; review it again'),
    'write.unknown': N_(
        'Placement gave no clear answer (%(detail)s), and the consumer '
        '%(state)s; History keeps what it held: check the consumer later, '
        'and restore the entry if the write landed'),
    'write.binding_unknown': N_(
        "Neutron gave no clear answer on port %(port)s's binding "
        '(%(detail)s), and it %(state)s, so Placement was not written; if '
        'the binding names the new provider, put it back with %(command)s'),
    'provider.done_unanswered': N_(
        'done: Placement answered with an error (%(detail)s), but read back, '
        'provider %(name)s is as this change leaves it'),
    'provider.unknown': N_(
        'Placement gave no clear answer (%(detail)s), and provider '
        '%(name)s %(state)s: check it in Placement before trying again '
        '(see History)'),
    # How a write's subject, read back, leaves its outcome unknown.
    'unknown.before': N_(
        'was still as it was %(seconds)g s later, so the write may yet land'),
    'unknown.other': N_('was only partly written %(seconds)g s later'),
    'unknown.unread': N_('could not be read back'),
    'unknown.unsettled': N_('kept changing for %(seconds)g s'),
    'write.repaired_by_other': N_(
        'consumer already repaired by another row of this batch'),
    'write.halted_journal': N_(
        'not attempted: the journal failed on an earlier row'),
    'changed.allocations': N_(
        'its allocations changed since the preview (it now holds %(now)s): '
        'review them again'),
    'changed.after': N_(
        'the repair would now write %(after)s, not what you confirmed: '
        'review it again'),
    'changed.partner': N_(
        'consumer %(consumer)s, which this repair writes too, changed '
        'since the preview: it now holds %(now)s'),
    'changed.binding': N_(
        'the binding of port %(port)s changed since the preview: review it '
        'again'),
    'provider.gone': N_('provider %(provider)s no longer exists'),
    'provider.compute_node': N_(
        'Nova still has compute node %(name)s: delete its compute service '
        'instead, which deletes its provider'),
    'provider.unmapped': N_(
        'Nova answers it has no compute node %(name)s, but lists no node '
        'for the compute services %(services)s: it may be one of theirs, '
        'on a host not mapped to a cell yet (run nova-manage cell_v2 '
        'discover_hosts), not gone'),
    'provider.replaced': N_(
        "Nova has a new compute node %(node)s named %(name)s on host "
        "%(host)s (the host was reinstalled, or its compute service "
        "deleted and started again), and nova-compute cannot create its "
        "provider while this one keeps the name: once this one holds "
        "nothing, delete it, and nova-compute creates the new one on its "
        "next periodic update (or restart)"),
    'provider.unproven': N_(
        'Nova did not say compute node %(name)s is gone: it may still be '
        'alive'),
    'provider.sharing': N_(
        'provider %(name)s is a sharing provider of its aggregate, not a '
        'compute node'),
    'provider.foreign_children': N_(
        "provider %(name)s has children that are not proven Nova's: "
        '%(children)s'),
    'provider.holds': N_(
        'provider %(name)s still holds allocations: repair them first'),
    'provider.changed': N_(
        'provider %(name)s changed since the preview: review it again'),
    'provider.halted': N_(
        'not attempted: an earlier provider was not deleted'),
    'decommission.gone': N_('%(name)s is already gone'),
    'decommission.blocked': N_('nothing written: %(blockers)s'),
    'decommission.appeared': N_(
        'consumer %(consumer)s appeared since the preview: review it again'),
    'decommission.repairs_failed': N_(
        'not attempted: the compute service and the providers are kept, '
        'since not every repair went through'),
    'decommission.held': N_('not attempted: %(held)s'),
    'decommission.still_holds': N_(
        'provider %(provider)s still holds allocations of %(consumers)s'),
    'decommission.changed': N_(
        'not attempted: %(changes)s changed since the preview; the compute '
        'service and the providers are kept'),
    'decommission.service_now': N_(
        'compute service %(host)s is now %(uuid)s'),
    'decommission.providers': N_('providers %(providers)s'),
    'service.refused': N_(
        'Nova did not delete compute service %(host)s: %(detail)s; its '
        'providers are kept'),
    'service.deleted': N_('compute service %(host)s deleted'),
    'provider.deleted_by_nova': N_('provider %(name)s deleted by Nova'),

    # What a repair leaves in Cyborg (audit/accelerators.py).
    'accelerator.bound': N_(
        'Cyborg keeps accelerator requests bound to this server '
        '(%(requests)s), which Nova deletes when it deletes a server; this '
        'repair writes nothing to Cyborg: delete them afterwards with '
        '%(command)s, where SERVICE_TOKEN is a token of a user with the '
        'service role (Nova\'s service user): Cyborg refuses an admin\'s '
        'token alone'),
    'accelerator.request': N_('%(uuid)s (%(state)s, device profile '
                              '%(profile)s, on %(host)s)'),
    'accelerator.unread': N_(
        'Cyborg could not be read: whether it keeps accelerator requests '
        'bound to this server is unknown'),

    # What a repair that makes room acts on (audit/capacity.py).
    'capacity.excess_worse': N_(
        'Placement refuses this write: it leaves %(provider)s holding '
        '%(after)d %(resource_class)s of a capacity of %(capacity)d, more '
        'than the %(now)d it holds now'),
    'capacity.excess_refused': N_(
        'this Placement (older than 14.0.0) refuses this write with 400 '
        '(bug 2104040): %(provider)s is over capacity in %(resource_class)s '
        '(it holds %(now)d of a capacity of %(capacity)d, and %(after)d '
        'after this write), and it refuses any write onto a provider over '
        'capacity, even one that makes it no worse; raise its allocation '
        'ratio or lower its reserved first'),
    'capacity.excess_unknown': N_(
        'Placement older than 14.0.0 (2025.2) refuses this write with 400 '
        '(bug 2104040): %(provider)s is over capacity in %(resource_class)s '
        '(it holds %(now)d of a capacity of %(capacity)d, and %(after)d '
        'after this write); 14.0.0 and newer take it, since it makes it no '
        'worse (set ORPHAN_AUDIT_PLACEMENT_RELEASE to say which this cloud '
        'runs)'),
    'capacity.server': N_('server %(server)s'),
    'capacity.migration': N_('migration %(migration)s of server %(server)s'),
    # Why a flavor fits no provider of a tree, even after the repairs.
    'capacity.short': N_(
        '%(resource_class)s %(short)d short (it needs %(amount)d; at most '
        '%(free)d free on one provider, the recommended repairs done)'),
    'capacity.no_class': N_('it has no %(resource_class)s'),
    'capacity.unit': N_(
        'one allocation of %(amount)d %(resource_class)s is outside its '
        'unit limits (from %(min)d to %(max)d in steps of %(step)d)'),
    # Why a compute node takes no new server, whatever its capacity.
    'capacity.forced_down': N_('its compute service is forced down: Nova '
                               'schedules no server there'),
    'capacity.service_down': N_('its compute service is down: Nova '
                                'schedules no server there'),
    'capacity.disabled': N_('its compute service is disabled: Nova '
                            'schedules no server there'),

    # What the image of a server says of its needs (audit/server_needs.py).
    'cannot.image_conflict': N_(
        "its flavor's %(flavor_key)s=%(flavor_value)s conflicts with its "
        "image's %(image_key)s=%(image_value)s: Nova would refuse it, so "
        'what it needs cannot be computed'),
    'image.unshown': N_(
        'Nova did not show the properties of image %(image)s as it booted '
        'the server from it (compute API 2.98 and later show them)'),
    'image.volume': N_(
        'it boots from a volume, whose image properties Nova copied at '
        'boot and does not show (Cinder\'s volume image metadata may have '
        'been edited since)'),
    'image.gone': N_('the server was deleted before Nova showed the '
                     'properties of its image %(image)s'),
    'image.down': N_('Nova did not answer when asked for the properties '
                     'of its image %(image)s'),
    'image.forbidden': N_('Nova refused to show the server, and the '
                          'properties of its image %(image)s with it'),
    'protected.image_unread': N_(
        'holds %(held)s here where its flavor %(flavor)s alone needs '
        "%(needs)s; its image's properties (CPU pinning, memory "
        'encryption) could explain the difference, but %(why)s: never '
        'rewritten'),
    'cannot.image_unread': N_(
        'server %(server)s holds %(held)s, which properties of its image '
        'could explain where its flavor alone needs %(needs)s, but '
        '%(why)s: it is not rewritten'),
}
