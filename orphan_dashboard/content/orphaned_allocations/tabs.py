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

from django.utils.translation import gettext_lazy as _

from horizon import exceptions
from horizon import messages
from horizon import tabs
from horizon.utils import functions as utils

from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import restore as restore_rules
from orphan_dashboard.audit import server_needs
from orphan_dashboard.content.orphaned_allocations import actions
from orphan_dashboard.content.orphaned_allocations import filters
from orphan_dashboard.content.orphaned_allocations import finding_tables
from orphan_dashboard.content.orphaned_allocations import forms
from orphan_dashboard.content.orphaned_allocations import history_tables
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import pages
from orphan_dashboard.content.orphaned_allocations import presenters
from orphan_dashboard.content.orphaned_allocations import provider_tables
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.operations import capacity as capacity_ops
from orphan_dashboard.operations import report as report_ops

TABLE_TEMPLATE = 'horizon/common/_detail_table.html'


def tables_of(tab):
    """``{name: table}`` of a ``TableTab``.

    Horizon keeps a tab's table instances only in the private
    ``tab._tables`` and offers no public accessor: this is the one place
    that reads it.
    """
    return tab._tables


class _PagedTab(tabs.TableTab):
    """A table a page at a time (the user's *Items Per Page*): Horizon
    renders a few milliseconds per row.  Its Prev and More links follow
    ``_prev`` and ``_more``, which :meth:`paged` sets for rows already in
    memory; a tab that reads a page itself sets them from what it read."""

    template_name = TABLE_TEMPLATE
    preload = False
    """Rendered when its tab is opened, a page read for it then."""

    def paged(self, name, rows):
        table = tables_of(self)[name]
        meta = table._meta
        page, self._prev, self._more = pages.page(
            rows, [table.get_object_id(row) for row in rows],
            self.request.GET.get(meta.pagination_param),
            self.request.GET.get(meta.prev_pagination_param),
            utils.get_page_size(self.request))
        return page

    def has_prev_data(self, table):
        return getattr(self, '_prev', False)

    def has_more_data(self, table):
        return getattr(self, '_more', False)


class ProvidersTab(_PagedTab):
    """The hypervisors that need attention, worst first: a large cloud has
    hundreds of mismatched hypervisors."""

    name = _('Hypervisors')
    slug = 'providers'
    table_classes = (provider_tables.ProvidersTable,)
    template_name = 'orphaned_allocations/_providers.html'

    def get_context_data(self, request, **kwargs):
        """The table, under the legend of its capacity bars when a row
        draws any: once for the table, not in every row."""
        context = super().get_context_data(request, **kwargs)
        context['capacity_legend'] = any(
            row.bars for row in tables_of(self)['providers'].data)
        return context

    def get_providers_data(self):
        report = self.tab_group.kwargs.get('report')
        if report is None:
            return []
        rows = report.providers
        field, text = filters.server_filter(tables_of(self)['providers'])
        if text:
            names = service.names(self.request) if field == 'project' else {}
            rows = [p for p in rows
                    if filters.provider_matches(p, field, text, names)]
        elif not provider_tables.showing_all(self.request):
            rows = [p for p in rows if p.needs_attention]
        try:
            found = service.capacity(self.request)
        except Exception:
            found = None
        return presenters.shown_providers(self.paged('providers', rows),
                                          found)


class HistoryTab(_PagedTab):
    """The journal, a page at a time as the journal reads it (Horizon's
    ``marker`` paging), not a page of rows in memory."""

    name = _('History')
    slug = 'history'
    table_classes = (history_tables.HistoryTable,)
    template_name = 'orphaned_allocations/_history.html'

    def get_context_data(self, request, **kwargs):
        """The table, and over it, filtered on a batch just confirmed, the
        rows of it that wrote nothing (:func:`forms.kept_result`): the
        journal has no entry for them."""
        context = super().get_context_data(request, **kwargs)
        field, value = filters.server_filter(tables_of(self)['history'])
        if field == 'batch' and value:
            context['unwritten'] = forms.kept_result(request, value)
        return context

    def get_history_data(self):
        """A page of journal entries, honouring the table's filter (kept
        in the session by the view) and Horizon's ``marker`` paging; on a
        hypervisor's page, that provider's only."""
        table = tables_of(self)['history']
        field, value = filters.server_filter(table)
        query = {'provider': self.tab_group.kwargs.get('provider_uuid')}
        if value and field in filters.HISTORY_FILTERS:
            query[field] = value
        all_clouds = filters.all_clouds(self.request)
        if filters.all_clouds_refused(self.request):
            messages.error(self.request, filters.OTHER_CLOUDS_OFF)
        table.kwargs.update(query, tab=self.get_id(),
                            clouds=filters.ALL_CLOUDS if all_clouds else None)
        meta = table._meta
        try:
            found, self._prev, self._more, restorable = \
                service.history(
                    self.request, marker=_int(self.request.GET.get(
                        meta.pagination_param)),
                    prev_marker=_int(self.request.GET.get(
                        meta.prev_pagination_param)),
                    limit=utils.get_page_size(self.request),
                    all_clouds=all_clouds, **query)
        except Exception:
            exceptions.handle(self.request, _('Unable to read the journal.'))
            return []
        try:
            names = service.history_names(self.request, found)
        except Exception:
            names = {}
        try:
            projects = service.names(self.request)['projects']
        except Exception:
            projects = {}
        ours = service.cloud_key(self.request) if all_clouds else None
        for entry in found:
            entry.this_cloud = entry.cloud == ours
            entry.restorable = restore_rules.restorable(
                entry, restorable.get(entry.subject, ()))
            entry.names, entry.project_names = names, projects
            entry.provider_name = names.get(entry.provider) or (
                (entry.before or {}).get('host')
                if entry.kind == entry.SERVICE else None)
        return found


