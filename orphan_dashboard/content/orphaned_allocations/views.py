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

"""Thin views: read the report, render tables, preview and confirm."""

import functools
import logging
from urllib import parse as urlparse

from django.core import exceptions as django_exceptions
from django.core.exceptions import ObjectDoesNotExist
from django import http
from django.urls import reverse
from django.urls import reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _
from django.views.decorators import csrf
from django.views import generic

from horizon import exceptions
from horizon import forms
from horizon import messages
from horizon import tabs

from orphan_dashboard.audit import reasons
from orphan_dashboard import conf
from orphan_dashboard.content.orphaned_allocations import filters
from orphan_dashboard.content.orphaned_allocations import forms as repair_forms
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import policies
from orphan_dashboard.content.orphaned_allocations import presenters
from orphan_dashboard.content.orphaned_allocations import service
from orphan_dashboard.content.orphaned_allocations import tabs as panel_tabs
from orphan_dashboard.operations import history as history_ops
from orphan_dashboard.operations import repairs
from orphan_dashboard.operations import report as report_ops

INDEX_URL = reverse_lazy('horizon:admin:orphaned_allocations:index')
PROVIDERS_TAB = 'orphaned_allocations__providers'
LOG = logging.getLogger(__name__)

OVERSIZED = (django_exceptions.TooManyFieldsSent,
             django_exceptions.RequestDataTooBig)
"""What Django raises where a POST first is read, past its
``DATA_UPLOAD_MAX_NUMBER_FIELDS`` or ``DATA_UPLOAD_MAX_MEMORY_SIZE``."""


def post_checked(view, back=None):
    """``view`` answering a POST too large for Django to read (a batch of
    thousands of ticked rows, or a forged one) as the panel answers too
    many rows: an error, nothing written, back to the page posted from
    (``back``, else the view's own page, when it is not this site's), a
    warning in the log, not a traceback and a bare 400.

    Django reads a POST first in its CSRF middleware, before any view, so
    the view is exempt from the middleware and protected by the same check
    (``csrf_protect``) once its POST has been read."""
    protected = csrf.csrf_protect(view)

    @functools.wraps(view)
    def checked(request, *args, **kwargs):
        if request.method == 'POST':
            try:
                request.POST
            except OVERSIZED as exc:
                LOG.warning('Refused a POST to %s: %s', request.path, exc)
                return _too_large(request, _posted_from(
                    request, back or request.path))
        return protected(request, *args, **kwargs)
    return csrf.csrf_exempt(checked)


def _posted_from(request, default):
    """The page a dialog was posted from, when it is this site's."""
    referer = request.headers.get('referer')
    if referer and url_has_allowed_host_and_scheme(
            referer, allowed_hosts={request.get_host()},
            require_https=request.is_secure()):
        return referer
    return default


def _too_large(request, back):
    messages.error(request, _(
        'Too many rows: more than this dashboard reads in one request, and '
        'at most %(limit)d at once (ORPHAN_AUDIT_MAX_ROWS). Select fewer: '
        'nothing was written.') % {'limit': conf.MAX_ROWS.get()})
    back = str(back)
    if request.headers.get('x-requested-with') == 'XMLHttpRequest':
        # A dialog's POST: Horizon's modal script follows this header.
        response = http.HttpResponse()
        response['X-Horizon-Location'] = back
        return response
    return http.HttpResponseRedirect(back)


def _report(request, provider_uuid=None):
    """The last report (None before the first), or its error on the page;
    with ``provider_uuid``, ``(report, its tree's or None)``."""
    try:
        report = service.report(request)
        provider = provider_uuid and service.provider_report(
            request, provider_uuid)
    except Exception:
        exceptions.handle(request, _('Unable to read the audit of this '
                                     'cloud: no repair is possible now.'))
        return (None, None) if provider_uuid else None
    return (report, provider) if provider_uuid else report


