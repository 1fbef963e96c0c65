# SPDX-License-Identifier: MIT
"""The explorer's one page: plain JavaScript over the JSON API and Plotly (served by the app
from Plotly's Python package, so nothing is fetched from the internet).

``window.ccsim`` holds the page's state for tests and curious users: ``points`` (the last
values received per line and x), ``rows`` (a summary table's rows per line, as received),
``job`` (the current job), ``last`` (its last event) and ``shown`` (the title and the moved
settings of the job whose points are drawn, from the server's answer).

A key with a free range (the plan's ``explore``) has a number input beside its slider: a value
typed there is sent instead of the slider's (the server checks it against the range); moving
the slider again clears it. A figure's x range adds an input that adds an x value; a line's
range is a number input under "line settings". A key the plan gives one value (and the seeds of
a plan of one seed) is shown as text: a slider there could not move.
"""

from ccsim.fonts import CSS_FONT_FAMILY

PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ccsim explore</title>
<!-- A phone lays out a page without this at a desktop's 980 px and shrinks it to its screen:
     the controls and the figure side by side, their text a third of its size, and the narrow
     window's stack below never applied (campaign 61a, issue 32). -->
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<script src="plotly.min.js" charset="utf-8"></script>
<style>
body { font-family: @FONTS@; margin: 0.8rem 1.2rem; color: #222; }
header { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
h1 { font-size: 1.2rem; margin: 0; }
#layout { display: grid; grid-template-columns: 22rem 1fr; gap: 1rem; margin-top: 0.8rem; }
#layout > div { min-width: 0; overflow-x: auto; }
/* A narrow window (a phone, a window beside another) stacks the figure under the controls:
   beside their 22rem it got no width at all, the figure, its progress and cancel gone
   (campaign 49a, issue 32). A long paper or figure name is cut to the window's width. */
@media (max-width: 48rem) { #layout { grid-template-columns: minmax(0, 1fr); } }
header label { max-width: 100%; } header select { max-width: 100%; }
#controls fieldset { border: 1px solid #ddd; margin: 0 0 0.6rem; }
#controls label { display: block; font-size: 0.85rem; margin: 0.2rem 0; }
#controls input[type=range] { width: 100%; }
.value { font-weight: 600; }
#status { font-size: 0.85rem; color: #444; min-height: 1.4rem; }
#plot { min-height: 480px; }
.error { color: #a11; }
#citation { font-size: 0.8rem; color: #555; margin: 0.3rem 0 0; }
input.free { width: 6rem; }
.unit { color: #666; font-size: 0.8rem; }
#table { border-collapse: collapse; font-size: 0.85rem; margin-top: 0.5rem; }
#table th, #table td { border-bottom: 1px solid #ddd; padding: 0.25rem 0.4rem; text-align: right; }
#table th { font-size: 0.75rem; font-weight: 600; vertical-align: bottom; }
#table td:first-child { min-width: 10rem; }
#table th:first-child, #table td:first-child { text-align: left; }
#table caption { text-align: left; font-weight: 600; margin-bottom: 0.4rem; }
#table tr.pending td { color: #999; }
#values { font-size: 0.85rem; margin-top: 0.5rem; }
#values-table { border-collapse: collapse; }
#values-table th, #values-table td { border-bottom: 1px solid #ddd; padding: 0.2rem 0.4rem;
                                     text-align: right; }
#values-table th:first-child, #values-table td:first-child { text-align: left; }
/* Read by a screen reader, not shown: what the job's status says, without its counts. */
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
      white-space: nowrap; }
/* Printed, the page's width is the paper's: the figure under the controls, whole (beside them
   it was cut at the paper's edge; its width is set as printing starts, below), on one page. */
@media print {
  #layout { grid-template-columns: minmax(0, 1fr); }
  #layout > div { overflow: visible; }
  #plot, #table { break-inside: avoid; }
}
</style></head>
<body>
<header><h1>ccsim explore</h1>
<label>paper <select id="paper"></select></label>
<label>figure <select id="figure"></select></label>
<label id="quickbox" hidden><input type="checkbox" id="quick" checked> quick mode</label>
</header>
<p id="citation"></p>
<div id="layout">
<div id="controls"></div>
<div><div id="status" tabindex="-1">
<progress id="prog" value="0" max="1" aria-label="runs done"></progress>
<span id="msg" class="error">this page needs JavaScript: turn it on for this address (or
read the reproductions' figures with <code>ccsim report</code>, a site that shows them without
it)</span> <button id="cancel" disabled>cancel</button>
<span id="said" class="sr" role="status"></span></div>
<div id="plot"></div><table id="table" hidden></table>
<details id="values" hidden><summary>the values drawn, as a table</summary>
<table id="values-table"></table></details></div>
</div>
<script>
"use strict";
const S = window.ccsim = {catalog: [], points: {}, series: {}, rows: {}, job: null,
                          last: null, es: null, timer: null, shown: null, started: 0,
                          pending: "running…", held: null, said: 0, asked: 0};
const $ = (id) => document.getElementById(id);
// The page says it needs JavaScript until its script runs: with JavaScript off (NoScript, Tor's
// safest level, a text browser such as w3m over ssh) it said "loading…" for ever (campaign 33,
// issue 32). Not a <noscript>: a browser that turns scripts off per site parses it as text.
$("msg").textContent = "loading…"; $("msg").className = "";
const show = (v) => String(v).replace(/^"(.*)"$/, "$1");
// Text of the plans (titles, labels, values) as HTML text: a plan stored with results from
// elsewhere is data, and its "<" was read as markup, a label "Qmax <q99>" shown as "Qmax",
// and an <img onerror> in one ran on this page, which may start runs (campaign 22, issue 32).
// Plotly reads its own tags in titles and names, so they get the same treatment.
const esc = (v) => String(v).replace(/[&<>"']/g,
  (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})[c]);

function paper() { return S.catalog.find(p => p.id === $("paper").value); }
function figure() { return paper().figures.find(f => f.id === $("figure").value); }

function fillFigures() {
  const p = paper();
  $("figure").innerHTML = p.figures.map(f =>
    `<option value="${esc(f.id)}">${esc(f.id)}: ${esc(f.title)}</option>`).join("");
  $("quickbox").hidden = !p.has_quick;
  korean($("citation"), p.paper);
  buildControls();
}

// Text put in ``el`` with each run of Hangul in it marked as Korean: under the page's lang="en",
// a screen reader read a paper's Korean title with its English voice, which spells Hangul out
// or skips it (campaign 61a, issue 32).
const HANGUL = "[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]+";
function korean(el, text) {
  el.textContent = "";
  String(text).split(new RegExp(`(${HANGUL}(?:\\s+${HANGUL})*)`)).forEach((part, i) => {
    if (i % 2 === 0) { el.append(part); return; }
    const span = document.createElement("span");
    span.lang = "ko"; span.textContent = part; el.append(span);
  });
}

const ident = (name) => name.replace(/[^a-z0-9]/gi, "_");

// A number input over a free range (min, max, step in the range's unit).
function free(cls, attrs, range, value) {
  return `<input type="number" class="${cls}" ${attrs} min="${esc(range.min)}"
    max="${esc(range.max)}" step="${esc(range.step)}" value="${esc(value)}">
    <span class="unit">${esc(range.unit)}
    (${esc(range.min)} to ${esc(range.max)}${esc(range.unit)})</span>`;
}

// A setting the plan gives one value has nothing to slide (a slider from 0 to 0 cannot move):
// it is shown as text, its value kept in a hidden input that request() reads as a slider's.
// A slider's value is the index of the plan's value: its aria-valuetext is the value itself,
// which a screen reader said as "3" for an MSS of 1000 B, and "4" after an arrow key
// (campaign 61a, issue 32). Its free input is named after the key: a screen reader said
// "or any: (100 to 1500)", of no key.
function slider(name, values, start, range) {
  const i = Math.max(0, values.indexOf(start));
  const id = "p-" + ident(name);
  const input = values.length < 2
    ? `<span class="unit">(the plan's one value)</span>
       <input type="hidden" id="${id}" data-path="${esc(name)}" value="0">`
    : `<input type="range" id="${id}" data-path="${esc(name)}" min="0" max="${values.length - 1}"
        step="1" value="${i}" aria-valuetext="${esc(show(values[i]))}">`;
  return `<label>${esc(name)} = <span class="value" id="${id}-v">${esc(show(values[i]))}</span>
    ${input}</label>` +
    (range ? `<label>or any: ${free("free", `id="${id}-free" data-free="${esc(name)}"
      aria-label="${esc(name)}: any value"`, range, "")}</label>` : "");
}

// A value typed in a free input, with the range's unit ("3.5%", "120s"), or null.
// The server checks it: a value off the range is refused there and its message shown.
function typed(el, range) {
  if (el.value === "") return null;
  return range.unit ? el.value + range.unit : +el.value;
}

function buildControls() {
  const f = figure(), p = paper();
  let h = "";
  const own = f.params.filter(q => q.own), other = f.params.filter(q => !q.own);
  for (const [legend, qs] of [["the figure's settings", own],
                              ["other settings the plan varies", other]]) {
    if (!qs.length) continue;
    h += `<fieldset><legend>${legend}</legend>`;
    for (const q of qs) h += slider(q.path, q.values, defaultOf(q), q.range);
    h += "</fieldset>";
  }
  if (f.line_params.length) {
    h += "<fieldset><legend>line settings</legend>";
    for (const lp of f.line_params) {
      const label = f.lines.find(l => l.id === lp.line).label;
      h += `<label>${esc(label)}: ${esc(lp.path)} ` + free("lineparam",
        `data-line="${esc(lp.line)}" data-lpath="${esc(lp.path)}"`, lp.range,
        String(quick() ? lp.quick_default : lp.default).replace(/[^0-9.eE+-]/g, "")) +
        "</label>";
    }
    h += "</fieldset>";
  }
  h += "<fieldset><legend>lines</legend>" + f.lines.map(l =>
    `<label><input type="checkbox" class="line" value="${esc(l.id)}" checked>
      ${esc(l.label)}</label>`
  ).join("") + "</fieldset>";
  if (f.kind === "points") {
    const quickX = new Set(f.x_quick);
    h += `<fieldset><legend>${esc(f.x_label)} (${esc(f.x_path)})</legend>` +
      f.x_values.map((x, i) =>
      `<label><input type="checkbox" class="x" value="${esc(x)}" ${quickX.has(x) ? "checked" : ""}>
        ${esc(f.x_shown[i])}</label>`).join("") + "<span id='xs-added'></span>";
    if (f.x_range)
      h += `<label>add x: ${free("free", 'id="x-free"', f.x_range, "")}</label>
        <button id="x-add" type="button">add</button>`;
    h += "</fieldset>";
  }
  const top = quick() ? p.quick_seeds : p.seeds;
  h += `<fieldset><legend>seeds</legend><label>seeds 1..<span class="value" id="seeds-v">
    ${Math.min(10, top)}</span>` + (top < 2
      ? `<input type="hidden" id="seeds" value="1">`  // one seed: nothing to slide
      : `<input type="range" id="seeds" min="1" max="${top}" value="${Math.min(10, top)}">`) +
    "</label></fieldset>";
  $("controls").innerHTML = h;
  for (const el of $("controls").querySelectorAll("input")) {
    if (el.id === "x-free") continue;  // waits for its "add" button
    el.addEventListener("input", () => {
      if (el.dataset.path) {
        const q = figure().params.find(q => q.path === el.dataset.path);
        $(el.id + "-v").textContent = show(q.values[+el.value]);
        el.setAttribute("aria-valuetext", show(q.values[+el.value]));
        if ($(el.id + "-free")) $(el.id + "-free").value = "";  // the slider wins again
      }
      if (el.dataset.free) {
        // Emptied (or text a number input cannot hold, which it reads as empty), the slider's
        // value runs again, and is said: the typed value stayed beside the key's name over
        // runs of the slider's (campaign 49a, issue 32).
        const q = figure().params.find(q => q.path === el.dataset.free);
        const v = typed(el, q.range), own = $(el.id.slice(0, -5));
        $(own.id + "-v").textContent = show(v !== null ? v : q.values[+own.value]);
      }
      if (el.id === "seeds") $("seeds-v").textContent = el.value;
      schedule();
    });
  }
  if ($("x-add")) $("x-add").addEventListener("click", () => {
    const v = typed($("x-free"), f.x_range);
    if (v === null) return;
    // An x the figure has a box for already (listed, in the axis's units as the range's, or
    // added before) is that box, checked: a second box for it made unchecking either one do
    // nothing, 5 % still drawn with its listed box unchecked (campaign 49a, issue 32).
    const n = +$("x-free").value;
    const same = [...$("controls").querySelectorAll("input.x")].find((box, i) =>
      i < f.x_values.length ? f.x_shown[i] === n : parseFloat(box.value) === n);
    if (same) {
      if (!same.checked) { same.checked = true; schedule(); }
      return;
    }
    $("xs-added").insertAdjacentHTML("beforeend",
      `<label><input type="checkbox" class="x" value="${esc(v)}" checked> ${esc(v)}</label>`);
    $("xs-added").lastElementChild.querySelector("input").addEventListener("input", schedule);
    schedule();
  });
  // The last job's events are of the controls just replaced: read on for the page's 120 ms
  // wait, a point of fig8 was drawn on fig9's axes under fig9's title until fig9's own came,
  // and a series line the new figure lacks threw (campaign 50a, issue 32). The job itself is
  // cancelled as the next one starts (or by the cancel button meanwhile). A start on its way
  // is overtaken as by a later change: its answer, come within those 120 ms, was taken as the
  // page's job, and its points were drawn on the new figure (campaign 50a, issue 32).
  if (S.es) { S.es.close(); S.es = null; }
  S.started++;
  S.points = {}; S.series = {}; S.rows = {}; S.shown = null;
  $("plot").hidden = f.kind === "table"; $("table").hidden = f.kind !== "table";
  draw();
  schedule();
}

function quick() { return paper().has_quick && $("quick").checked; }
function defaultOf(q) { return quick() ? q.quick_default : q.default; }

function request() {
  const f = figure(), params = {}, line_params = {};
  for (const el of $("controls").querySelectorAll("input[data-path]")) {
    const q = f.params.find(q => q.path === el.dataset.path);
    params[q.path] = q.values[+el.value];
    const typedEl = $(el.id + "-free");
    const v = typedEl ? typed(typedEl, q.range) : null;
    if (v !== null) params[q.path] = v;
  }
  for (const el of $("controls").querySelectorAll("input.lineparam")) {
    const lp = f.line_params.find(p => p.line === el.dataset.line && p.path === el.dataset.lpath);
    const v = typed(el, lp.range);
    if (v !== null) (line_params[lp.line] ||= {})[lp.path] = v;
  }
  const lines = [...$("controls").querySelectorAll("input.line:checked")].map(e => e.value);
  const body = {paper: paper().id, figure: f.id, params, line_params, lines, quick: quick(),
                seeds: +$("seeds").value};
  if (f.kind === "points")
    body.x = [...$("controls").querySelectorAll("input.x:checked")].map(e => e.value);
  return body;
}

function schedule() { clearTimeout(S.timer); S.timer = setTimeout(start, 120); }

async function cancel() {
  if (S.es) { S.es.close(); S.es = null; }
  if (S.job) await fetch(`api/jobs/${S.job}/cancel`, {method: "POST"});
}

// The explorer gone (stopped, its machine asleep) or an answer that is not its JSON: said on
// the page. The rejection went unhandled and the page kept its last words, "done: ..." or
// "running…", whatever was moved (campaign 23, issue 32).
// A browser offline (its network gone: Wi-Fi off, a cable out, airplane mode) fails every
// request at once, the explorer running on: the page asked "is ccsim explore still running?"
// and said nothing of what to do once the network is back (campaign 60c, issue 32). ``cure``
// is that, for the request that failed; ``again``, when given, is done by the page itself as
// the browser is back online: the job or the list of papers asked for again (a change
// made offline waited for another change after the network came back; stop 61).
function unreachable(err, cure, again) {
  if (navigator.onLine === false) {
    S.whenOnline = again || null;
    status(`cannot reach the explorer: this browser is offline (${err.message}); once it is ` +
           `back, ${cure}`, true);
  } else
    status(`cannot reach the explorer (${err.message}): is ccsim explore still running?`, true);
}
window.addEventListener("online", () => {
  const again = S.whenOnline;
  S.whenOnline = null;
  if (again) again();
});

// A start that ends without a job of its own (refused, or no explorer to answer) leaves no
// cancel to click: the last job was cancelled as it began, and a click said "cancelled" over
// the refusal's reason, of nothing (campaign 49a, issue 32).
async function start(note) {
  S.whenOnline = null;  // this start is the page's job now, not the one that failed offline
  try { await startJob(note); } catch (err) {
    unreachable(err, "it runs again by itself", () => start(note));
    S.pending = "not run"; noCancel(); draw();
  }
}

async function startJob(note) {
  // Each start is numbered: a start that a later one overtook while it waited (a change made
  // before its run request was answered) stops there, and the job its late answer names is
  // cancelled. Taken as the page's job, that answer replaced the later change's job: the page
  // drew the earlier setting's runs under the later one's controls (campaign 25, issue 32).
  const mine = ++S.started;
  // The bar is this job's from its start, and the message says the change is on its way: moved
  // only as points ended, the bar showed the last job's, full after a "done", through a new
  // job's first runs (campaign 48a, issue 32); reset only once the last job's cancel was
  // answered, on a slow network (600 ms each way) both said "done: 120 runs" for seconds
  // after each change (campaign 49a).
  $("prog").max = 1; $("prog").value = 0;
  status(note || "starting…");
  heldBack();
  // The last job is one the page no longer wants: a cancel that fails (a proxy's connection
  // reset once) must not stop the next. It stopped it, saying "cannot reach the explorer"
  // while the explorer could be reached (found by the proxy matrix, issue 32); unread, the
  // old job is cancelled by the explorer itself within READER_RETURN_S.
  try { await cancel(); } catch (_) { S.es = null; }
  if (mine !== S.started) return;
  const body = request();
  remember(body);
  S.points = {}; S.series = {}; S.rows = {}; S.last = null; S.shown = null;
  S.pending = "running…";
  const res = await fetch("api/run", {method: "POST", body: JSON.stringify(body),
                                       headers: {"Content-Type": "application/json"}});
  const answer = await res.json();
  if (mine !== S.started) {
    if (res.ok) await fetch(`api/jobs/${answer.job}/cancel`, {method: "POST"});
    return;
  }
  if (!res.ok) {
    // A refused added x goes away again, so the next change does not repeat the refusal: the
    // box of the value the answer names (x_index: its place in the request's x). The last
    // box added was taken, and of two added within the page's 120 ms wait, a refused 25 %
    // then an allowed 3 %, the 3 % went and the 25 % stayed, refused again at every change
    // (campaign 50a, issue 32).
    const refused = Number.isInteger(answer.x_index) && body.x ? body.x[answer.x_index] : null;
    if (refused !== null && $("xs-added"))
      for (const box of $("xs-added").querySelectorAll("input.x"))
        if (box.value === refused) box.parentElement.remove();
    S.pending = "not run"; status(answer.error, true); noCancel(); draw();
    return;
  }
  const job = S.job = answer.job;
  // The title with the settings of this job's runs, and those moved from the plan's (the
  // server's, from the request it accepted): drawn over this job's points only.
  S.shown = {title: answer.title, changed: answer.changed};
  $("cancel").disabled = false;
  status("running…");
  const es = S.es = new EventSource(`api/jobs/${job}/events`);
  heldBack();
  es.onmessage = (m) => {
    if (S.job !== job) { es.close(); return; }
    const e = JSON.parse(m.data);
    S.last = e;
    if (e.type === "point") { (S.points[e.line] ||= {})[e.x] = e; draw(); }
    else if (e.type === "series") { S.series[e.line] = e.traces; draw(); }
    else if (e.type === "row") { S.rows[e.line] = e; draw(); }
    else if (e.type === "start") { $("prog").max = e.total || 1; $("prog").value = 0; }
    else if (e.type === "runs") {
      $("prog").max = e.total; $("prog").value = e.done;
      status(`${e.done} of ${e.total} runs (${e.cached} from the store), ${e.elapsed_s} s`,
             false, true);
    } else if (e.type === "waiting") {
      // The workers are shared: behind another tab's long runs, "running…" was said of a
      // job none of whose runs had started (campaign 49a, issue 32).
      status(`waiting for ${e.jobs} other job${e.jobs === 1 ? "" : "s"}: the workers are ` +
             "shared, this job's runs start when theirs are done…");
    } else if (e.type === "running") status("running…");
    else if (e.type === "progress") {
      status(`seed ${e.seed}: ${e.sim_s.toFixed(1)} of ${e.duration_s.toFixed(0)} simulated s`
             + `, ${e.events.toLocaleString()} events`, false, true);
    } else if (["done", "cancelled", "error"].includes(e.type)) {
      es.close(); S.es = null; noCancel();
      // The lines without their row say what became of them: "running…" under "cancelled"
      // or an error was a table still running to its reader (campaign 48a, issue 32).
      if (e.type === "error" || (e.type === "cancelled" && !e.reason)) {  // (a reason: re-run)
        S.pending = e.type === "cancelled" && !e.stopped ? "cancelled" : "not run"; draw();
      }
      if (e.type === "done") {
        $("prog").max = e.total || 1; $("prog").value = e.total || 1;
        status(`done: ${e.total} runs in ${e.elapsed_s} s (${e.cached} from the store, ` +
               `${e.simulated} simulated)`);
      } else if (e.type === "cancelled" && e.reason) {
        // Cancelled by the explorer, not from this page: its stream was cut for longer than
        // the explorer waits for a reader to come back (a laptop's lid closed, a tunnel or
        // Wi-Fi back after 10 s). The page still wants these runs: it asks again, and the
        // runs finished meanwhile come from the store (campaign 34, issue 32).
        start(`the explorer stopped this job (${e.reason}); running it again…`);
      } else if (e.type === "cancelled" && e.stopped) {
        status("the explorer was stopped before this job ended (Ctrl-C, a restart?): once it " +
               "is back, change a setting to run it again", true);
      } else if (e.type === "cancelled") status(`cancelled after ${e.done} of ${e.total} runs`);
      else status(e.message, true);
    }
  };
  // The stream broke before its last event: the explorer stopped or was killed. The browser
  // retries by itself; a job the explorer answers 404 for (restarted since) ends the stream.
  // Unhandled, the page said "running…" for ever (campaign 23, issue 32).
  let before = null;  // what the page said before the stream was lost, said again when back
  es.onerror = () => {
    if (S.job !== job) { es.close(); return; }
    if (es.readyState === EventSource.CLOSED) {
      S.es = null; noCancel(); S.pending = "not run"; draw();
      status("the explorer no longer has this job (was it restarted?): change a setting " +
             "to run it again", true);
    } else {
      if (before === null) before = [$("msg").textContent, $("msg").className === "error"];
      status("the connection to the explorer was lost; retrying…", true);
    }
  };
  // Back: said "lost; retrying…" until the job's next event, minutes for a job waiting
  // behind another tab's runs, over a stream the browser had back a second later (campaign
  // 50a, issue 32). Events missed meanwhile come next and say their own.
  es.onopen = () => {
    if (S.job === job) notHeld();
    if (S.job === job && before !== null) { status(...before); before = null; }
  };
}

// What the page says is said to a screen reader too (#said, a live region): painted only, a
// job's "running…", "waiting for 2 other jobs", "done" and errors went unheard (campaign 61a,
// issue 32). The counts a job sends as it runs (``count``) are painted only: announced, they
// were a stream of numbers over the reader's other words.
function notHeld() { clearTimeout(S.held); S.held = null; }

function status(text, bad, count) {
  notHeld(); S.said++;
  $("msg").textContent = text; $("msg").className = bad ? "error" : "";
  if (!count) $("said").textContent = text;
}

// No cancel to click: a disabled button lets its focus go to the page's body, so a keyboard's
// focus on cancel as its job ended (or was cancelled with Enter) went to nothing shown, and a
// screen reader said nothing of where it was (campaign 61a, issue 32). It goes to the status,
// which says what became of the job; the next Tab goes on from there.
function noCancel() {
  const had = document.activeElement === $("cancel");
  $("cancel").disabled = true;
  if (had) $("status").focus();
}

// A browser opens at most 6 connections to one site over HTTP/1.1 (Chromium's and Firefox's
// default), and each tab of this explorer whose job runs holds one with its event stream: a
// 7th tab's run request, or its job's stream, waits in the browser until one of their jobs
// ends, and the tab said "starting…" or "running…" for as long, minutes behind long runs
// (campaign 60c, issue 32). Said when nothing else was said within 3 s of asking, and only
// when the other tabs say they hold at least 5 streams: with fewer, the connection limit was
// blamed for an explorer slow to answer, on a loaded machine (stop 60's notice). The tabs are
// asked over a BroadcastChannel, which needs no connection; a browser without one, as before.
function heldBack() {
  notHeld();
  const mine = S.held = setTimeout(async () => {
    const turn = S.said, others = await streamingTabs();
    // An answer came meanwhile: it said its own words, or its stream opened.
    if (turn !== S.said || S.held !== mine) return;
    if (others === null || others >= 5)
      status("no answer from the explorer yet: a browser opens at most 6 connections to one " +
        "site, and each other tab of this explorer with a job running holds one, so this tab " +
        "waits for one of their jobs to end (or for one of those tabs to close)…");
    else
      status("no answer from the explorer yet: it is slow to answer (busy, or its machine " +
        "loaded); still waiting…");
  }, 3000);
}

// The other tabs of this explorer in this browser, over a channel of their own origin: each
// answers an ask with whether it holds an event stream.
const tabs = "BroadcastChannel" in window ? new BroadcastChannel("ccsim-explore") : null;
const tabId = Math.random().toString(36).slice(2);
if (tabs) tabs.onmessage = (m) => {
  const d = m.data || {};
  if (d.ask) tabs.postMessage({reply: d.ask, tab: tabId,
                               streaming: !!S.es && S.es.readyState !== EventSource.CLOSED});
};

// How many other tabs hold an event stream (those that answer within 300 ms); null: unknown.
function streamingTabs() {
  if (!tabs) return Promise.resolve(null);
  return new Promise((resolve) => {
    const ask = tabId + ":" + (++S.asked), seen = new Set();
    const hear = (m) => {
      const d = m.data || {};
      if (d.reply === ask && d.streaming) seen.add(d.tab);
    };
    tabs.addEventListener("message", hear);
    tabs.postMessage({ask});
    setTimeout(() => { tabs.removeEventListener("message", hear); resolve(seen.size); }, 300);
  });
}

// The title over what is drawn: the plan's, with the settings of the job whose points are
// shown filled in, and the settings that job moved from the plan's.
function heading() {
  const f = figure(), shown = S.shown || {title: f.title, changed: []};
  return {title: `${f.id}: ${shown.title}`, changed: shown.changed};
}

const fmt = (v) => v === null || v === undefined ? "n/a" :
  typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toPrecision(4)) : String(v);

function drawTable() {
  const f = figure(), {title, changed} = heading();
  const cols = f.columns;
  let h = `<caption>${esc(title)}${changed.length ? `<br><small>changed: ` +
    `${esc(changed.join(", "))}</small>` : ""}</caption><tr><th>line</th>` +
    cols.map(c => `<th>${esc(c).replaceAll("_", "_<wbr>")}</th>`).join("") +
    "<th>seeds</th></tr>";
  for (const l of f.lines) {
    const r = S.rows[l.id];
    if (!r) {
      if ([...document.querySelectorAll("input.line:checked")].some(e => e.value === l.id))
        h += `<tr class="pending" data-line="${esc(l.id)}"><td>${esc(l.label)}</td>` +
             `<td colspan="${cols.length + 1}">${esc(S.pending)}</td></tr>`;
      continue;
    }
    h += `<tr data-line="${esc(l.id)}"><td>${esc(l.label)}</td>` +
      cols.map(c => {
        // Over several seeds a cell is the mean ± the 95 % half-width, as report.md shows it.
        const half = r.values[c + "_ci95"];
        const ci = typeof half === "number" && isFinite(half)
          ? ` <small class="ci">± ${esc(fmt(half))}</small>` : "";
        return `<td data-col="${esc(c)}">${esc(fmt(r.values[c]))}${ci}</td>`;
      }).join("") +
      `<td>${r.values.n}</td></tr>`;
  }
  $("table").innerHTML = h;
}

// A points figure's values as a table under it (closed, for those who open it): on the figure
// they are read by hovering a point, which needs a mouse, and a screen reader reads nothing
// of a figure's lines: the reader with a keyboard or a screen reader had none of them
// (campaign 61a, issue 32).
function drawValues(f, rows) {
  $("values").hidden = f.kind !== "points";
  if (f.kind !== "points") return;
  $("values-table").innerHTML = `<caption>${esc(heading().title)}</caption><tr><th>line</th>` +
    `<th>${esc(f.x_label)}</th><th>${esc(f.metric)}</th><th>± (95 % CI)</th><th>seeds</th>` +
    "</tr>" + rows.map(([label, p]) => `<tr><td>${esc(label)}</td><td>${esc(fmt(p.x_shown))}` +
      `</td><td>${esc(fmt(p.mean))}</td><td>${esc(fmt(p.ci95))}</td><td>${esc(p.n)}</td></tr>`)
    .join("");
}

function draw() {
  const f = figure(), traces = [], rows = [];
  if (f.kind === "table") { drawTable(); drawValues(f, rows); return; }
  const label = (id) => f.lines.find(l => l.id === id).label;
  if (f.kind === "points") {
    for (const l of f.lines) {
      const pts = Object.values(S.points[l.id] || {}).sort((a, b) => a.x_shown - b.x_shown);
      if (!pts.length) continue;
      for (const p of pts) rows.push([l.label, p]);
      traces.push({name: esc(l.label), mode: "lines+markers", x: pts.map(p => p.x_shown),
        y: pts.map(p => p.mean), customdata: pts.map(p => [p.ci95 ?? 0, p.n]),
        error_y: {type: "data", array: pts.map(p => p.ci95 ?? 0), visible: true},
        hovertemplate: `${esc(l.label)}<br>${esc(f.x_label)} %{x}<br>${esc(f.metric)} %{y:.4g} ± ` +
                       "%{customdata[0]:.3g} (95 % CI, n = %{customdata[1]})<extra></extra>"});
    }
  } else {
    for (const [line, ts] of Object.entries(S.series))
      for (const t of ts)
        traces.push({name: esc(`${label(line)}: ${t.name}`), mode: "lines", x: t.t, y: t.y});
  }
  // Settings moved away from the plan's: named under the title, which states the values of
  // the runs drawn.
  const {title, changed} = heading();
  const sub = changed.length ? `<br><sup>changed: ${esc(changed.join(", "))}</sup>` : "";
  const layout = {title: {text: `${esc(title)}${sub}`}, template: "plotly_white",
    xaxis: {title: {text: esc(f.kind === "points" ? f.x_label : "time (s)")}},
    yaxis: {title: {text: esc(f.kind === "points" ? f.metric : "share or utilization")},
            type: f.kind === "points" ? f.y_scale : "linear"},
    margin: {t: 70, l: 60, r: 20, b: 50}, height: 480};
  // On a touch screen a swipe over the figure, as wide as a phone's screen, drew Plotly's zoom
  // box instead of scrolling the page to the values under it (campaign 61a, issue 32): there
  // the figure is not dragged (its buttons still zoom); a mouse drags to zoom as before.
  if (matchMedia("(pointer: coarse)").matches) layout.dragmode = false;
  // Plotly.js 4's "Share chart..." button sends the figure's data to cloud.plotly.com: off,
  // as on the site (stop 61).
  Plotly.react("plot", traces, layout, {displaylogo: false, responsive: true,
                                        showSendToCloud: false});
  drawValues(f, rows);
}

// Printed, the figure kept the width it has on the screen, wider than the paper's text: it was
// cut at the paper's right edge, its legend and half its points gone (campaign 61a, issue
// 32). It is drawn PRINT_W px wide at most (A4's and Letter's text width at the browser's
// default margins) as printing starts, and at the window's width again once done.
const PRINT_W = 640;
let printed = false;
addEventListener("beforeprint", () => {
  if ($("plot").hidden || !$("plot").data || $("plot").offsetWidth <= PRINT_W) return;
  printed = true;
  Plotly.relayout("plot", {width: PRINT_W});
});
addEventListener("afterprint", () => {
  if (!printed) return;
  printed = false;
  Plotly.relayout("plot", {width: null, autosize: true});
});

$("paper").addEventListener("change", fillFigures);
$("figure").addEventListener("change", buildControls);
$("quick").addEventListener("change", buildControls);
$("cancel").addEventListener("click", async () => {
  // A start waiting for its run request's answer, or for the pause after a change, is
  // overtaken too: its job was started after the click and ran under "cancelled".
  clearTimeout(S.timer); S.started++;
  try { await cancel(); } catch (err) {
    // The page no longer reads the job (its stream is closed; the explorer, if it runs,
    // cancels a job nobody reads): its rows said "running…" and cancel stayed enabled under
    // "cannot reach the explorer", and nothing would change them (campaign 50a, issue 32).
    unreachable(err, "the explorer cancels the job itself, as nobody reads it");
    S.job = null; noCancel(); S.pending = "not run"; draw();
    return;
  }
  S.job = null; noCancel(); status("cancelled");
  S.pending = "cancelled"; draw();
});

// The page's start, under the same faults as a job's requests: plotly.min.js not loaded (a
// connection reset, a proxy's error page, a script cut short), or a catalog that did not come
// as the explorer's JSON. Each threw where nothing caught it and the page said "loading…" for
// ever (campaign 30, issue 32).
async function load() {
  if (typeof Plotly === "undefined") {
    status("the plotting library (plotly.min.js) did not load from the explorer: " +
           "reload the page", true);
    return;
  }
  let c;
  try {
    const res = await fetch("api/papers");
    c = await res.json();
    if (!res.ok || !Array.isArray(c) || !c.length)
      throw new Error(res.ok ? "its list of papers is empty" : `HTTP ${res.status}`);
  } catch (err) { unreachable(err, "the page loads by itself", load); return; }
  S.catalog = c;
  $("paper").innerHTML = c.map(p =>
    `<option value="${esc(p.id)}">${esc(p.id)}: ${esc(p.title)}</option>`).join("");
  const kept = remembered();
  if (kept) $("paper").value = kept.paper;
  fillFigures();
  if (kept) restore(kept);
}

// The settings of the page's last job are kept in the page's address (its #fragment): going
// back to the explorer where the browser kept no copy of the page (no bfcache), or reloading
// it, started from the first paper's defaults, and a setting could not be sent as a link
// (stop 60's notice, issue 32). The fragment is never sent to the explorer.
function remember(body) {
  history.replaceState(history.state, "", "#" + encodeURIComponent(JSON.stringify(body)));
}

// The settings in the address, when they name a paper and figure of this explorer; else null
// (a link from another version of it, or text typed by hand: the defaults, without a word).
function remembered() {
  let kept;
  try { kept = JSON.parse(decodeURIComponent(location.hash.slice(1))); } catch (err) {
    return null;
  }
  const p = kept && S.catalog.find(p => p.id === kept.paper);
  return p && p.figures.some(f => f.id === kept.figure) ? kept : null;
}

// The controls set to ``kept``'s settings (those this figure still has), then its job run.
function restore(kept) {
  $("figure").value = kept.figure;
  if (paper().has_quick) $("quick").checked = !!kept.quick;
  buildControls();
  const f = figure();
  for (const el of $("controls").querySelectorAll("input[data-path]")) {
    const q = f.params.find(q => q.path === el.dataset.path);
    const v = (kept.params || {})[q.path];
    if (v === undefined) continue;
    const i = q.values.findIndex(x => String(x) === String(v));
    if (i >= 0 && el.type === "range") {
      el.value = i; el.dispatchEvent(new Event("input"));
    } else if (i < 0 && $(el.id + "-free")) {
      const typedEl = $(el.id + "-free"), t = String(v), unit = q.range.unit;
      typedEl.value = unit && t.endsWith(unit) ? t.slice(0, -unit.length) : t;
      typedEl.dispatchEvent(new Event("input"));
    }
  }
  for (const el of $("controls").querySelectorAll("input.lineparam")) {
    const v = ((kept.line_params || {})[el.dataset.line] || {})[el.dataset.lpath];
    if (v !== undefined) el.value = String(v).replace(/[^0-9.eE+-]/g, "");
  }
  if (Array.isArray(kept.lines))
    for (const el of $("controls").querySelectorAll("input.line"))
      el.checked = kept.lines.includes(el.value);
  if (f.kind === "points" && Array.isArray(kept.x)) {
    const listed = [...$("controls").querySelectorAll("input.x")];
    for (const el of listed) el.checked = kept.x.includes(el.value);
    for (const x of kept.x.filter(x => !listed.some(el => el.value === x)))
      if (f.x_range && $("x-free")) {
        $("x-free").value = parseFloat(x);
        $("x-add").click();
      }
  }
  const seeds = $("seeds");
  if (kept.seeds >= 1 && seeds.type === "range" && kept.seeds <= +seeds.max) {
    seeds.value = kept.seeds; seeds.dispatchEvent(new Event("input"));
  }
  schedule();
}
load();
</script>
</body></html>
""".replace("@FONTS@", CSS_FONT_FAMILY)  # Hangul drawn with a CJK font (ccsim.fonts)
