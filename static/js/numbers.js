/* Numbers as people in Turkey type them: the browser's copy of backoffice/core/fields.py (parse_decimal and
   is_ambiguous_rate), the one parsing rule of every form's live totals. Both are run over the same table,
   tests/data/number_inputs.json (tests/core/test_fields_table.py, tests/browser/test_number_parsing.py): change
   them together.

   window.TrNumber = {
     parse(text)            "1.250,75" -> "1250.75", "5.000" -> "5000", "5,000" -> "5.000"; null when refused,
     isAmbiguousRate(text)  true for "32.125": read as thirty-two thousand, but a rate asks what was meant,
     isRate(input)          the server's field is a rate (its widget has data-number="rate"),
     value(input, rate)     the input's number as the server's field reads it: "" when empty, null when refused
                            (unreadable, or ambiguous in a rate; rate=true treats the input as a rate anyway)
   } */
(function () {
  "use strict";

  // fields.py's _SPACES, spelled out (JavaScript's \s and Python's differ): a space, tab, no-break, thin ...
  var SPACES = /[ \t\n\r\f\v\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+/g;
  var AFFIXES = /^(?:₺|TL|TRY|%)|(?:₺|TL|TRY|%)$/gi;
  var BODY = /^[0-9., ]+$/;

  function strip(text) { return text.replace(/^ +| +$/g, ""); }
  function count(text, character) { return text.split(character).length - 1; }

  // The digits of an integer part with `separator` between thousands (1.250.000 -> 1250000), or null.
  function grouped(integer, separator) {
    var groups = integer.split(separator);
    if (groups[0].length < 1 || groups[0].length > 3) { return null; }
    for (var i = 1; i < groups.length; i++) { if (groups[i].length !== 3) { return null; } }
    return groups.join("");
  }

  // fields.py's _read: {number: decimal string, dotThousands: bool}, or null for what it refuses.
  function read(typed) {
    var text = strip(String(typed === undefined || typed === null ? "" : typed).replace(SPACES, " "))
      .replace(/\u2212/g, "-");
    text = strip(text.replace(AFFIXES, ""));
    var sign = "";
    if (text && "+-".indexOf(text.charAt(0)) >= 0) {
      sign = text.charAt(0) === "-" ? "-" : "";
      text = strip(text.slice(1));
    }
    text = strip(text.replace(AFFIXES, ""));
    if (!text || !BODY.test(text) || !/[0-9]/.test(text)) { return null; }
    var dots = count(text, "."), commas = count(text, ",");
    var decimal = null, thousands = null, dotThousands = false;
    if (dots && commas) {
      decimal = text.lastIndexOf(",") > text.lastIndexOf(".") ? "," : ".";
      thousands = decimal === "," ? "." : ",";
      if (count(text, decimal) !== 1) { return null; }
    } else if (commas) {
      if (commas === 1) { decimal = ","; } else { thousands = ","; }
    } else if (dots > 1) {
      thousands = ".";
    } else if (dots === 1) {
      var parts = text.split(".");
      if (parts[1].length === 3 && /^[1-9][0-9]{0,2}$/.test(parts[0])) {
        thousands = ".";
        dotThousands = true;
      } else {
        decimal = ".";
      }
    }
    if (text.indexOf(" ") >= 0) {
      if (thousands !== null) { return null; }  // spaces and dots (or commas) both between thousands
      if (decimal === "." && text.slice(text.lastIndexOf(".") + 1).length === 3) { return null; }  // 1 250.000
      thousands = " ";
    }
    var integer = text, fraction = "";
    if (decimal) {
      var at = text.indexOf(decimal);
      integer = text.slice(0, at);
      fraction = text.slice(at + 1);
      if (!fraction || !/^[0-9]+$/.test(fraction)) { return null; }  // "5," is a typo, not a number
    }
    if (integer) {
      if (thousands) { integer = grouped(integer, thousands); }
      if (integer === null || !/^[0-9]+$/.test(integer)) { return null; }
    } else if (!fraction) {
      return null;
    }
    // As Python's Decimal writes it: no leading zeros ("007" is 7), the fraction's digits kept ("0.250").
    integer = (integer || "0").replace(/^0+(?=[0-9])/, "");
    return {number: sign + integer + (fraction ? "." + fraction : ""), dotThousands: dotThousands};
  }

  function parse(text) {
    var result = read(text);
    return result ? result.number : null;
  }
  function isAmbiguousRate(text) {
    var result = read(text);
    return Boolean(result && result.dotThousands);
  }
  function isRate(input) {
    return Boolean(input) && input.getAttribute("data-number") === "rate";
  }
  function value(input, rate) {
    if (!input || strip(String(input.value).replace(SPACES, " ")) === "") { return ""; }
    var result = read(input.value);
    if (!result || (result.dotThousands && (rate || isRate(input)))) { return null; }
    return result.number;
  }

  window.TrNumber = {parse: parse, isAmbiguousRate: isAmbiguousRate, isRate: isRate, value: value};
})();
