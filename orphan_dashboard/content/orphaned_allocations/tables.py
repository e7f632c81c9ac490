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

"""Tables: hypervisors, one provider's allocations, the journal.

Actions never write: they lead to a preview (``repair`` / ``restore``
views) whose confirm re-reads and re-checks everything.  ``allowed()``
looks only at the row's data, never at an API.
"""

from urllib import parse as urlparse

from django import shortcuts
from django.template import defaultfilters
from django.urls import reverse
from django.utils.html import format_html
from django.utils.html import format_html_join
from django.utils.translation import gettext_lazy as _

from horizon import exceptions
from horizon import tables
from horizon.utils import functions as utils

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit.reasons import format_allocations
from orphan_dashboard.audit.reasons import format_resources
from orphan_dashboard.audit import restore
from orphan_dashboard.content.orphaned_allocations import forms
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import policies
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.writing import repair

POLICY = policies.PANEL
WRITE_ALLOCATIONS = policies.WRITE_ALLOCATIONS
DELETE_PROVIDERS = policies.DELETE_PROVIDERS
DECOMMISSION = policies.DECOMMISSION
PROSE = ('orphan-prose',)
"""Columns of sentences: wrapped between words (the panel's SCSS), not
anywhere as Horizon's ``WrappingColumn`` does."""
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


def _url(name, request=None, **query):
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


# -- hypervisors ------------------------------------------------------------

class Download(tables.LinkAction):
    """What the table lists, as a CSV or JSON download."""
    icon = 'download'
    policy_rules = POLICY
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


class ViewAllocations(tables.LinkAction):
    name = 'view'
    verbose_name = _('View allocations')
    policy_rules = POLICY

    def get_link_url(self, datum):
        return reverse('horizon:admin:orphaned_allocations:detail',
                       args=[datum.provider.uuid])


class ViewHypervisor(tables.LinkAction):
    """The hypervisor's servers as Nova lists them, in Admin >
    Hypervisors."""
    name = 'hypervisor'
    verbose_name = _('View in Hypervisors')
    policy_rules = POLICY

    def allowed(self, request, datum=None):
        return datum is not None and datum.hypervisor is not None

    def get_link_url(self, datum):
        return hypervisor_url(datum.hypervisor)


class FixRecommended(tables.Action):
    name = 'fix_recommended'
    verbose_name = _('Fix recommended')
    verbose_name_plural = _('Fix recommended')
    classes = ('btn-danger',)
    icon = 'wrench'
    attrs = ON_SELECTION
    policy_rules = WRITE_ALLOCATIONS

    def handle(self, table, request, obj_ids):
        return shortcuts.redirect(_url('repair', request, provider=obj_ids))


class Refresh(tables.Action):
    """A full sweep in the background, asked for by a POST of the table's
    form (its CSRF token): a link, even from another site, starts none.
    Comes back at once to the page it was pressed on."""
    name = 'refresh'
    verbose_name = _('Refresh')
    verbose_name_plural = _('Refresh')
    icon = 'refresh'
    requires_input = False
    policy_rules = POLICY

    def handle(self, table, request, obj_ids):
        try:
            service.refresh(request)
        except Exception:
            exceptions.handle(request, _('Unable to start a sweep.'))
        return shortcuts.redirect(request.get_full_path())


class ToggleAll(tables.LinkAction):
    name = 'toggle_all'
    verbose_name = _('Show all hypervisors')
    policy_rules = POLICY

    def allowed(self, request, datum=None):
        if request.GET.get('show') == 'all':
            self.verbose_name = _('Show mismatched only')
        return True

    def get_link_url(self, datum=None):
        return '?' if self.table.request.GET.get('show') == 'all' else \
            '?show=all'


class DeleteProvider(tables.LinkAction):
    """Delete a provider tree Nova no longer has, after a preview."""
    name = 'delete_provider'
    verbose_name = _('Delete provider')
    classes = ('ajax-modal', 'btn-danger')
    icon = 'trash'
    policy_rules = DELETE_PROVIDERS

    def allowed(self, request, datum=None):
        """Only providers with no compute node and no allocations left."""
        return datum is not None and datum.orphaned_provider and \
            not datum.consumers

    def get_link_url(self, datum):
        return _url('delete_provider', provider=datum.provider.uuid)


