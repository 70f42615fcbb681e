// The dispatch note form: rows of lines and drivers added from their templates, the carrier's part shown for the
// choice made (the server ignores the other part anyway), a known driver's surname and id filled in, and the live
// totals (quantity x unit price and its VAT, each rounded to the cent, as services.apply_totals computes them).
(function () {
  "use strict";
  var form = document.querySelector("[data-dispatch-form]");
  if (!form) { return; }

  // A number as the server's field reads it (static/js/numbers.js, loaded by templates/base.html): 5.000 is five
  // thousand, 1.250,75 is 1250.75; what it cannot read, or a rate it would ask about (18.500), counts as 0.
  function number(input) {
    var value = input ? window.TrNumber.value(input) : "";
    return value ? parseFloat(value) : 0;
  }
  function cents(value) { return Math.round((value + Number.EPSILON) * 100) / 100; }
  function shown(value) {
    return value.toLocaleString("tr-TR", {minimumFractionDigits: 2, maximumFractionDigits: 2});
  }

  function totals() {
    var amount = 0, vat = 0;
    form.querySelectorAll("[data-line]").forEach(function (row) {
      var removed = row.querySelector('input[name$="-DELETE"]');
      if (removed && removed.checked) { return; }
      var field = function (suffix) { return row.querySelector('[name$="-' + suffix + '"]'); };
      var line = cents(number(field("quantity")) * number(field("unit_price")));
      amount += line;
      vat += cents(line * number(field("vat_rate")) / 100);
    });
    var set = function (name, value) { var cell = form.querySelector('[data-total="' + name + '"]'); if (cell) { cell.textContent = shown(value); } };
    set("amount", cents(amount)); set("vat", cents(vat)); set("total", cents(amount + vat));
  }

  function addRow(container) {
    var template = container.querySelector("template[data-row-template]");
    var total = container.querySelector('input[name$="-TOTAL_FORMS"]');
    var max = container.querySelector('input[name$="-MAX_NUM_FORMS"]');
    if (!template || !total) { return; }
    var index = parseInt(total.value, 10);
    if (max && index >= parseInt(max.value, 10)) { return; }
    var html = template.innerHTML.replace(/__prefix__/g, String(index));
    var holder = document.createElement("div");
    holder.innerHTML = html.trim();
    var row = holder.firstElementChild;
    container.querySelector("[data-rows]").appendChild(row);
    total.value = String(index + 1);
    var first = row.querySelector("input:not([type=hidden]), select");
    if (first) { first.focus(); }
  }

  function carrier() {
    var chosen = form.querySelector('input[name="carrier"]:checked');
    var value = chosen ? chosen.value : "drivers";
    form.querySelectorAll("[data-carrier-part]").forEach(function (part) {
      part.hidden = part.getAttribute("data-carrier-part") !== value;
    });
  }

  function numbering() {
    // The typed number only when the number is typed; a prefix unless the number is typed.
    var chosen = form.querySelector('input[name="numbering"]:checked');
    if (!chosen) { return; }
    var show = function (name, visible) {
      var input = form.querySelector('[name="' + name + '"]');
      var box = input ? input.closest("[class^=col]") : null;
      if (box) { box.hidden = !visible; }
    };
    show("despatch_number", chosen.value === "manual");
    show("prefix", chosen.value === "series");
  }

  function knownDriver(input) {
    if (!/-name$/.test(input.name)) { return; }
    var option = Array.prototype.find.call(document.querySelectorAll("#driver-options option"), function (item) {
      return item.value === input.value;
    });
    var row = input.closest("[data-driver]");
    if (!option || !row) { return; }
    [["surname", "data-surname"], ["tckn", "data-tckn"]].forEach(function (pair) {
      var target = row.querySelector('[name$="-' + pair[0] + '"]');
      if (target && !target.value) { target.value = option.getAttribute(pair[1]) || ""; }
    });
  }

  form.addEventListener("click", function (event) {
    var button = event.target.closest("[data-add-row]");
    if (button) { event.preventDefault(); addRow(button.closest("[data-formset]")); totals(); }
  });
  form.addEventListener("input", function (event) { totals(); if (event.target.closest("[data-driver]")) { knownDriver(event.target); } });
  form.addEventListener("change", function (event) {
    if (event.target.name === "carrier") { carrier(); }
    if (event.target.name === "numbering") { numbering(); }
    totals();
  });
  carrier();
  numbering();
  totals();
})();
