(function () {
  function key(td) { var t = td.textContent.trim(), n = parseFloat(t.replace(/,/g, "")); return isNaN(n) ? t.toLowerCase() : n; }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th").forEach(function (th, col) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows), asc = th.dataset.asc !== "1";
        rows.sort(function (a, b) { var x = key(a.cells[col]), y = key(b.cells[col]); return (x > y ? 1 : x < y ? -1 : 0) * (asc ? 1 : -1); });
        rows.forEach(function (r) { body.appendChild(r); }); th.dataset.asc = asc ? "1" : "0";
      });
    });
  });
  var box = document.getElementById("filter"), only = document.getElementById("only-problems");
  function filter() {
    var q = box.value.trim().toLowerCase();
    document.querySelectorAll("article.item").forEach(function (a) {
      var hit = (!q || a.textContent.toLowerCase().indexOf(q) >= 0) && (!only.checked || a.dataset.problem === "1");
      a.style.display = hit ? "" : "none";
    });
  }
  box.addEventListener("input", filter); only.addEventListener("change", filter);
  function openAll(v) { document.querySelectorAll("#explorer details").forEach(function (d) { d.open = v; }); }
  document.getElementById("expand").addEventListener("click", function () { openAll(true); });
  document.getElementById("collapse").addEventListener("click", function () { openAll(false); });
})();
