// Tables: filter rows by text, sort by a column. No inline script (the CSP forbids it).
(function () {
  function rows(table) { return Array.from(table.tBodies[0].rows); }
  function filter(box) {
    var needle = box.value.toLowerCase();
    var table = document.getElementById(box.dataset.filterTable);
    if (!table) return;
    rows(table).forEach(function (row) {
      row.hidden = needle && row.textContent.toLowerCase().indexOf(needle) < 0;
    });
  }
  document.addEventListener("input", function (event) {
    var box = event.target.closest("[data-filter-table]");
    if (box) filter(box);
  });
  // A polled table (the runs list) is swapped in fresh: keep it filtered as typed.
  document.body.addEventListener("htmx:afterSwap", function () {
    document.querySelectorAll("[data-filter-table]").forEach(filter);
  });
  document.addEventListener("click", function (event) {
    var th = event.target.closest("th[data-sort]");
    if (!th) return;
    var table = th.closest("table");
    var index = Array.from(th.parentNode.children).indexOf(th);
    var numeric = th.dataset.sort === "num";
    var down = th.dataset.dir !== "down";
    th.dataset.dir = down ? "down" : "up";
    var sorted = rows(table).sort(function (a, b) {
      var x = a.cells[index], y = b.cells[index];
      var u = numeric ? parseFloat(x.dataset.value || x.textContent) : x.textContent;
      var v = numeric ? parseFloat(y.dataset.value || y.textContent) : y.textContent;
      return (u > v ? 1 : u < v ? -1 : 0) * (down ? -1 : 1);
    });
    sorted.forEach(function (row) { table.tBodies[0].appendChild(row); });
  });
})();
