/*
 * The audit snapshot's age and the background sweep's progress on the
 * Orphaned Allocations index: polls the panel's sweep/ view while a sweep
 * runs (and slowly while none does), and says why the last one failed.
 * The bar is filled to the percentage its text states: both come from the
 * server's counts.  When a new snapshot is published, a page that
 * had none reloads itself; a page showing an older one updates in place
 * (the page's own address, so its filter and page stay; the ticked rows
 * stay ticked) its tables and the summary above them together, to the
 * version the page fetched says it shows, and offers the reload only if
 * that fails.
 */
(function () {
  'use strict';

  var POLL_MS = 2000;
  var IDLE_MS = 15000;

  function format(text, values) {
    return text.replace(/%\((\w+)\)s/g, function (match, name) {
      return values[name];
    }).replace(/%%/g, '%');
  }

  function describe(progress, labels) {
    var parts = $.map(progress.read, function (counts, kind) {
      return ((labels && labels[kind]) || kind) + ' ' + counts[0] +
        (counts[1] === null || counts[1] === undefined ? '' : '/' + counts[1]);
    }).join(', ');
    if (progress.percent === null || progress.percent === undefined ||
        !(labels && labels.total)) {
      return parts;
    }
    return format(labels.total, progress) + ': ' + parts;
  }

  function show($box, state) {
    var $bar = $box.find('.progress-bar');
    // Why the last sweep failed, until one publishes.
    $box.find('.orphan-sweep-failed').text(state.failure || '')
      .toggleClass('hidden', !state.failure);
    if (!state.sweeping) {
      $box.find('.orphan-sweep-progress').addClass('hidden');
      return;
    }
    var pct = state.progress.percent;
    var known = pct !== null && pct !== undefined;
    $box.find('.orphan-sweep-progress').removeClass('hidden');
    $bar.toggleClass('progress-bar-striped active', !known);
    $bar.css('width', (known ? pct : 100) + '%');
    $bar.attr('aria-valuenow', known ? pct : 0);
    $box.find('.orphan-sweep-detail').text(
      describe(state.progress, state.labels) + ' (' + state.progress.elapsed + ' s)');
  }

  function ticked($pane) {
    return $pane.find('input.table-row-multi-select:checked').map(function () {
      return this.value;
    }).get();
  }

  function update($box) {
    // A header other than XMLHttpRequest: Horizon answers the whole page,
    // as a reload would show it, not only one tab.
    return $.ajax({url: window.location.href, dataType: 'html',
                   headers: {'X-Requested-With': 'orphan-sweep'}})
      .then(function (html) {
        var $page = $('<div>').append($.parseHTML(html));
        var $panes = $('.tab-content > .tab-pane[id]');
        var $summary = $page.find('.orphan-summary');
        var version = $page.find('.orphan-sweep').attr('data-version');
        if (!$panes.length || !$summary.length || !version) {
          return $.Deferred().reject();
        }
        $panes.each(function () {
          var $pane = $(this);
          var $fresh = $page.find('#' + $pane.attr('id'));
          if (!$fresh.length) {
            return;
          }
          var keep = ticked($pane);
          var chosen = $pane.find('select[name]').map(function () {
            return {name: this.name, value: $(this).val()};
          }).get();
          $pane.html($fresh.html());
          // What the operator chose meanwhile (a flavor to check) stays.
          $.each(chosen, function (i, choice) {
            $pane.find('select[name="' + choice.name + '"]').val(choice.value);
          });
          $pane.find('input.table-row-multi-select').each(function () {
            if ($.inArray(this.value, keep) >= 0) {
              this.checked = true;
              $(this).closest('tr').addClass('selected');
            }
          });
          horizon.tabs.initTabLoad($pane);
          $pane.find('table.datatable').each(function () {
            horizon.datatables.update_header_checkbox($(this));
          });
        });
        // The snapshot's age, its counts and what its findings hold: all
        // of the fetched page's one version, as its tables.
        $box.find('.orphan-summary').replaceWith($summary);
        $box.data('version', version).attr('data-version', version);
        $box.find('.orphan-sweep-newer').addClass('hidden');
      });
  }

  function poll($box) {
    $.getJSON($box.data('sweep-url')).done(function (state) {
      var shown = $box.data('version') || null;
      if (state.version && state.version !== shown) {
        if (!shown) {
          window.location.reload();
          return;
        }
        update($box).fail(function () {
          $box.find('.orphan-sweep-newer').removeClass('hidden');
        });
      }
      show($box, state);
      // While nothing sweeps, a slower pace catches the audits a cron
      // job or another operator starts.
      window.setTimeout(function () { poll($box); },
                        state.sweeping || !state.version ? POLL_MS : IDLE_MS);
    }).fail(function () {
      window.setTimeout(function () { poll($box); }, 5 * POLL_MS);
    });
  }

  horizon.addInitFunction(function () {
    $('.orphan-sweep[data-sweep-url]').each(function () {
      poll($(this));
    });
  });
})();
