// jlgcli board: the live part of a page (#live) is fetched again when the
// server says something changed (a line of the run's journal, or a change
// in the list of runs), with no reload; the agent's output is appended as
// it is written; the Stop and Resume buttons ask the server and say what it
// answered.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var timer = null;
  var shown = null; // the live part last fetched

  function refresh() {
    timer = null;
    var open = Array.prototype.map.call(live.querySelectorAll("details[open]"), function (d) { return d.id; });
    var sep = location.search ? "&" : "?";
    fetch(location.pathname + location.search + sep + "fragment=1", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        if (html === shown) { return; }
        shown = html;
        live.innerHTML = html;
        open.forEach(function (id) { var d = document.getElementById(id); if (d) { d.open = true; } });
        document.body.dataset.updated = String(Date.now());
      })
      .catch(function () {});
  }
  function schedule() { if (!timer) { timer = setTimeout(refresh, 250); } }
  function listen(url) {
    var es = new EventSource(url);
    es.onmessage = schedule;
    es.addEventListener("runs", schedule);
    es.addEventListener("end", function () { es.close(); schedule(); });
  }
  if (live) {
    if (live.dataset.events) { listen(live.dataset.events); }
    if (live.dataset.changes) { listen(live.dataset.changes); }
  }

  var out = document.getElementById("output");
  if (out && out.dataset.stream) {
    var os = new EventSource(out.dataset.stream);
    var call = null;
    os.onmessage = function (e) {
      var c = JSON.parse(e.data);
      if (call !== null && c.call !== call) { out.textContent = ""; }
      call = c.call;
      out.textContent += c.text;
      out.scrollTop = out.scrollHeight;
    };
    os.addEventListener("end", function () { os.close(); });
  }

  document.addEventListener("click", function (e) {
    var b = e.target.closest("button[data-act]");
    if (!b) { return; }
    b.disabled = true;
    var msg = document.getElementById("message");
    fetch(b.dataset.act, { method: "POST", credentials: "same-origin" })
      .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, j: j }; }); })
      .then(function (a) {
        msg.textContent = a.ok ? a.j.message : "refused: " + a.j.error;
        msg.className = "msg " + (a.ok ? "ok" : "bad");
        schedule();
      })
      .catch(function (err) { msg.textContent = String(err); msg.className = "msg bad"; })
      .then(function () { b.disabled = false; });
  });
})();
