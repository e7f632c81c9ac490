/*
 * The keyboard on the Orphaned Allocations pages: Tab goes from element
 * to element, through every row's checkbox and actions to the table's
 * footer.  Horizon's tabs script turns Tab on a tab pane's last (Shift+Tab
 * on its first) form field into a switch to the next (previous) tab, which
 * suits a form spread over tabs but throws a keyboard user out of a table
 * before its last row's actions: on this panel's panes that key press
 * stops at the pane and the browser moves the focus as it always does.
 */
(function () {
  'use strict';

  var TAB = 9;

  function ours() {
    return window.location.pathname.indexOf('/orphaned_allocations/') >= 0;
  }

  horizon.addInitFunction(function () {
    if (!ours()) {
      return;
    }
    $('.tab-content > .tab-pane').on('keydown', ':input', function (evt) {
      if (evt.which === TAB) {
        evt.stopPropagation();
      }
    });
  });
})();