def report_alerts(report):
    """What the page says above its tables of ``report``: that the audit
    is partial (a cell down or slow) and each of its notes, translated.
    Part of the page's one report, not messages: a message would be kept
    for the next page (a Refresh's, the one sweep.js fetches) and shown
    again after the cell is back."""
    if report is None:
        return []
    alerts = [reasons.down_cells(report)] if report.down_cells else []
    return [labels.reason(a) for a in alerts + reasons.report_notes(report)]


def _sweep_state(request):
    """The sweep's state, or none known where the cache cannot say."""
    try:
        return service.sweep_state(request)
    except Exception:
        return {'version': None, 'sweeping': False}


class _FilteredTabsView(tabs.TabbedTableView):
    """Keeps the History tab's server-side filter, as ``DataTableView``
    does for its own table: Horizon stores the filter only there."""

    def tab_tables(self):
        """``{name: (table, tab)}`` of the tabs' tables, once loaded."""
        return {name: (table, tab)
                for tab in self.get_tabs(self.request, **self.kwargs)
                .get_tabs() if isinstance(tab, tabs.TableTab)
                for name, table in panel_tabs.tables_of(tab).items()}

    def post(self, request, *args, **kwargs):
        if 'action' in request.POST and '__' not in request.POST['action']:
            # Horizon's tables would fail on it with a server error.
            return http.HttpResponseBadRequest(_('Unknown action.'))
        self.load_tabs()
        for table, tab in self.tab_tables().values():
            if self.handle_server_filter(request, table=table):
                return http.HttpResponseRedirect(
                    request.get_full_path().split('?')[0] + '?tab=' +
                    tab.get_id())
        return super().post(request, *args, **kwargs)


class IndexView(_FilteredTabsView):
    tab_group_class = panel_tabs.IndexTabs
    template_name = 'orphaned_allocations/index.html'
    page_title = _('Orphaned Allocations')

    def get(self, request, *args, **kwargs):
        """``?batch=`` (a decommission's message links it): the History
        tab filtered by that batch, as if typed in its filter."""
        project = request.GET.get('project')
        if project:
            # A project's row on the Projects tab: its hypervisors.
            return self.filtered_tab('providers', PROVIDERS_TAB, 'project',
                                     project[:64])
        batch = request.GET.get('batch')
        if batch:
            return self.filtered_tab('history', repair_forms.HISTORY_TAB,
                                     'batch', batch[:32])
        return super().get(request, *args, **kwargs)

    def filtered_tab(self, table_name, tab, field, value):
        """To ``tab`` with its table filtered by ``field``, as if typed in
        its filter."""
        self.load_tabs()
        table = self.tab_tables()[table_name][0]
        param = filters.filter_action(table).get_param_name()
        self.request.session[param] = value
        self.request.session[param + '_field'] = field
        return http.HttpResponseRedirect('%s?tab=%s' % (INDEX_URL, tab))

    def get_tabs(self, request, **kwargs):
        if not hasattr(self, 'report'):
            self.report = _report(request)
        return super().get_tabs(request, report=self.report, **kwargs)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['report'] = self.report
        context['sweep_url'] = reverse(
            'horizon:admin:orphaned_allocations:sweep')
        state = _sweep_state(self.request)
        # The version of the report shown, not the newest: the page's
        # script swaps in a newer one when it is published.  A page that
        # could not read the snapshot says the newest: reloading it over
        # and over would not mend that.
        context['report_version'] = service.shown_version(
            self.request, unread=state['version'])
        context['sweeping'] = state['sweeping']
        context['sweep_failure'] = labels.sweep_failure(state.get('failure'))
        context['report_alerts'] = report_alerts(self.report)
        if self.report is not None:
            nodes = [p for p in self.report.providers if p.compute_node]
            context['attention'] = sum(1 for p in nodes if p.needs_attention)
            context['hypervisors'] = len(nodes)
            context['unjudged'] = sum(1 for p in self.report.providers
                                      if p.unjudged)
            try:
                found = service.capacity(self.request)
            except Exception:
                found = None
            if found is not None:
                context['held'] = list(found.held().items())
                context['affected'] = found.affected()
        return context


