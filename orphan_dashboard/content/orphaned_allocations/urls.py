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

from django.urls import re_path

from orphan_dashboard.content.orphaned_allocations import views

UUID = r'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-' \
       r'[0-9a-fA-F]{12}'

# Every view that takes a POST reads it through views.post_checked.
urlpatterns = [
    re_path(r'^$', views.post_checked(views.IndexView.as_view()),
            name='index'),
    re_path(r'^repair/$', views.post_checked(
        views.RepairView.as_view(), views.INDEX_URL), name='repair'),
    re_path(r'^restore/$', views.post_checked(
        views.RestoreView.as_view(), views.INDEX_URL), name='restore'),
    re_path(r'^unknown/delete/$', views.post_checked(
        views.DeleteUnknownView.as_view(), views.INDEX_URL),
        name='delete_unknown'),
    re_path(r'^providers/delete/$', views.post_checked(
        views.DeleteProviderView.as_view(), views.INDEX_URL),
        name='delete_provider'),
    re_path(r'^decommission/$', views.post_checked(
        views.DecommissionView.as_view(), views.INDEX_URL),
        name='decommission'),
    re_path(r'^sweep/$', views.SweepView.as_view(), name='sweep'),
    re_path(r'^history/export/(?P<fmt>csv|json)/$',
            views.ExportHistoryView.as_view(), name='export'),
    re_path(r'^findings/export/(?P<fmt>csv|json)/$',
            views.ExportFindingsView.as_view(), name='export_findings'),
    re_path(r'^(?P<provider_uuid>%s)/$' % UUID, views.post_checked(
        views.DetailView.as_view()), name='detail'),
]