class Decommission(tables.LinkAction):
    """Everything that blocks deleting a dead hypervisor, previewed, then
    cleared and deleted in order."""
    name = 'decommission'
    verbose_name = _('Decommission')
    classes = ('ajax-modal', 'btn-danger')
    icon = 'power-off'
    policy_rules = DECOMMISSION

    def provider_report(self, datum):
        return datum or self.table.kwargs.get('provider_report')

    def allowed(self, request, datum=None):
        report = self.provider_report(datum)
        return report is not None and report.dead

    def get_link_url(self, datum=None):
        return _url('decommission',
                    provider=self.provider_report(datum).provider.uuid)


def _usage(rc):
    def value(datum):
        return '%s / %s' % (datum.usage.get(rc, 0), datum.needed.get(rc, 0))
    return value


def _findings(datum):
    counts = datum.counts
    return ', '.join('%s: %d' % (labels.verdict(verdict), counts[verdict])
                     for verdict in m.VERDICTS
                     if verdict != m.OK and verdict in counts) or '-'


def _state(datum):
    state = labels.service_state(datum.service_state)
    if datum.orphaned_provider:
        return _('%s (orphaned provider)') % state
    if datum.hypervisor is None and not datum.sharing:
        return _('%(state)s (owner: %(owner)s)') % {
            'state': state, 'owner': labels.owner(datum.owner)}
    return state


def _verdict(finding):
    """The translated verdict; the engine's code stays in the markup."""
    return format_html('<span class="orphan-verdict" data-verdict="{}">{}'
                       '</span>', finding.verdict,
                       labels.verdict(finding.verdict))


def _matches(text, *values):
    text = text.lower()
    return any(text in str(value).lower() for value in values if value)


def server_filter(table):
    """``(field, text)`` of a server-side filter, kept in the session by
    the view (Horizon keeps it only for a ``DataTableView``'s table)."""
    field = table.get_filter_field()
    text = table.get_filter_string().strip()
    action = table._meta._filter_action
    action.filter_string, action.filter_field = text, field
    return field, text


def provider_matches(report, field, text, names):
    """Whether a hypervisor's row matches the hypervisor table's filter."""
    problems = [f for f in report.findings if f.verdict != m.OK]
    if field == 'verdict':
        return any(_matches(text, f.verdict, labels.verdict(f.verdict))
                   for f in problems)
    if field == 'project':
        return any(_matches(text, f.project_id,
                            names['projects'].get(f.project_id))
                   for f in problems)
    return _matches(text, report.provider.name, report.provider.uuid)


class ProvidersFilter(tables.FilterAction):
    """Every hypervisor (not only the page shown, nor only the mismatched)
    by name, by a verdict among its findings, or by a project owning one."""
    filter_type = 'server'
    filter_choices = (('name', _('Hypervisor ='), True),
                      ('verdict', _('Verdict ='), True),
                      ('project', _('Project ='), True))


class ProviderRow(tables.Row):
    def can_be_selected(self, datum):
        """Only hypervisors with a repair to recommend get a checkbox."""
        return any(finding.action for finding in datum.findings)


class ProvidersTable(SelectableTable):
    name = tables.WrappingColumn(
        lambda d: d.provider.name, verbose_name=_('Hypervisor'),
        link=lambda d: reverse('horizon:admin:orphaned_allocations:detail',
                               args=[d.provider.uuid]))
    state = tables.Column(_state, verbose_name=_('Compute service'))
    servers = tables.Column('servers', verbose_name=_('Servers in Nova'))
    consumers = tables.Column('consumers',
                              verbose_name=_('Consumers in Placement'))
    findings = tables.Column(_findings, verbose_name=_('Findings'),
                             classes=PROSE)
    vcpu = tables.Column(_usage('VCPU'), verbose_name=_('VCPU used / needed'))
    memory = tables.Column(_usage('MEMORY_MB'),
                           verbose_name=_('RAM (MB) used / needed'))
    disk = tables.Column(_usage('DISK_GB'),
                         verbose_name=_('Disk (GB) used / needed'))

    def get_object_id(self, datum):
        return datum.provider.uuid

    def get_object_display(self, datum):
        return datum.provider.name

    def _keep_show(self, pagination):
        if self.request.GET.get('show') == 'all':
            return pagination + '&show=all'
        return pagination

    def get_pagination_string(self):
        return self._keep_show(super().get_pagination_string())

    def get_prev_pagination_string(self):
        return self._keep_show(super().get_prev_pagination_string())

    class Meta(object):
        name = 'providers'
        verbose_name = _('Hypervisors')
        table_actions = (ProvidersFilter, Refresh, ToggleAll,
                         ExportFindingsCSV, ExportFindingsJSON,
                         FixRecommended)
        row_actions = (ViewAllocations, ViewHypervisor, Decommission,
                       DeleteProvider)
        row_class = ProviderRow
        multi_select = True