class DetailView(_FilteredTabsView):
    tab_group_class = panel_tabs.DetailTabs
    template_name = 'orphaned_allocations/detail.html'
    page_title = '{{ provider_report.provider.name }}'

    def get_tabs(self, request, **kwargs):
        kwargs['provider_uuid'] = kwargs['provider_uuid'].lower()
        if not hasattr(self, 'provider_report'):
            report, provider = _report(request, kwargs['provider_uuid'])
            if provider is None:
                self.to_root(report, kwargs['provider_uuid'])
                if report is not None:
                    messages.error(request, _('No such resource provider.'))
                else:
                    messages.info(request, _('The first audit of this cloud '
                                             'is still running.'))
                raise exceptions.Http302(INDEX_URL)
            self.report, self.provider_report = report, provider
        return super().get_tabs(request, report=self.report,
                                provider_report=self.provider_report,
                                **kwargs)

    def to_root(self, report, uuid):
        """A child provider's page is its tree's: to its root's, saying
        so."""
        tree = report and report.tree_of(uuid)
        if tree is None:
            return
        messages.info(self.request, _(
            '%(child)s is a child provider of %(root)s: this is its '
            'tree.') % {'child': report.names.get(uuid, uuid),
                        'root': tree.provider.name})
        raise exceptions.Http302(reverse(
            'horizon:admin:orphaned_allocations:detail',
            args=[tree.provider.uuid]))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['provider_report'] = self.provider_report
        context['report_alerts'] = report_alerts(self.report)
        context['service_state'] = labels.service_state(
            self.provider_report.service_state)
        context['owner'] = labels.owner_proven(
            self.provider_report.owner, self.provider_report.owner_proof)
        context['sweep_failure'] = labels.sweep_failure(
            _sweep_state(self.request).get('failure'))
        return context


class _PreviewView(forms.ModalFormView):
    """Modal plumbing: rows computed on GET and signed for the confirm."""
    success_url = INDEX_URL
    submit_label = _('Confirm')
    submit_class = 'btn-primary'

    def __init_subclass__(cls, **kwargs):
        """One name per action, its form's ``kind``: its template and its
        modal's and form's ids follow from it; its policy rules are its
        form's, its page title is its modal's header.  A kind of preview
        with no form of its own (:class:`_DeletingView`) is no action."""
        super().__init_subclass__(**kwargs)
        if cls.form_class is None:
            return
        cls.action = cls.form_class.kind
        cls.policy_rules = cls.form_class.policy_rules
        cls.template_name = 'orphaned_allocations/%s.html' % cls.action
        cls.modal_id = '%s_modal' % cls.action
        cls.form_id = '%s_form' % cls.action
        cls.page_title = cls.modal_header

    def dispatch(self, request, *args, **kwargs):
        """Neither the preview nor its confirm for a user the policy
        refuses: nothing read, written or journaled for them."""
        if not policies.allowed(request, self.policy_rules):
            messages.error(request, policies.REFUSED[self.policy_rules])
            return http.HttpResponseRedirect(self.get_success_url())
        return super().dispatch(request, *args, **kwargs)

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
        context['submit_class'] = self.submit_class
        context['actionable'] = self.actionable()
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

    def selection(self):
        """What to preview: the link's query, or the rows a table's batch
        action kept on the server (``?selection=``, see
        :func:`repair_forms.keep_selection`)."""
        token = self.request.GET.get('selection')
        if token is None:
            return self.request.GET
        return repair_forms.kept_selection(self.request, token)

    def names(self):
        try:
            return service.provider_names(self.request)
        except Exception:
            return {}

    def owner_names(self):
        try:
            return service.names(self.request)
        except Exception:
            return {}

    def owners(self, plan):
        """The owner before and after, named, where ``plan`` changes it."""
        if not getattr(plan, 'changes_owner', False):
            return None, None
        return labels.owner_change(plan, self.owner_names())

    def signed_plans(self):
        """The plans the confirm may write, as JSON-able data."""
        return [repair_forms.dump(r.plan) for r in self.rows if r.plan]

    def actionable(self):
        """Whether the confirm is offered: its button shown and its rows
        signed.  Here, when a row has a plan."""
        return any(row.plan for row in self.rows)

    def get_initial(self):
        if not self.actionable():
            return {}
        return self.signed_initial()

    def signed_initial(self):
        """The form's initial data once the confirm is offered."""
        return {'rows': repair_forms.sign(self.request, self.form_class.kind,
                                          dict(self.signed_extra(),
                                               plans=self.signed_plans(),
                                               refused=self.signed_refused(),
                                               names=self.signed_names()))}

    def refused_rows(self):
        """The rows shown as not possible."""
        return [row for row in self.rows if not row.plan]

    def signed_refused(self):
        """The rows shown as not possible, with why, in the user's words:
        the confirm's message counts them with the rest of the batch."""
        return [[row.selection.consumer, row.selection.provider,
                 row.selection.action, str(labels.reason(row.error))]
                for row in self.refused_rows()]

    def signed_names(self):
        """The names the confirm's messages use: the providers', and the
        servers' the preview showed."""
        return dict(self.names(), **presenters.server_names(self.rows))

    def signed_extra(self):
        return {}