class CapacityTab(tabs.Tab):
    """Would a flavor fit: per hypervisor, now, after the recommended
    repairs, or not.  Loaded when opened: only it asks Nova for the
    flavors."""

    name = _('Capacity')
    slug = 'capacity'
    template_name = 'orphaned_allocations/_capacity.html'
    preload = False

    def get_context_data(self, request):
        context = {'chosen': request.GET.get('flavor', '')}
        try:
            context['flavors'] = service.flavors(request)
        except Exception:
            context['flavors'] = []
            exceptions.handle(request, _('Unable to retrieve the flavors.'))
            return context
        if not context['chosen']:
            if 'flavor' in request.GET:
                # *Check* pressed with the list on its first line.
                context['error'] = _('Choose a flavor in the list, then '
                                     'press Check.')
            return context
        try:
            fit = service.flavor_fit(request, context['flavors'],
                                     context['chosen'])
        except capacity_ops.NoSuchFlavor:
            context['error'] = _('No flavor has the id "%s": choose one of '
                                 'the list.') % context['chosen'][:64]
            return context
        except server_needs.CannotHeal as exc:
            context['error'] = labels.reason(exc.reason)
            return context
        if fit is not None:
            for row in fit['rows']:
                row['state_label'] = labels.fit(row['state'])
                row['why'] = row['why'] and labels.reason(row['why'])
                for repair in row['repairs']:
                    repair['label'] = labels.action(repair['action'])
                    repair['subject'] = labels.reason(
                        capacity_ops.repair_subject(repair))
                    repair['url'] = actions.panel_url(
                        'repair', request, sel=forms.encode_selection(
                            m.Selection(repair['consumer'],
                                        repair['provider'],
                                        repair['action'])))
            fit['counts'] = [(labels.fit(state), count)
                             for state, count in fit['counts'].items()]
        context['fit'] = fit
        return context


class ProjectsTab(tabs.Tab):
    """The quota the orphans eat: per project, what its findings hold
    against its Placement usage and limits.  Loaded when opened: it reads
    each charged project's usage now."""

    name = _('Projects')
    slug = 'projects'
    template_name = 'orphaned_allocations/_projects.html'
    preload = False

    def get_context_data(self, request):
        try:
            rows = service.charged_projects(request)
            names = service.names(request)
        except Exception:
            exceptions.handle(request, _('Unable to read the projects\' '
                                         'usage.'))
            return {'projects': []}
        return {'ready': rows is not None,
                'projects': [presenters.project_bars(row, names)
                             for row in rows or ()]}


class IndexTabs(tabs.TabGroup):
    slug = 'orphaned_allocations'
    tabs = (ProvidersTab, CapacityTab, ProjectsTab, HistoryTab)
    sticky = True


class AllocationsTab(_PagedTab):
    """A provider tree's allocations, problems first: a hypervisor may
    hold hundreds, a sharing provider thousands."""
    name = _('Allocations')
    slug = 'allocations'
    table_classes = (finding_tables.AllocationsTable,)

    def get_allocations_data(self):
        kwargs = self.tab_group.kwargs
        try:
            names = service.names(self.request)
        except Exception:
            names = {'projects': {}, 'users': {}}
            exceptions.handle(self.request, _('Unable to read the project '
                                              'and user names.'))
        rows = presenters.shown_findings(kwargs['provider_report'].findings,
                                         kwargs['report'], names)
        text = filters.server_filter(tables_of(self)['allocations'])[1]
        if text:
            rows = [r for r in rows if filters.finding_matches(r, text)]
        return self.paged('allocations', rows)


class OverviewTab(tabs.Tab):
    name = _('Overview')
    slug = 'overview'
    template_name = 'orphaned_allocations/_overview.html'
    preload = False

    def get_context_data(self, request):
        report = self.tab_group.kwargs['provider_report']
        try:
            rows = service.overview(request, report)
        except Exception:
            rows = report_ops.overview_rows(report, {})
            exceptions.handle(request,
                              _('Unable to retrieve the inventory.'))
        try:
            found = service.capacity(request)
        except Exception:
            found = None
        tree = found and found.trees.get(report.provider.uuid)
        return {'report': report, 'rows': rows,
                'capacity': presenters.capacity_bars(tree.classes)
                if tree else None,
                'service_state': labels.service_state(report.service_state),
                'owner': labels.owner_proven(report.owner,
                                             report.owner_proof),
                'children': presenters.child_owners(
                    report, self.tab_group.kwargs['report'].names),
                'hypervisor_url': actions.hypervisor_url(report.hypervisor)
                if report.hypervisor else None}


class DetailTabs(tabs.TabGroup):
    slug = 'provider'
    tabs = (AllocationsTab, OverviewTab, HistoryTab)
    sticky = True


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
