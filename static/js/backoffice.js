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

  // A creating form's one-time key and company (core.submissions), kept in the history entry of the page
  // (history.state): when Back re-fetches a form that was sent, the page comes with a new key while the
  // browser refills the typed fields, and the key that entry was sent with is put back, so sending it
  // again shows the document already created instead of creating a second one. Per entry, so another
  // "new" form opened since keeps its own key.
  function keepSubmissionKey(root) {
    if (root !== document || !window.history || !history.replaceState) { return; }
    var navigation = performance.getEntriesByType && performance.getEntriesByType("navigation")[0];
    var back = navigation && navigation.type === "back_forward";
    var forms = document.querySelectorAll("form");
    var kept = (history.state && history.state.submissionKeys) || {};
    var keys = {};
    forms.forEach(function (form, index) {
      var key = form.querySelector("input[name=submission_key]");
      var company = form.querySelector("input[name=opened_for]");
      if (!key || !company) { return; }
      var slot = String(index);
      if (back && kept[slot]) {
        key.value = kept[slot].key;
        company.value = kept[slot].company;
      }
      keys[slot] = { key: key.value, company: company.value };
    });
    if (Object.keys(keys).length) {
      history.replaceState(Object.assign({}, history.state || {}, { submissionKeys: keys }), "");
    }
  }

  function init(root) {
    sizes(root);
    keepSubmissionKey(root);
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
    // A value the server found for a field (the customer's only mailbox, htmx lookup): put in the field at once,
    // or on a click when there are several to choose from (data-fill-on="click").
    each(root, "[data-fill-target]", function (source) {
      if (!once(source, "Fill")) { return; }
      var field = document.getElementById(source.dataset.fillTarget);
      if (!field) { return; }
      var fill = function () {
        if (field.value === source.dataset.fillValue) { return; }
        field.value = source.dataset.fillValue;
        field.dispatchEvent(new Event("change", { bubbles: true }));
      };
      if (source.dataset.fillOn === "click") {
        source.addEventListener("click", function (event) { event.preventDefault(); fill(); field.focus(); });
      } else {
        fill();
      }
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

  // Enter in a field of an edit form moves to the next field, as in desktop accounting programs, and never
  // submits it (issue 29: Enter used to issue and send an invoice). Saving takes the button: Tab to it, then
  // Enter or Space. A textarea keeps its new line, a button its click; on the last field Enter does nothing.
  var ENTER_MOVES = "form.edit-form, form[data-enter-moves]";
  var NOT_FIELDS = ["hidden", "submit", "button", "reset", "image"];

  function typable(element) {
    var tag = element.tagName;
    if (tag === "INPUT") { return NOT_FIELDS.indexOf(element.type) === -1; }
    return tag === "SELECT" || tag === "TEXTAREA";
  }

  function focusable(element) {
    return typable(element) && !element.disabled && !element.readOnly && element.tabIndex !== -1 &&
      element.getClientRects().length > 0 && getComputedStyle(element).visibility !== "hidden" &&
      !element.closest("details:not([open])");  // a closed section's fields are laid out, but not reachable
  }

  function nextField(form, field) {
    var elements = Array.prototype.slice.call(form.elements);
    var start = elements.indexOf(field);
    for (var index = start + 1; index < elements.length; index++) {
      var candidate = elements[index];
      // A radio group is one stop, as with Tab: past the group, or onto its checked button.
      if (field.type === "radio" && candidate.type === "radio" && candidate.name === field.name) { continue; }
      if (!focusable(candidate)) { continue; }
      if (candidate.type === "radio" && !candidate.checked) {
        var checked = form.querySelector('input[type=radio][name="' + CSS.escape(candidate.name) + '"]:checked');
        if (checked && focusable(checked)) { return checked; }
      }
      return candidate;
    }
    return null;
  }

  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || event.isComposing || event.altKey || event.ctrlKey || event.metaKey) { return; }
    var field = event.target;
    if (!field || !field.form || !field.form.matches(ENTER_MOVES)) { return; }
    if (field.tagName === "TEXTAREA" || !typable(field)) { return; }
    event.preventDefault();
    var next = nextField(field.form, field);
    // A field the browser would not focus (inert, in a hidden part) is passed over, as Tab would.
    while (next) {
      next.focus();
      if (document.activeElement === next) { break; }
      next = nextField(field.form, next);
    }
    if (next) {
      if (next.select && next.tagName === "INPUT" && /^(text|search|tel|url)$/.test(next.type)) { next.select(); }
    }
  });

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