class RepairView(_PreviewView):
    form_class = repair_forms.RepairForm
    modal_header = _('Review the allocation changes')

    def preview_rows(self):
        query = self.selection()
        chosen = [repair_forms.parse_selection(s)
                  for s in query.getlist('sel')]
        providers = [repair_forms.parse_uuid(p)
                     for p in query.getlist('provider')]
        repair_forms.check_count(len(chosen) + len(providers))
        if not chosen and not providers:
            raise repair_forms.BadSelection(_('Nothing selected.'))
        try:
            selections, self.hints = service.selections(self.request, chosen,
                                                        providers)
        except LookupError:
            raise repair_forms.BadSelection(_(
                'No such resource provider in the last audit.'))
        if not selections:
            raise repair_forms.BadSelection(
                _('No recommended repair on the selected hypervisors.'))
        repair_forms.check_count(len(selections))
        return service.preview(self.request, selections, self.hints)

    def signed_extra(self):
        return {'hints': list(getattr(self, 'hints', ()))}

    def get_context_data(self, **kwargs):
        """Each row with its server's and its providers' names."""
        context = super().get_context_data(**kwargs)
        names = self.names() if self.rows else {}
        owners = self.owner_names() if any(
            row.finding for row in self.rows) else {}
        context['previews'] = presenters.repair_previews(
            self.rows, names, owners, self.owners)
        return context


class DeleteUnknownView(RepairView):
    """Every unknown consumer of a provider's tree (``?provider=``) or of
    the last audit, previewed with their count, what they free and who
    else could own them."""
    form_class = repair_forms.DeleteUnknownForm
    modal_header = _('Delete unknown consumers')
    submit_label = _('Delete')
    submit_class = 'btn-danger'

    def preview_rows(self):
        query = self.selection()
        providers = [repair_forms.parse_uuid(p)
                     for p in query.getlist('provider')]
        try:
            selections = repairs.unknown_selections(
                service.report(self.request), providers)
        except LookupError:
            raise repair_forms.BadSelection(_(
                'No such resource provider in the last audit.'))
        if not selections:
            raise repair_forms.BadSelection(
                _('No unknown consumer to delete.'))
        self.unknown_total = len(selections)
        selections = selections[:conf.MAX_ROWS.get()]
        self.hints = ()
        return service.preview(self.request, selections)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        planned = [row for row in self.rows if row.plan]
        context['unknown_count'] = len(planned)
        context['unknown_total'] = getattr(self, 'unknown_total', 0)
        context['unknown_more'] = context['unknown_total'] - len(self.rows)
        context['unknown_frees'] = reasons.format_resources(
            presenters.freed(planned))
        return context


