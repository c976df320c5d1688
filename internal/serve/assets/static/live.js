// jlgcli board: the live part of a page (#live) is fetched again when the
// server says something changed (a line of the run's journal, or a change
// in the list of runs), with no reload; the agent's output is appended as
// it is written; the Stop and Resume buttons ask the server and say what it
// answered.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var timer = null;
  var shown = null; // the live part last shown, as the server sent it
  var version = ""; // its version (the server's X-Live-Version)

  // apply turns the text of the version a delta starts from into the new
  // one: a positive op keeps that many lines, a negative one drops them, a
  // string inserts its lines.
  function apply(text, ops) {
    var from = text.split("\n"), out = [], at = 0;
    ops.forEach(function (op) {
      if (typeof op === "string") { Array.prototype.push.apply(out, op.split("\n")); }
      else if (op > 0) { Array.prototype.push.apply(out, from.slice(at, at + op)); at += op; }
      else { at -= op; }
    });
    if (at !== from.length) { throw new Error("the delta does not fit"); }
    return out.join("\n");
  }

  function show(html) {
    var open = Array.prototype.map.call(live.querySelectorAll("details[id]"), function (d) { return [d.id, d.open]; });
    shown = html;
    live.innerHTML = html;
    // Folds keep the state the user gave them.
    open.forEach(function (o) { var d = document.getElementById(o[0]); if (d) { d.open = o[1]; } });
    document.body.dataset.updated = String(Date.now());
    notifyNew();
  }

  // Notifications (opt-in, the runs page): a notification of the browser
  // for each line that appears under "Needs you" while the page is open.
  var notify = document.getElementById("notify");
  var optIn = "jlgcli-notify";
  function needLines() { return Array.prototype.slice.call(document.querySelectorAll("#needyou li[data-key]")); }
  var known = needLines().map(function (li) { return li.dataset.key; });
  function wanted() {
    try { return localStorage.getItem(optIn) === "1" && !!window.Notification && window.Notification.permission === "granted"; } catch (e) { return false; }
  }
  function notifyNew() {
    var lines = needLines();
    var fresh = lines.filter(function (li) { return known.indexOf(li.dataset.key) < 0; });
    known = lines.map(function (li) { return li.dataset.key; });
    if (!wanted()) { return; }
    fresh.forEach(function (li) {
      var a = li.querySelector("a.title"), st = li.querySelector(".st"), why = li.querySelector(".why");
      var n = new window.Notification("Needs you: " + (a ? a.textContent : ""), {
        body: (st ? st.textContent : "") + (why && why.textContent ? ": " + why.textContent : ""), tag: li.dataset.key });
      n.onclick = function () { window.focus(); if (a) { location.href = a.href; } };
    });
  }
  function showNotify() {
    var on = wanted();
    notify.textContent = on ? "Notifications on" : "Notify me";
    notify.setAttribute("aria-pressed", on ? "true" : "false");
  }
  if (notify && window.Notification) {
    notify.hidden = false;
    showNotify();
    notify.addEventListener("click", function () {
      if (wanted()) { localStorage.removeItem(optIn); showNotify(); return; }
      localStorage.setItem(optIn, "1");
      Promise.resolve(window.Notification.requestPermission()).then(showNotify, showNotify);
    });
  }

  // refresh fetches the live part again, saying which version it has: the
  // server answers 204 (nothing changed), a delta from it (JSON) or the
  // whole part.
  function refresh(whole) {
    timer = null;
    var sep = location.search ? "&" : "?";
    var url = location.pathname + location.search + sep + "fragment=1";
    if (!whole && shown !== null && version) { url += "&have=" + encodeURIComponent(version); }
    fetch(url, { credentials: "same-origin" })
      .then(function (r) {
        if (!r.ok) { return Promise.reject(r.status); }
        var v = r.headers.get("X-Live-Version") || "";
        if (r.status === 204) { return; }
        var json = (r.headers.get("Content-Type") || "").indexOf("application/json") === 0;
        return (json ? r.json() : r.text()).then(function (body) {
          var html = body;
          if (json) {
            if (body.from !== version) { return refresh(true); }
            try { html = apply(shown, body.ops); } catch (e) { return refresh(true); }
          }
          version = v;
          if (html !== shown) { show(html); }
        });
      })
      .catch(function () {})
      .then(again);
  }
  function schedule() { if (!timer) { timer = setTimeout(function () { refresh(false); }, 250); } }
  // A part the server measures rather than is told of (a task's worktree
  // while its attempt works) says how soon to fetch it again:
  // data-refresh, in milliseconds.
  function again() {
    var el = live && live.querySelector("[data-refresh]");
    if (el && !timer) { timer = setTimeout(function () { refresh(false); }, Number(el.dataset.refresh) || 3000); }
  }
  // The streams are closed when the page is left: a browser may keep a
  // page it left alive for a while, and it has few connections to a server.
  var streams = [];
  window.addEventListener("pagehide", function () { streams.forEach(function (es) { es.close(); }); });
  function listen(url) {
    var es = new EventSource(url);
    streams.push(es);
    // Which streams listen (for the tests: a change is seen from then on).
    es.onopen = function () { document.body.dataset.listening = (document.body.dataset.listening || "") + " " + url; };
    es.onmessage = schedule;
    es.addEventListener("runs", schedule);
    es.addEventListener("end", function () { es.close(); schedule(); });
  }
  if (live) {
    if (live.dataset.events) { listen(live.dataset.events); }
    if (live.dataset.changes) { listen(live.dataset.changes); }
    again();
  }

  var out = document.getElementById("output");
  if (out && out.dataset.stream) {
    var os = new EventSource(out.dataset.stream);
    streams.push(os);
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
