/*
 * A table filter in a tab loaded after its page (History on the index,
 * Allocations or History on a hypervisor's page): Horizon sets up a
 * filter's field dropdown (its themable select) only for the selects the
 * page held when it loaded, and its watcher of selects added later never
 * fires, so choosing "Provider =" there changed nothing and the search
 * went to the first field.  Each tab of this panel's pages gets its
 * selects set up as it arrives.
 */
(function () {
  'use strict';

  horizon.tabs.addTabLoadFunction(function (tab) {
    if (window.location.pathname.indexOf('/orphaned_allocations/') >= 0) {
      horizon.forms.init_themable_select($(tab));
    }
  });
}());
