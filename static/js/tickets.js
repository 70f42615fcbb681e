/* Ticket form: lines and their other taxes added and removed in place, and the totals computed as the user
   types. The server computes the same amounts again (services.line_amounts) and keeps only its own. */
(function () {
  "use strict";

  var form = document.getElementById("ticket-form");
  if (!form) { return; }
  var body = form.querySelector("[data-lines]");
  var template = form.querySelector("template[data-line-template]");
  var taxTemplate = form.querySelector("template[data-tax-template]");
  var totalForms = form.querySelector('input[name="lines-TOTAL_FORMS"]');
  var maxForms = form.querySelector('input[name="lines-MAX_NUM_FORMS"]');
  var lang = document.documentElement.lang === "en" ? "en-US" : "tr-TR";
  var format = new Intl.NumberFormat(lang, {minimumFractionDigits: 2, maximumFractionDigits: 2});

  // Numbers as typed, read exactly as the server reads them: static/js/numbers.js (loaded by templates/base.html).
  // An amount in integer cents, rounded half up like the server's Decimal ROUND_HALF_UP; unreadable counts as 0.
  function cents(input) {
    var value = input ? window.TrNumber.value(input) : "";
    var number = value ? parseFloat(value) : 0;
    return Math.round(number * 100 + (number >= 0 ? 1e-7 : -1e-7));
  }
  // A percentage; one the server would ask about (18.500) counts as 0, as one it cannot read.
  function rate(input) {
    var value = input ? window.TrNumber.value(input, true) : "";
    return value ? parseFloat(value) : 0;
  }
  function share(amountCents, percent) {
    var raw = amountCents * percent / 100;
    return Math.sign(raw) * Math.round(Math.abs(raw) + 1e-9);
  }
  // A field of a line or tax row by its own prefix (lines-0, lines-0-taxes-1): a line's taxes end in the same names.
  function field(row, name) {
    return row.querySelector('[name="' + row.getAttribute("data-prefix") + "-" + name + '"]');
  }
  function removed(row) {
    var deleted = field(row, "DELETE");
    return Boolean(deleted && deleted.checked);
  }
  function show(cell, amountCents) {
    if (cell) { cell.textContent = format.format(amountCents / 100); }
  }

  function recompute() {
    var sum = {total_amount: 0, total_discount: 0, total_vat: 0, total_taxes: 0, payable_amount: 0};
    body.querySelectorAll("[data-line]").forEach(function (row) {
      if (removed(row)) { return; }
      var amount = cents(field(row, "amount"));
      var discount = share(amount, rate(field(row, "discount_rate")));
      var net = amount - discount;
      var vat = share(net, rate(field(row, "vat_rate")));
      // Every tax of the line, each rounded on its own as the server does.
      var tax = 0;
      row.querySelectorAll("[data-tax]").forEach(function (taxRow) {
        if (removed(taxRow)) { return; }
        tax += share(net, rate(field(taxRow, "taxt_rate")));
      });
      show(row.querySelector('[data-out="discount"]'), discount);
      show(row.querySelector('[data-out="vat"]'), vat);
      show(row.querySelector('[data-out="tax"]'), tax);
      show(row.querySelector('[data-out="total"]'), net + vat + tax);
      sum.total_amount += amount;
      sum.total_discount += discount;
      sum.total_vat += vat;
      sum.total_taxes += tax;
      sum.payable_amount += net + vat + tax;
    });
    Object.keys(sum).forEach(function (name) {
      show(form.querySelector('[data-total="' + name + '"]'), sum[name]);
    });
  }

  function addLine() {
    var index = parseInt(totalForms.value, 10);
    if (maxForms && index >= parseInt(maxForms.value, 10)) { return; }
    var html = template.innerHTML.replace(/__prefix__/g, String(index));
    body.insertAdjacentHTML("beforeend", html);
    totalForms.value = String(index + 1);
    var row = body.lastElementChild;
    var first = row && row.querySelector("input:not([type=hidden]):not([type=checkbox])");
    if (first) { first.focus(); }
    recompute();
  }

  function addTax(row) {
    var total = row.querySelector('input[name$="-taxes-TOTAL_FORMS"]');
    var max = row.querySelector('input[name$="-taxes-MAX_NUM_FORMS"]');
    if (!total || !taxTemplate) { return; }
    var index = parseInt(total.value, 10);
    if (max && index >= parseInt(max.value, 10)) { return; }
    var prefix = total.name.slice(0, -"-TOTAL_FORMS".length);
    var html = taxTemplate.innerHTML.split("lines-__prefix__-taxes").join(prefix).replace(/__tax__/g, String(index));
    var list = row.querySelector("[data-taxes]");
    list.insertAdjacentHTML("beforeend", html);
    total.value = String(index + 1);
    var added = list.lastElementChild;
    var first = added && added.querySelector("input:not([type=hidden]):not([type=checkbox])");
    if (first) { first.focus(); }
    recompute();
  }

  form.addEventListener("input", recompute);
  form.addEventListener("change", recompute);
  form.addEventListener("click", function (event) {
    if (event.target.closest("[data-add-line]")) {
      event.preventDefault();
      addLine();
      return;
    }
    var add = event.target.closest("[data-add-tax]");
    if (add) {
      event.preventDefault();
      addTax(add.closest("[data-line]"));
      return;
    }
    var removeTax = event.target.closest("[data-remove-tax]");
    if (removeTax) {
      event.preventDefault();
      var taxRow = removeTax.closest("[data-tax]");
      var dropped = field(taxRow, "DELETE");
      if (dropped) { dropped.checked = true; }
      taxRow.hidden = true;
      recompute();
      return;
    }
    var remove = event.target.closest("[data-remove-line]");
    if (remove) {
      event.preventDefault();
      var row = remove.closest("[data-line]");
      var deleted = field(row, "DELETE");
      if (deleted) { deleted.checked = true; }
      row.hidden = true;
      recompute();
    }
  });

  // Fields required only under a condition (document 2, section 2.1) show it as the user chooses.
  function toggleRequired(name, required) {
    var input = form.querySelector('[name="' + name + '"]');
    var label = input && form.querySelector('label[for="' + input.id + '"]');
    if (label) { label.classList.toggle("required", required); }
  }
  function conditions() {
    var email = form.querySelector('[name="is_email_send"]');
    if (email) { toggleRequired("customer_email", email.checked); }
    var payment = form.querySelector('[name="payment_type"]');
    if (payment) { toggleRequired("payment_description", payment.value === "DIGER"); }
    var title = form.querySelector('[name="record_expenses_title"]');
    var vkn = form.querySelector('[name="record_expenses_vkn_tckn"]');
    if (title && vkn) {
      toggleRequired("record_expenses_vkn_tckn", title.value.trim() !== "");
      toggleRequired("record_expenses_title", vkn.value.trim() !== "");
    }
    var operator = ["vehicle_operating_vkn_tckn", "vehicle_operating_title", "vehicle_operating_tax_center",
                    "commission_amount", "commission_tax_amount"];
    var any = operator.some(function (name) {
      var input = form.querySelector('[name="' + name + '"]');
      return input && input.value.trim() !== "";
    });
    operator.forEach(function (name) { toggleRequired(name, any); });
  }
  form.addEventListener("input", conditions);
  form.addEventListener("change", conditions);

  // A page sent back with errors keeps what was removed removed.
  form.querySelectorAll("[data-line], [data-tax]").forEach(function (row) { if (removed(row)) { row.hidden = true; } });
  recompute();
  conditions();
})();
