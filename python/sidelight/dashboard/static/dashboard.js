// sidelight dashboard: filters, live rows (server-sent events), the timeline chart, session actions.
// Text from sessions is only ever set with textContent, never as HTML.
"use strict";

(function () {
  var CATEGORIES = ["edit", "read", "command", "other"];

  function localTime(iso) {
    if (!iso) return "-";
    var d = new Date(iso);
    if (isNaN(d.getTime())) return iso;
    return d.toLocaleString();
  }

  function showTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      var iso = el.getAttribute("datetime");
      if (iso) el.textContent = localTime(iso);
    });
  }

  function setLive(state, text) {
    var el = document.getElementById("live");
    if (!el) return;
    el.dataset.state = state;
    el.textContent = text;
  }

  // -- filters --------------------------------------------------------------------------------------

  // As the server's _matches: agent, state and project exactly, the search in the name or the project.
  function applyFilters() {
    var agent = document.getElementById("filter-agent").value;
    var state = document.getElementById("filter-state").value;
    var project = document.getElementById("filter-project").value;
    var query = document.getElementById("filter-search").value.trim().toLowerCase();
    var shown = 0;
    document.querySelectorAll("section.project").forEach(function (section) {
      var visible = 0;
      var sameProject = project === "" || section.dataset.project === project;
      section.querySelectorAll("tr[data-session-id]").forEach(function (row) {
        var name = cell(row, "name").textContent.toLowerCase();
        var ok = sameProject && (agent === "" || row.dataset.agent === agent) &&
          (state === "" || row.dataset.state === state) &&
          (query === "" || name.indexOf(query) >= 0 || row.dataset.project.toLowerCase().indexOf(query) >= 0);
        row.hidden = !ok;
        if (ok) visible += 1;
      });
      section.hidden = visible === 0;
      shown += visible;
    });
    var count = document.getElementById("shown-count");
    if (count) count.textContent = shown + " shown";
    rememberChoices();
  }

  // The address keeps the filters, the search and the sort: a reload or a shared link shows the same.
  function rememberChoices() {
    var params = new URLSearchParams();
    [["q", "filter-search"], ["agent", "filter-agent"], ["state", "filter-state"], ["project", "filter-project"]]
      .forEach(function (pair) {
        var value = document.getElementById(pair[1]).value;
        if (value) params.set(pair[0], value);
      });
    if (sortKey) params.set("sort", sortKey);
    var query = params.toString();
    history.replaceState(null, "", location.pathname + (query ? "?" + query : ""));
  }

  // -- sorting --------------------------------------------------------------------------------------

  var sortKey = "";

  function sortValue(row, key) {
    if (key === "last") return cell(row, "last").querySelector("time").getAttribute("datetime") || "";
    if (key === "messages") return Number(cell(row, "messages").textContent) || 0;
    var total = 0;
    cell(row, "tools").querySelectorAll("span").forEach(function (span) { total += Number(span.textContent) || 0; });
    return total;
  }

  // The most (or newest) first; equal rows keep the server's order (live first, then the most recent).
  function sortRows() {
    document.querySelectorAll("section.project tbody").forEach(function (tbody) {
      var rows = Array.prototype.slice.call(tbody.querySelectorAll("tr[data-session-id]"));
      rows.forEach(function (row, i) { if (!row.dataset.order) row.dataset.order = String(i); });
      rows.sort(function (a, b) {
        if (sortKey) {
          var x = sortValue(a, sortKey), y = sortValue(b, sortKey);
          if (x !== y) return x < y ? 1 : -1;
        }
        return Number(a.dataset.order) - Number(b.dataset.order);
      });
      rows.forEach(function (row) { tbody.appendChild(row); });
    });
    document.querySelectorAll("th[data-sort]").forEach(function (th) {
      if (th.dataset.sort === sortKey) th.setAttribute("aria-sort", "descending");
      else th.removeAttribute("aria-sort");
    });
  }

  function setupSorting() {
    sortKey = new URLSearchParams(location.search).get("sort") || "";
    document.getElementById("sessions").addEventListener("click", function (event) {
      var link = event.target.closest("th[data-sort] a");
      if (!link) return;
      event.preventDefault();
      var key = link.parentElement.dataset.sort;
      sortKey = sortKey === key ? "" : key;  // a second click goes back to the status order
      sortRows();
      rememberChoices();
    });
  }

  function addOption(select, value) {
    for (var i = 0; i < select.options.length; i++) {
      if (select.options[i].value === value) return;
    }
    var option = document.createElement("option");
    option.value = value;
    option.textContent = value || "(none)";
    select.appendChild(option);
  }

  // -- rows -----------------------------------------------------------------------------------------

  function cell(row, name) {
    return row.querySelector("td." + name);
  }

  function fillRow(tr, rec) {
    tr.dataset.sessionId = rec.id;
    tr.dataset.agent = rec.agent;
    tr.dataset.state = rec.state;
    tr.dataset.project = rec.project;
    cell(tr, "agent").textContent = rec.agent;
    var link = cell(tr, "name").querySelector("a");
    link.textContent = rec.name;
    link.setAttribute("href", "/session/" + encodeURIComponent(rec.id));
    cell(tr, "state").querySelector(".badge").textContent = rec.state;
    var time = cell(tr, "last").querySelector("time");
    time.setAttribute("datetime", rec.last_activity || "");
    time.textContent = localTime(rec.last_activity);
    cell(tr, "messages").textContent = String(rec.messages);
    var tools = cell(tr, "tools");
    CATEGORIES.forEach(function (c) {
      var span = tools.querySelector("span." + c);
      if (span) span.textContent = String(rec.tools[c] || 0);
    });
    var files = cell(tr, "files");
    files.textContent = rec.files.length + (rec.files.length ? ": " + rec.last_file : "");
    files.title = rec.files.join(", ");
    cell(tr, "hot").textContent = String(rec.hot_memory);
  }

  function newRow() {
    var tr = document.createElement("tr");
    ["agent", "name", "state", "last", "messages", "tools", "files", "hot"].forEach(function (name) {
      var td = document.createElement("td");
      td.className = name;
      if (name === "name") td.appendChild(document.createElement("a"));
      if (name === "last") td.appendChild(document.createElement("time"));
      if (name === "state") {
        var badge = document.createElement("span");
        badge.className = "badge";
        td.appendChild(badge);
      }
      if (name === "tools") {
        CATEGORIES.forEach(function (c, i) {
          var span = document.createElement("span");
          span.className = c;
          td.appendChild(span);
          if (i < CATEGORIES.length - 1) td.appendChild(document.createTextNode("/"));
        });
      }
      tr.appendChild(td);
    });
    return tr;
  }

  function projectSection(project) {
    var sections = document.querySelectorAll("section.project");
    for (var i = 0; i < sections.length; i++) {
      if (sections[i].dataset.project === project) return sections[i];
    }
    var template = sections.length ? sections[0] : null;
    var section = document.createElement("section");
    section.className = "project";
    section.dataset.project = project;
    var h3 = document.createElement("h3");
    h3.textContent = project || "(no project)";
    section.appendChild(h3);
    var table = document.createElement("table");
    if (template) table.appendChild(template.querySelector("thead").cloneNode(true));
    table.appendChild(document.createElement("tbody"));
    section.appendChild(table);
    document.getElementById("sessions").appendChild(section);
    addOption(document.getElementById("filter-project"), project);
    return section;
  }

  function updateRows(data) {
    data.rows.forEach(function (rec) {
      var tr = document.querySelector('tr[data-session-id="' + CSS.escape(rec.id) + '"]');
      if (tr && tr.dataset.project !== rec.project) {
        tr.remove();
        tr = null;
      }
      if (!tr) {
        tr = newRow();
        projectSection(rec.project).querySelector("tbody").appendChild(tr);
        addOption(document.getElementById("filter-agent"), rec.agent);
      }
      fillRow(tr, rec);
    });
    data.removed.forEach(function (id) {
      var tr = document.querySelector('tr[data-session-id="' + CSS.escape(id) + '"]');
      if (tr) tr.remove();
    });
    document.body.dataset.version = String(data.version);
    if (sortKey) sortRows();
    applyFilters();
  }

  function updateSessionPage(data) {
    var section = document.getElementById("session");
    data.rows.forEach(function (rec) {
      if (rec.id !== section.dataset.sessionId) return;
      section.dataset.state = rec.state;
      section.querySelector("h2 .state").textContent = rec.state;
    });
    document.body.dataset.version = String(data.version);
  }

  // -- collisions -----------------------------------------------------------------------------------

  // The overview names this many sessions of a shared file (the server's COLLISION_SESSIONS_SHOWN).
  var COLLISION_SESSIONS = 10;

  function updateCollisions(data) {
    var ul = document.getElementById("collision-list");
    if (!ul) return;
    var list = data.collisions;
    ul.textContent = "";
    list.forEach(function (c) {
      var li = document.createElement("li");
      li.dataset.file = c.file;
      li.dataset.sessions = String(c.sessions.length);
      var code = document.createElement("code");
      code.textContent = c.file;
      li.appendChild(code);
      li.appendChild(document.createTextNode(": "));
      var named = c.sessions.slice(0, COLLISION_SESSIONS);
      named.forEach(function (s, i) {
        var span = document.createElement("span");
        span.className = "who";
        var a = document.createElement("a");
        a.setAttribute("href", "/session/" + encodeURIComponent(s.id));
        a.textContent = s.name;
        span.appendChild(a);
        span.appendChild(document.createTextNode(" (" + s.agent + ", " + (s.changed ? "changed" : "read")));
        if (c.worktrees > 1 && s.worktree) {
          // The same repository path in several worktrees: say which one this session is in.
          span.appendChild(document.createTextNode(" in worktree "));
          var wt = document.createElement("span");
          wt.className = "worktree";
          wt.textContent = s.worktree;
          span.appendChild(wt);
        }
        var when = (s.when ? ", " + localTime(s.when) : "") + ")";
        span.appendChild(document.createTextNode(when + (i < named.length - 1 ? "; " : "")));
        li.appendChild(span);
      });
      if (c.sessions.length > named.length) {
        var more = document.createElement("span");
        more.className = "more";
        more.textContent = " and " + (c.sessions.length - named.length) + " more sessions";
        li.appendChild(more);
      }
      ul.appendChild(li);
    });
    var none = document.getElementById("no-collisions");
    if (none) none.hidden = list.length > 0;
    var rest = document.getElementById("collisions-more");
    if (rest) {
      rest.hidden = data.total <= list.length;
      document.getElementById("collisions-more-count").textContent = String(data.total - list.length);
    }
  }

  // -- timeline -------------------------------------------------------------------------------------

  var chart = null;

  function drawTimeline(data) {
    var holder = document.getElementById("timeline");
    if (!holder || typeof uPlot === "undefined") return;
    var xs = [];
    for (var i = 0; i < data.minutes; i++) xs.push(data.start_epoch + i * 60);
    var totalMessages = xs.map(function () { return 0; });
    var totalTools = xs.map(function () { return 0; });
    data.sessions.forEach(function (s) {
      for (var i = 0; i < data.minutes; i++) {
        totalMessages[i] += s.messages[i];
        totalTools[i] += s.tools[i];
      }
    });
    var palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];
    var series = [{}, {label: "messages (all)", stroke: "#222", width: 2},
                  {label: "tool uses (all)", stroke: "#999", width: 2, dash: [4, 4]}];
    var columns = [xs, totalMessages, totalTools];
    data.sessions.forEach(function (s, i) {
      series.push({label: s.name + " (" + s.agent + ")", stroke: palette[i % palette.length], width: 1, show: i < 5});
      columns.push(s.messages.map(function (m, j) { return m + s.tools[j]; }));
    });
    var marks = data.lifecycle || [];
    var opts = {
      width: Math.max(320, holder.clientWidth || 900),
      height: 260,
      series: series,
      scales: {x: {time: true}},
      axes: [{}, {label: "per minute"}],
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx;
          ctx.save();
          marks.forEach(function (m) {
            var x = u.valToPos(m.epoch, "x", true);
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
            ctx.strokeStyle = {end: "#d62728", idle: "#bcbd22", start: "#2ca02c", resume: "#17becf"}[m.kind] || "#aaa";
            ctx.setLineDash([2, 3]);
            ctx.beginPath();
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(x, u.bbox.top + u.bbox.height);
            ctx.stroke();
          });
          ctx.restore();
        }]
      }
    };
    holder.textContent = "";
    holder.dataset.sessions = String(data.sessions.length);
    holder.dataset.marks = String(marks.length);
    chart = new uPlot(opts, columns, holder);
    var note = document.getElementById("timeline-note");
    if (note) {
      var text = marks.length + " lifecycle change" + (marks.length === 1 ? "" : "s") + " marked (dotted lines)";
      if (data.left_out) text += "; " + data.left_out + " less recent sessions not charted";
      var partial = data.sessions.filter(function (s) { return s.partial; }).length;
      if (partial) text += "; " + partial + " counted from the end of their transcripts only";
      note.textContent = text;
    }
  }

  function loadTimeline() {
    if (!document.getElementById("timeline")) return;
    fetch("/api/timeline", {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) { if (data) drawTimeline(data); })
      .catch(function () {});
  }

  // -- live -----------------------------------------------------------------------------------------

  function connect(onSessions) {
    if (typeof EventSource === "undefined") return;
    var source = new EventSource("/events?since=" + encodeURIComponent(document.body.dataset.version || "0"));
    source.onopen = function () { setLive("live", "live"); };
    source.onerror = function () { setLive("reconnecting", "reconnecting…"); };
    source.addEventListener("sessions", function (event) {
      onSessions(JSON.parse(event.data));
    });
    source.addEventListener("collisions", function (event) {
      updateCollisions(JSON.parse(event.data));
    });
  }

  // -- actions --------------------------------------------------------------------------------------

  function setupActions() {
    var section = document.getElementById("session");
    var token = document.getElementById("csrf").value;
    var result = document.getElementById("action-result");
    section.querySelectorAll("button[data-action]").forEach(function (button) {
      button.addEventListener("click", function () {
        var url = "/api/sessions/" + encodeURIComponent(section.dataset.sessionId) + "/" + button.dataset.action;
        result.textContent = "…";
        fetch(url, {method: "POST", credentials: "same-origin", headers: {"X-Sidelight-Token": token}})
          .then(function (r) { return r.json().then(function (body) { return [r.ok, body]; }); })
          .then(function (pair) {
            var body = pair[1];
            if (!pair[0]) result.textContent = body.error || "failed";
            else if (body.written) result.textContent = "written to " + body.written;
            else result.textContent = body.action + (body.applied_by_watcher ? ": the watcher applies it" : ": recorded for the next watcher");
          })
          .catch(function (error) { result.textContent = String(error); });
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    showTimes(document);
    var page = document.body.dataset.page;
    if (page === "overview") {
      ["filter-agent", "filter-state", "filter-project"].forEach(function (id) {
        document.getElementById(id).addEventListener("change", applyFilters);
      });
      document.getElementById("filter-search").addEventListener("input", applyFilters);
      // The filters apply as they change: the form is submitted only without the script.
      document.getElementById("filters").addEventListener("submit", function (event) {
        event.preventDefault();
        applyFilters();
      });
      document.getElementById("filter-apply").hidden = true;
      setupSorting();
      applyFilters();
      loadTimeline();
      setInterval(loadTimeline, 60000);
      connect(updateRows);
    } else if (page === "session") {
      setupActions();
      connect(updateSessionPage);
    }
  });
})();
