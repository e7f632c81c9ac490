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

"""``{{ value|reason }}``: the engine's reasons in the user's language."""

from django import template

from orphan_dashboard.content.orphaned_allocations import labels

register = template.Library()


@register.filter
def reason(value):
    """A :class:`~orphan_dashboard.audit.reasons.Reason` translated; any
    other value as it is."""
    return labels.reason(value)


@register.filter
def breakable(name):
    """A name a narrow cell wraps after its colons, never mid-word."""
    return labels.breakable(name)


@register.filter
def breakable_resources(resources):
    """Resources a narrow cell (a preview's side) wraps after their
    underscores too."""
    return labels.breakable_resources(resources)


@register.filter
def snapshot_age(taken_at):
    """The status line's age of the audit snapshot."""
    return labels.snapshot_age(taken_at)
