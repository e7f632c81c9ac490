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

"""The panel's labels as template filters: ``{{ value|reason }}`` (the
engine's reasons in the user's language), ``|breakable`` and
``|breakable_resources`` (a name a narrow cell wraps after its colons, or
a resource list after its underscores too, never mid-word) and
``|snapshot_age`` (the status line's age of the audit snapshot)."""

from django import template

from orphan_dashboard.content.orphaned_allocations import labels

register = template.Library()

for _filter in (labels.reason, labels.breakable, labels.breakable_resources,
                labels.snapshot_age):
    register.filter(_filter.__name__, _filter)
