/* Small behaviours of the UI shell; everything works without them, they only save clicks. */
(function () {
  "use strict";

  function once(element, name) {
    if (element.dataset["bound" + name]) { return false; }
    element.dataset["bound" + name] = "1";
    return true;
  }

  function init(root) {
    // "Select all" checkbox of a table's selection column.
    root.querySelectorAll("input[data-select-all]").forEach(function (master) {
      if (!once(master, "All")) { return; }
      master.addEventListener("change", function () {
        var table = master.closest("table");
        table.querySelectorAll('input[name="' + master.dataset.selectAll + '"]').forEach(function (box) {
          box.checked = master.checked;
        });
      });
    });
    // A select that submits its form at once (per-page choice).
    root.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
      if (!once(select, "Submit")) { return; }
      select.addEventListener("change", function () {
        if (select.form.requestSubmit) { select.form.requestSubmit(); } else { select.form.submit(); }
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:load", function (event) { init(event.target); });

  // A session that expired during a live refresh lands on the login page: go there for real.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var loginUrl = document.body.dataset.loginUrl;
    var xhr = event.detail.xhr;
    if (loginUrl && xhr && xhr.responseURL && new URL(xhr.responseURL).pathname === loginUrl) {
      event.detail.shouldSwap = false;
      window.location.href = xhr.responseURL;
    }
  });

  // A failed htmx request (server error, lost connection) says so instead of doing nothing.
  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    if (status === 401 || status === 403) { window.location.reload(); }
  });
})();
