/*
 * The audit snapshot's age and the background sweep's progress on the
 * Orphaned Allocations index: polls the panel's sweep/ view while a sweep
 * runs.  When a new snapshot is published, a page that had none reloads
 * itself; a page showing an older one offers the reload (an operator may
 * be reading it, or its messages).
 */
(function () {
  'use strict';

  var POLL_MS = 2000;

  function percent(read) {
    var done = 0, total = 0, known = true;
    $.each(read, function (kind, counts) {
      if (counts[1] === null || counts[1] === undefined) {
        known = false;
      } else {
        done += Math.min(counts[0], counts[1]);
        total += counts[1];
      }
    });
    return known && total ? Math.round(100 * done / total) : null;
  }

  function describe(read, labels) {
    return $.map(read, function (counts, kind) {
      return ((labels && labels[kind]) || kind) + ' ' + counts[0] +
        (counts[1] === null || counts[1] === undefined ? '' : '/' + counts[1]);
    }).join(', ');
  }

  function show($box, state) {
    var $bar = $box.find('.progress-bar');
    if (!state.sweeping) {
      $box.find('.orphan-sweep-progress').addClass('hidden');
      return;
    }
    var pct = percent(state.progress.read);
    $box.find('.orphan-sweep-progress').removeClass('hidden');
    $bar.toggleClass('progress-bar-striped active', pct === null);
    $bar.css('width', (pct === null ? 100 : pct) + '%');
    $bar.attr('aria-valuenow', pct === null ? 0 : pct);
    $box.find('.orphan-sweep-detail').text(
      describe(state.progress.read, state.labels) + ' (' + state.progress.elapsed + ' s)');
  }

  function poll($box) {
    $.getJSON($box.data('sweep-url')).done(function (state) {
      var shown = $box.data('version') || null;
      if (state.version && state.version !== shown) {
        if (!shown) {
          window.location.reload();
          return;
        }
        $box.find('.orphan-sweep-newer').removeClass('hidden');
      }
      show($box, state);
      if (state.sweeping || !state.version) {
        window.setTimeout(function () { poll($box); }, POLL_MS);
      }
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
