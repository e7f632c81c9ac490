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

"""Why: a verdict's reason, a refused repair, what Nova says, as a code
with its parameters.

The engine has no Django, so it cannot translate; it says why in a
:class:`Reason` that the panel renders with ``gettext`` and the CLI with
``str()`` (English).  The messages themselves, by code, are
:mod:`.messages`'s.
"""

import dataclasses

from orphan_dashboard.audit.messages import IDENTIFIERS
from orphan_dashboard.audit.messages import MESSAGES
from orphan_dashboard.audit import model as m


def _english(message):
    return message


@dataclasses.dataclass(frozen=True, slots=True)
class Reason:
    """A message code and its parameters: strings, numbers or reasons."""

    code: str
    params: tuple = ()
    """``((name, value), ...)``, sorted, so a reason can be hashed."""

    def render(self, gettext=_english, number=None):
        """The sentence, each part translated by ``gettext``; with
        ``number``, each amount written by it (the panel groups thousands
        as the user's locale does), never an identifier
        (:data:`~.messages.IDENTIFIERS`)."""
        if self.code in _LISTS and self.params[0][0] == 'parts':
            # (A nested listing from a cache written before renders below.)
            return _joined(self.params[0][1], gettext, self.code, number)
        message = gettext(MESSAGES[self.code])
        params = {}
        for name, value in self.params:
            if isinstance(value, Reason):
                value = value.render(gettext, number)
            elif (number is not None and type(value) is int and
                  name not in IDENTIFIERS):
                message = message.replace('%%(%s)d' % name, '%%(%s)s' % name)
                value = number(value)
            params[name] = value
        return message % params

    def __str__(self):
        return self.render()


def reason(code, **params):
    """The :class:`Reason` ``code`` with ``params``."""
    if code not in MESSAGES:
        raise KeyError('no message %r' % code)
    return Reason(code, tuple(sorted(params.items())))


def _name(kind, code):
    key = '%s.%s' % (kind, code)
    return reason(key) if key in MESSAGES else code


def action_name(action):
    """A repair's name inside a sentence ("delete and heal")."""
    return _name('action', action)


def verdict_name(verdict):
    """A verdict's name inside a sentence ("stale migration")."""
    return _name('verdict', verdict)


_LISTS = ('list', 'list.semicolon')


def _joined(parts, gettext, code='list', number=None):
    """The "list" message applied from the last part back, in a loop: a
    reason nesting one level per part recursed as deep as the list is long
    (a host's thousands of servers)."""
    pattern = gettext(MESSAGES[code])
    joined = render(parts[-1], gettext, number)
    for part in reversed(parts[:-1]):
        joined = pattern % {'first': render(part, gettext, number),
                            'rest': joined}
    return joined


def listing(parts):
    """``parts`` (reasons or strings) joined with commas, each translated;
    one flat reason however many parts there are."""
    parts = tuple(parts)
    if not parts:
        return reason('nothing')
    if len(parts) == 1:
        return parts[0]
    return reason('list', parts=parts)


def sentences(parts):
    """``parts`` joined with semicolons, as :func:`listing` joins them
    with commas: whole clauses, each translated."""
    parts = tuple(parts)
    if len(parts) > 1:
        return reason('list.semicolon', parts=parts)
    return listing(parts)


def down_cells(report):
    """What a down (or slow) cell hid from ``report``'s audit, as one
    sentence: slow where Nova waited its cell timer out for it, as
    measured, with the seconds it cost (a down cell Nova answers without
    at once costs none); the providers Nova could not confirm only where
    there are any."""
    slow = getattr(report, 'cell_slow', False)
    hosts = dict(hosts=listing(report.skipped_hosts),
                 servers=report.down_cell_servers)
    protected = [reason('cells.slow_hosts', **hosts) if slow else
                 reason('cells.down_hosts', **hosts)]
    if report.unconfirmed:
        protected.append(reason('cells.unconfirmed',
                                providers=listing(report.unconfirmed)))
    protected = sentences(protected + [reason('cells.unknown')])
    if slow:
        return reason('cells.slow', seconds=report.cell_wait,
                      protected=protected)
    if not report.cell_wait:
        return reason('cells.down_at_once', protected=protected)
    return reason('cells.down', seconds=report.cell_wait,
                  protected=protected)


def neutron_unread(report):
    """Why ``report``'s audit could not read Neutron's ports, as one
    sentence, or None when it could, nobody asked, or no port allocation
    was protected for it (a cloud with no NIC provider in use)."""
    if not getattr(report, 'ports_unjudged', 0):
        return None
    return {m.NEUTRON_ABSENT: reason('neutron.absent'),
            m.NEUTRON_DOWN: reason('neutron.down'),
            m.NEUTRON_FORBIDDEN: reason('neutron.forbidden'),
            m.NEUTRON_HIDDEN: reason('neutron.hidden')}.get(
                getattr(report, 'neutron', None))


