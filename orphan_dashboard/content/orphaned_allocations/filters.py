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

"""The tables' server-side filters: what each matches, over every row
(not only the page shown)."""

from urllib import parse as urlparse

from django.utils.translation import gettext_lazy as _

from horizon import tables

from orphan_dashboard.audit import model as m
from orphan_dashboard.content.orphaned_allocations import labels
from orphan_dashboard.content.orphaned_allocations import service


def _matches(text, *values):
    text = text.lower()
    return any(text in str(value).lower() for value in values if value)


def filter_action(table):
    """The filter action bound to ``table``.

    Horizon reaches it through the private ``table._meta._filter_action``
    and has no public accessor; the public ``base_actions`` holds the same
    bound instance.
    """
    return next(action for action in table.base_actions.values()
                if isinstance(action, tables.FilterAction))


def server_filter(table):
    """``(field, text)`` of a server-side filter, kept in the session by
    the view (Horizon keeps it only for a ``DataTableView``'s table)."""
    field = table.get_filter_field()
    text = table.get_filter_string().strip()
    action = filter_action(table)
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


def finding_matches(row, text):
    """Whether an allocation row shows ``text``."""
    return _matches(text, row.consumer, labels.reason(row.nova), row.host,
                    row.project_name, row.project_id, row.user_name,
                    row.user_id, row.verdict, labels.verdict(row.verdict),
                    labels.reason(row.reason))


class Toggle(tables.LinkAction):
    """A link between two views of a table, labelled with the one it leads
    to (:attr:`labels`, by :meth:`is_on` of the request).

    Horizon makes one instance of a table action for all tables and
    requests: the label is read from the request being rendered, never
    stored on the instance.
    """
    labels = ('', '')
    """The label while the view is off, and while it is on."""

    @staticmethod
    def is_on(request):
        raise NotImplementedError

    @property
    def verbose_name(self):
        request = getattr(getattr(self, 'table', None), 'request', None)
        return self.labels[request is not None and self.is_on(request)]

    @verbose_name.setter
    def verbose_name(self, value):
        """``LinkAction.__init__`` sets it: the label is computed instead."""


class PagesKeepView:
    """A table whose page links keep the view it shows (:meth:`kept`): a
    marker alone would land on the default view."""

    def kept(self, pagination):
        raise NotImplementedError

    def get_pagination_string(self):
        return self.kept(super().get_pagination_string())

    def get_prev_pagination_string(self):
        return self.kept(super().get_prev_pagination_string())


class ProvidersFilter(tables.FilterAction):
    """Every hypervisor (not only the page shown, nor only the mismatched)
    by name, by a verdict among its findings, or by a project owning one."""
    filter_type = 'server'
    filter_choices = (('name', _('Hypervisor ='), True),
                      ('verdict', _('Verdict ='), True),
                      ('project', _('Project ='), True))


class AllocationsFilter(tables.FilterAction):
    """Every row of the tree (not only the page shown) that shows the
    text: consumer, server, host, project, user, verdict or reason."""
    filter_type = 'server'
    filter_choices = (('any', _('Any column ='), True),)


class HistoryFilter(tables.FilterAction):
    """Every entry (not only the page shown) whose consumer, provider or
    project shows the text, by name (a server's, a provider's, a
    project's) or by a part of its id; or of a batch, by the start of its
    id."""
    filter_type = 'server'
    filter_choices = (('consumer', _('Consumer ='), True),
                      ('provider', _('Provider ='), True),
                      ('project', _('Project ='), True),
                      ('batch', _('Batch ='), True))


HISTORY_FILTERS = ('consumer', 'provider', 'project', 'batch')
"""The History filter's fields, each a keyword of ``service.history``."""

ALL_CLOUDS = 'all'
"""``?clouds=all``: History (and its export) of every cloud the journal
holds, read-only, where ``ORPHAN_AUDIT_HISTORY_ALL_CLOUDS`` allows it."""


def _asked_all_clouds(request):
    return request.GET.get('clouds') == ALL_CLOUDS


def all_clouds(request):
    """Whether History shows every cloud's entries, not this cloud's:
    asked, and allowed (:func:`service.other_clouds_allowed`)."""
    return _asked_all_clouds(request) and service.other_clouds_allowed()


def all_clouds_refused(request):
    """Every cloud's History asked for where the setting keeps it off."""
    return _asked_all_clouds(request) and not service.other_clouds_allowed()


OTHER_CLOUDS_OFF = _("Only this cloud's History can be shown: this "
                     "dashboard keeps other clouds' journals hidden "
                     "(ORPHAN_AUDIT_HISTORY_ALL_CLOUDS).")


class CloudsChoice(Toggle):
    """History of this cloud, or of every cloud the journal holds (read
    only): a Keystone rebuilt is a new cloud to the journal."""
    name = 'clouds'
    labels = (_('All clouds'), _('This cloud only'))
    is_on = staticmethod(all_clouds)

    def allowed(self, request, datum=None):
        """Offered only where every cloud's History may be shown."""
        return service.other_clouds_allowed()

    def get_link_url(self, datum=None):
        query = {'tab': self.table.kwargs.get('tab', '')}
        if not all_clouds(self.table.request):
            query['clouds'] = ALL_CLOUDS
        return '?' + urlparse.urlencode(query)
