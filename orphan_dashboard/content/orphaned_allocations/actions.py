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

"""What the panel's tables share: links to its views and to Horizon's, the
actions offered on more than one table, and the consumer repairs.

Actions never write: they lead to a preview (``repair`` / ``restore``
views) whose confirm re-reads and re-checks everything.  ``allowed()``
looks only at the row's data, never at an API.
"""

from urllib import parse as urlparse

from django import shortcuts
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from horizon import messages
from horizon import tables

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import plan as planning
from orphan_dashboard.content.orphaned_allocations import forms
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import policies

PROSE = ('orphan-prose',)
"""Columns of sentences: wrapped between words (the panel's SCSS), not
anywhere as Horizon's ``WrappingColumn`` does."""
WIDE_ONLY = ('hidden-xs', 'hidden-sm', 'hidden-md')
"""Columns left out below 1200 px (Bootstrap's responsive classes), where
choosing a repair needs the room: what another column shows too there, as
the page says."""
ON_SELECTION = {'data-batch-action': 'true'}
"""Horizon's table script keeps such buttons disabled until a row is
ticked."""


class SelectableTable(tables.DataTable):
    """A table whose selection actions lead to a preview.

    Horizon shows the checkbox column only for ``BatchAction`` subclasses,
    which act at once; ours are plain actions marked :data:`ON_SELECTION`.
    """

    def set_multiselect_column_visibility(self, visible=True):
        super().set_multiselect_column_visibility(visible or any(
            action.attrs.get('data-batch-action')
            for action in self.get_table_actions()))

    def get_table_actions(self):
        """No action on a selection over a table with no row to tick
        (its rows' ``can_be_selected`` looks at the datum only)."""
        found = super().get_table_actions()
        row = self._meta.row_class
        if self.data is None or any(row.can_be_selected(row, datum)
                                    for datum in self.data):
            return found
        return [action for action in found
                if not action.attrs.get('data-batch-action')]


def panel_url(name, request=None, **query):
    """One of the panel's views; with ``request``, ``next`` brings the
    operator back to the page the action was taken on."""
    if request is not None:
        query['next'] = request.get_full_path()
    url = reverse('horizon:admin:orphaned_allocations:%s' % name)
    return url + '?' + urlparse.urlencode(query, doseq=True)


def hypervisor_url(hypervisor):
    """Admin > Hypervisors' page of ``hypervisor`` (its servers)."""
    return reverse('horizon:admin:hypervisors:detail',
                   args=['%s_%s' % (hypervisor.uuid, hypervisor.hostname)])


def instance_url(uuid):
    """Admin > Instances' detail page of server ``uuid``."""
    return reverse('horizon:admin:instances:detail', args=[uuid])


class Download(tables.LinkAction):
    """What the table lists, as a CSV or JSON download."""
    icon = 'download'
    policy_rules = policies.PANEL
    url_name = fmt = None

    def query(self):
        return {}

    def get_link_url(self, datum=None):
        url = reverse('horizon:admin:orphaned_allocations:%s' % self.url_name,
                      args=[self.fmt])
        query = self.query()
        return url + ('?' + urlparse.urlencode(query) if query else '')


class ExportFindingsCSV(Download):
    """The findings: the whole cloud's problems from the index, every row
    of one provider from its page."""
    name = 'export_findings_csv'
    verbose_name = _('Export CSV')
    url_name = 'export_findings'
    fmt = 'csv'

    def query(self):
        report = self.table.kwargs.get('provider_report')
        return {'provider': report.provider.uuid} if report else {}


class ExportFindingsJSON(ExportFindingsCSV):
    name = 'export_findings_json'
    verbose_name = _('Export JSON')
    fmt = 'json'


class Decommission(tables.LinkAction):
    """Everything that blocks deleting a dead hypervisor, previewed, then
    cleared and deleted in order."""
    name = 'decommission'
    verbose_name = _('Decommission')
    classes = ('ajax-modal', 'btn-danger')
    icon = 'power-off'
    policy_rules = policies.DECOMMISSION

    def provider_report(self, datum):
        return datum or self.table.kwargs.get('provider_report')

    def allowed(self, request, datum=None):
        report = self.provider_report(datum)
        return report is not None and report.dead

    def get_link_url(self, datum=None):
        return panel_url('decommission',
                         provider=self.provider_report(datum).provider.uuid)