# -- one provider's allocations ----------------------------------------------

def _finding_id(finding):
    return '%s:%s' % (finding.consumer, finding.provider)


class ShownFinding:
    """A finding with what its row shows next to the ids: Keystone's
    project and user names, the hypervisor of the server's host."""

    def __init__(self, finding, names, hypervisors, providers=None):
        self.finding = finding
        self.provider_name = (providers or {}).get(finding.provider,
                                                   finding.provider)
        self.project_name = names['projects'].get(finding.project_id)
        self.user_name = names['users'].get(finding.user_id)
        self.hypervisor = hypervisors.get(finding.host)
        self.reason = labels.owner_named(finding.reason, names)

    def __getattr__(self, name):
        return getattr(self.finding, name)


def shown_findings(findings, report, names):
    hypervisors = report.hypervisors()
    return [ShownFinding(f, names, hypervisors, report.names)
            for f in findings]


def _server_link(row):
    """A consumer that is a server links to it."""
    if row.live and row.instance == row.consumer:
        return instance_url(row.instance)
    return None


def _migrated_server_link(row):
    """A migration's "In Nova" links to its server."""
    if row.live and row.instance != row.consumer:
        return instance_url(row.instance)
    return None


class RepairRow(tables.LinkAction):
    """A repair of one row, previewed in a modal."""
    classes = ('ajax-modal',)
    policy_rules = WRITE_ALLOCATIONS
    repair = None

    def allowed(self, request, datum=None):
        return datum is not None and self.repair in datum.actions

    def get_link_url(self, datum):
        selection = repair.Selection(datum.consumer, datum.provider,
                                     self.repair)
        return _url('repair', self.table.request,
                    sel=forms.encode_selection(selection))


class RepairRows(tables.Action):
    """The same repair over the selected rows."""
    attrs = ON_SELECTION
    policy_rules = WRITE_ALLOCATIONS
    repair = None

    def handle(self, table, request, obj_ids):
        return shortcuts.redirect(_url('repair', request, sel=[
            '%s:%s' % (obj_id, self.repair) for obj_id in obj_ids]))


class TrimRow(RepairRow):
    name = m.TRIM
    verbose_name = labels.action(m.TRIM)
    repair = m.TRIM


class TrimRows(RepairRows):
    name = m.TRIM + '_selected'
    verbose_name = verbose_name_plural = labels.action(m.TRIM)
    repair = m.TRIM


class DeleteAndHealRow(RepairRow):
    name = m.DELETE_AND_HEAL
    verbose_name = labels.action(m.DELETE_AND_HEAL)
    repair = m.DELETE_AND_HEAL


class DeleteAndHealRows(RepairRows):
    name = m.DELETE_AND_HEAL + '_selected'
    verbose_name = verbose_name_plural = labels.action(m.DELETE_AND_HEAL)
    repair = m.DELETE_AND_HEAL


class DeleteRow(RepairRow):
    name = m.DELETE
    verbose_name = labels.action(m.DELETE)
    repair = m.DELETE


class DeleteRows(RepairRows):
    name = m.DELETE + '_selected'
    verbose_name = verbose_name_plural = labels.action(m.DELETE)
    repair = m.DELETE


class HealRow(RepairRow):
    name = m.HEAL
    verbose_name = labels.action(m.HEAL)
    repair = m.HEAL


class HealRows(RepairRows):
    name = m.HEAL + '_selected'
    verbose_name = verbose_name_plural = labels.action(m.HEAL)
    repair = m.HEAL


class SetOwnerRow(RepairRow):
    name = m.SET_OWNER
    verbose_name = labels.action(m.SET_OWNER)
    repair = m.SET_OWNER


class SetOwnerRows(RepairRows):
    name = m.SET_OWNER + '_selected'
    verbose_name = verbose_name_plural = labels.action(m.SET_OWNER)
    repair = m.SET_OWNER


def _reason(finding):
    if finding.blocked:
        # Why nothing is offered runs to a paragraph: folded, on demand.
        return format_html(
            '{}. <details class="orphan-details"><summary>{}</summary>{}'
            '</details>', labels.reason(finding.reason),
            _('Why no repair is offered'),
            _('No repair here: %s') % labels.reason(finding.blocked))
    if finding.action and len(finding.actions) > 1:
        return _('%(reason)s. %(action)s is recommended: of the repairs '
                 'that put this consumer right, it rewrites the least.') % {
            'reason': labels.reason(finding.reason),
            'action': labels.action(finding.action)}
    return labels.reason(finding.reason)


