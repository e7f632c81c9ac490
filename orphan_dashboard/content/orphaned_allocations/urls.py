from django.urls import re_path

from orphan_dashboard.content.orphaned_allocations import views

UUID = r'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-' \
       r'[0-9a-fA-F]{12}'

urlpatterns = [
    re_path(r'^$', views.IndexView.as_view(), name='index'),
    re_path(r'^repair/$', views.RepairView.as_view(), name='repair'),
    re_path(r'^restore/$', views.RestoreView.as_view(), name='restore'),
    re_path(r'^providers/delete/$', views.DeleteProviderView.as_view(),
            name='delete_provider'),
    re_path(r'^decommission/$', views.DecommissionView.as_view(),
            name='decommission'),
    re_path(r'^sweep/$', views.SweepView.as_view(), name='sweep'),
    re_path(r'^history/export/(?P<fmt>csv|json)/$',
            views.ExportHistoryView.as_view(), name='export'),
    re_path(r'^(?P<provider_uuid>%s)/$' % UUID, views.DetailView.as_view(),
            name='detail'),
]