class DeleteUnknown(tables.LinkAction):
    """Every unknown consumer of the provider's tree (on its page) or of
    the cloud (on the index) at once: never recommended, previewed with
    their count and what they hold, deleted once the count is typed."""
    name = 'delete_unknown'
    verbose_name = _('Delete unknown consumers')
    classes = ('ajax-modal', 'btn-danger')
    icon = 'trash'
    policy_rules = policies.WRITE_ALLOCATIONS

    def provider_report(self):
        return self.table.kwargs.get('provider_report')

    def allowed(self, request, datum=None):
        tree = self.provider_report()
        trees = [tree] if tree is not None else (self.table.data or [])
        return any(planning.unknown_deletes(t.findings)
                   for t in trees)

    def get_link_url(self, datum=None):
        tree = self.provider_report()
        query = {'provider': tree.provider.uuid} if tree is not None else {}
        return panel_url('delete_unknown', self.table.request, **query)


class SelectionAction(tables.Action):
    """An action on the rows ticked: to the preview ``url_name`` of them,
    never a write."""
    attrs = ON_SELECTION
    policy_rules = policies.WRITE_ALLOCATIONS
    url_name = None

    def query(self, obj_ids):
        """The preview's query naming the rows ``obj_ids``."""
        raise NotImplementedError

    def handle(self, table, request, obj_ids):
        """To the preview by a short link: the selection is kept on the
        server (:func:`forms.keep_selection`), whatever its size; more
        rows than a preview may carry come back to the page with why."""
        try:
            forms.check_count(len(obj_ids))
        except forms.BadSelection as exc:
            messages.error(request, exc)
            return shortcuts.redirect(request.get_full_path())
        token = forms.keep_selection(request, self.query(obj_ids))
        return shortcuts.redirect(panel_url(self.url_name, request,
                                            selection=token))


# -- consumer repairs --------------------------------------------------------

class RepairRow(tables.LinkAction):
    """A repair of one row, previewed in a modal."""
    classes = ('ajax-modal',)
    policy_rules = policies.WRITE_ALLOCATIONS
    repair = None

    def allowed(self, request, datum=None):
        return datum is not None and self.repair in datum.actions

    def get_link_url(self, datum):
        selection = m.Selection(datum.consumer, datum.provider,
                                self.repair)
        return panel_url('repair', self.table.request,
                         sel=forms.encode_selection(selection))


class RepairRows(SelectionAction):
    """The same repair over the selected rows."""
    url_name = 'repair'
    repair = None

    def query(self, obj_ids):
        return {'sel': ['%s:%s' % (obj_id, self.repair)
                        for obj_id in obj_ids]}


def _class_name(code):
    """``delete_and_heal`` -> ``DeleteAndHeal``."""
    return ''.join(part.capitalize() for part in code.split('_'))


def repair_actions(codes):
    """``(row actions, selection actions)``: one of each per repair,
    named by its code (the ids the pages and their scripts use) and
    titled by :func:`labels.action`."""
    rows, selected = [], []
    for code in codes:
        title = labels.action(code)
        rows.append(type(_class_name(code) + 'Row', (RepairRow,), {
            '__module__': __name__, 'name': code, 'verbose_name': title,
            'repair': code}))
        selected.append(type(_class_name(code) + 'Rows', (RepairRows,), {
            '__module__': __name__, 'name': code + '_selected',
            'verbose_name': title, 'verbose_name_plural': title,
            'repair': code}))
    return tuple(rows), tuple(selected)


REPAIR_ROW_ACTIONS, REPAIR_SELECTION_ACTIONS = repair_actions(
    m.ACTIONS)
"""Trim, delete and heal, delete, heal, set owner: on a row, and on the
rows selected."""