class RestoreView(_PreviewView):
    form_class = repair_forms.RestoreForm
    modal_header = _('Review the restore')

    def preview_rows(self):
        query = self.selection()
        batch = query.get('batch')
        try:
            ids = [int(i) for i in query.getlist('entry')]
        except ValueError:
            raise repair_forms.BadSelection(_('Malformed journal entry.'))
        if batch:
            entries = service.batch_entries(self.request, batch[:32])
            if not entries:
                raise repair_forms.BadSelection(_('No such batch.'))
            repair_forms.check_count(len(entries))
        else:
            if not ids:
                raise repair_forms.BadSelection(_('Nothing selected.'))
            repair_forms.check_count(len(ids))
            try:
                entries = service.journal_entries(self.request, ids)
            except ObjectDoesNotExist:
                raise repair_forms.BadSelection(_('No such journal entry.'))
        repair_forms.check_restore_allowed(self.request, entries)
        return service.preview_restore(self.request, entries)

    def signed_plans(self):
        return [[entry.id, repair_forms.dump(row.plan)]
                for entry, row in self.rows if row.plan]

    def actionable(self):
        return any(row.plan for _entry, row in self.rows)

    def refused_rows(self):
        return [row for _entry, row in self.rows if not row.plan]

    def signed_names(self):
        return dict(self.names(), **presenters.server_names(
            row for _entry, row in self.rows))

    def names(self):
        """The audit's names, and the journaled names of the providers it
        no longer has (a decommissioned host's)."""
        journaled = {}
        for entry, _row in self.rows:
            if entry.kind == entry.PROVIDER:
                record = entry.before or entry.after or {}
                if record.get('name'):
                    journaled[entry.provider] = record['name']
        return dict(journaled, **super().names())

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        names = self.names() if self.rows else {}
        context['previews'] = presenters.restore_previews(
            self.rows, names, self.owners)
        return context


class _DeletingView(_PreviewView):
    """A confirm that deletes: under Horizon's red button, as its own."""
    submit_class = 'btn-danger'


class DeleteProviderView(_DeletingView):
    form_class = repair_forms.DeleteProvidersForm
    modal_header = _('Review the provider deletion')
    submit_label = _('Delete')

    def preview_rows(self):
        roots = [repair_forms.parse_uuid(p)
                 for p in self.request.GET.getlist('provider')]
        if not roots:
            raise repair_forms.BadSelection(_('Nothing selected.'))
        repair_forms.check_count(len(roots))
        return service.preview_provider_delete(self.request, roots)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['previews'] = presenters.provider_delete_previews(
            self.rows, self.names() if self.rows else {})
        return context

    def actionable(self):
        """All or nothing: a tree is deleted whole, children first."""
        return bool(self.rows) and all(row.plan for row in self.rows)


