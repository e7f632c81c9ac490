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

"""What a repair leaves in Cyborg (pure: no I/O).

Nova deletes a server's accelerator requests (ARQs) when it deletes the
server (``delete_arqs_if_needed``); a server deleted behind its back, or
archived, keeps them bound, and deleting its allocation leaves them so.
The preview names them and the call that deletes them; nothing is written
to Cyborg.  Cyborg lets only a caller with a service token (a user with
the ``service`` role, as Nova's service user is) delete a bound ARQ: an
admin's token alone gets 403.
"""

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons

UNBOUND_STATES = frozenset({'Initial', 'Unbound'})
"""States in which an ARQ names no instance; any other, or none said, is
one still held for its server (``Bound``, ``BindStarted``, ``BindFailed``,
``Deleting``)."""


def asked(plan):
    """Whether a write leaves a server's own consumer holding nothing:
    only then may Cyborg keep ARQs that nothing in Nova owns (a repair that
    keeps the server's allocation keeps a live server's ARQs too).  A
    migration's consumer holds no ARQs: Cyborg binds them to the
    instance."""
    return (plan is not None and plan.verdict != m.STALE_MIGRATION and
            not any(plan.after.values()))


def notes(arqs, url):
    """What a preview says of one server's ARQs (Cyborg's bodies):
    those still bound and the call that deletes them (``url``), or, with
    ``arqs`` None (Cyborg could not be read), that what it holds is
    unknown."""
    if arqs is None:
        return (reasons.reason('accelerator.unread'),)
    bound = sorted((a for a in arqs if a.get('state') not in UNBOUND_STATES),
                   key=lambda a: a.get('uuid') or '')
    if not bound:
        return ()
    listed = reasons.listing(
        reasons.reason('accelerator.request', uuid=a.get('uuid') or '-',
                       state=a.get('state') or '-',
                       profile=a.get('device_profile_name') or '-',
                       host=a.get('hostname') or '-')
        for a in bound)
    return (reasons.reason(
        'accelerator.bound', requests=listed, command=delete_command(url)),)


def delete_command(url):
    """The call Nova's delete makes, for an operator to make: Cyborg wants
    a service token beside the admin's."""
    return ("curl -X DELETE '%s' -H \"X-Auth-Token: $(openstack token issue "
            "-f value -c id)\" -H \"X-Service-Token: $SERVICE_TOKEN\"" % url)