def unproven_nodes(report):
    """The compute nodes Nova's listing left out and Nova did not answer
    for alone, as one sentence, or None (while a cell is down,
    :func:`down_cells` says it)."""
    if getattr(report, 'down_cells', False) or \
            not getattr(report, 'unconfirmed', ()):
        return None
    return reason('nodes.unproven', providers=listing(report.unconfirmed))


def hidden_by_policy(report):
    """What a policy rule the user lacks hid from ``report``'s audit, as
    one sentence, or None."""
    return sentences([reason('policy.hidden', rule=rule, count=count)
                      for rule, count in getattr(report, 'hidden', ())]) \
        if getattr(report, 'hidden', ()) else None


def report_notes(report):
    """What the panel's index and ``orphan-audit``'s text say above the
    findings of ``report``, beside a down cell (:func:`down_cells`): each
    sentence of :func:`neutron_unread`, :func:`hidden_by_policy` and
    :func:`unproven_nodes` that applies."""
    return [note for note in (neutron_unread(report),
                              hidden_by_policy(report),
                              unproven_nodes(report)) if note]


def not_ours(provider, owner, suspect=False):
    """Why ``provider`` (its name in words) is not ours to delete: its
    ``owner`` is another service's, or nobody proved it Nova's (None;
    ``suspect``: though its inventory is a compute node's)."""
    if suspect:
        return reason('blocker.suspect', provider=provider)
    if owner is None:
        return reason('blocker.not_proven', provider=provider)
    return reason('blocker.not_nova', provider=provider, owner=owner)


def replaced(name, node):
    """What an operator is told of the provider ``name`` whose compute
    node Nova created anew as ``node`` (a :class:`~model.Hypervisor`):
    delete it once empty, and nova-compute makes the new one."""
    return reason('provider.replaced', name=name, node=node.uuid,
                  host=node.host or '-')


def image_unread(server):
    """Why the properties of the image Nova booted ``server`` from are not
    known, as a clause."""
    fault, image = server.image_fault, server.image_ref
    if fault == m.IMAGE_GONE:
        return reason('image.gone', image=image)
    if fault == m.IMAGE_DOWN:
        return reason('image.down', image=image)
    if fault == m.IMAGE_FORBIDDEN:
        return reason('image.forbidden', image=image)
    if fault == m.IMAGE_VOLUME or not image:
        return reason('image.volume')
    return reason('image.unshown', image=image)


def render(value, gettext=_english, number=None):
    """``value`` as text: a :class:`Reason` rendered, anything else as is."""
    return value.render(gettext, number) if isinstance(value, Reason) \
        else value


class Refusal(Exception):
    """An exception whose message is a :class:`Reason`."""

    def __init__(self, why):
        super().__init__(why)
        self.reason = why

    def __str__(self):
        return str(self.reason)


def owner_named(value, names):
    """An incomplete consumer's reason naming its server's project and
    user as Keystone does (``names``: ``{'projects': {id: name},
    'users': {id: name}}``), rather than by their ids; any other value as
    it is."""
    if getattr(value, 'code', None) != 'incomplete_consumer':
        return value
    params = dict(value.params)
    projects, users = names.get('projects', {}), names.get('users', {})
    return reason(value.code,
                  project=projects.get(params['project'], params['project']),
                  user=users.get(params['user'], params['user']))


def server_named(value, servers):
    """A reason whose server is only its uuid (a consumer read alone, its
    server not read with it: a migration's) naming that server as
    ``servers`` (``{uuid: name}``) does, its uuid beside; any other value
    as it is."""
    params = dict(getattr(value, 'params', ()))
    server = params.get('server')
    if not isinstance(server, str) or not servers.get(server):
        return value
    return reason(value.code, **dict(params, server=named(server, servers)))


def named(uuid, names):
    """A uuid as an operator knows it: its name with the uuid beside it
    (scripts and searches still find it), else the uuid alone."""
    name = names.get(uuid) if uuid else None
    if not name:
        return uuid or '-'
    return '%s (%s)' % (name, uuid)


def format_resources(resources, number=str):
    """``{class: amount}`` as ``DISK_GB=10, MEMORY_MB=512, VCPU=1``, each
    amount written by ``number``."""
    return ', '.join('%s=%s' % (rc, number(resources[rc]))
                     for rc in sorted(resources))


def format_allocations(allocations, names=None):
    """A consumer's allocations, providers by name where ``names`` has it;
    the "nothing" :class:`Reason` when there are none."""
    if not allocations:
        return reason('nothing')
    names = names or {}
    return '; '.join('%s: %s' % (names.get(p, p), format_resources(r))
                     for p, r in sorted(allocations.items()))