class DecommissionView(_DeletingView):
    form_class = repair_forms.DecommissionForm
    modal_header = _('Decommission a hypervisor')
    submit_label = _('Decommission')

    def preview_rows(self):
        if not self.request.GET.get('provider'):
            raise repair_forms.BadSelection(_(
                'No hypervisor chosen: decommission one from its row in '
                'the Hypervisors tab.'))
        provider = repair_forms.parse_uuid(self.request.GET.get('provider'))
        report = service.report(self.request)
        if report is not None and provider not in report.names:
            # A uuid no audit saw: "already gone" would pass it for done.
            raise repair_forms.BadSelection(_(
                'No such resource provider in the last audit.'))
        return self.preview_of(
            provider, self.request.GET.get('whole_service') == '1')

    def preview_of(self, provider, whole_service):
        """The steps of decommissioning ``provider``, read now."""
        self.provider = provider
        self.plan = service.preview_decommission(
            self.request, provider, whole_service=whole_service)
        return self.plan.steps

    def form_invalid(self, form):
        """The same preview again beside the form's errors (a consumer
        left unticked), read for what the signed preview was of: the
        operator ticks and confirms, rather than starting over."""
        if form.previewed:
            try:
                self.rows = self.preview_of(*form.previewed)
            except Exception:
                exceptions.handle(self.request, _('Unable to preview: '
                                                  'nothing was written.'))
        return super().form_invalid(form)

    def actionable(self):
        """Nothing blocks it but unknown consumers and foreign children,
        which are ticked."""
        plan = getattr(self, 'plan', None)
        return plan is not None and plan.actionable()

    def signed_initial(self):
        """Signed even with nothing to repair: the deletes remain, bound
        to the service and providers shown."""
        optional = self.plan.optional
        foreign = [[uuid, str(label)] for _name, uuid, label, _why in
                   presenters.foreign_children(self.plan)]
        return {'optional': optional, 'foreign': foreign,
                'whole_service_host': self.plan.host
                if self.plan.whole_service else None,
                'rows': repair_forms.sign(
                    self.request, self.form_class.kind, {
                        'provider': self.provider, 'optional': optional,
                        'foreign': foreign,
                        'bound': self.plan.binding(),
                        'plans': self.signed_plans(),
                        'names': self.names()})}

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        plan = getattr(self, 'plan', None)
        names = self.names() if plan else {}
        context['plan'] = plan
        context['names'] = names
        context.update(presenters.decommission_preview(
            plan, names, self.owner_names() if plan else {}))
        context['whole_service_url'] = '%s?%s' % (
            self.request.path, urlparse.urlencode(
                {'provider': self.provider, 'whole_service': '1'})) \
            if plan and plan.keeps_service else None
        context['blockers'] = plan.blockers(
            plan.optional, plan.foreign_children) if plan else []
        return context


class SweepView(generic.View):
    """The page's progress bar polls this: the snapshot's version and age,
    and the running sweep's progress."""

    def get(self, request):
        try:
            state = service.sweep_state(request)
        except Exception:
            return http.JsonResponse({'error': str(_('Unable to read the '
                                                     'audit state.'))},
                                     status=503)
        state['labels'] = dict({kind: str(label) for kind, label
                                in labels.READ_KINDS.items()},
                               total=str(labels.READ_TOTAL))
        state['failure'] = str(labels.sweep_failure(state.get('failure')))
        return http.JsonResponse(state)


def _download(pieces, fmt, filename):
    response = http.StreamingHttpResponse(pieces, content_type={
        'csv': 'text/csv', 'json': 'application/json'}[fmt])
    response['Content-Disposition'] = 'attachment; filename="%s.%s"' % (
        filename, fmt)
    return response


class ExportFindingsView(generic.View):
    """The findings of the last audit: the cloud's problems, or every row
    of one provider (``?provider=``)."""

    def get(self, request, fmt):
        provider = request.GET.get('provider') or None
        try:
            found = service.findings_export(request, provider)
        except LookupError:
            messages.error(request, _('No such resource provider.'))
            return http.HttpResponseRedirect(INDEX_URL)
        except Exception:
            exceptions.handle(request, _('Unable to read the audit of this '
                                         'cloud.'))
            return http.HttpResponseRedirect(INDEX_URL)
        if found is not None:
            rows, name = found
            return _download(report_ops.findings_exported(rows, fmt), fmt,
                             name)
        messages.info(request, _('The first audit of this cloud is still '
                                 'running.'))
        return http.HttpResponseRedirect(INDEX_URL)


class ExportHistoryView(generic.View):
    """The whole matching history of this cloud (of every cloud, when
    History shows them), streamed."""

    def get(self, request, fmt):
        if filters.all_clouds_refused(request):
            messages.error(request, filters.OTHER_CLOUDS_OFF)
            return http.HttpResponseRedirect(
                '%s?tab=%s' % (INDEX_URL, repair_forms.HISTORY_TAB))
        found = service.history_export(
            request, all_clouds=filters.all_clouds(request),
            **{field: request.GET.get(field) or None
               for field in filters.HISTORY_FILTERS})
        return _download(history_ops.exported(found, fmt), fmt,
                         'orphan-journal')
