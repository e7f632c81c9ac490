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

"""The blast radius of an unattended repair run (pure).

One wrong listing, or a Nova bug that empties a cell, makes every consumer
look orphaned: a run from cron would then write thousands of them before
anyone looks.  Operators' own tools stop such runs (``nova-manage placement
heal_allocations --max-count``, Kubernetes' node lifecycle controller and
its ``--unhealthy-zone-threshold``); so does a run here that would write
more consumers, or a larger share of them, than it was allowed: it writes
none.  Both front ends decide it here (:func:`decide`).
"""

import collections
import dataclasses
import typing

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import reasons

MAX_WRITES = 'max_writes'
MAX_SHARE = 'max_share'
"""The limit a held run went past (:attr:`Decision.exceeded`)."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """What a run may repair; None: no limit."""

    only: typing.Optional[frozenset] = None
    """The verdicts it repairs (:data:`~model.RECOMMENDED` names)."""
    max_writes: typing.Optional[int] = None
    """Consumers it may write."""
    max_share: typing.Optional[float] = None
    """Percentage of the audit's consumers it may write."""


NO_LIMITS = Limits()


@dataclasses.dataclass(frozen=True)
class Decision:
    """What a run would write, and the limit it would go past if any."""

    writes: dict
    """``{verdict: consumers}``, registry order, only verdicts it writes."""
    consumers: int
    """Every consumer of the audit (the share's whole)."""
    exceeded: typing.Optional[str] = None
    """:data:`MAX_WRITES` or :data:`MAX_SHARE` (the run writes nothing),
    or None (it may write)."""
    limit: typing.Optional[float] = None
    """The value of the limit it went past."""

    @property
    def held(self):
        return self.exceeded is not None

    @property
    def total(self):
        return sum(self.writes.values())

    @property
    def share(self):
        """The consumers it would write, as a percentage of all."""
        return 100.0 * self.total / self.consumers if self.consumers else 0.0


def eligible(problems, only):
    """The ``problems`` a run repairing the verdicts ``only`` (None: all)
    may repair.  One write puts a whole consumer right: a consumer with a
    problem of another verdict as well is left whole."""
    if only is None:
        return list(problems)
    elsewhere = {f.consumer for f in problems if f.verdict not in only}
    return [f for f in problems if f.consumer not in elsewhere]


def decide(limits, writes, findings, consumers=None):
    """Whether a run that would write ``writes`` (one selection per
    consumer: anything with a ``consumer`` and a ``provider``) may write
    them under ``limits``; ``findings``, every finding of its audit, give
    each write its verdict, and the consumers its share is of where
    ``consumers`` (their count) is not given."""
    verdicts = {(f.consumer, f.provider): f.verdict for f in findings}
    counted = collections.Counter(verdicts.get((w.consumer, w.provider))
                                  for w in writes)
    decision = Decision(
        {v: counted[v] for v in m.VERDICTS if counted[v]},
        len({f.consumer for f in findings}) if consumers is None
        else consumers)
    if limits.max_writes is not None and \
            decision.total > limits.max_writes:
        return dataclasses.replace(decision, exceeded=MAX_WRITES,
                                   limit=limits.max_writes)
    if limits.max_share is not None and \
            decision.share > limits.max_share:
        return dataclasses.replace(decision, exceeded=MAX_SHARE,
                                   limit=limits.max_share)
    return decision


def refusal(decision):
    """Why a held run wrote nothing (:class:`~reasons.Reason`): what it
    would have written, and the limit it went past."""
    values = dict(writes=decision.total, limit=decision.limit,
                  share='%.1f' % decision.share,
                  verdicts=', '.join('%s %d' % item
                                     for item in decision.writes.items()))
    if decision.exceeded == MAX_WRITES:
        return reasons.reason('held.max_writes', **values)
    return reasons.reason('held.max_share', **values)
