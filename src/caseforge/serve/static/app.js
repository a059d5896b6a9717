// Keyboard, copyable links and the rows j/k move through. No inline script (the CSP forbids
// it). Every key is listed in the `?` dialog of base.html.
(function () {
  function typing(event) {
    var t = event.target;
    if (t.tagName === "INPUT") return !/^(radio|checkbox|button|submit|reset)$/.test(t.type);
    return t.isContentEditable || /^(TEXTAREA|SELECT)$/.test(t.tagName);
  }

  // j/k: the current row of the page's table of rows (runs, grid, suite cases); Enter opens
  // it (its first link has the focus).
  function rowsTable() { return document.querySelector("table[data-rows]"); }
  function move(step) {
    var table = rowsTable();
    if (!table) return;
    var rows = Array.from(table.tBodies[0].rows).filter(function (r) { return r.querySelector("a"); });
    if (!rows.length) return;
    var now = rows.findIndex(function (r) { return r.classList.contains("current"); });
    var next = now < 0 ? (step > 0 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, now + step));
    rows.forEach(function (r) { r.classList.remove("current"); });
    rows[next].classList.add("current");
    rows[next].querySelector("a").focus();
    rows[next].scrollIntoView({ block: "nearest" });
  }

  // c/m/x on the label screen: the first fact without a verdict (or the one whose radio has
  // the focus) gets it, then the next fact is chosen; as `caseforge label` asks fact by fact.
  function label(key) {
    var form = document.querySelector("form[data-labeller]");
    if (!form) return false;
    var facts = Array.from(form.querySelectorAll("tr[data-fact]"));
    var focused = document.activeElement && document.activeElement.closest("tr[data-fact]");
    var row = focused || facts.find(function (r) { return !r.querySelector("input:checked"); });
    if (!row) return false;
    var radio = row.querySelector('input[data-verdict-key="' + key + '"]');
    if (!radio) return false;
    radio.checked = true;
    var after = facts[facts.indexOf(row) + 1];
    (after ? after.querySelector("input[type=radio]") : form.querySelector("button[type=submit]") || radio).focus();
    return true;
  }

  function dialog() { return document.getElementById("keys"); }
  function toggleKeys() {
    var d = dialog();
    if (!d) return;
    if (d.open) d.close(); else d.showModal();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "?" && !typing(event)) { event.preventDefault(); toggleKeys(); return; }
    if (typing(event) || (dialog() && dialog().open)) return;
    var key = event.key;
    if (key === "/") {
      var box = document.querySelector("[data-search]");
      if (box) { event.preventDefault(); box.focus(); box.select(); }
      return;
    }
    if (key === "j" || key === "k") { event.preventDefault(); move(key === "j" ? 1 : -1); return; }
    if ((key === "c" || key === "m" || key === "x") && label(key)) { event.preventDefault(); return; }
    var target = document.querySelector('[data-key="' + key + '"]');
    if (target) { event.preventDefault(); target.click(); }
  });

  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-keys-open]")) { toggleKeys(); return; }
    var button = event.target.closest("[data-copy]");
    if (!button) return;
    var box = button.parentNode.querySelector("[data-copy-source]");
    var said = button.parentNode.querySelector("[data-copied]");
    function done(text) { if (said) said.textContent = text; }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(box.value).then(function () { done("copied"); }, function () { box.select(); done("selected: press Ctrl+C"); });
    } else {
      box.select();
      done(document.execCommand && document.execCommand("copy") ? "copied" : "selected: press Ctrl+C");
    }
  });

  // A page being left (a link followed) ignores the answers of its polls: a poll that says
  // "reload" (a validation or a run that finished) would otherwise cancel the navigation.
  var leaving = false;
  window.addEventListener("beforeunload", function () { leaving = true; });
  window.addEventListener("pageshow", function () { leaving = false; });
  document.addEventListener("htmx:beforeOnLoad", function (event) {
    if (leaving) event.preventDefault();
  });

  // A table of rows swapped by a poll (the runs list) keeps the row j/k chose, and the
  // focus if it was there: rows are told apart by their data-row-id.
  var kept = null;
  document.addEventListener("htmx:beforeSwap", function (event) {
    var current = event.detail.target && event.detail.target.querySelector("table[data-rows] tr.current[data-row-id]");
    kept = current ? { id: current.dataset.rowId, focused: current.contains(document.activeElement) } : null;
  });
  document.addEventListener("htmx:afterSettle", function () {
    if (!kept) return;
    var id = kept.id, focused = kept.focused;
    kept = null;
    var row = Array.from(document.querySelectorAll("table[data-rows] tr[data-row-id]")).find(function (r) { return r.dataset.rowId === id; });
    if (!row) return;
    row.classList.add("current");
    if (focused && row.querySelector("a")) row.querySelector("a").focus({ preventScroll: true });
  });

  // The grid's filters are fields of a form outside the grid: htmx's history keeps the
  // page's markup, not what was chosen, so the choices are written into the markup before
  // it is kept, and read back from the address when a page comes back (Back, Forward).
  function reflect() {
    document.querySelectorAll("form.filters select").forEach(function (select) {
      Array.from(select.options).forEach(function (o) {
        if (o.selected) o.setAttribute("selected", ""); else o.removeAttribute("selected");
      });
    });
    document.querySelectorAll("form.filters input:not([type=hidden])").forEach(function (input) {
      input.setAttribute("value", input.value);
    });
  }
  function fromAddress() {
    var params = new URLSearchParams(window.location.search);
    document.querySelectorAll("form.filters[hx-get]").forEach(function (form) {
      Array.from(form.elements).forEach(function (field) {
        if (!field.name || field.type === "hidden" || field.type === "submit") return;
        var value = params.get(field.name);
        if (field.tagName === "SELECT") field.value = value === null ? field.options[0].value : value;
        else field.value = value === null ? "" : value;
      });
    });
  }
  document.addEventListener("htmx:beforeHistorySave", reflect);
  document.addEventListener("htmx:historyRestore", fromAddress);
  window.addEventListener("pageshow", function (event) { if (event.persisted) fromAddress(); });

  // A row clicked with the mouse becomes the current one, so j/k go on from there.
  document.addEventListener("focusin", function (event) {
    var row = event.target.closest && event.target.closest("table[data-rows] tbody tr");
    if (!row) return;
    row.parentNode.querySelectorAll("tr.current").forEach(function (r) { r.classList.remove("current"); });
    row.classList.add("current");
  });
})();

// Small client-side tables (calibration): filter rows by text, sort by a column.
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
