/* Small behaviours of the UI shell; everything works without them, they only save clicks. */
(function () {
  "use strict";

  function once(element, name) {
    if (element.dataset["bound" + name]) { return false; }
    element.dataset["bound" + name] = "1";
    return true;
  }

  // Every element under root, root itself included, that matches selector (htmx:load gives the new element).
  function each(root, selector, callback) {
    if (root.matches && root.matches(selector)) { callback(root); }
    root.querySelectorAll(selector).forEach(callback);
  }

  // A number of a data-attribute, or null when it is missing or not a finite number.
  function number(value) {
    var parsed = parseFloat(value);
    return isFinite(parsed) ? parsed : null;
  }

  // Sizes known only when the page is rendered. The Content-Security-Policy refuses inline style
  // attributes, so the templates give them as data-attributes and they are set here through the CSSOM:
  // data-width (percent: a progress bar), data-indent (rem: margin-left), data-height (px: a chart's box).
  function sizes(root) {
    each(root, "[data-width]", function (element) {
      var value = number(element.dataset.width);
      if (value !== null) { element.style.width = Math.min(100, Math.max(0, value)) + "%"; }
    });
    each(root, "[data-indent]", function (element) {
      var value = number(element.dataset.indent);
      if (value !== null) { element.style.marginLeft = value + "rem"; }
    });
    each(root, "[data-height]", function (element) {
      var value = number(element.dataset.height);
      if (value !== null) { element.style.height = value + "px"; }
    });
  }

  function init(root) {
    sizes(root);
    // "Select all" checkbox of a table's selection column.
    each(root, "input[data-select-all]", function (master) {
      if (!once(master, "All")) { return; }
      master.addEventListener("change", function () {
        var table = master.closest("table");
        table.querySelectorAll('input[name="' + master.dataset.selectAll + '"]').forEach(function (box) {
          box.checked = master.checked;
        });
      });
    });
    // A field that submits its form when it changes (per-page choice, report date).
    each(root, "select[data-autosubmit], input[data-autosubmit]", function (field) {
      if (!once(field, "Submit")) { return; }
      field.addEventListener("change", function () {
        if (!field.form) { return; }
        if (field.form.requestSubmit) { field.form.requestSubmit(); } else { field.form.submit(); }
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:load", function (event) { init(event.target); });

  // A request the page makes by itself (polling: no user event triggered it) says so, so that a tab left
  // open on a refreshing list does not keep the session alive (core.middleware.IdleSessionMiddleware).
  document.addEventListener("htmx:configRequest", function (event) {
    if (!event.detail.triggeringEvent) { event.detail.headers["X-Background-Refresh"] = "1"; }
  });

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
