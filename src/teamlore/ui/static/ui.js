// teamlore review page: keyboard shortcuts and small conveniences. Plain JS, no dependencies.
(function () {
  "use strict";
  var statements = Array.prototype.slice.call(document.querySelectorAll("[data-statement]"));
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr[data-href]"));
  var current = -1;

  function select(list, index) {
    if (!list.length) return;
    index = Math.max(0, Math.min(list.length - 1, index));
    list.forEach(function (el) { el.classList.remove("current"); });
    current = index;
    list[index].classList.add("current");
    list[index].scrollIntoView({ block: "nearest", behavior: "smooth" });
    if (list[index].hasAttribute("tabindex")) list[index].focus({ preventScroll: true });
  }

  function initialFocus() {
    if (!statements.length) { if (rows.length) select(rows, 0); return; }
    var id = (location.hash || "").slice(1) || document.body.dataset.focus;
    var at = statements.findIndex(function (el) { return el.id === id; });
    if (at < 0 && document.body.dataset.focus) {
      at = statements.findIndex(function (el) { return el.id === document.body.dataset.focus; });
    }
    select(statements, at < 0 ? 0 : at);
  }

  function press(verdict) {
    if (current < 0 || !statements[current]) return;
    var button = statements[current].querySelector('button[data-verdict="' + verdict + '"]');
    if (button && !button.disabled) button.click();
  }

  function go(href) { if (href) location.href = href; }

  var pendingG = false;
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var tag = (event.target && event.target.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    var key = event.key;
    if (pendingG) {
      pendingG = false;
      var where = { q: "/queue", p: "/plan", m: "/memory", s: "/sessions" }[key];
      if (where) { event.preventDefault(); go(where); }
      return;
    }
    var list = statements.length ? statements : rows;
    switch (key) {
      case "j": select(list, current + 1); break;
      case "k": select(list, current - 1); break;
      case "c": press("confirm"); break;
      case "x": press("reject"); break;
      case "u": press("undo"); break;
      case "n": go(document.body.dataset.next); break;
      case "N": go(document.body.dataset.previous); break;
      case "Enter": if (!statements.length && rows[current]) go(rows[current].dataset.href); else return; break;
      case "g": pendingG = true; break;
      case "/":
        var search = document.querySelector("[data-search]");
        if (!search) return;
        search.focus(); break;
      case "?": toggleHelp(); break;
      default: return;
    }
    event.preventDefault();
  });

  function toggleHelp() {
    var help = document.getElementById("help");
    if (help) help.hidden = !help.hidden;
  }
  Array.prototype.forEach.call(document.querySelectorAll("[data-toggle-help]"), function (el) {
    el.addEventListener("click", toggleHelp);
  });
  rows.forEach(function (row) {
    row.addEventListener("click", function (event) {
      if (event.target.tagName !== "A") go(row.dataset.href);
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("[data-back]"), function (el) {
    el.addEventListener("click", function (event) {
      if (history.length > 1) { event.preventDefault(); history.back(); }
    });
  });
  statements.forEach(function (el, index) {
    el.addEventListener("click", function () { select(statements, index); });
  });
  initialFocus();
})();
