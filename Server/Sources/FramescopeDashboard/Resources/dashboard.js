// Framescope dashboard: filters apply on change; tables sort by a column heading.
(function () {
  var filters = document.getElementById("filters");
  if (filters) {
    filters.querySelectorAll("select").forEach(function (select) {
      select.addEventListener("change", function () {
        // One tag filter at a time (one tag's rollups answer a query): choosing a tag's
        // value clears the other tags' menus.
        if (select.name.indexOf("tag.") === 0 && select.value !== "") {
          filters.querySelectorAll("select").forEach(function (other) {
            if (other !== select && other.name.indexOf("tag.") === 0) { other.value = ""; }
          });
        }
        filters.submit();
      });
    });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var body = table.tBodies[0];
    table.querySelectorAll("thead button[data-sort]").forEach(function (button) {
      button.addEventListener("click", function () {
        var key = button.getAttribute("data-sort");
        var descending = button.getAttribute("aria-sort") !== "descending";
        // The page says which way each figure is worse (from the metric registry's direction).
        var lowerIsWorse = button.getAttribute("data-higher-is-worse") === "false";
        var rows = Array.prototype.slice.call(body.rows);
        function cell(row) {
          return key === "screen" ? row.querySelector("th") : row.querySelector('td[data-metric="' + key + '"]');
        }
        rows.sort(function (a, b) {
          var x = cell(a).getAttribute("data-value"), y = cell(b).getAttribute("data-value");
          if (key === "screen") { return descending ? x.localeCompare(y) : y.localeCompare(x); }
          var nx = x === "" ? -Infinity : parseFloat(x), ny = y === "" ? -Infinity : parseFloat(y);
          var order = (lowerIsWorse ? nx - ny : ny - nx);
          return descending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
        table.querySelectorAll("thead button").forEach(function (other) { other.removeAttribute("aria-sort"); });
        button.setAttribute("aria-sort", descending ? "descending" : "ascending");
        table.setAttribute("data-sorted-by", key);
      });
    });
  });
})();
