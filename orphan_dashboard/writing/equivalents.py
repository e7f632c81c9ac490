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

"""The ``openstack`` commands that make by hand the write a plan makes
(pure text): what a preview shows, and what a failed rollback tells the
operator to type.  Built here alone, at the microversions our own writes use
(:mod:`~api.microversions`)."""

import dataclasses
import json
import shlex

from orphan_dashboard.api import microversions as mv
from orphan_dashboard.audit import model as m


def for_plan(plan):
    """The commands of any plan: a consumer's :class:`~model.Plan`, a
    provider's delete or re-creation
    (:class:`~writing.repair.ProviderPlan`), none for no plan."""
    if plan is None:
        return []
    if isinstance(plan, m.Plan):
        return _consumer_commands(plan)
    return _provider_commands(plan)


def binding(port, profile):
    """The ``openstack port set`` (or ``unset``) that gives ``port`` the
    allocation of the binding ``profile`` (the client merges it into the
    binding)."""
    if profile.get('allocation') is None:
        return shlex.join(['openstack', 'port', 'unset', '--binding-profile',
                           'allocation', port])
    return shlex.join(['openstack', 'port', 'set', '--binding-profile',
                       json.dumps({'allocation': profile['allocation']},
                                  sort_keys=True), port])


def _consumer_commands(plan):
    """The commands that leave Neutron's bindings and Placement as
    ``plan`` does, in its order: ``openstack port set`` of each binding
    first, then osc-placement's.

    Generation-safe forms only: at :data:`~api.microversions.WRITE`
    ``allocation set`` and ``unset`` send the consumer generation they read
    (``allocation delete`` sends none, so an emptied consumer is shown as
    ``unset`` of everything).
    """
    return [binding(port, change['after'])
            for port, change in sorted(plan.ports.items())] + \
        _placement_commands(plan) + _partner_commands(plan)


def _partner_commands(plan):
    """The other consumer's command of a write of two (osc-placement has
    no ``POST /allocations``: by hand, the two are not one write)."""
    partner = plan.partner
    if not partner:
        return []
    return _placement_commands(dataclasses.replace(
        plan, consumer=partner['consumer'], before=partner['before'],
        after=partner['after'], generation=partner['generation'],
        project_id=partner['project_id'], user_id=partner['user_id'],
        before_project=None, before_user=None, ports={}, partner=None))


def _placement_commands(plan):
    base = ['openstack', '--os-placement-api-version', mv.WRITE,
            'resource', 'provider', 'allocation']
    if not plan.after:
        return [shlex.join(base + ['unset', plan.consumer])]
    removed = sorted(set(plan.before) - set(plan.after))
    kept_as_is = all(plan.before.get(p) == r for p, r in plan.after.items())
    if removed and kept_as_is and not plan.changes_owner:
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


def _provider_commands(plan):
    if plan.action == m.DELETE_PROVIDER:
        return [shlex.join(['openstack', 'resource', 'provider', 'delete',
                            plan.provider])]
    create = ['openstack', '--os-placement-api-version',
              mv.OSC_PROVIDER_CREATE,
              'resource', 'provider', 'create', '--uuid', plan.provider]
    if plan.record.get('parent_provider_uuid'):
        create += ['--parent-provider', plan.record['parent_provider_uuid']]
    return [shlex.join(create + [plan.name])]


def service_delete(service_uuid):
    """The command that deletes a compute service (Nova names it by uuid
    from 2.53)."""
    return shlex.join(['openstack', '--os-compute-api-version', mv.SERVICES,
                       'compute', 'service', 'delete', service_uuid])
