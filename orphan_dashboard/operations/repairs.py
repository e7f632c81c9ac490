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

"""Repairs (use case): the rows to repair, a fresh preview of each, and
applying what was previewed (re-verified, journaled, generation-checked).
"""

from orphan_dashboard.audit import limits
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan as planning
from orphan_dashboard.writing import equivalents
from orphan_dashboard.writing import providers
from orphan_dashboard.writing import repair
from orphan_dashboard.writing import write

Selection = m.Selection
ProviderPlan = repair.ProviderPlan
Outcome = write.Outcome
DONE = write.DONE
SKIPPED = write.SKIPPED
FAILED = write.FAILED
UNKNOWN = write.UNKNOWN
"""What a front end names of a repair: the row chosen, a provider's plan,
an outcome and its status."""
commands = equivalents.for_plan
"""The ``openstack`` commands that do what a plan does, shown with it."""


def selections(summary, chosen, provider_uuids):
    """The rows to repair: ``chosen`` as they are, plus the recommended
    repair of every consumer with a finding on ``provider_uuids`` in the
    ``summary`` the operator was shown (None before the first audit), each
    once (a row ticked and its hypervisor too).

    Returns ``(selections, instance hints)``: the servers whose migrations
    the engine reads too.  Raises ``LookupError`` for a provider the
    report does not have.
    """
    problems = []
    for provider_uuid in provider_uuids:
        provider = summary and summary.provider(provider_uuid)
        if provider is None:
            raise LookupError(provider_uuid)
        problems.extend(provider.problems)
    found = list(dict.fromkeys(
        list(chosen) + planning.recommended_selections(problems)))
    return found, planning.instance_hints(
        summary.findings if summary else [], found)


def recommended(report, only=None):
    """Every recommended repair of ``report``, with its instance hints;
    of the verdicts ``only`` alone where given
    (:func:`~.audit.limits.eligible`)."""
    found = planning.recommended_selections(
        limits.eligible(report.problems, only))
    return found, planning.instance_hints(report.findings, found)


def bounded(report, bounds):
    """A run of every recommended repair of ``report`` within ``bounds``
    (a :class:`~.audit.limits.Limits`): its selections of the verdicts
    ``bounds.only``, their instance hints, and the
    :class:`~.audit.limits.Decision` whether it may write them."""
    found, hints = recommended(report, bounds.only)
    return found, hints, limits.decide(bounds, found, report.findings)


def preview(clients, selections_, settings, instance_hints=()):
    """A fresh plan (or the reason there is none) for each selection, a
    consumer's repair once (:func:`once`)."""
    return once(repair.preview(clients.placement, clients.nova, selections_,
                               min_age=settings.min_age,
                               instance_hints=instance_hints,
                               network_client=clients.network))


def once(rows):
    """One row per consumer and repair, where the first of them stood:
    every repair writes the whole consumer, so a consumer chosen on two of
    its providers (a server's leftover on a host and its port's bandwidth
    on that host's NIC) is one write, previewed and confirmed once.  The
    row kept is the first with a plan, else the first."""
    kept = {}
    for row in rows:
        key = (row.selection.consumer, row.selection.action)
        if key not in kept or (row.plan and not kept[key].plan):
            kept[key] = row     # (a key replaced keeps its place)
    return list(kept.values())


def apply(clients, journal, plans, settings, instance_hints=()):
    """Re-verify, journal and write each confirmed plan; an outcome each."""
    return repair.apply(clients.placement, clients.nova, journal, plans,
                        min_age=settings.min_age,
                        instance_hints=instance_hints,
                        network_client=clients.network)


def apply_previewed(clients, journal, rows, settings, instance_hints=()):
    """Apply every plan of the previewed ``rows``; the rows with none are
    skipped, with the reason their preview gave."""
    outcomes = apply(clients, journal, [r.plan for r in rows if r.plan],
                     settings, instance_hints)
    return outcomes + [write.Outcome(r.selection, write.SKIPPED, r.error)
                       for r in rows if r.plan is None]


def preview_provider_delete(clients, roots):
    """A fresh plan for deleting each orphaned provider tree."""
    return providers.preview_provider_delete(clients.placement, clients.nova,
                                             roots)


def delete_providers(clients, journal, plans):
    """Re-verify, journal and delete each confirmed provider tree."""
    return providers.delete_providers(clients.placement, clients.nova,
                                      journal, plans)
