# SPDX-License-Identifier: MIT
"""The explorer's one page: plain JavaScript over the JSON API and Plotly (served by the app
from Plotly's Python package, so nothing is fetched from the internet).

``window.ccsim`` holds the page's state for tests and curious users: ``points`` (the last
values received per line and x), ``job`` (the current job) and ``last`` (its last event).
"""

PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ccsim explore</title>
<link rel="icon" href="data:,">
<script src="/plotly.min.js" charset="utf-8"></script>
<style>
body { font-family: system-ui, sans-serif; margin: 0.8rem 1.2rem; color: #222; }
header { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
h1 { font-size: 1.2rem; margin: 0; }
#layout { display: grid; grid-template-columns: 22rem 1fr; gap: 1rem; margin-top: 0.8rem; }
#controls fieldset { border: 1px solid #ddd; margin: 0 0 0.6rem; }
#controls label { display: block; font-size: 0.85rem; margin: 0.2rem 0; }
#controls input[type=range] { width: 100%; }
.value { font-weight: 600; }
#status { font-size: 0.85rem; color: #444; min-height: 1.4rem; }
#plot { min-height: 480px; }
.error { color: #a11; }
</style></head>
<body>
<header><h1>ccsim explore</h1>
<label>paper <select id="paper"></select></label>
<label>figure <select id="figure"></select></label>
<label id="quickbox" hidden><input type="checkbox" id="quick" checked> quick mode</label>
</header>
<div id="layout">
<div id="controls"></div>
<div><div id="status"><progress id="prog" value="0" max="1"></progress>
<span id="msg">loading…</span> <button id="cancel" disabled>cancel</button></div>
<div id="plot"></div></div>
</div>
<script>
"use strict";
const S = window.ccsim = {catalog: [], points: {}, series: {}, job: null, last: null,
                          es: null, timer: null};
const $ = (id) => document.getElementById(id);
const show = (v) => String(v).replace(/^"(.*)"$/, "$1");

function paper() { return S.catalog.find(p => p.id === $("paper").value); }
function figure() { return paper().figures.find(f => f.id === $("figure").value); }

function fillFigures() {
  const p = paper();
  $("figure").innerHTML = p.figures.map(f =>
    `<option value="${f.id}">${f.id}: ${f.title}</option>`).join("");
  $("quickbox").hidden = !p.has_quick;
  buildControls();
}

function slider(name, values, start, onchange) {
  const i = Math.max(0, values.indexOf(start));
  const id = "p-" + name.replace(/[^a-z0-9]/gi, "_");
  return `<label>${name} = <span class="value" id="${id}-v">${show(values[i])}</span>
    <input type="range" id="${id}" data-path="${name}" min="0" max="${values.length - 1}"
      step="1" value="${i}" ${values.length < 2 ? "disabled" : ""}></label>`;
}

function buildControls() {
  const f = figure(), p = paper();
  let h = "";
  const own = f.params.filter(q => q.own), other = f.params.filter(q => !q.own);
  for (const [legend, qs] of [["the figure's settings", own],
                              ["other settings the plan varies", other]]) {
    if (!qs.length) continue;
    h += `<fieldset><legend>${legend}</legend>`;
    for (const q of qs) h += slider(q.path, q.values, defaultOf(q));
    h += "</fieldset>";
  }
  h += "<fieldset><legend>lines</legend>" + f.lines.map(l =>
    `<label><input type="checkbox" class="line" value="${l.id}" checked> ${l.label}</label>`
  ).join("") + "</fieldset>";
  if (f.kind === "points") {
    const quickX = new Set(f.x_quick);
    h += `<fieldset><legend>${f.x_label} (${f.x_path})</legend>` + f.x_values.map((x, i) =>
      `<label><input type="checkbox" class="x" value='${x}' ${quickX.has(x) ? "checked" : ""}>
        ${f.x_shown[i]}</label>`).join("") + "</fieldset>";
  }
  const top = quick() ? p.quick_seeds : p.seeds;
  h += `<fieldset><legend>seeds</legend><label>seeds 1..<span class="value" id="seeds-v">
    ${Math.min(10, top)}</span><input type="range" id="seeds" min="1" max="${top}"
    value="${Math.min(10, top)}" ${top < 2 ? "disabled" : ""}></label></fieldset>`;
  $("controls").innerHTML = h;
  for (const el of $("controls").querySelectorAll("input")) {
    el.addEventListener("input", () => {
      if (el.dataset.path) {
        const q = figure().params.find(q => q.path === el.dataset.path);
        $(el.id + "-v").textContent = show(q.values[+el.value]);
      }
      if (el.id === "seeds") $("seeds-v").textContent = el.value;
      schedule();
    });
  }
  S.points = {}; S.series = {};
  draw();
  schedule();
}

function quick() { return paper().has_quick && $("quick").checked; }
function defaultOf(q) { return quick() ? q.quick_default : q.default; }

function request() {
  const f = figure(), params = {};
  for (const el of $("controls").querySelectorAll("input[data-path]")) {
    const q = f.params.find(q => q.path === el.dataset.path);
    params[q.path] = q.values[+el.value];
  }
  const lines = [...$("controls").querySelectorAll("input.line:checked")].map(e => e.value);
  const body = {paper: paper().id, figure: f.id, params, lines, quick: quick(),
                seeds: +$("seeds").value};
  if (f.kind === "points")
    body.x = [...$("controls").querySelectorAll("input.x:checked")].map(e => e.value);
  return body;
}

function schedule() { clearTimeout(S.timer); S.timer = setTimeout(start, 120); }

async function cancel() {
  if (S.es) { S.es.close(); S.es = null; }
  if (S.job) await fetch(`/api/jobs/${S.job}/cancel`, {method: "POST"});
}

async function start() {
  await cancel();
  const body = request();
  S.points = {}; S.series = {}; S.last = null;
  const res = await fetch("/api/run", {method: "POST", body: JSON.stringify(body),
                                       headers: {"Content-Type": "application/json"}});
  const answer = await res.json();
  if (!res.ok) { status(answer.error, true); return; }
  const job = S.job = answer.job;
  $("cancel").disabled = false;
  status("running…");
  const es = S.es = new EventSource(`/api/jobs/${job}/events`);
  es.onmessage = (m) => {
    if (S.job !== job) { es.close(); return; }
    const e = JSON.parse(m.data);
    S.last = e;
    if (e.type === "point") { (S.points[e.line] ||= {})[e.x] = e; draw(); }
    else if (e.type === "series") { S.series[e.line] = e.traces; draw(); }
    else if (e.type === "runs") {
      $("prog").max = e.total; $("prog").value = e.done;
      status(`${e.done} of ${e.total} runs (${e.cached} from the store), ${e.elapsed_s} s`);
    } else if (e.type === "progress") {
      status(`seed ${e.seed}: ${e.sim_s.toFixed(1)} of ${e.duration_s.toFixed(0)} simulated s`
             + `, ${e.events.toLocaleString()} events`);
    } else if (["done", "cancelled", "error"].includes(e.type)) {
      es.close(); S.es = null; $("cancel").disabled = true;
      if (e.type === "done") {
        $("prog").max = e.total || 1; $("prog").value = e.total || 1;
        status(`done: ${e.total} runs in ${e.elapsed_s} s (${e.cached} from the store, ` +
               `${e.simulated} simulated)`);
      } else if (e.type === "cancelled") status(`cancelled after ${e.done} of ${e.total} runs`);
      else status(e.message, true);
    }
  };
}

function status(text, bad) { $("msg").textContent = text; $("msg").className = bad ? "error" : ""; }

function draw() {
  const f = figure(), traces = [];
  const label = (id) => f.lines.find(l => l.id === id).label;
  if (f.kind === "points") {
    for (const l of f.lines) {
      const pts = Object.values(S.points[l.id] || {}).sort((a, b) => a.x_shown - b.x_shown);
      if (!pts.length) continue;
      traces.push({name: l.label, mode: "lines+markers", x: pts.map(p => p.x_shown),
        y: pts.map(p => p.mean), customdata: pts.map(p => [p.ci95 ?? 0, p.n]),
        error_y: {type: "data", array: pts.map(p => p.ci95 ?? 0), visible: true},
        hovertemplate: `${l.label}<br>${f.x_label} %{x}<br>${f.metric} %{y:.4g} ± ` +
                       "%{customdata[0]:.3g} (95 % CI, n = %{customdata[1]})<extra></extra>"});
    }
  } else {
    for (const [line, ts] of Object.entries(S.series))
      for (const t of ts)
        traces.push({name: `${label(line)}: ${t.name}`, mode: "lines", x: t.t, y: t.y});
  }
  // Settings moved away from the plan's: named under the title, which states the plan's.
  const changed = f.params.filter(q => {
    const el = document.querySelector(`input[data-path='${q.path}']`);
    return el && q.values[+el.value] !== defaultOf(q);
  }).map(q => `${q.path} = ${show(q.values[+document.querySelector(
    `input[data-path='${q.path}']`).value])}`);
  const sub = changed.length ? `<br><sup>changed: ${changed.join(", ")}</sup>` : "";
  const layout = {title: {text: `${f.id}: ${f.title}${sub}`}, template: "plotly_white",
    xaxis: {title: {text: f.kind === "points" ? f.x_label : "time (s)"}},
    yaxis: {title: {text: f.kind === "points" ? f.metric : "share or utilization"}},
    margin: {t: 70, l: 60, r: 20, b: 50}, height: 480};
  Plotly.react("plot", traces, layout, {displaylogo: false, responsive: true});
}

$("paper").addEventListener("change", fillFigures);
$("figure").addEventListener("change", buildControls);
$("quick").addEventListener("change", buildControls);
$("cancel").addEventListener("click", async () => { await cancel(); S.job = null;
  $("cancel").disabled = true; status("cancelled"); });

fetch("/api/papers").then(r => r.json()).then(c => {
  S.catalog = c;
  $("paper").innerHTML = c.map(p => `<option value="${p.id}">${p.id}: ${p.title}</option>`)
    .join("");
  fillFigures();
});
</script>
</body></html>
"""