def finding_matches(row, text):
    """Whether an allocation row shows ``text``."""
    return _matches(text, row.consumer, labels.reason(row.nova), row.host,
                    row.project_name, row.project_id, row.user_name,
                    row.user_id, row.verdict, labels.verdict(row.verdict),
                    labels.reason(row.reason))


class AllocationsFilter(tables.FilterAction):
    """Every row of the tree (not only the page shown) that shows the
    text: consumer, server, host, project, user, verdict or reason."""
    filter_type = 'server'
    filter_choices = (('any', _('Any column ='), True),)


class AllocationRow(tables.Row):
    def can_be_selected(self, datum):
        """Healthy and protected rows offer nothing to tick."""
        return bool(datum.actions)


class AllocationsTable(SelectableTable):
    consumer = tables.Column('consumer', verbose_name=_('Consumer'),
                             link=_server_link)
    nova = tables.Column(lambda f: labels.reason(f.nova),
                         verbose_name=_('In Nova'), classes=PROSE,
                         link=_migrated_server_link)
    provider = tables.Column('provider_name', verbose_name=_('Provider'))
    host = tables.Column('host', verbose_name=_('Current host'),
                         empty_value='-', link=lambda r: hypervisor_url(
                             r.hypervisor) if r.hypervisor else None)
    project = tables.Column(lambda r: r.project_name or r.project_id,
                            verbose_name=_('Project'), empty_value='-')
    user = tables.Column(lambda r: r.user_name or r.user_id,
                         verbose_name=_('User'), empty_value='-')
    resources = tables.Column(lambda f: format_resources(f.resources),
                              verbose_name=_('Resources here'))
    verdict = tables.Column(_verdict, verbose_name=_('Verdict'))
    reason = tables.Column(_reason, verbose_name=_('Reason'), classes=PROSE)

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
        verbose_name = _('Allocations')
        table_actions = (AllocationsFilter, ExportFindingsCSV,
                         ExportFindingsJSON, TrimRows, DeleteAndHealRows,
                         DeleteRows, HealRows, SetOwnerRows, Decommission)
        row_actions = (TrimRow, DeleteAndHealRow, DeleteRow, HealRow,
                       SetOwnerRow)
        row_class = AllocationRow
        multi_select = True


# -- journal ----------------------------------------------------------------

class RestoreRow(tables.LinkAction):
    name = 'restore'
    verbose_name = _('Restore')
    classes = ('ajax-modal',)
    policy_rules = WRITE_ALLOCATIONS

    def allowed(self, request, datum=None):
        return datum is not None and _restorable(datum)

    def get_link_url(self, datum):
        return _url('restore', self.table.request, entry=datum.id)


def _restorable(entry):
    """Its *before* can be put back (:func:`audit.restore.restorable`, as
    :func:`history_data` found it)."""
    return getattr(entry, 'restorable', False)


class RestoreBatch(tables.LinkAction):
    """Restore a whole decommission: its providers, then its allocations
    (the compute service is not re-created)."""
    name = 'restore_batch'
    verbose_name = _('Restore decommission')
    classes = ('ajax-modal',)
    policy_rules = WRITE_ALLOCATIONS

    def allowed(self, request, datum=None):
        return datum is not None and datum.kind == datum.SERVICE and \
            datum.status == datum.APPLIED

    def get_link_url(self, datum):
        return _url('restore', self.table.request, batch=datum.batch)


class RestoreRows(tables.Action):
    name = 'restore_selected'
    verbose_name = _('Restore')
    verbose_name_plural = _('Restore')
    attrs = ON_SELECTION
    policy_rules = WRITE_ALLOCATIONS

    def handle(self, table, request, obj_ids):
        return shortcuts.redirect(_url('restore', request, entry=obj_ids))


class ExportCSV(Download):
    """The journal entries the filter shows, every page of them."""
    name = 'export_csv'
    verbose_name = _('Export CSV')
    url_name = 'export'
    fmt = 'csv'

    def query(self):
        return {k: v for k, v in self.table.kwargs.items()
                if k in ('provider', 'consumer', 'batch') and v}


class ExportJSON(ExportCSV):
    name = 'export_json'
    verbose_name = _('Export JSON')
    fmt = 'json'


class HistoryFilter(tables.FilterAction):
    filter_type = 'server'
    filter_choices = (('consumer', _('Consumer ='), True),
                      ('provider', _('Provider ='), True),
                      ('batch', _('Batch ='), True))


def _provider_summary(record):
    return _('provider %(name)s (%(inventories)s)') % {
        'name': record.get('name', ''),
        'inventories': format_resources({
            rc: inventory.get('total') for rc, inventory in
            (record.get('inventories') or {}).items()}) or _('no inventory')}


