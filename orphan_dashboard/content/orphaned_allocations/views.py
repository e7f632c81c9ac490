"""Thin views: read the report, render tables, preview and confirm."""

import json

from django import http
from django.core.exceptions import ObjectDoesNotExist
from django.urls import reverse
from django.urls import reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _
from django.views import generic

from horizon import exceptions
from horizon import forms
from horizon import messages
from horizon import tabs

from orphan_dashboard.audit import plan as planner
from orphan_dashboard.content.orphaned_allocations import forms as repair_forms
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import tables
from orphan_dashboard.content.orphaned_allocations import tabs as panel_tabs
from orphan_dashboard import repair
from orphan_dashboard import service

INDEX_URL = reverse_lazy('horizon:admin:orphaned_allocations:index')


def _report(request, **kwargs):
    """The audit report, or None with the error shown on the page."""
    try:
        report = service.report(request, **kwargs)
    except Exception:
        exceptions.handle(request, _('Unable to audit Placement against '
                                     'Nova: no repair is possible now.'))
        return None
    if report.down_cells:
        messages.warning(request, _(
            'A cell is down: allocations that could belong to servers there '
            'are shown as protected until it is back.'))
    return report


class IndexView(tabs.TabbedTableView):
    tab_group_class = panel_tabs.IndexTabs
    template_name = 'admin/orphaned_allocations/index.html'
    page_title = _('Orphaned Allocations')

    def get_tabs(self, request, **kwargs):
        if not hasattr(self, 'report'):
            self.report = _report(
                request, full=bool(request.GET.get('refresh')))
        return super().get_tabs(request, report=self.report, **kwargs)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['report'] = self.report
        if self.report is not None:
            context['attention'] = sum(
                1 for p in self.report.providers if p.needs_attention)
        return context


class DetailView(tabs.TabbedTableView):
    tab_group_class = panel_tabs.DetailTabs
    template_name = 'admin/orphaned_allocations/detail.html'
    page_title = '{{ provider_report.provider.name }}'

    def get_tabs(self, request, **kwargs):
        if not hasattr(self, 'provider_report'):
            report = _report(request)
            provider = report and report.provider(kwargs['provider_uuid'])
            if provider is None:
                if report is not None:
                    messages.error(request, _('No such resource provider.'))
                raise exceptions.Http302(INDEX_URL)
            self.provider_report = provider
        return super().get_tabs(request, provider_report=self.provider_report,
                                **kwargs)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['provider_report'] = self.provider_report
        context['service_state'] = labels.service_state(
            self.provider_report.service_state)
        return context


class _PreviewView(forms.ModalFormView):
    """Shared modal plumbing: rows computed on GET, echoed back on POST."""
    success_url = INDEX_URL
    submit_label = _('Confirm')

    def get_success_url(self):
        """Back where the action was taken (``next``), if it is ours."""
        url = self.request.GET.get('next')
        if url and url_has_allowed_host_and_scheme(
                url, allowed_hosts={self.request.get_host()},
                require_https=self.request.is_secure()):
            return url
        return str(INDEX_URL)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['rows'] = self.rows
        context['submit_url'] = self.request.get_full_path()
        return context

    def get(self, request, *args, **kwargs):
        try:
            self.rows = self.preview_rows()
        except repair_forms.BadSelection as exc:
            messages.error(request, exc)
            return http.HttpResponseRedirect(self.get_success_url())
        except Exception:
            exceptions.handle(request, _('Unable to preview: nothing was '
                                         'written.'))
            return http.HttpResponseRedirect(self.get_success_url())
        return super().get(request, *args, **kwargs)

    def post(self, request, *args, **kwargs):
        self.rows = []
        return super().post(request, *args, **kwargs)


