/*
 * The keyboard on the Orphaned Allocations pages: Tab goes from element
 * to element, through every row's checkbox and actions to the table's
 * footer.  Horizon's tabs script turns Tab on a tab pane's last (Shift+Tab
 * on its first) form field into a switch to the next (previous) tab, which
 * suits a form spread over tabs but throws a keyboard user out of a table
 * before its last row's actions: on this panel's panes that key press
 * stops at the pane and the browser moves the focus as it always does.
 * (The row checkboxes are in that order too: see the panel's SCSS.)
 *
 * A preview that comes back with errors (a decommission confirmed with a
 * consumer left unticked) says them at its top: the focus goes there, so
 * a screen reader reads them and a long preview does not hide them below
 * the fold.
 */
(function () {
  'use strict';

  var TAB = 9;

  function ours() {
    return window.location.pathname.indexOf('/orphaned_allocations/') >= 0;
  }

  function focusErrors($scope) {
    $scope.find('.orphan-form-errors').first().trigger('focus');
  }

  // Bootstrap focuses a modal itself once it is shown: after that.
  $(document).on('shown.bs.modal', '.modal', function () {
    focusErrors($(this));
  });
  horizon.modals.addModalInitFunction(function (modal) {
    focusErrors($(modal));
  });

  horizon.addInitFunction(function () {
    if (!ours()) {
      return;
    }
    focusErrors($('#content_body'));
    $('.tab-content > .tab-pane').on('keydown', ':input', function (evt) {
      if (evt.which === TAB) {
        evt.stopPropagation();
      }
    });
  });
})();
