// solbench dashboard: renders window.SOLBENCH (inlined by dashboard/build.py) with the inlined
// plotly.js. Views by URL hash: #overview, #op/<name>, #ops, #roofline, #history, #runs.
// Filters (device, dtype, size, backend) are checkboxes kept in memory; every view re-renders on change.
"use strict";
(function () {
  const D = window.SOLBENCH;
  const BAD = ["failed", "error", "timeout"];
  const FILTERS = ["device", "dtype", "size", "backend"];
  const sel = {};
  const esc = (s) => String(s == null ? "" : s).replace(/[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const uniq = (xs) => Array.from(new Set(xs)).filter((x) => x != null).sort();
  const fmtT = (s) => s == null ? "" : (s < 1e-3 ? (s * 1e6).toFixed(1) + " µs" : (s * 1e3).toFixed(3) + " ms");
  const fmt = (x, d) => x == null ? "" : Number(x).toFixed(d);
  const timed = (c) => c.status === "ok" && c.mode === "run" && c.median_s != null;
  const rate = (c) => c.bound === "compute" ? fmt(c.tflops, 3) + " TFLOP/s" : fmt(c.gbps, 1) + " GB/s";

  function buildFilters() {
    const box = document.getElementById("filters");
    for (const f of FILTERS) {
      const vals = uniq(D.cells.map((c) => c[f]));
      sel[f] = new Set(vals);
      const fs = document.createElement("fieldset");
      fs.id = "filter-" + f;
      fs.innerHTML = `<legend>${f}</legend>` + vals.map((v) =>
        `<label><input type="checkbox" data-filter="${esc(f)}" value="${esc(v)}" checked> ${esc(v)}</label>`).join("");
      box.appendChild(fs);
    }
    box.addEventListener("change", (ev) => {
      const t = ev.target;
      if (!t.dataset.filter) return;
      if (t.checked) sel[t.dataset.filter].add(t.value); else sel[t.dataset.filter].delete(t.value);
      render();
    });
  }
  const pass = (c) => FILTERS.every((f) => c[f] == null || sel[f].has(String(c[f])));
  const cells = () => D.cells.filter(pass);
  const devices = () => uniq(cells().map((c) => c.device));

  function plot(parent, id, traces, layout) {
    const div = document.createElement("div");
    div.className = "chart";
    div.id = id;
    parent.appendChild(div);
    Plotly.newPlot(div, traces, Object.assign({ margin: { t: 40, r: 20 }, hovermode: "closest" }, layout),
      { displaylogo: false, responsive: true });
  }
  function section(html) {
    const s = document.createElement("section");
    s.innerHTML = html;
    document.getElementById("view").appendChild(s);
    return s;
  }

  // reason shown in a cell that has no timed result
  function cellState(cs) {
    const ok = cs.filter(timed);
    if (ok.length) {
      const best = ok.reduce((a, b) => ((b.pct_sol || 0) > (a.pct_sol || 0) ? b : a));
      return { cls: "ok", best, text: best.pct_sol != null ? fmt(best.pct_sol, 1) + " %" : rate(best) };
    }
    const bad = cs.find((c) => BAD.includes(c.status));
    if (bad) return { cls: "bad", text: bad.status, reason: bad.message || "(no message)" };
    const un = cs.find((c) => c.status === "unsupported") || cs.find((c) => c.status === "skipped");
    if (un) return { cls: un.status, text: un.status, reason: un.message };
    const other = cs[0];
    const why = other.status === "compiled" ? "compiled only (no device to run on)" :
      other.mode === "interpret" ? "interpreted: correctness only, not timed" : other.message;
    return { cls: "untimed", text: other.status, reason: why };
  }

  function overview() {
    const cs = cells();
    const ops = uniq(cs.map((c) => c.op)), backends = uniq(cs.map((c) => c.backend));
    section(`<h2>Best % of speed of light, per device</h2><p class="muted">Newest result of each series;
      the best variant and case of every op × backend under the filters. Click a cell for the operator.</p>`);
    for (const dev of devices()) {
      const info = D.devices[dev] || {};
      let h = `<h3>${esc(dev)} <span class="muted">${esc(info.name || "")}</span></h3>
        <table class="overview" data-device="${esc(dev)}"><tr><th>op</th>` +
        backends.map((b) => `<th>${esc(b)}</th>`).join("") + "</tr>";
      for (const op of ops) {
        h += `<tr><th><a href="#op/${esc(op)}">${esc(op)}</a></th>`;
        for (const b of backends) {
          const here = cs.filter((c) => c.device === dev && c.op === op && c.backend === b);
          if (!here.length) {
            h += `<td class="cell missing" data-op="${esc(op)}" data-backend="${esc(b)}">missing
              <span class="reason">no result for this device under the filters</span></td>`;
            continue;
          }
          const st = cellState(here);
          const title = st.best ? `${st.best.variant} ${st.best.case} ${st.best.dtype}: ${fmtT(st.best.median_s)}, ${rate(st.best)}` : "";
          h += `<td class="cell ${st.cls}" data-op="${esc(op)}" data-backend="${esc(b)}" title="${esc(title)}">
            <a href="#op/${esc(op)}">${esc(st.text)}</a>` +
            (st.best ? `<span class="reason">${esc(st.best.variant)} · ${esc(rate(st.best))}</span>` : "") +
            (st.reason ? `<span class="reason">${esc(st.reason)}</span>` : "") + "</td>";
        }
        h += "</tr>";
      }
      section(h + "</table>");
    }
    if (!devices().length) section("<p>No results under these filters.</p>");
  }

  function opsIndex() {
    section("<h2>Operators</h2>" + uniq(cells().map((c) => c.op))
      .map((op) => `<p><a href="#op/${esc(op)}">${esc(op)}</a></p>`).join(""));
  }

  function opView(op) {
    const cs = cells().filter((c) => c.op === op);
    section(`<h2>${esc(op)}</h2>`);
    if (!cs.length) { section("<p>No results under these filters.</p>"); return; }
    const cases = uniq(cs.map((c) => c.case + "|" + c.dtype));
    const s = section("<h3>Backends × devices, best variant per case</h3>");
    cases.forEach((cd, i) => {
      const [cs_, dt] = cd.split("|");
      const here = cs.filter((c) => c.case === cs_ && c.dtype === dt && timed(c));
      if (!here.length) return;
      const traces = uniq(here.map((c) => c.device)).map((dev) => {
        const bk = uniq(here.filter((c) => c.device === dev).map((c) => c.backend));
        const best = bk.map((b) => here.filter((c) => c.device === dev && c.backend === b)
          .reduce((a, c) => ((c.pct_sol || 0) > (a.pct_sol || 0) ? c : a)));
        return { type: "bar", name: dev, x: bk, y: best.map((c) => c.pct_sol),
          text: best.map((c) => c.variant), textposition: "auto",
          hovertext: best.map((c) => `${c.variant}: ${fmtT(c.median_s)}, ${rate(c)}` +
            (c.x_torch ? `, ${fmt(c.x_torch, 2)}× torch` : "")) };
      });
      plot(s, `op-${op}-${i}`, traces, { title: { text: `${op} ${cs_} ${dt}: % SOL (best variant)` }, barmode: "group",
        yaxis: { title: { text: "% of SOL" } } });
    });
    let t = `<h3>Variant ladder</h3><table class="ladder"><tr><th>device</th><th>backend</th><th>variant</th>
      <th>case</th><th>dtype</th><th>size</th><th>time</th><th>GB/s</th><th>TFLOP/s</th><th>% SOL</th>
      <th>× torch</th><th>status</th></tr>`;
    const sorted = cs.slice().sort((a, b) => (a.device + a.backend + a.case).localeCompare(b.device + b.backend + b.case)
      || (b.pct_sol || -1) - (a.pct_sol || -1));
    for (const c of sorted) {
      const cls = timed(c) ? "" : BAD.includes(c.status) ? "bad" : "untimed";
      t += `<tr><td>${esc(c.device)}</td><td>${esc(c.backend)}</td><td>${esc(c.variant)}</td><td>${esc(c.case)}</td>
        <td>${esc(c.dtype)}</td><td>${esc(c.size)}</td><td class="num">${timed(c) ? fmtT(c.median_s) : ""}</td>
        <td class="num">${timed(c) ? fmt(c.gbps, 1) : ""}</td><td class="num">${timed(c) ? fmt(c.tflops, 4) : ""}</td>
        <td class="num">${timed(c) ? fmt(c.pct_sol, 1) : ""}</td><td class="num">${fmt(c.x_torch, 2)}</td>
        <td class="${cls}">${esc(c.status)}${c.status !== "ok" && c.message ? ": " + esc(c.message) : ""}</td></tr>`;
    }
    section(t + "</table>");
    let z = `<h3>Sizes swept</h3><table><tr><th>case</th><th>dtype</th><th>size</th><th>bytes</th><th>flops</th>
      <th>arithmetic intensity</th></tr>`;
    const seen = new Set();
    for (const c of cs) {
      const k = c.case + c.dtype + c.size;
      if (seen.has(k)) continue;
      seen.add(k);
      z += `<tr><td>${esc(c.case)}</td><td>${esc(c.dtype)}</td><td>${esc(c.size)}</td><td class="num">${c.bytes || ""}</td>
        <td class="num">${c.flops || ""}</td><td class="num">${fmt(c.ai, 3)}</td></tr>`;
    }
    section(z + "</table>");
  }

  function roofline() {
    section(`<h2>Roofline per device</h2><p class="muted">Each timed result at its arithmetic intensity
      (FLOP/byte) and achieved GFLOP/s, under the bandwidth roof and each precision's FLOP ceiling:
      measured solid, theoretical dashed.</p>`);
    const s = section("");
    for (const dev of devices()) {
      const pts = cells().filter((c) => c.device === dev && timed(c) && c.ai && c.flops);
      const pk = (D.devices[dev] || {}).peaks || {};
      if (!pts.length) continue;
      const ais = pts.map((c) => c.ai);
      const lo = Math.min(...ais) / 4, hi = Math.max(Math.max(...ais) * 4, 512);
      const traces = [];
      for (const kind of ["measured", "theoretical"]) {
        const m = pk[kind] || {};
        if (!m.bandwidth) continue;
        const bw = m.bandwidth.value;
        for (const [prec, v] of Object.entries(m)) {
          if (prec === "bandwidth" || !v.value) continue;
          const ridge = v.value / bw;
          const xs = [lo, Math.min(Math.max(ridge, lo), hi), hi];
          traces.push({ type: "scatter", mode: "lines", name: `${prec} ${kind}`, x: xs,
            y: xs.map((x) => Math.min(bw * x, v.value) / 1e9),
            line: { dash: kind === "measured" ? "solid" : "dash", width: 1.5 },
            hovertext: `${prec} ${kind}: ${fmt(v.value / 1e12, 1)} TFLOP/s; bandwidth ${fmt(bw / 1e9, 0)} GB/s` });
        }
      }
      for (const b of uniq(pts.map((c) => c.backend))) {
        const p = pts.filter((c) => c.backend === b);
        traces.push({ type: "scatter", mode: "markers", name: b, x: p.map((c) => c.ai),
          y: p.map((c) => c.tflops * 1e3), marker: { size: 9 },
          hovertext: p.map((c) => `${c.op} ${c.variant} ${c.case} ${c.dtype}: ${rate(c)}, ${fmt(c.pct_sol, 1)} % SOL`) });
      }
      plot(s, `roofline-${dev}`, traces, { title: { text: `${dev}: roofline` },
        xaxis: { type: "log", title: { text: "arithmetic intensity (FLOP/byte)" } },
        yaxis: { type: "log", title: { text: "GFLOP/s" } } });
    }
  }

  function historyView() {
    section(`<h2>History</h2><p class="muted">Median time of every series over its runs (lower is better);
      ▲ regression, ▼ improvement, ◆ pending, from the nightly reports (results/reports/).</p>`);
    const s = section("");
    const series = Object.entries(D.history).filter(([, h]) => pass(h));
    const groups = uniq(series.map(([, h]) => h.device + " · " + h.op));
    groups.forEach((g, i) => {
      const mine = series.filter(([, h]) => h.device + " · " + h.op === g);
      const traces = mine.map(([label, h]) => ({ type: "scatter", mode: "lines+markers",
        name: `${h.backend}/${h.variant} ${h.case} ${h.dtype}`, x: h.points.map((p) => p[0]),
        y: h.points.map((p) => p[1] * 1e3),
        hovertext: h.points.map((p) => `${label}<br>run ${p[3]}<br>${fmtT(p[1])}, SM ${p[4] || "?"} MHz`) }));
      const marks = D.markers.filter((m) => mine.some(([label]) => label === m.series));
      if (marks.length) {
        const y = marks.map((m) => {
          const h = D.history[m.series];
          const pt = h.points.find((p) => p[3] === m.run_id);
          return pt ? pt[1] * 1e3 : null;
        });
        traces.push({ type: "scatter", mode: "markers", name: "nightly changes",
          x: marks.map((m) => m.started_utc), y,
          marker: { size: 14, color: marks.map((m) => m.kind === "regression" ? "#dc2626" : m.kind === "improvement" ? "#16a34a" : "#f59e0b"),
            symbol: marks.map((m) => m.kind === "regression" ? "triangle-up" : m.kind === "improvement" ? "triangle-down" : "diamond") },
          hovertext: marks.map((m) => `${m.kind} ×${fmt(m.ratio, 3)} (${m.series}) — ${m.report}`) });
      }
      plot(s, `history-${i}`, traces, { title: { text: g }, yaxis: { title: { text: "median time (ms)" }, rangemode: "tozero" },
        xaxis: { title: { text: "run start (UTC)" } }, legend: { font: { size: 10 } } });
    });
    if (!groups.length) section("<p>No timed series under these filters.</p>");
  }

  function runsView() {
    const devs = new Set(devices());
    let h = `<h2>Runs</h2><table class="runs"><tr><th>run</th><th>started (UTC)</th><th>git</th><th>device(s)</th>
      <th>ops</th><th>rows</th><th>timers</th><th>SM MHz</th><th>mem MHz</th><th>throttle</th><th>peaks</th>
      <th>command</th></tr>`;
    for (const r of D.runs) {
      if (!r.devices.some((d) => devs.has(d))) continue;
      h += `<tr><td><code>${esc(r.id)}</code></td><td>${esc(r.started_utc)}</td>
        <td><code>${esc(String(r.git_sha || "").slice(0, 10))}</code>${r.git_dirty ? " (dirty)" : ""}</td>
        <td>${esc(r.devices.join(", "))}</td><td>${esc(r.ops.join(", "))}</td>
        <td>${esc(Object.entries(r.statuses).map(([k, v]) => v + " " + k).join(", "))}</td>
        <td>${esc(r.timers.join(", "))}</td><td>${r.sm_mhz ? esc(r.sm_mhz.join("–")) : "none read"}</td>
        <td>${r.mem_mhz ? esc(r.mem_mhz.join("–")) : ""}</td><td>${esc(r.throttle.join(", ") || "none")}</td>
        <td>${esc(r.peak_sources.join(", "))}</td><td><code>${esc(r.argv)}</code></td></tr>`;
    }
    h += "</table><h2>Devices</h2>";
    for (const dev of devs) {
      const d = D.devices[dev] || {};
      const pk = d.peaks || {};
      h += `<h3>${esc(dev)}: ${esc(d.name || "")}</h3><p>driver ${esc(d.driver || "?")}, ${esc(d.compute_units || "?")}
        compute units, L2 ${d.l2_bytes ? (d.l2_bytes / 2 ** 20).toFixed(0) + " MiB" : "?"}; versions:
        <code>${esc(JSON.stringify(d.backend_versions || {}))}</code></p><table><tr><th>ceiling</th><th>measured</th>
        <th>how</th><th>theoretical</th><th>source</th></tr>`;
      const keys = uniq(Object.keys(pk.measured || {}).concat(Object.keys(pk.theoretical || {})));
      for (const k of keys) {
        const m = (pk.measured || {})[k], t = (pk.theoretical || {})[k];
        const u = k === "bandwidth" ? [1e9, " GB/s"] : [1e12, " TFLOP/s"];
        h += `<tr><td>${esc(k)}</td><td class="num">${m ? fmt(m.value / u[0], 1) + u[1] : ""}</td><td>${esc(m ? m.how : "")}</td>
          <td class="num">${t ? fmt(t.value / u[0], 1) + u[1] : ""}</td><td>${esc(t ? t.how : "")}</td></tr>`;
      }
      h += `</table><p class="muted">peaks measured ${esc(pk.measured_utc || "never")}</p>`;
    }
    if (D.skipped_files.length) {
      h += "<h2>Skipped run files</h2>" + D.skipped_files.map((s) => `<p><code>${esc(s.file)}</code>: ${esc(s.reason)}</p>`).join("");
    }
    section(h);
  }

  function render() {
    const view = document.getElementById("view");
    for (const div of view.querySelectorAll(".js-plotly-plot")) Plotly.purge(div);
    view.innerHTML = "";
    const hash = decodeURIComponent(location.hash.replace(/^#/, "")) || "overview";
    const [name, arg] = hash.split("/");
    for (const a of document.querySelectorAll("#nav a")) a.classList.toggle("active", a.dataset.view === (name === "op" ? "ops" : name));
    if (name === "op") opView(arg);
    else if (name === "ops") opsIndex();
    else if (name === "roofline") roofline();
    else if (name === "history") historyView();
    else if (name === "runs") runsView();
    else overview();
    document.body.dataset.rendered = hash;
  }

  document.getElementById("generated").textContent =
    `built ${D.generated_utc} from ${D.runs.length} runs, git ${String(D.git.git_sha || "").slice(0, 10)}`;
  buildFilters();
  window.addEventListener("hashchange", render);
  render();
})();
