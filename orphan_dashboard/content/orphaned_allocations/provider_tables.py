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

"""The hypervisors table: one row per provider tree, from the index."""

from django.contrib.humanize.templatetags import humanize
from django import shortcuts
from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from horizon import exceptions
from horizon import messages
from horizon import tables

from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import actions
from orphan_dashboard.content.orphaned_allocations import filters
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import policies
from orphan_dashboard.content.orphaned_allocations import service


class ViewAllocations(tables.LinkAction):
    name = 'view'
    verbose_name = _('View allocations')
    policy_rules = policies.PANEL

    def get_link_url(self, datum):
        return reverse('horizon:admin:orphaned_allocations:detail',
                       args=[datum.provider.uuid])


class ViewHypervisor(tables.LinkAction):
    """The hypervisor's servers as Nova lists them, in Admin >
    Hypervisors."""
    name = 'hypervisor'
    verbose_name = _('View in Hypervisors')
    policy_rules = policies.PANEL

    def allowed(self, request, datum=None):
        return datum is not None and datum.hypervisor is not None

    def get_link_url(self, datum):
        return actions.hypervisor_url(datum.hypervisor)


class FixRecommended(actions.SelectionAction):
    name = 'fix_recommended'
    verbose_name = _('Fix recommended')
    verbose_name_plural = _('Fix recommended')
    classes = ('btn-danger',)
    icon = 'wrench'
    url_name = 'repair'

    def query(self, obj_ids):
        return {'provider': obj_ids}


class Refresh(tables.Action):
    """A full sweep in the background, asked for by a POST of the table's
    form (its CSRF token): a link, even from another site, starts none.
    Comes back at once to the page it was pressed on, saying so when the
    full sweep waits for one already running."""
    name = 'refresh'
    verbose_name = _('Refresh')
    verbose_name_plural = _('Refresh')
    icon = 'refresh'
    requires_input = False
    policy_rules = policies.PANEL

    def handle(self, table, request, obj_ids):
        try:
            if not service.refresh(request):
                messages.info(request, _(
                    'A sweep is already running: the full sweep you asked '
                    'for starts when it ends.'))
        except Exception:
            exceptions.handle(request, _('Unable to start a sweep.'))
        return shortcuts.redirect(request.get_full_path())


def showing_all(request):
    """Whether the index lists every hypervisor, not only those that need
    attention."""
    return request.GET.get('show') == 'all'


class ToggleAll(filters.Toggle):
    """Every hypervisor, or those that need attention again."""
    name = 'toggle_all'
    policy_rules = policies.PANEL
    labels = (_('Show all hypervisors'), _('Show mismatched only'))
    is_on = staticmethod(showing_all)

    def get_link_url(self, datum=None):
        return '?' if showing_all(self.table.request) else '?show=all'


class DeleteProvider(tables.LinkAction):
    """Delete a provider tree Nova no longer has, after a preview."""
    name = 'delete_provider'
    verbose_name = _('Delete provider')
    classes = ('ajax-modal', 'btn-danger')
    icon = 'trash'
    policy_rules = policies.DELETE_PROVIDERS

    def allowed(self, request, datum=None):
        """Only providers with no compute node and no allocations left."""
        return datum is not None and datum.orphaned_provider and \
            not datum.consumers

    def get_link_url(self, datum):
        return actions.panel_url('delete_provider',
                                 provider=datum.provider.uuid)


def _usage(rc):
    def value(datum):
        return '%s / %s' % (humanize.intcomma(datum.usage.get(rc, 0)),
                            humanize.intcomma(datum.needed.get(rc, 0)))
    return value


def _capacity(datum):
    """Needed, held by findings and free per class: a thin bar each, the
    numbers in its parts' titles (the legend is the tab's, once)."""
    if not datum.bars:
        return '-'
    return template.loader.render_to_string(
        'orphaned_allocations/_capacity_cell.html', {'rows': datum.bars})


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
        owned = _('%(state)s (owner: %(owner)s)') % {
            'state': state, 'owner': labels.owner(datum.owner)}
        proven = labels.proven_by(datum.owner_proof)
        if proven is None:
            return owned
        return format_html(
            '{}<br><small class="orphan-owner-proof">{}</small>', owned,
            proven)
    return state


class ProviderRow(tables.Row):
    def can_be_selected(self, datum):
        """Only hypervisors with a repair to recommend get a checkbox."""
        return any(finding.action for finding in datum.findings)


class ProvidersTable(filters.PagesKeepView, actions.SelectableTable):
    name = tables.WrappingColumn(
        lambda d: d.provider.name, verbose_name=_('Hypervisor'),
        link=lambda d: reverse('horizon:admin:orphaned_allocations:detail',
                               args=[d.provider.uuid]))
    state = tables.Column(_state, verbose_name=_('Compute service'))
    servers = tables.Column('servers', verbose_name=_('Servers in Nova'))
    consumers = tables.Column('consumers',
                              verbose_name=_('Consumers in Placement'))
    findings = tables.Column(_findings, verbose_name=_('Findings'),
                             classes=actions.PROSE)
    # Below 1200 px the capacity bars (numbers on hover) stand for these.
    vcpu = tables.Column(_usage('VCPU'), verbose_name=_('VCPU used / needed'),
                         classes=actions.WIDE_ONLY)
    memory = tables.Column(_usage('MEMORY_MB'),
                           verbose_name=_('RAM (MB) used / needed'),
                           classes=actions.WIDE_ONLY)
    disk = tables.Column(_usage('DISK_GB'),
                         verbose_name=_('Disk (GB) used / needed'),
                         classes=actions.WIDE_ONLY)
    capacity = tables.Column(_capacity, verbose_name=_(
        'Needed, held by findings, free'), classes=('orphan-capacity',))

    def get_object_id(self, datum):
        return datum.provider.uuid

    def get_object_display(self, datum):
        return datum.provider.name

    def kept(self, pagination):
        if showing_all(self.request):
            return pagination + '&show=all'
        return pagination

    class Meta(object):
        name = 'providers'
        css_classes = 'orphan-table'
        verbose_name = _('Hypervisors')
        table_actions = (filters.ProvidersFilter, Refresh, ToggleAll,
                         actions.ExportFindingsCSV,
                         actions.ExportFindingsJSON, FixRecommended,
                         actions.DeleteUnknown)
        row_actions = (ViewAllocations, ViewHypervisor, actions.Decommission,
                       DeleteProvider)
        row_class = ProviderRow
        multi_select = True
