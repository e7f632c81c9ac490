# Admin > Compute > Orphaned Allocations.  Copy this file into
# openstack_dashboard/local/enabled/ to enable the panel.
PANEL = 'orphaned_allocations'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'compute'
ADD_PANEL = ('orphan_dashboard.content.orphaned_allocations.panel.'
             'OrphanedAllocations')
ADD_INSTALLED_APPS = ['orphan_dashboard']
# The index's progress bar of the background sweep.
ADD_JS_FILES = ['orphan_dashboard/js/sweep.js']
