/* Invoice totals as the user types (issue 13), computed exactly as backoffice/invoices/totals.py computes them:
   each line figure rounded half up to the cent, the document's figures sums of the rounded line figures. Amounts
   are decimal strings held as BigInt scaled integers (never floats), so every cent agrees with the server's.
   Change both files together. This is a preview: the server computes the totals once, when the form is saved,
   and keeps them. The rule table (withholding shares, deducted taxes) is the server's, totals.rules(), rendered
   into the page as JSON (#invoice-totals-rules): never written here.

   Numbers are read by static/js/numbers.js (window.TrNumber), loaded before this file by templates/base.html.

   window.InvoiceTotals = {parse(text), lineTotals(line, codes), documentTotals(lines, codes), format(value)}:
   lines are plain objects with totals.py's names and decimal strings ("1250.75"); results are strings like
   "1234.56". codes ({withholdingRates: {"602": "0.9"}, deductedTaxCodes: ["0003", "0011"]}) defaults to the
   page's #invoice-totals-rules. Any [data-invoice-totals] form is bound on load. */
(function () {
  "use strict";

  var TEN = BigInt(10);
  var HUNDRED_SCALE = 2;  // a percent is its number with two more decimals

  // --- exact decimals: {units: BigInt, scale: Number} is units / 10^scale ---------------------------------------

  function dec(text) {
    var value = text === undefined || text === null ? "" : String(text).trim();
    if (value === "") { return {units: BigInt(0), scale: 0}; }
    var match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(value);
    if (!match || (match[2] === "" && !match[3])) { throw new Error("not a decimal number: " + value); }
    var fraction = match[3] || "";
    var units = BigInt((match[2] || "0") + fraction);
    var scale = fraction.length - (match[4] ? parseInt(match[4], 10) : 0);
    if (scale < 0) { units = units * TEN ** BigInt(-scale); scale = 0; }
    return {units: match[1] === "-" ? -units : units, scale: scale};
  }
  function rescaled(a, scale) { return a.units * TEN ** BigInt(scale - a.scale); }
  function add(a, b) {
    var scale = Math.max(a.scale, b.scale);
    return {units: rescaled(a, scale) + rescaled(b, scale), scale: scale};
  }
  function negated(a) { return {units: -a.units, scale: a.scale}; }
  function compare(a, b) {
    var scale = Math.max(a.scale, b.scale);
    var difference = rescaled(a, scale) - rescaled(b, scale);
    return difference > 0 ? 1 : difference < 0 ? -1 : 0;
  }
  function times(a, b) { return {units: a.units * b.units, scale: a.scale + b.scale}; }
  // Half up, away from zero at the half, as Decimal's ROUND_HALF_UP: 1.005 -> 1.01, -1.005 -> -1.01.
  function money(a) {
    if (a.scale <= 2) { return {units: rescaled(a, 2), scale: 2}; }
    var divisor = TEN ** BigInt(a.scale - 2);
    var magnitude = a.units < 0 ? -a.units : a.units;
    var cents = magnitude / divisor;
    if (BigInt(2) * (magnitude % divisor) >= divisor) { cents += BigInt(1); }
    return {units: a.units < 0 ? -cents : cents, scale: 2};
  }
  function percentOf(a, rate) {
    var product = times(a, rate);
    return money({units: product.units, scale: product.scale + HUNDRED_SCALE});
  }
  function sum(values) { return values.reduce(add, {units: BigInt(0), scale: 2}); }
  function text(a) {
    var negative = a.units < 0;
    var digits = (negative ? -a.units : a.units).toString().padStart(a.scale + 1, "0");
    var integer = digits.slice(0, digits.length - a.scale);
    var fraction = a.scale ? "." + digits.slice(digits.length - a.scale) : "";
    return (negative ? "-" : "") + integer + fraction;
  }
  // A rate as a key: 20, 20.0 and 20.00 are the same rate (Python's Decimal.normalize()).
  function rateKey(a) {
    var value = text(a);
    return value.indexOf(".") < 0 ? value : value.replace(/0+$/, "").replace(/\.$/, "");
  }

  // --- numbers as people in Turkey type them: static/js/numbers.js, the server's parse_decimal -----------------

  // "1.250,75", "1250,75", "1250.75", "1.250" (Turkish thousands), "%18" ... as a decimal string ("1250.75");
  // null for what parse_decimal refuses (an empty field too).
  function parse(typed) { return window.TrNumber.parse(typed); }

  // "1234.56" -> "1.234,56" (Turkish notation, two decimals).
  function format(value) {
    if (value === undefined || value === null || value === "") { return ""; }
    var amount = text(money(dec(value)));
    var negative = amount.charAt(0) === "-";
    var parts = (negative ? amount.slice(1) : amount).split(".");
    return (negative ? "-" : "") + parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ".") + "," + parts[1];
  }

  // --- the arithmetic of totals.py -----------------------------------------------------------------------------

  function readJson(doc, id, fallback) {
    var element = doc.getElementById(id);
    if (!element) { return fallback; }
    try { return JSON.parse(element.textContent); } catch (error) { return fallback; }
  }
  function codesOf(doc) {
    var rules = readJson(doc, "invoice-totals-rules", {});
    return {withholdingRates: rules.withholdingRates || {}, deductedTaxCodes: rules.deductedTaxCodes || []};
  }

  function totalsError(message, field) {
    var error = new Error(message);
    error.field = field;
    return error;
  }

  function computeLine(line, codes) {
    var gross = money(times(dec(line.quantity), dec(line.unit_price)));
    var byRate = percentOf(gross, dec(line.discount_rate));
    var discount = add(byRate, money(dec(line.discount_amount)));
    if (compare(discount, gross) > 0) {
      throw totalsError("discount larger than the gross",
                        compare(byRate, gross) > 0 ? "discount_rate" : "discount_amount");
    }
    var net = add(gross, negated(discount));
    var vat = percentOf(net, dec(line.vat_rate));
    var withholding = {units: BigInt(0), scale: 2};
    if (line.withholding_code) {
      var rate = codes.withholdingRates[line.withholding_code];
      if (rate === undefined) { throw totalsError("unknown withholding code", "withholding_code"); }
      withholding = money(times(vat, dec(rate)));
    }
    var taxes = (line.taxes || []).map(function (tax) {
      return {code: tax.code, rate: tax.rate, amount: percentOf(net, dec(tax.rate)),
              deducted: codes.deductedTaxCodes.indexOf(tax.code) >= 0};
    });
    function amounts(deducted) {
      return taxes.filter(function (tax) { return tax.deducted === deducted; })
        .map(function (tax) { return tax.amount; });
    }
    return {gross: gross, discount: discount, net: net, vat: vat, withholding: withholding, taxes: taxes,
            added: sum(amounts(false)), deducted: sum(amounts(true))};
  }

  function lineText(figures) {
    return {gross: text(figures.gross), discount: text(figures.discount), net: text(figures.net),
            vat: text(figures.vat), withholding: text(figures.withholding), added: text(figures.added),
            deducted: text(figures.deducted),
            taxes: figures.taxes.map(function (tax) {
              return {code: tax.code, rate: tax.rate, amount: text(tax.amount), deducted: tax.deducted};
            })};
  }

  // A line's figures; throws an Error whose .field names the input at fault (as totals.py's TotalsError).
  function lineTotals(line, codes) {
    return lineText(computeLine(line, codes || codesOf(document)));
  }

  function documentTotals(lines, codes) {
    codes = codes || codesOf(document);
    var computed = lines.map(function (line) { return computeLine(line, codes); });
    function total(name) { return sum(computed.map(function (figures) { return figures[name]; })); }
    var breakdown = {};
    lines.forEach(function (line, index) {
      var key = rateKey(dec(line.vat_rate));
      var entry = breakdown[key] || (breakdown[key] = {rate: dec(line.vat_rate), base: sum([]), vat: sum([])});
      entry.base = add(entry.base, computed[index].net);
      entry.vat = add(entry.vat, computed[index].vat);
    });
    var lineExtension = total("net"), vatTotal = total("vat"), added = total("added");
    var withholding = total("withholding"), deducted = total("deducted");
    var taxInclusive = add(add(lineExtension, vatTotal), added);
    return {
      line_extension: text(lineExtension), allowance_total: text(total("discount")), tax_exclusive: text(lineExtension),
      vat_total: text(vatTotal),
      // [rate, base, VAT], highest rate first (an object would reorder integer-like keys).
      vat_breakdown: Object.keys(breakdown).map(function (key) { return breakdown[key]; })
        .sort(function (a, b) { return compare(b.rate, a.rate); })
        .map(function (entry) { return [rateKey(entry.rate), text(entry.base), text(entry.vat)]; }),
      withholding_total: text(withholding), added_taxes_total: text(added), deducted_taxes_total: text(deducted),
      tax_inclusive: text(taxInclusive), payable: text(add(taxInclusive, negated(add(withholding, deducted)))),
      lines: computed.map(lineText)
    };
  }

  // --- the form ------------------------------------------------------------------------------------------------

  var DOCUMENT_FIGURES = ["line_extension", "allowance_total", "vat_total", "withholding_total", "added_taxes_total",
                          "deducted_taxes_total", "tax_inclusive", "payable"];

  function field(row, name) { return row.querySelector('[name$="-' + name + '"]'); }
  // is-invalid set here is taken away here only: a mark the server put on the field stays.
  function mark(input, invalid) {
    if (invalid && !input.classList.contains("is-invalid")) {
      input.classList.add("is-invalid");
      input.setAttribute("data-totals-invalid", "");
    } else if (!invalid && input.hasAttribute("data-totals-invalid")) {
      input.classList.remove("is-invalid");
      input.removeAttribute("data-totals-invalid");
    }
  }
  // An input's number as a decimal string; "" when empty or unreadable (then marked). A rate (its field's
  // data-number="rate", or asRate) of a dot and three decimals (32.125) is asked, not guessed, as the server asks.
  function typed(input, asRate) {
    if (!input) { return ""; }
    var value = window.TrNumber.value(input, asRate);
    mark(input, value === null);
    return value === null ? "" : value;
  }
  function show(element, value) { if (element) { element.textContent = value === "" ? "" : format(value); } }

  function lineOf(row) {
    var taxCode = field(row, "other_tax_code");
    var taxRate = typed(field(row, "other_tax_rate"));
    var withholding = field(row, "withholding_code");
    return {quantity: typed(field(row, "quantity")), unit_price: typed(field(row, "unit_price")),
            discount_rate: typed(field(row, "discount_rate")), discount_amount: typed(field(row, "discount_amount")),
            vat_rate: typed(field(row, "vat_rate")), withholding_code: withholding ? withholding.value : "",
            taxes: taxCode && taxCode.value && taxRate !== "" ? [{code: taxCode.value, rate: taxRate}] : []};
  }

  function recompute(form) {
    var codes = codesOf(form.ownerDocument);
    var lines = [];
    form.querySelectorAll("[data-line]").forEach(function (row) {
      var deleted = field(row, "DELETE");
      if (deleted && deleted.checked) { return; }
      var line = lineOf(row);
      try {
        var figures = lineText(computeLine(line, codes));
        lines.push(line);
        show(row.querySelector("[data-line-total]"), figures.net);
        show(row.querySelector("[data-line-vat]"), figures.vat);
      } catch (error) {
        if (!error.field) { throw error; }
        var culprit = field(row, error.field);
        if (culprit) { mark(culprit, true); }
        show(row.querySelector("[data-line-total]"), "");
        show(row.querySelector("[data-line-vat]"), "");
      }
    });
    var totals = documentTotals(lines, codes);
    DOCUMENT_FIGURES.forEach(function (name) {
      show(form.querySelector('[data-total="' + name + '"]'), totals[name]);
    });
    var currency = form.querySelector('select[name="currency_code"]');
    var rate = typed(form.querySelector('input[name="exchange_rate"]'), true);
    var foreign = currency && currency.value && currency.value !== "TRY" && rate !== "";
    show(form.querySelector('[data-total="payable_try"]'),
         foreign ? text(money(times(dec(totals.payable), dec(rate)))) : "");
  }

  function addLine(form) {
    var template = form.querySelector("template[data-line-template]");
    var body = form.querySelector("[data-lines]");
    if (!template || !body) { return; }
    var html = template.innerHTML;
    // The formset the template belongs to: the prefix before -__prefix__- in its field names.
    var prefix = /name="([^"]+)-__prefix__-/.exec(html);
    var total = form.querySelector(prefix ? '[name="' + prefix[1] + '-TOTAL_FORMS"]' : '[name$="-TOTAL_FORMS"]');
    if (!total) { return; }
    var index = parseInt(total.value, 10) || 0;
    var max = form.querySelector('[name="' + total.name.replace(/TOTAL_FORMS$/, "MAX_NUM_FORMS") + '"]');
    if (max && index >= parseInt(max.value, 10)) { return; }
    body.insertAdjacentHTML("beforeend", html.replace(/__prefix__/g, String(index)));
    total.value = String(index + 1);
    var first = body.lastElementChild &&
      body.lastElementChild.querySelector("input:not([type=hidden]):not([type=checkbox]), select");
    if (first) { first.focus(); }
    recompute(form);
  }

  function bind(form) {
    if (form.hasAttribute("data-invoice-totals-bound")) { return; }
    form.setAttribute("data-invoice-totals-bound", "");
    form.addEventListener("input", function () { recompute(form); });
    form.addEventListener("change", function () { recompute(form); });
    form.addEventListener("click", function (event) {
      var button = event.target.closest("[data-add-line]");
      if (button && form.contains(button)) {
        event.preventDefault();
        addLine(form);
      }
    });
    recompute(form);
  }
  function scan(root) {
    if (!root || !root.querySelectorAll) { return; }
    if (root.matches && root.matches("[data-invoice-totals]")) { bind(root); }
    root.querySelectorAll("[data-invoice-totals]").forEach(bind);
  }

  window.InvoiceTotals = {parse: parse, lineTotals: lineTotals, documentTotals: documentTotals, format: format};
  document.addEventListener("DOMContentLoaded", function () { scan(document); });
  document.addEventListener("htmx:load", function (event) {
    scan((event.detail && event.detail.elt) || event.target);
  });
  if (document.readyState !== "loading") { scan(document); }
})();