class RepairView(_PreviewView):
    form_class = repair_forms.RepairForm
    template_name = 'admin/orphaned_allocations/repair.html'
    modal_id = 'repair_modal'
    form_id = 'repair_form'
    modal_header = _('Review the allocation changes')
    page_title = _('Review the allocation changes')

    def selections(self):
        """From ``sel`` (rows) or ``provider`` (their recommended repairs).

        The migration a consumer stands for is looked up in the cached
        report; the engine re-reads and re-checks it anyway.
        """
        query = self.request.GET
        chosen = [repair_forms.parse_selection(s)
                  for s in query.getlist('sel')]
        providers = [repair_forms.parse_uuid(p)
                     for p in query.getlist('provider')]
        if not chosen and not providers:
            raise repair_forms.BadSelection(_('Nothing selected.'))
        report = self.report = service.report(self.request)
        findings = self.findings = {(f.consumer, f.provider): f
                                    for f in report.findings}
        selections = []
        for s in chosen:
            finding = findings.get((s.consumer, s.provider))
            instance = s.migration_instance or (
                finding.instance if finding is not None and
                finding.instance != finding.consumer else None)
            selections.append(repair.Selection(s.consumer, s.provider,
                                               s.action, instance))
        problems = []
        for uuid in providers:
            provider = report.provider(uuid)
            if provider is None:
                raise repair_forms.BadSelection(
                    _('No such resource provider.'))
            problems.extend(provider.problems)
        selections.extend(repair.Selection(
            f.consumer, f.provider, action,
            f.instance if f.instance != f.consumer else None)
            for f, action in planner.recommended(problems))
        if not selections:
            raise repair_forms.BadSelection(
                _('No recommended repair on the selected hypervisors.'))
        return selections

    def preview_rows(self):
        return service.preview(self.request, self.selections())

    def get_context_data(self, **kwargs):
        """Each row with its provider names and what Nova says about it."""
        context = super().get_context_data(**kwargs)
        report = getattr(self, 'report', None)
        names = {p.provider.uuid: p.provider.name
                 for p in (report.providers if report else [])}
        findings = getattr(self, 'findings', {})

        def side(allocations):
            return [(names.get(rp), rp, tables.format_resources(res))
                    for rp, res in sorted(allocations.items())]

        context['previews'] = [dict(
            row=row, action=labels.action(row.selection.action),
            nova=getattr(findings.get((row.selection.consumer,
                                       row.selection.provider)), 'nova', ''),
            provider=names.get(row.selection.provider),
            before=side(row.plan.before) if row.plan else [],
            after=side(row.plan.after) if row.plan else [])
            for row in self.rows]
        context['actionable'] = any(row.plan for row in self.rows)
        return context

    def get_initial(self):
        return {'rows': json.dumps([
            [repair_forms.encode_selection(r.selection), r.fingerprint]
            for r in getattr(self, 'rows', []) if r.plan])}


class RestoreView(_PreviewView):
    form_class = repair_forms.RestoreForm
    template_name = 'admin/orphaned_allocations/restore.html'
    modal_id = 'restore_modal'
    form_id = 'restore_form'
    modal_header = _('Review the restore')
    page_title = _('Review the restore')

    def preview_rows(self):
        try:
            ids = [int(i) for i in self.request.GET.getlist('entry')]
        except ValueError:
            raise repair_forms.BadSelection(_('Malformed journal entry.'))
        if not ids:
            raise repair_forms.BadSelection(_('Nothing selected.'))
        try:
            self.entries = service.journal_entries(self.request, ids)
        except ObjectDoesNotExist:
            raise repair_forms.BadSelection(_('No such journal entry.'))
        return list(zip(self.entries,
                        service.preview_restore(self.request, self.entries)))

    def get_initial(self):
        return {'rows': json.dumps([
            [entry.id, row.fingerprint]
            for entry, row in getattr(self, 'rows', []) if row.plan])}


class ExportHistoryView(generic.View):
    def get(self, request, fmt):
        from orphan_dashboard import journal

        found = service.history(request,
                                provider=request.GET.get('provider') or None,
                                consumer=request.GET.get('consumer') or None)
        if fmt == 'csv':
            response = http.HttpResponse(journal.export_csv(found),
                                         content_type='text/csv')
        else:
            response = http.HttpResponse(journal.export_json(found),
                                         content_type='application/json')
        response['Content-Disposition'] = (
            'attachment; filename="orphan-journal.%s"' % fmt)
        return response


def detail_url(provider_uuid):
    return reverse('horizon:admin:orphaned_allocations:detail',
                   args=[provider_uuid])
