/* Usage dashboard: draws the charts from the JSON the page carries, and enables the refresh button
   when the platform's 15-minute window opens. */
(function () {
  "use strict";

  var COLORS = { offered: "#2f6fed", used: "#12b76a", over_used: "#f04438" };

  function datasets(series, names, type) {
    return ["offered", "used", "over_used"].map(function (key) {
      return {
        label: names[key], data: series[key], backgroundColor: COLORS[key], borderColor: COLORS[key],
        borderWidth: type === "line" ? 2 : 0, tension: 0.2, spanGaps: true, pointRadius: type === "line" ? 3 : 0
      };
    });
  }

  function draw(id, config) {
    var canvas = document.getElementById(id);
    if (!canvas || !window.Chart) { return; }
    var chart = new window.Chart(canvas, config);
    canvas.dataset.rendered = chart ? "true" : "false";
  }

  function number(value) { return new Intl.NumberFormat(document.documentElement.lang || "tr").format(value); }

  // A company name longer than the axis can show is cut with an ellipsis (the tooltip gives it in full), so a
  // long name neither pushes the bars away nor gets clipped mid-letter.
  function shortLabel(label, chart) {
    var text = String(label);
    var max = chart && chart.width < 520 ? 16 : 30;
    return text.length > max ? text.slice(0, max - 1).trimEnd() + "\u2026" : text;
  }

  function charts() {
    var source = document.getElementById("usage-series");
    if (!source) { return; }
    var data = JSON.parse(source.textContent);
    var common = { responsive: true, maintainAspectRatio: false, animation: false,
                   plugins: { legend: { position: "bottom" },
                              tooltip: { callbacks: { label: function (c) { return c.dataset.label + ": " + number(c.parsed[c.chart.options.indexAxis === "y" ? "x" : "y"]); } } } } };
    draw("chart-companies", {
      type: "bar",
      data: { labels: data.companies.labels, datasets: datasets(data.companies, data.names, "bar") },
      options: Object.assign({}, common, {
        indexAxis: "y",
        scales: {
          x: { beginAtZero: true, ticks: { callback: number } },
          y: { ticks: { autoSkip: false, callback: function (value) { return shortLabel(this.getLabelForValue(value), this.chart); } } }
        },
        plugins: Object.assign({}, common.plugins, {
          tooltip: { callbacks: {
            title: function (items) { return items.length ? data.companies.labels[items[0].dataIndex] : ""; },
            label: common.plugins.tooltip.callbacks.label
          } }
        })
      })
    });
    draw("chart-trend", {
      type: "line",
      data: { labels: data.trend.times, datasets: datasets(data.trend, data.names, "line") },
      options: Object.assign({}, common, { scales: { y: { beginAtZero: true, ticks: { callback: number } } } })
    });
  }

  function refreshButton() {
    var button = document.querySelector("#refresh-button[data-enable-at]");
    if (!button) { return; }
    var wait = Number(button.dataset.enableAt) * 1000 - Date.now();
    // Reload when the window opens: the page then shows the button enabled, as the server sees it.
    window.setTimeout(function () { window.location.reload(); }, Math.max(1000, wait + 1000));
  }

  document.addEventListener("DOMContentLoaded", function () { charts(); refreshButton(); });
})();