def _change(entry):
    if entry.kind == entry.SERVICE:
        return _('compute service %s → deleted (not restorable)') % (
            (entry.before or {}).get('host', ''))
    if entry.kind == entry.PROVIDER:
        if entry.before:
            return _('%s → deleted') % _provider_summary(entry.before)
        return _('deleted → %s') % _provider_summary(entry.after)
    names = getattr(entry, 'names', None) or {}
    change = format_html('{} → {}', _allocations(entry.before, names),
                         _allocations(entry.after, names))
    if entry.before_project:
        projects = getattr(entry, 'project_names', None) or {}
        change = format_html('{} {}', change, labels.html_format(
            _('(project %(old)s → %(new)s)'),
            old=labels.named(entry.before_project, projects),
            new=labels.named(entry.consumer_project, projects)))
    return change


def _allocations(allocations, names):
    """A journaled side of a change, providers by name where known."""
    if not allocations:
        return labels.reason(format_allocations(allocations))
    return format_html_join('; ', '{}: {}', (
        (labels.named(rp, names), format_resources(resources))
        for rp, resources in sorted(
            allocations.items(),
            key=lambda item: (names.get(item[0]) or item[0]))))


def _provider(entry):
    """The hypervisor's name next to the provider id, as the last audit
    (or the journaled record of a deleted provider) names it."""
    name = getattr(entry, 'provider_name', None)
    if not name:
        return entry.provider
    return format_html('{} <small class="text-muted orphan-provider-id">{}'
                       '</small>', name, entry.provider)


def _outcome(entry):
    text = entry.get_status_display()
    return '%s: %s' % (text, entry.message) if entry.message else text


class HistoryRow(tables.Row):
    def can_be_selected(self, datum):
        return _restorable(datum)


class HistoryTable(SelectableTable):
    created = tables.Column(
        'created', verbose_name=_('Time'),
        filters=(lambda d: defaultfilters.date(d, 'Y-m-d H:i:s'),))
    user = tables.Column('user_name', verbose_name=_('User'))
    action = tables.Column(lambda e: labels.action(e.action),
                           verbose_name=_('Action'))
    consumer = tables.Column('consumer', verbose_name=_('Consumer'))
    provider = tables.Column(_provider, verbose_name=_('Provider'))
    change = tables.Column(_change, verbose_name=_('Before → after'),
                           classes=PROSE)
    outcome = tables.Column(_outcome, verbose_name=_('Outcome'),
                            classes=PROSE)

    def __init__(self, request, data=None, needs_form_wrapper=None,
                 **kwargs):
        super().__init__(request, data, needs_form_wrapper, **kwargs)
        self.kwargs = kwargs

    def get_object_id(self, datum):
        return str(datum.id)

    class Meta(object):
        name = 'history'
        verbose_name = _('History')
        table_actions = (HistoryFilter, ExportCSV, ExportJSON, RestoreRows)
        row_actions = (RestoreRow, RestoreBatch)
        row_class = HistoryRow
        multi_select = True


def history_data(tab, provider=None):
    """A page of journal entries for a history tab, honouring its filter
    (kept in the session by the view) and Horizon's ``marker`` paging."""
    table = tab._tables['history']
    field, value = server_filter(table)
    query = {'provider': provider}
    if value and field in ('provider', 'consumer', 'batch'):
        query[field] = value
    table.kwargs.update(query)
    meta = table._meta
    try:
        found, tab.has_prev, tab.has_more, restorable = service.history(
            tab.request, marker=_int(tab.request.GET.get(
                meta.pagination_param)),
            prev_marker=_int(tab.request.GET.get(meta.prev_pagination_param)),
            limit=utils.get_page_size(tab.request), **query)
    except Exception:
        exceptions.handle(tab.request, _('Unable to read the journal.'))
        return []
    try:
        names = service.provider_names(tab.request)
    except Exception:
        names = {}
    try:
        projects = service.names(tab.request)['projects']
    except Exception:
        projects = {}
    # A decommissioned host's provider is gone from the audit: its
    # journaled record still names it.
    names = dict({entry.provider: (entry.before or entry.after or {}).get(
        'name') for entry in found if entry.kind == entry.PROVIDER}, **names)
    for entry in found:
        entry.restorable = restore.restorable(
            entry, restorable.get(entry.subject, ()))
        entry.names, entry.project_names = names, projects
        entry.provider_name = names.get(entry.provider) or (
            (entry.before or {}).get('host')
            if entry.kind == entry.SERVICE else None)
    return found


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
