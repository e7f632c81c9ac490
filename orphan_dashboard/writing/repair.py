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

"""What a repair is previewed as and written from (I/O's data): a row of
a preview, and a provider's plan, each with the ``openstack`` commands
that do the same (:mod:`writing.equivalents`)."""

import dataclasses
import typing

from orphan_dashboard.audit import model as m
from orphan_dashboard.writing import equivalents


@dataclasses.dataclass(frozen=True)
class ProviderPlan:
    """Delete a provider (``record`` is all it holds), or re-create it."""

    action: str
    provider: str
    name: str
    generation: typing.Optional[int]
    record: dict
    """What the provider holds before (delete) or after (restore)."""

    @property
    def selection(self):
        return m.Selection('', self.provider, self.action)


@dataclasses.dataclass
class Row:
    selection: m.Selection
    plan: typing.Any = None
    """A :class:`~model.Plan`, a :class:`ProviderPlan`, or None."""
    error: typing.Any = None
    """Why no plan: the engine's :class:`~reasons.Reason` or this
    module's own words."""
    notes: tuple = ()
    """What the operator should know before confirming."""
    finding: typing.Optional[m.Finding] = None
    """The row's finding as just re-read (what Nova says of it now)."""
    server: typing.Optional[str] = None
    """The name of the consumer's server as just read, where it has one
    (a restore's row, which has no finding)."""

    @property
    def commands(self):
        return equivalents.for_plan(self.plan)
