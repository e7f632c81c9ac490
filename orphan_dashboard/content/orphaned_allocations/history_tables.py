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

"""The History table: the journal's entries, each restorable where its
*before* can be put back."""

from urllib import parse as urlparse

from django.template import defaultfilters
from django.utils.html import format_html
from django.utils.html import format_html_join
from django.utils.translation import gettext_lazy as _

from horizon import tables

from orphan_dashboard.audit import reasons
from orphan_dashboard.content.orphaned_allocations import actions
from orphan_dashboard.content.orphaned_allocations import filters
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import policies


class RestoreRow(tables.LinkAction):
    name = 'restore'
    verbose_name = _('Restore')
    classes = ('ajax-modal',)
    policy_rules = policies.WRITE_ALLOCATIONS

    def allowed(self, request, datum=None):
        return datum is not None and _restorable(datum) and \
            policies.allowed(request, policies.restore_rules([datum]))

    def get_link_url(self, datum):
        return actions.panel_url('restore', self.table.request,
                                 entry=datum.id)


def _restorable(entry):
    """Its *before* can be put back (:func:`audit.restore.restorable`, as
    the History tab found it)."""
    return getattr(entry, 'restorable', False)


class RestoreBatch(tables.LinkAction):
    """Restore a whole decommission: its providers, then its allocations
    (the compute service is not re-created)."""
    name = 'restore_batch'
    verbose_name = _('Restore decommission')
    classes = ('ajax-modal',)
    policy_rules = policies.RESTORE_PROVIDERS

    def allowed(self, request, datum=None):
        """Applied decommissions of this cloud: every cloud's History is
        read-only."""
        return datum is not None and datum.kind == datum.SERVICE and \
            datum.status == datum.APPLIED and not filters.all_clouds(request)

    def get_link_url(self, datum):
        return actions.panel_url('restore', self.table.request,
                                 batch=datum.batch)


class RestoreRows(actions.SelectionAction):
    name = 'restore_selected'
    verbose_name = _('Restore')
    verbose_name_plural = _('Restore')
    url_name = 'restore'

    def query(self, obj_ids):
        return {'entry': obj_ids}


class ExportCSV(actions.Download):
    """The journal entries the filter shows, every page of them."""
    name = 'export_csv'
    verbose_name = _('Export CSV')
    url_name = 'export'
    fmt = 'csv'

    def query(self):
        return {k: v for k, v in self.table.kwargs.items()
                if (k in filters.HISTORY_FILTERS or k == 'clouds') and v}


class ExportJSON(ExportCSV):
    name = 'export_json'
    verbose_name = _('Export JSON')
    fmt = 'json'


def _provider_summary(record):
    return _('provider %(name)s (%(inventories)s)') % {
        'name': record.get('name', ''),
        'inventories': reasons.format_resources({
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
    for binding in labels.bindings(entry, names):
        change = format_html('{}<br><small>{}</small>', change,
                             labels.html_format(
                                 _('first, in Neutron, the binding of port '
                                   '%(port)s: %(before)s → %(after)s'),
                                 port=labels.named(binding['port'], {
                                     binding['port']: binding['name']}),
                                 before=_named_providers(binding['before']),
                                 after=_named_providers(binding['after'])))
    return change


def _named_providers(providers):
    """The providers a port's binding names, by name, or that it names
    none."""
    if not providers:
        return _('no provider')
    return format_html_join(', ', '{}', (
        (labels.named(uuid, {uuid: name}),) for name, uuid in providers))


def _allocations(allocations, names):
    """A journaled side of a change, providers by name where known."""
    if not allocations:
        return labels.reason(reasons.format_allocations(allocations))
    return format_html_join('; ', '{}: {}', (
        (labels.named(rp, names), reasons.format_resources(resources))
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


def _consumer(entry):
    """The server's name, its uuid one hover away, as History knows it
    (``orphan-audit history`` names it too); else the uuid."""
    return labels.named(entry.consumer, getattr(entry, 'names', None) or {})


def _cloud(entry):
    """Which cloud wrote the entry: this one, or another by its Keystone
    and region, its Placement service's id beside (a rebuilt Keystone
    behind the same URL differs only in that id)."""
    if getattr(entry, 'this_cloud', False):
        return _('this cloud')
    place = ', '.join(part for part in (entry.auth_url, entry.region)
                      if part)
    return format_html('{} <small class="text-muted">{}</small>',
                       place or entry.cloud,
                       entry.placement_service_id)


def _outcome(entry):
    text = entry.get_status_display()
    return '%s: %s' % (text, entry.message) if entry.message else text


class HistoryRow(tables.Row):
    def can_be_selected(self, datum):
        return _restorable(datum)


class HistoryTable(filters.PagesKeepView, actions.SelectableTable):
    created = tables.Column(
        'created', verbose_name=_('Time'),
        filters=(lambda d: defaultfilters.date(d, 'Y-m-d H:i:s'),))
    user = tables.Column('user_name', verbose_name=_('User'))
    action = tables.Column(lambda e: labels.action(e.action),
                           verbose_name=_('Action'))
    consumer = tables.Column(_consumer, verbose_name=_('Consumer'))
    provider = tables.Column(_provider, verbose_name=_('Provider'))
    change = tables.Column(_change, verbose_name=_('Before → after'),
                           classes=actions.PROSE)
    outcome = tables.Column(_outcome, verbose_name=_('Outcome'),
                            classes=actions.PROSE)
    cloud = tables.Column(_cloud, verbose_name=_('Cloud'),
                          classes=('orphan-cloud',))

    def __init__(self, request, data=None, needs_form_wrapper=None,
                 **kwargs):
        super().__init__(request, data, needs_form_wrapper, **kwargs)
        self.kwargs = kwargs

    def get_object_id(self, datum):
        return str(datum.id)

    def get_columns(self):
        """The cloud column only on every cloud's History: this cloud's
        alone has one cloud to name."""
        if not filters.all_clouds(self.request):
            self.columns.pop('cloud', None)
        return super().get_columns()

    def kept(self, pagination):
        """A page link on the same tab and the same clouds' History: a
        marker alone lands on the first tab, of this cloud only (the
        filter itself is kept in the session)."""
        query = {k: v for k, v in self.kwargs.items()
                 if k in ('tab', 'clouds') and v}
        return '&'.join(filter(None, (urlparse.urlencode(query),
                                      pagination)))

    class Meta(object):
        name = 'history'
        css_classes = 'orphan-table'
        verbose_name = _('History')
        table_actions = (filters.HistoryFilter, filters.CloudsChoice,
                         ExportCSV, ExportJSON, RestoreRows)
        row_actions = (RestoreRow, RestoreBatch)
        row_class = HistoryRow
        multi_select = True