/* Unsaved changes (issue 9): leaving a page whose form holds typed data asks first. Closing the tab, a link
   or Back get the browser's own question (beforeunload); the header's language, company and sign-out forms
   (any other form of the page) ask with the text of body[data-unsaved-changes]. Sending the form itself
   never asks. A form counts when it is an edit form (form.edit-form, or data-dirty-check); a form the
   server sent back with errors counts from the start, since what was typed is not saved yet. */
(function () {
  "use strict";

  var TRACKED = "form.edit-form, form[data-dirty-check]";
  var leaving = false;

  function fields(form) {
    return Array.prototype.filter.call(form.elements, function (field) {
      return field.name && field.type !== "hidden" && field.type !== "submit" && field.type !== "button" &&
        field.type !== "file" && !field.disabled;
    });
  }

  function changed(field) {
    if (field.type === "checkbox" || field.type === "radio") { return field.checked !== field.defaultChecked; }
    if (field.tagName === "SELECT" && !field.multiple) {
      // Without a selected option in the HTML, the browser shows the first one.
      var initial = Array.prototype.findIndex.call(field.options, function (option) { return option.defaultSelected; });
      return field.selectedIndex !== Math.max(initial, 0);
    }
    if (field.tagName === "SELECT") {
      return Array.prototype.some.call(field.options, function (option) {
        return option.selected !== option.defaultSelected;
      });
    }
    return field.value !== field.defaultValue;
  }

  function dirty(form) {
    if (form.dataset.dirty === "sent") { return false; }
    if (form.dataset.dirty === "errors") { return true; }
    return fields(form).some(changed);
  }

  function unsaved() {
    return Array.prototype.some.call(document.querySelectorAll(TRACKED), dirty);
  }

  function mark(root) {
    var forms = root.matches && root.matches(TRACKED) ? [root] : root.querySelectorAll(TRACKED);
    Array.prototype.forEach.call(forms, function (form) {
      if (!form.dataset.dirty && form.querySelector(".is-invalid, .alert-danger")) { form.dataset.dirty = "errors"; }
    });
  }

  document.addEventListener("DOMContentLoaded", function () { mark(document); });
  document.addEventListener("htmx:load", function (event) { mark(event.target); });

  // Capture: this runs before the page's other submit handlers, and sees every form's submission.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.matches(TRACKED)) {
      form.dataset.dirty = "sent";
      leaving = true;
      return;
    }
    if (leaving || !unsaved() || (form.method || "").toLowerCase() === "dialog") { return; }
    var question = document.body.dataset.unsavedChanges || "";
    if (question && !window.confirm(question)) {
      event.preventDefault();
      event.stopImmediatePropagation();
      return;
    }
    leaving = true;
  }, true);

  // A prevented submission (the page stayed) makes the form count again.
  document.addEventListener("submit", function (event) {
    if (event.defaultPrevented && event.target.matches(TRACKED)) {
      delete event.target.dataset.dirty;
      leaving = false;
    }
  });

  window.addEventListener("beforeunload", function (event) {
    if (leaving || !unsaved()) { return; }
    event.preventDefault();
    event.returnValue = "";
  });

  // Back to this page from the browser's cache: whatever was sent is sent; ask again from now on.
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) { return; }
    leaving = false;
    Array.prototype.forEach.call(document.querySelectorAll(TRACKED), function (form) {
      if (form.dataset.dirty === "sent") { delete form.dataset.dirty; }
    });
  });
})();
