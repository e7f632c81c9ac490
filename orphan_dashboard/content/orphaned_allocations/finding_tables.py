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

"""The allocations table: one row per consumer on a provider of the tree
(:class:`presenters.ShownFinding`), from a hypervisor's page."""

from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from horizon import tables

from orphan_dashboard.content.orphaned_allocations import actions
from orphan_dashboard.content.orphaned_allocations import filters
from orphan_dashboard.content.orphaned_allocations import labels


def _finding_id(finding):
    return '%s:%s' % (finding.consumer, finding.provider)


def _server_link(row):
    """A consumer that is a server links to it."""
    if row.live and row.instance == row.consumer:
        return actions.instance_url(row.instance)
    return None


def _migrated_server_link(row):
    """A migration's "In Nova" links to its server."""
    if row.live and row.instance != row.consumer:
        return actions.instance_url(row.instance)
    return None


def _verdict(finding):
    """The translated verdict; the engine's code stays in the markup."""
    return format_html('<span class="orphan-verdict" data-verdict="{}">{}'
                       '</span>', finding.verdict,
                       labels.verdict(finding.verdict))


def _project(row):
    return row.project_name or row.project_id


def _user(row):
    return row.user_name or row.user_id


def _consumer(row):
    """The consumer (a server links to it), and below 1200 px, where the
    Project and User columns are left out, its project and user under it."""
    url = _server_link(row)
    consumer = format_html('<a href="{}">{}</a>', url, row.consumer) \
        if url else row.consumer
    project, user = _project(row), _user(row)
    if not (project or user):
        return consumer
    return format_html(
        '{}<small class="hidden-lg orphan-owner"><br>{} / {}</small>',
        consumer, project or '-', user or '-')


ONE_LINE = 40
"""A reason this short, with nothing more to say, is shown as it is."""


def _reason(finding):
    """The reason on one line, the rest on demand: a row is as tall as
    its names, not as a paragraph.  Folded under it, why no repair is
    offered, or why the one recommended is."""
    reason = labels.reason(finding.reason)
    if finding.blocked:
        more = _('No repair here: %s') % labels.reason(finding.blocked)
    elif finding.action and len(finding.actions) > 1:
        more = _('%s is recommended: of the repairs that put this consumer '
                 'right, it rewrites the least.') % labels.action(
                     finding.action)
    else:
        more = None
    if more is None and len(reason) <= ONE_LINE:
        return reason
    return format_html('<details class="orphan-reason"><summary title="{}">'
                       '{}</summary>{}</details>', reason, reason,
                       more or '')


class AllocationRow(tables.Row):
    def can_be_selected(self, datum):
        """Healthy and protected rows offer nothing to tick."""
        return bool(datum.actions)


class AllocationsTable(actions.SelectableTable):
    consumer = tables.Column(_consumer, verbose_name=_('Consumer'))
    nova = tables.Column(lambda f: labels.reason(f.nova),
                         verbose_name=_('In Nova'), classes=actions.PROSE,
                         link=_migrated_server_link)
    provider = tables.Column('provider_name', verbose_name=_('Provider'),
                             filters=(labels.breakable,),
                             classes=('orphan-name',))
    host = tables.Column('host', verbose_name=_('Current host'),
                         empty_value='-', link=lambda r: (
                             actions.hypervisor_url(r.hypervisor)
                             if r.hypervisor else None))
    # Below 1200 px, under the consumer (_consumer).
    project = tables.Column(_project, verbose_name=_('Project'),
                            empty_value='-',
                            classes=actions.WIDE_ONLY)
    user = tables.Column(_user, verbose_name=_('User'), empty_value='-',
                         classes=actions.WIDE_ONLY)
    resources = tables.Column('resources',
                              verbose_name=_('Resources here'),
                              filters=(labels.breakable_resources,))
    verdict = tables.Column(_verdict, verbose_name=_('Verdict'))
    reason = tables.Column(_reason, verbose_name=_('Reason'),
                           classes=actions.PROSE)

    def get_object_id(self, datum):
        return _finding_id(datum)

    def get_columns(self):
        """The provider column only when the rows span several providers
        of the tree (a consumer's rows on a host and on its NIC)."""
        if self.data is not None and len({row.provider
                                          for row in self.data}) < 2:
            self.columns.pop('provider', None)
        return super().get_columns()

    def get_row_actions(self, datum):
        """The recommended repair first (Horizon makes the first one the
        row's button), then the others in the engine's order."""
        found = super().get_row_actions(datum)
        order = list(datum.actions)
        return sorted(found, key=lambda action: order.index(action.repair)
                      if action.repair in order else len(order))

    class Meta(object):
        name = 'allocations'
        css_classes = 'orphan-table'
        verbose_name = _('Allocations')
        table_actions = ((filters.AllocationsFilter,
                          actions.ExportFindingsCSV,
                          actions.ExportFindingsJSON) +
                         actions.REPAIR_SELECTION_ACTIONS +
                         (actions.DeleteUnknown, actions.Decommission))
        row_actions = actions.REPAIR_ROW_ACTIONS
        row_class = AllocationRow
        multi_select = True
