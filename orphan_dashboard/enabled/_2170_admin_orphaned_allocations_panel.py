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

# Admin > Compute > Orphaned Allocations.  Copy this file into
# openstack_dashboard/local/enabled/ to enable the panel.
PANEL = 'orphaned_allocations'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'compute'
ADD_PANEL = ('orphan_dashboard.content.orphaned_allocations.panel.'
             'OrphanedAllocations')
ADD_INSTALLED_APPS = ['orphan_dashboard']
# The index's progress bar of the background sweep, the keyboard on the
# panel's tabs, and the panel's styles.
ADD_JS_FILES = ['orphan_dashboard/js/sweep.js',
                'orphan_dashboard/js/keyboard.js',
                'orphan_dashboard/js/filters.js']
ADD_SCSS_FILES = ['orphan_dashboard/scss/orphan_dashboard.scss']
