// dcops web console: plain JavaScript over the same HTTP API agents use (no build step).
// Text from the server (rationales, ids) is only ever inserted as text nodes, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const BANDS = { low: 18, high: 27, max: 32 };

const S = {
  sessionId: null, task: null, family: null, obs: null, meta: null, tasks: [],
  rewards: [], inletSeries: [], plantSeries: [], history: [], done: false, busy: false, autoplay: false,
  selection: null, baseline: "", decisions: {}, page: 0, replay: null,
};
const PAGE = 12;  // pending requests per page of the cluster table
const COLORS = ["#4cc2ff", "#f778ba", "#a371f7", "#e3b341", "#56d364", "#ff7b72"];

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") el.className = v;
    else if (k === "style") el.style.cssText = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  for (const c of children) el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}
const fmt = (x, d = 1) => (x === null || x === undefined || Number.isNaN(x) ? "–" : Number(x).toFixed(d));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function log(message, isError = false) {
  const li = h("li", { class: isError ? "error" : "" }, message);
  $("log").prepend(li);
  while ($("log").children.length > 80) $("log").lastChild.remove();
}

async function api(method, path, body, extraHeaders) {
  const headers = { Accept: "application/json", ...(extraHeaders || {}) };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (S.sessionId) headers["X-Session-Id"] = S.sessionId;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const payload = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(payload.message || (typeof payload.detail === "string" ? payload.detail : response.statusText));
  return payload;
}

// ------------------------------------------------------------------------------------------ episode flow
async function init() {
  const meta = await api("GET", "/metadata");
  S.tasks = meta.tasks;
  const select = $("task-select");
  const families = {};
  for (const t of meta.tasks) (families[t.family] = families[t.family] || []).push(t);
  for (const [family, tasks] of Object.entries(families)) {
    const group = h("optgroup", { label: family });
    for (const t of tasks) group.appendChild(h("option", { value: t.id }, t.id.split("/")[1].replaceAll("_", " ")));
    select.appendChild(group);
  }
  select.value = meta.default_task;
  $("episode-form").addEventListener("submit", (e) => { e.preventDefault(); guarded(newEpisode); });
  $("step-btn").addEventListener("click", () => guarded(() => play(currentAction())));
  $("baseline-btn").addEventListener("click", () => guarded(baselineStep));
  $("autoplay-btn").addEventListener("click", toggleAutoplay);
  $("episodes-form").addEventListener("submit", (e) => { e.preventDefault(); guarded(listEpisodes); });
  $("replay-restart").addEventListener("click", () => guarded(() => replayTo(0)));
  $("replay-next").addEventListener("click", () => guarded(() => replayTo(S.replay.index + 1)));
  $("replay-play").addEventListener("click", () => guarded(async () => {
    while (S.replay && S.replay.index + 1 < S.replay.steps.length) { replayTo(S.replay.index + 1); await sleep(120); }
  }));
  $("replay-exit").addEventListener("click", () => { S.replay = null; $("workspace").classList.add("hidden");
    $("intro").classList.remove("hidden"); $("stored").classList.remove("hidden"); setButtons(); });
}

// ------------------------------------------------------------------------------------------ stored episodes
function operatorHeaders() {
  return { "X-Operator-Token": $("operator-token").value };
}

async function listEpisodes() {
  const task = $("episodes-task").value.trim();
  const query = new URLSearchParams({ limit: "50", order: "desc" });
  if (task) query.set("task", task);
  let reply;
  try { reply = await api("GET", `/episodes?${query}`, undefined, operatorHeaders()); } catch (err) {
    $("episodes").replaceChildren(h("div", { class: "error late" }, err.message));  // the log is not on this page
    throw err;
  }
  const rows = reply.episodes.map((e) => h("tr", {},
    h("td", {}, e.task), h("td", { class: "num" }, e.seed), h("td", {}, e.status), h("td", { class: "num" }, e.n_steps),
    h("td", { class: "num" }, fmt(e.total_reward, 3)), h("td", {}, new Date(1000 * e.started_at).toISOString().slice(0, 19).replace("T", " ")),
    h("td", {}, h("button", { "data-uid": e.uid, onclick: () => guarded(() => replayEpisode(e)) }, "replay"))));
  $("episodes").replaceChildren(h("table", { class: "episodes-table" },
    h("tr", {}, ["task", "seed", "status", "steps", "return", "started (UTC)", ""].map((c) => h("th", {}, c))),
    rows.length ? rows : h("tr", {}, h("td", { colspan: 7, class: "muted" }, "no stored episode"))));
  log(`${reply.episodes.length} stored episode(s)${reply.next_offset !== null ? " (the 50 newest; filter by task)" : ""}`);
}

async function replayEpisode(e) {
  const steps = [];
  let offset = 0;
  while (offset !== null && steps.length < 5000) {
    const page = await api("GET", `/episodes/${encodeURIComponent(e.uid)}?offset=${offset}&limit=1000`, undefined, operatorHeaders());
    steps.push(...page.steps);
    offset = page.next_offset;
  }
  if (!steps.length || steps[0].observation === null) throw new Error("this episode was stored without observations (DCOPS_STORE_OBS=0): nothing to replay");
  S.autoplay = false; S.sessionId = null;
  S.task = e.task; S.family = e.task.split("/")[0];
  S.replay = { episode: e, steps, index: -1 };
  $("intro").classList.add("hidden"); $("stored").classList.add("hidden");
  $("workspace").classList.remove("hidden");
  $("decision-card").classList.add("hidden"); $("replay-bar").classList.remove("hidden");
  $("replay-title").textContent = `${e.task} · seed ${e.seed} · ${e.status} · ${e.n_steps} steps`;
  log(`replaying stored episode ${e.uid.slice(0, 8)} of ${e.task}`);
  replayTo(0);
}

function replayReply(i) {
  const steps = S.replay.steps, st = steps[i];
  const total = steps.slice(1, i + 1).reduce((a, x) => a + (x.reward || 0), 0);
  return { observation: st.observation, reward: st.reward, done: st.done,
    metadata: { step: st.t, total_reward: total, info: st.info, action: st.action } };
}

function replayTo(target) {
  const r = S.replay;
  if (!r) return;
  target = Math.max(0, Math.min(target, r.steps.length - 1));
  if (target <= r.index) {  // back to the start: every series is rebuilt step by step
    S.rewards = []; S.inletSeries = []; S.plantSeries = []; S.history = []; S.decisions = {}; S.page = 0; r.index = -1;
  }
  while (r.index < target) {
    r.index += 1;
    const reply = replayReply(r.index);
    const next = r.steps[r.index + 1];  // the table shows the decisions the player made in this window
    S.decisions = {};
    for (const d of (next && next.action && next.action.decisions) || []) {
      S.decisions[d.request_id] = { decision: d.decision, defer_to_window: d.defer_to_window ?? reply.observation.window + 1 };
    }
    if (r.index > 0) S.rewards.push(reply.reward);
    render(reply, r.index === 0);
  }
  const action = r.steps[r.index].action;
  $("replay-action").replaceChildren(h("div", { class: "muted" }, `step ${r.index} of ${r.steps.length - 1}: the action that led here`),
    action ? h("pre", { class: "dashboard" }, JSON.stringify(action, null, 1).slice(0, 2000)) : h("div", { class: "muted" }, "(reset)"));
  $("replay-next").disabled = r.index + 1 >= r.steps.length;
}

async function guarded(fn) {
  if (S.busy) return;
  S.busy = true; setButtons();
  try { await fn(); } catch (err) { log(err.message, true); } finally { S.busy = false; setButtons(); }
}

function setButtons() {
  const off = S.busy || !S.sessionId || S.done;
  $("step-btn").disabled = off;
  $("baseline-btn").disabled = off;
  $("autoplay-btn").disabled = !S.sessionId || S.done;
  $("autoplay-btn").textContent = S.autoplay ? "Pause ❚❚" : "Autoplay ▶";
  $("reset-btn").disabled = S.busy;
}

async function newEpisode() {
  S.autoplay = false;
  const task = $("task-select").value;
  const seed = parseInt($("seed").value, 10);
  const body = { task };
  if (Number.isFinite(seed) && seed >= 0) body.seed = seed;
  // A session is reused across episodes; a stale one (expired) is replaced.
  let reply;
  try { reply = await api("POST", "/reset", body); } catch (err) {
    if (!S.sessionId) throw err;
    S.sessionId = null; reply = await api("POST", "/reset", body);
  }
  S.sessionId = reply.session_id;
  S.task = task;
  S.family = task.split("/")[0];
  S.rewards = []; S.inletSeries = []; S.plantSeries = []; S.history = []; S.done = false; S.selection = null;
  S.decisions = {}; S.page = 0; S.replay = null;
  $("replay-bar").classList.add("hidden"); $("decision-card").classList.remove("hidden");
  S.baseline = reply.metadata.baseline || "";
  $("intro").classList.add("hidden"); $("stored").classList.add("hidden");
  $("workspace").classList.remove("hidden");
  $("baseline-name").textContent = S.baseline ? `baseline: ${S.baseline}` : "";
  log(`new episode of ${task} (seed ${reply.metadata.seed}, episode ${reply.metadata.episode_id.slice(0, 8)})`);
  render(reply, true);
}

async function play(action) {
  const reply = await api("POST", "/step", { action });
  S.rewards.push(reply.reward);
  S.decisions = {};
  const info = reply.metadata.info || {};
  let note = info.invalid_reason ? ` — invalid: ${info.invalid_reason}` : "";
  if (info.invalid && info.invalid.count) {
    const kinds = ["undecided", "unknown_ids", "duplicates", "bad_defer", "malformed"]
      .filter((k) => (info.invalid[k] || []).length).map((k) => `${k.replace("_", " ")} ${info.invalid[k].length}`);
    note = ` — ${info.invalid.count} invalid decision(s): ${kinds.join(", ")}`;
  }
  log(`step ${reply.metadata.step}: reward ${fmt(reply.reward, 3)}${note}`, Boolean(note));
  render(reply, false);
  if (reply.done && S.family === "cluster") await showScorecardComparison();
}

// The baseline on the same episode and the fraction of the hindsight bound: asked for once the episode is over.
async function showScorecardComparison() {
  const card = $("view").querySelector("[data-testid=scorecard] .kpis");
  if (!card) return;
  const c = await api("GET", "/scorecard");
  card.appendChild(kpi("Baseline, same episode", fmt(c.baseline_score, 3), h("div", { class: "small muted" },
    `you ${c.score_minus_baseline >= 0 ? "+" : ""}${fmt(c.score_minus_baseline, 3)}`)));
  card.appendChild(kpi("Fraction of bound", fmt(c.fraction_of_bound, 2), h("div", { class: "small muted" },
    "throughput value / hindsight MILP")));
  log(`scorecard: score ${fmt(c.score, 3)}, baseline ${fmt(c.baseline_score, 3)}, fraction of bound ${fmt(c.fraction_of_bound, 2)}`);
}

async function baselineStep() {
  const suggestion = await api("GET", "/suggest");
  applySuggestion(suggestion.action);
  await play(suggestion.action);
}

function toggleAutoplay() {
  S.autoplay = !S.autoplay;
  setButtons();
  if (S.autoplay) guarded(async () => {
    while (S.autoplay && !S.done) { await baselineStep(); await sleep(90); }
    S.autoplay = false;
  });
}

function render(reply, fresh) {
  S.obs = reply.observation; S.meta = reply.metadata; S.done = reply.done;
  $("step-counter").textContent = String(reply.metadata.step);
  const total = S.obs.n_steps || S.obs.horizon || S.obs.n_windows;
  $("step-total").textContent = total ? ` / ${total}` : "";
  $("total-reward").textContent = fmt(reply.metadata.total_reward, 3);
  $("done-chip").classList.toggle("hidden", !reply.done);
  const info = reply.metadata.info || {};
  const score = info.score !== undefined ? info.score : (info.episode || {}).score;
  if (reply.done && !S.replay && !S.replayRewind) {
    log(`episode over: return ${fmt(reply.metadata.total_reward, 3)}${score !== undefined ? `, score ${fmt(score, 3)}` : ""}`);
  }
  const view = $("view");
  view.replaceChildren();
  if (S.family === "cooling") renderCooling(view, fresh);
  else if (S.family === "placement") renderPlacement(view, fresh);
  else if (S.family === "queue") renderQueue(view, fresh);
  else if (S.family === "cluster") renderCluster(view, fresh);
  if (reply.done && S.family === "cluster" && info.episode) view.prepend(clusterScorecard(info.episode));
  renderRewards();
  setButtons();
}

// ------------------------------------------------------------------------------------------ cooling
function tempColor(t) {
  if (t < BANDS.low) return "#58a6ff";
  if (t <= BANDS.high) {
    const f = (t - BANDS.low) / (BANDS.high - BANDS.low);
    return `hsl(${130 - 60 * f}, 60%, ${52 + 4 * f}%)`;
  }
  if (t <= BANDS.max) return `hsl(${38 - 20 * (t - BANDS.high) / (BANDS.max - BANDS.high)}, 85%, 55%)`;
  return "#f85149";
}
function bandName(t) {
  if (t < BANDS.low) return "cold"; if (t <= BANDS.high) return "ok";
  if (t <= BANDS.max) return "> 27 °C"; return "> 32 °C";
}

function renderCooling(view, fresh) {
  $("view-title").textContent = "Data hall — zones, plant, power";
  const o = S.obs, info = S.meta.info || {};
  S.inletSeries.push(o.zones.map((z) => z.inlet_c));
  const trueInlets = info.inlet_c || [];
  view.appendChild(h("div", { class: "legend" },
    h("span", { style: "--c:#58a6ff" }, "< 18 °C"), h("span", { style: "--c:hsl(110,60%,54%)" }, "18–27 °C recommended"),
    h("span", { style: "--c:hsl(30,85%,55%)" }, "27–32 °C allowable"), h("span", { style: "--c:#f85149" }, "> 32 °C")));
  view.appendChild(h("div", { class: "zones", id: "zones", "data-testid": "zones" }, o.zones.map((z, i) =>
    h("div", { class: "zone", "data-testid": "zone", style: `background:${tempColor(z.inlet_c)}` },
      h("div", { class: "band" }, bandName(z.inlet_c)),
      h("div", { class: "name" }, z.id),
      h("div", { class: "meta" }, `priority weight ${z.weight}`),
      h("div", { class: "temp" }, `${fmt(z.inlet_c)} °C`),
      h("div", { class: "meta" }, `inlet (sensor)${trueInlets[i] !== undefined ? ` · true ${fmt(trueInlets[i])} °C` : ""}`),
      h("div", { class: "meta" }, `load ${fmt(100 * z.load_fraction, 0)} % · fan ${fmt(100 * z.fan_speed, 0)} % · supply ${fmt(z.supply_c)} °C`)))));
  const diagnostics = S.meta.diagnostics;  // sent once the episode is over: the true inlets, step by step
  const trueSeries = diagnostics ? diagnostics.steps.map((d) => d.inlet_c) : null;
  view.appendChild(inletChart(o.zones.map((z) => z.id), o.n_steps, trueSeries));
  if (trueSeries) view.appendChild(h("div", { class: "small muted" }, "dashed: true inlets (shown now that the episode is over; sensors may drift)"));
  S.plantSeries.push({ chillers: 100 * o.plant.chillers_available, economiser: 100 * o.plant.economiser_fraction });
  const faults = [];
  S.plantSeries.forEach((r, i) => { if (i > 0 && r.chillers < S.plantSeries[i - 1].chillers) faults.push(i); });
  const timeline = lineChart("chillers available and economiser share, %", o.n_steps + 1,
    [{ name: "chillers available", values: S.plantSeries.map((r) => r.chillers), color: "#4cc2ff" },
      { name: "economiser", values: S.plantSeries.map((r) => r.economiser), color: "#56d364" }],
    [], "plant-timeline");
  view.appendChild(timeline);
  if (faults.length) view.appendChild(h("div", { class: "small late", "data-testid": "fault-markers" },
    `chiller capacity lost at step ${faults.join(", ")}`));

  const p = o.plant;
  const facility = info.facility_kw, it = info.it_kw, cooling = info.cooling_kw;
  const cap = info.power_cap_kw;
  const scale = Math.max(facility || 0, cap || 0, 1) * 1.1;
  view.appendChild(h("div", { class: "kpis" },
    kpi("Facility power", facility === undefined ? "–" : `${fmt(facility, 0)} kW`,
      h("div", { class: "bar", title: "IT (blue) + cooling (amber)" },
        h("div", { style: `width:${100 * (it || 0) / scale}%;background:#58a6ff` }),
        h("div", { style: `width:${100 * (cooling || 0) / scale}%;background:#d29922` }),
        cap ? h("div", { class: "cap", style: `left:${100 * cap / scale}%`, title: `cap ${cap} kW` }) : null),
      h("div", { class: "small muted" }, cap ? `cap ${fmt(cap, 0)} kW` : `IT ${fmt(it, 0)} · cooling ${fmt(cooling, 0)} kW`)),
    kpi("PUE", p.pue > 0 ? fmt(p.pue, 3) : "–"),
    kpi("Carbon intensity", `${fmt(1000 * p.carbon_kg_per_kwh, 0)} g/kWh`),
    kpi("Chillers available", `${fmt(100 * p.chillers_available, 0)} %`),
    kpi("Chilled water", `${fmt(p.chw_supply_c)} °C`),
    kpi("Economiser", `${fmt(100 * p.economiser_fraction, 0)} %`),
    kpi("Outdoor", `${fmt(p.dry_bulb_c)} / ${fmt(p.wet_bulb_c)} °C`, h("div", { class: "small muted" }, "dry / wet bulb")),
    ...("cw_supply_c" in p ? [
      kpi("Condenser water", `${fmt(p.cw_supply_c)} °C`),
      kpi("Chillers on", fmt(p.chillers_on, 0)),
      kpi("Storage tank", p.tank_temp_c ? `${fmt(p.tank_temp_c)} °C` : "none"),
      kpi("Price", `$${fmt(p.price_per_kwh, 2)}/kWh`, h("div", { class: "small muted" }, `in 1 h $${fmt(p.price_1h_per_kwh, 2)}`)),
    ] : []),
    kpi("Local time", info.time ? info.time.replace("T", " ").slice(0, 16) : "–")));
  if (fresh && !S.replay) buildCoolingControls(o);
}

function kpi(label, value, ...extra) {
  return h("div", { class: "kpi" }, h("div", { class: "label" }, label), h("div", { class: "value" }, value), ...extra);
}

function inletChart(names, nSteps, trueSeries) {
  const W = 600, H = 180, pad = 28, lo = 14, hi = 40;
  const x = (i) => pad + (W - pad - 8) * i / Math.max(nSteps, 1);
  const y = (t) => H - 16 - (H - 24) * (Math.min(Math.max(t, lo), hi) - lo) / (hi - lo);
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", "data-testid": "inlet-chart" });
  const band = (a, b, color) => svg.appendChild(s("rect", { x: pad, width: W - pad - 8, y: y(b), height: y(a) - y(b), fill: color }));
  band(BANDS.low, BANDS.high, "rgba(63,185,80,.12)");
  band(BANDS.high, BANDS.max, "rgba(210,153,34,.14)");
  band(BANDS.max, hi, "rgba(248,81,73,.12)");
  for (const t of [18, 27, 32]) {
    svg.appendChild(s("line", { x1: pad, x2: W - 8, y1: y(t), y2: y(t), stroke: "#30363d", "stroke-dasharray": "3 3" }));
    svg.appendChild(s("text", { x: 2, y: y(t) + 3 }, `${t}°`));
  }
  const colors = ["#4cc2ff", "#f778ba", "#a371f7", "#e3b341", "#56d364", "#ff7b72"];
  names.forEach((name, z) => {
    const pts = S.inletSeries.map((row, i) => `${x(i)},${y(row[z])}`).join(" ");
    svg.appendChild(s("polyline", { points: pts, fill: "none", stroke: colors[z % colors.length], "stroke-width": 2 }));
    if (trueSeries) {
      const truth = trueSeries.map((row, i) => `${x(i + 1)},${y(row[z])}`).join(" ");
      svg.appendChild(s("polyline", { points: truth, fill: "none", stroke: colors[z % colors.length], "stroke-width": 1.5,
        "stroke-dasharray": "5 3", class: "true-inlet" }));
    }
    svg.appendChild(s("text", { x: pad + 6 + 80 * z, y: 12, fill: colors[z % colors.length] }, name));
  });
  return svg;
}

function slider(id, label, min, max, step, value, unit) {
  const out = h("span", {}, `${value}${unit}`);
  const input = h("input", { type: "range", id, min, max, step, value, "data-testid": id });
  input.addEventListener("input", () => { out.textContent = `${input.value}${unit}`; });
  input._out = out; input._unit = unit;
  return h("div", { class: "control" }, h("label", { for: id }, label, out), input);
}
function setSlider(id, value) {
  const el = $(id); if (!el) return;
  el.value = value; el._out.textContent = `${Number(el.value)}${el._unit}`;
}

function buildCoolingControls(o) {
  const c = $("controls");
  c.replaceChildren();
  o.zones.forEach((z, i) => c.appendChild(h("div", { class: "control-group" }, h("b", {}, z.id),
    slider(`fan-${i}`, "fan speed", 0.2, 1, 0.01, 0.6, ""),
    slider(`supply-${i}`, "supply air set-point", 15, 27, 0.5, 20, " °C"))));
  const v2 = "cw_supply_c" in o.plant;  // plant v2 (tasks ending _v1): every plant-side control
  c.appendChild(h("div", { class: "control-group" }, h("b", {}, "plant"),
    slider("chw", "chilled-water set-point", 5, v2 ? 20 : 18, 0.5, 12, " °C"),
    h("label", { class: "small" }, h("input", { type: "checkbox", id: "econ", checked: true }), " waterside economiser"),
    ...(v2 ? [
      slider("tower", "cooling-tower fan speed", 0.2, 1, 0.01, 0.6, ""),
      slider("staged", "chillers staged", 0, o.n_chillers, 1, o.n_chillers, ""),
      slider("pump", "chilled-water pump speed", 0.3, 1, 0.01, 0.7, ""),
      slider("tank", "storage tank flow (− discharge, + charge)", -1, 1, 0.05, 0, ""),
    ] : [])));
}

// ------------------------------------------------------------------------------------------ placement
function renderPlacement(view, fresh) {
  $("view-title").textContent = "GPU cluster — lanes and queue";
  const st = S.obs.state, horizon = S.obs.horizon;
  const jobs = [...st.running, ...st.completed];
  const pos = (t) => `${100 * Math.min(t, horizon) / horizon}%`;
  view.appendChild(h("div", { class: "lanes", "data-testid": "lanes" }, st.gpus.map((g) =>
    h("div", { class: "lane" },
      h("div", {}, h("b", {}, g.gpu_id), h("div", { class: "small muted" }, `${g.gpu_type} · ${g.vram_gb} GB · ×${g.speed} · ${g.cost_per_tick}/tick`)),
      h("div", { class: `track ${g.state === "reserved" ? "reserved" : ""}` },
        jobs.filter((j) => j.gpu_id === g.gpu_id).map((j) => h("div", {
          class: "job", title: `${j.job_id} ${j.start}→${j.end}`,
          style: `left:${pos(j.start)};width:calc(${pos(j.end)} - ${pos(j.start)});background:${j.status === "completed" ? "#3fb950" : "#4cc2ff"}`,
        }, j.job_id)),
        h("div", { class: "now", style: `left:${pos(S.obs.tick)}` }))))));

  const late = (j) => j.deadline < S.obs.tick;
  view.appendChild(h("h4", {}, `Queue (tick ${S.obs.tick} of ${horizon})`));
  view.appendChild(h("table", { "data-testid": "queue" },
    h("tr", {}, ["job", "VRAM GB", "work", "deadline", "priority", "arrived"].map((c, i) => h("th", { class: i ? "num" : "" }, c))),
    st.pending.length ? st.pending.map((j) => h("tr", {}, h("td", {}, j.job_id), h("td", { class: "num" }, j.vram_gb),
      h("td", { class: "num" }, j.work), h("td", { class: `num ${late(j) ? "late" : ""}` }, j.deadline),
      h("td", { class: "num" }, j.priority), h("td", { class: "num" }, j.arrival)))
      : h("tr", {}, h("td", { colspan: 6, class: "muted" }, "no job waiting"))));
  const m = st.metrics;
  view.appendChild(h("div", { class: "kpis" }, kpi("Completed", m.completed), kpi("Missed", m.missed),
    kpi("Invalid", m.invalid), kpi("Cost", fmt(m.total_cost, 1)),
    kpi("Allocation", `${fmt(100 * (m.available_gpu_ticks ? m.busy_gpu_ticks / m.available_gpu_ticks : 0), 0)} %`)));
  view.appendChild(h("h4", {}, "Decisions and rationales"));
  view.appendChild(h("ol", { class: "history small" }, st.history.map((r) =>
    h("li", { class: r.valid ? "" : "late" },
      `t${r.tick} ${r.job_id ? `place(${r.job_id}, ${r.gpu_id})` : `${r.action}()`} (${fmt(r.reward, 1)})`,
      r.rationale ? h("span", { class: "muted" }, ` — ${r.rationale}`) : null, r.valid ? null : ` invalid: ${r.reason}`))));
  view.appendChild(h("details", {}, h("summary", { class: "muted" }, "dashboard text (what a language model sees)"),
    h("pre", { class: "dashboard" }, S.obs.dashboard)));
  if (!S.replay) buildPlacementControls(st);
}

function buildPlacementControls(st) {
  const c = $("controls");
  const rationale = $("rationale") ? $("rationale").value : "";
  c.replaceChildren();
  if (!S.selection || !st.feasible.some((p) => p.job_id === S.selection.job_id && p.gpu_id === S.selection.gpu_id)) {
    S.selection = null;
  }
  const choose = (sel) => { S.selection = sel; buildPlacementControls(st); };
  c.appendChild(h("div", { class: "small muted" }, "choose a placement (or defer), add a rationale, then Step"));
  c.appendChild(h("div", { class: "feasible", "data-testid": "feasible" },
    h("button", { class: S.selection ? "" : "primary", onclick: () => choose(null) }, "defer()"),
    st.feasible.map((p) => h("button", {
      class: S.selection && S.selection.job_id === p.job_id && S.selection.gpu_id === p.gpu_id ? "primary" : "",
      onclick: () => choose({ job_id: p.job_id, gpu_id: p.gpu_id }),
    }, `place(${p.job_id}, ${p.gpu_id}) → ends t${p.end}, cost ${fmt(p.cost, 1)}${p.on_time ? "" : " · LATE"}`))));
  c.appendChild(h("div", { class: "control" }, h("label", { for: "rationale" }, "rationale (logged, not scored)"),
    h("textarea", { id: "rationale", rows: 2, style: "width:100%" })));
  $("rationale").value = rationale;
}

// ------------------------------------------------------------------------------------------ queue
function renderQueue(view, fresh) {
  $("view-title").textContent = "Render queue — who runs next";
  const o = S.obs;
  if (S.selection === null || S.selection >= o.waiting.length) S.selection = 0;
  view.appendChild(h("div", { class: "kpis" }, kpi("Time", `${fmt((o.time_s || 0) / 60, 1)} min`),
    kpi("Waiting", o.waiting.length), kpi("Invalid", (S.meta.info || {}).invalid_actions ?? 0)));
  view.appendChild(h("table", { "data-testid": "queue", style: "margin-top:10px" },
    h("tr", {}, ["slot", "job", "processing s", "weight", "due s", "slack s", ""].map((c, i) => h("th", { class: i > 0 && i < 6 ? "num" : "" }, c))),
    o.waiting.map((j) => h("tr", {},
      h("td", {}, h("label", {}, h("input", { type: "radio", name: "slot", checked: S.selection === j.slot, onchange: () => { S.selection = j.slot; } }), ` ${j.slot}`)),
      h("td", { class: "num" }, j.job_index), h("td", { class: "num" }, fmt(j.processing_s, 0)), h("td", { class: "num" }, fmt(j.weight, 0)),
      h("td", { class: "num" }, fmt(j.due_s, 0)), h("td", { class: `num ${j.slack_s < 0 ? "late" : ""}` }, fmt(j.slack_s, 0)),
      h("td", {}, h("button", { onclick: () => guarded(() => play({ slot: j.slot })) }, "run"))))));
  if (!S.replay) $("controls").replaceChildren(h("div", { class: "small muted" }, "pick the job to run next (negative slack: already late)"));
}

// ------------------------------------------------------------------------------------------ cluster
function flagCount(team, v) {
  const t = v.teams && v.teams[team];
  if (!t) return 0;
  return Object.values(t.flags_so_far || {}).reduce((a, b) => a + b, 0);
}

function renderCluster(view, fresh) {
  if (!S.obs.view) {  // an episode reset with observation='arrays' (a learner's): no structured view to draw
    $("view-title").textContent = `Cluster operations — window ${S.obs.window} (windows 0–${S.obs.n_windows - 1})`;
    view.appendChild(h("p", { class: "muted" }, "This episode was played with observation='arrays': its replies " +
      "hold the Gymnasium arrays alone, so there is no structured view to show."));
    return;
  }
  const v = S.obs.view, p = v.plant || {};
  $("view-title").textContent = `Cluster operations — window ${v.window} (windows 0–${v.n_windows - 1})`;
  const played = v.last_window && Object.keys(v.last_window).length > 0;  // before window 0 ends, no reading
  const cap = v.power_cap_kw, facility = played ? p.facility_kw || 0 : 0, scale = Math.max(cap, facility) * 1.1;
  const forecast = v.carbon_forecast_g_per_kwh || [];  // indexed by absolute window
  if (played && !S.replayRewind) {
    S.history.push({ window: v.window - 1, facility: p.facility_kw, cap, carbon: forecast[v.window - 1],
      inlets: (v.zones || []).map((z) => z.inlet_c_reported), terms: (S.meta.info || {}).reward_terms || {} });
  }
  view.appendChild(h("div", { class: "kpis" },
    kpi("Facility power", played ? `${fmt(facility, 0)} kW` : "–",
      h("div", { class: "bar", title: "IT (blue) + cooling (amber) against the cap (red)" },
        played ? h("div", { style: `width:${100 * (p.it_kw || 0) / scale}%;background:#58a6ff` }) : null,
        played ? h("div", { style: `width:${100 * (p.cooling_kw || 0) / scale}%;background:#d29922` }) : null,
        h("div", { class: "cap", style: `left:${100 * cap / scale}%` })),
      h("div", { class: "small muted" }, played ? `at the end of window ${v.window - 1} · cap ${fmt(cap, 0)} kW`
        : `no window played yet · cap ${fmt(cap, 0)} kW · headroom ${fmt(p.headroom_kw, 0)} kW`)),
    kpi("PUE", played && p.pue > 0 ? fmt(p.pue, 3) : "–", played ? null : h("div", { class: "small muted" },
      `planning ${fmt(p.planning_pue, 3)}`)),
    kpi("Carbon now", `${fmt(forecast[v.window], 0)} g/kWh`, h("div", { class: "small muted" },
      `next: ${forecast.slice(v.window + 1, v.window + 4).map((c) => fmt(c, 0)).join(", ") || "–"}`)),
    kpi("Chillers", `${fmt(p.chillers_available, 0)} up`, h("div", { class: "small muted" }, `${fmt(p.chiller_capacity_kw, 0)} kW capacity`)),
    kpi("Jobs", `${(v.running || []).length} running`, h("div", { class: "small muted" }, `${(v.queued || []).length} queued`)),
    kpi("Local time", (v.time || "").replace("T", " ").slice(0, 16))));
  view.appendChild(h("div", { class: "zones", style: "margin-top:10px" }, (v.zones || []).map((z) =>
    h("div", { class: "zone", "data-testid": "zone", style: `background:${tempColor(z.inlet_c_reported)}` },
      h("div", { class: "band" }, bandName(z.inlet_c_reported)), h("div", { class: "name" }, z.name),
      h("div", { class: "temp" }, `${fmt(z.inlet_c_reported)} °C`),
      h("div", { class: "meta" }, `${z.gpus_free}/${z.gpus_total} ${z.gpu_type} free · ${fmt(z.job_kw_free, 0)} kW free`)))));
  view.appendChild(pendingTable(v));
  if ((v.flags || []).length) {
    view.appendChild(h("h4", {}, "Oversight flags raised last window"));
    view.appendChild(h("ul", { class: "small" }, v.flags.map((f) =>
      h("li", {}, `${f.team}: ${f.kind} (severity ${typeof f.severity === "number" ? fmt(f.severity, 2) : f.severity}, confidence ${fmt(f.confidence, 2)})`))));
  }
  view.appendChild(jobsTable("Running jobs", v.running || []));
  view.appendChild(jobsTable("Queued jobs (admitted, waiting for capacity)", v.queued || []));
  view.appendChild(clusterCharts(v));
  if (!S.replay) {
    $("controls").replaceChildren(h("div", { class: "small muted" },
      "decide every pending request (ACCEPT / REJECT / DEFER to a window; every page of the table), then Step"));
  }
}

function defaultDecision(r, v) {
  return { decision: r.fits_now ? "ACCEPT" : (v.window + 1 < v.n_windows ? "DEFER" : "REJECT"),
    defer_to_window: Math.min(v.window + 1, v.n_windows - 1) };
}

function pendingTable(v) {
  const pending = v.pending || [];
  const pages = Math.max(1, Math.ceil(pending.length / PAGE));
  S.page = Math.min(S.page, pages - 1);
  const shown = pending.slice(S.page * PAGE, (S.page + 1) * PAGE);
  const rows = shown.map((r) => {
    const d = S.decisions[r.request_id] || (S.decisions[r.request_id] = defaultDecision(r, v));
    const flags = flagCount(r.team, v);
    const select = h("select", { "data-request": r.request_id, class: "decision", disabled: Boolean(S.replay) },
      ["ACCEPT", "REJECT", "DEFER"].map((x) => h("option", { value: x }, x)));
    select.value = d.decision;
    select.addEventListener("change", () => { d.decision = select.value; });
    const to = h("input", { type: "number", class: "defer-to", "data-request": r.request_id, min: v.window + 1,
      max: v.n_windows - 1, value: d.defer_to_window, style: "width:56px", disabled: Boolean(S.replay) });
    to.addEventListener("change", () => { d.defer_to_window = Number(to.value); });
    return h("tr", {},
      h("td", {}, r.request_id), h("td", {}, r.team, flags ? h("span", { class: "late", title: "oversight flags so far" }, ` ⚑${flags}`) : null),
      h("td", { title: r.description }, r.job_type), h("td", { class: "num" }, fmt(r.kw, 0)), h("td", { class: "num" }, fmt(r.duration_h, 1)),
      h("td", { class: "num" }, `${r.gpus}×${r.gpu_type}`), h("td", {}, r.priority), h("td", { class: "num" }, r.deadline_window),
      h("td", {}, r.carbon_flexible ? "yes" : "no"), h("td", {}, r.fits_now ? "✓" : "–"), h("td", {}, select, " ", to));
  });
  const pager = pages > 1 ? h("div", { class: "pager", "data-testid": "pager" },
    h("button", { disabled: S.page === 0, onclick: () => { S.page -= 1; rerender(); } }, "◀"),
    h("span", { class: "small muted" }, ` page ${S.page + 1} of ${pages} `),
    h("button", { disabled: S.page >= pages - 1, onclick: () => { S.page += 1; rerender(); } }, "▶")) : null;
  return h("div", {},
    h("h4", {}, `Pending requests (${pending.length}) — stated fields; flags are per team so far`),
    h("table", { "data-testid": "requests" },
      h("tr", {}, ["id", "team", "job", "kW", "h", "GPUs", "priority", "deadline window", "carbon-flex", "fits now", "decision (→ window)"].map((c) => h("th", {}, c))),
      rows.length ? rows : h("tr", {}, h("td", { colspan: 11, class: "muted" }, "no pending request"))),
    pager);
}

function rerender() {
  S.replayRewind = true;  // a re-render of the same window adds nothing to the history
  try { render({ observation: S.obs, metadata: S.meta, done: S.done, reward: null }, false); } finally { S.replayRewind = false; }
}

function jobsTable(title, jobs) {
  if (!jobs.length) return h("div", { class: "small muted", style: "margin-top:8px" }, `${title}: none`);
  const keys = Object.keys(jobs[0]).filter((k) => typeof jobs[0][k] !== "object").slice(0, 8);
  return h("details", { style: "margin-top:8px" }, h("summary", {}, `${title} (${jobs.length})`),
    h("table", { "data-testid": title.startsWith("Running") ? "running" : "queued" },
      h("tr", {}, keys.map((k) => h("th", {}, k.replaceAll("_", " ")))),
      jobs.map((j) => h("tr", {}, keys.map((k) => h("td", {}, typeof j[k] === "number" ? fmt(j[k], 1) : String(j[k])))))));
}

// A line chart over the episode: series of {name, values, color, dash}, horizontal lines {value, label, color}.
function lineChart(title, nX, series, hlines, testid) {
  const W = 600, H = 150, pad = 34;
  const all = series.flatMap((x) => x.values).concat(hlines.map((l) => l.value)).filter((v) => Number.isFinite(v));
  let lo = Math.min(...all), hi = Math.max(...all);
  if (!all.length) { lo = 0; hi = 1; }
  if (hi - lo < 1e-9) { hi += 1; lo -= 1; }
  const m = 0.08 * (hi - lo); lo -= m; hi += m;
  const x = (i) => pad + (W - pad - 8) * (nX > 1 ? i / (nX - 1) : 0.5);
  const y = (v) => H - 14 - (H - 26) * (v - lo) / (hi - lo);
  const svg = s("svg", { class: "chart small-chart", viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", "data-testid": testid });
  svg.appendChild(s("text", { x: pad, y: 11 }, title));
  svg.appendChild(s("text", { x: 2, y: y(hi - m) + 3 }, fmt(hi - m, 0)));
  svg.appendChild(s("text", { x: 2, y: y(lo + m) + 3 }, fmt(lo + m, 0)));
  for (const l of hlines) {
    svg.appendChild(s("line", { x1: pad, x2: W - 8, y1: y(l.value), y2: y(l.value), stroke: l.color, "stroke-dasharray": "4 3" }));
    svg.appendChild(s("text", { x: W - 70, y: y(l.value) - 3, fill: l.color }, l.label));
  }
  series.forEach((sr, k) => {
    const pts = sr.values.map((v, i) => (Number.isFinite(v) ? `${x(i)},${y(v)}` : null)).filter(Boolean).join(" ");
    const color = sr.color || COLORS[k % COLORS.length];
    svg.appendChild(s("polyline", { points: pts, fill: "none", stroke: color, "stroke-width": 2,
      "stroke-dasharray": sr.dash ? "5 3" : "none", class: "series" }));
    sr.values.forEach((v, i) => { if (Number.isFinite(v)) svg.appendChild(s("circle", { cx: x(i), cy: y(v), r: 2.5, fill: color })); });
    svg.appendChild(s("text", { x: pad + 6 * title.length + 16 + 95 * k, y: 11, fill: color }, sr.name));
  });
  return svg;
}

function clusterCharts(v) {
  const hist = S.history, n = v.n_windows;
  const wrap = h("div", { class: "charts", "data-testid": "cluster-charts" }, h("h4", {}, "Over the episode (per window played)"));
  if (!hist.length) { wrap.appendChild(h("div", { class: "small muted" }, "charts appear once a window has been played")); return wrap; }
  wrap.appendChild(lineChart("facility power, kW", n, [{ name: "facility", values: hist.map((r) => r.facility) }],
    [{ value: v.power_cap_kw, label: "cap", color: "#f85149" }], "chart-power"));
  const names = (v.zones || []).map((z) => z.name);
  wrap.appendChild(lineChart("zone inlets (reported), °C", n,
    names.map((name, z) => ({ name, values: hist.map((r) => r.inlets[z]) })),
    [{ value: 27, label: "27 °C", color: "#d29922" }], "chart-inlets"));
  wrap.appendChild(lineChart("grid carbon, g/kWh", n, [{ name: "intensity", values: hist.map((r) => r.carbon), color: "#56d364" }], [], "chart-carbon"));
  const terms = ["throughput", "thermal", "carbon", "reward"];
  wrap.appendChild(lineChart("reward terms", n, terms.map((t) => ({ name: t, values: hist.map((r) => r.terms[t]) })),
    [{ value: 0, label: "0", color: "#30363d" }], "chart-terms"));
  return wrap;
}

function clusterScorecard(e) {
  const o = e.outcomes || {};
  return h("div", { class: "scorecard card", "data-testid": "scorecard" },
    h("h4", {}, "Episode over — scorecard"),
    h("div", { class: "kpis" },
      kpi("Score", fmt(e.score, 3), h("div", { class: "small muted" }, "mean window reward")),
      kpi("On time", o.on_time ?? "–"), kpi("Missed", o.missed ?? "–"), kpi("Rejected", o.rejected ?? "–"),
      kpi("Unfinished", o.unfinished ?? "–"), kpi("Incident windows", e.incident_windows ?? "–"),
      kpi("Invalid entries", e.invalid_entries ?? "–"), kpi("Facility energy", `${fmt(e.facility_kwh, 0)} kWh`)),
    e.team_kinds ? h("div", { class: "small muted", style: "margin-top:8px" }, "revealed now that the episode is over — team kinds: ",
      Object.entries(e.team_kinds).map(([t, k]) => `${t} ${k}`).join(" · ")) : null);
}

// ------------------------------------------------------------------------------------------ actions
function currentAction() {
  if (S.family === "cooling") {
    const n = S.obs.zones.length, range = [...Array(n).keys()];
    return {
      fan_speed: range.map((i) => Number($(`fan-${i}`).value)),
      supply_setpoint_c: range.map((i) => Number($(`supply-${i}`).value)),
      chw_setpoint_c: Number($("chw").value),
      economiser_on: $("econ").checked,
      ...($("tower") ? {
        tower_fan_speed: Number($("tower").value), chillers_staged: Number($("staged").value),
        chw_pump_speed: Number($("pump").value), tank_flow: Number($("tank").value),
      } : {}),
    };
  }
  if (S.family === "placement") {
    const rationale = $("rationale") ? $("rationale").value : "";
    return S.selection ? { type: "place", ...S.selection, rationale } : { type: "defer", rationale };
  }
  if (S.family === "queue") return { slot: S.selection || 0 };
  if (S.family === "cluster") {
    const v = S.obs.view;
    return { decisions: (v.pending || []).map((r) => {
      const d = S.decisions[r.request_id] || defaultDecision(r, v);
      const out = { request_id: r.request_id, decision: d.decision };
      if (d.decision === "DEFER") out.defer_to_window = Number(d.defer_to_window);
      return out;
    }) };
  }
  throw new Error(`no controls for ${S.family}`);
}

function applySuggestion(action) {
  if (S.family === "cooling") {
    action.fan_speed.forEach((v, i) => setSlider(`fan-${i}`, v.toFixed(2)));
    action.supply_setpoint_c.forEach((v, i) => setSlider(`supply-${i}`, v));
    setSlider("chw", action.chw_setpoint_c);
    $("econ").checked = action.economiser_on;
    if (action.tower_fan_speed !== undefined) {
      setSlider("tower", action.tower_fan_speed.toFixed(2));
      setSlider("staged", Math.round(action.chillers_staged));
      setSlider("pump", action.chw_pump_speed.toFixed(2));
      setSlider("tank", action.tank_flow.toFixed(2));
    }
  } else if (S.family === "cluster") {
    for (const d of action.decisions || []) {
      const mine = S.decisions[d.request_id] || (S.decisions[d.request_id] = {});
      mine.decision = d.decision;
      if (d.defer_to_window !== undefined && d.defer_to_window !== null) mine.defer_to_window = d.defer_to_window;
    }
  } else if (S.family === "placement" && $("rationale")) {
    $("rationale").value = action.rationale || "";
  }
}

// ------------------------------------------------------------------------------------------ rewards
function renderRewards() {
  const svg = $("reward-chart");
  svg.replaceChildren();
  const W = 600, H = 140, r = S.rewards;
  const total = S.obs.n_steps || S.obs.horizon || S.obs.n_windows || Math.max(r.length, 10);
  const maxAbs = Math.max(1e-9, ...r.map((v) => Math.abs(v || 0)));
  const zero = r.some((v) => v > 0) && r.some((v) => v < 0) ? H / 2 : (r.some((v) => v > 0) ? H - 12 : 12);
  const span = r.some((v) => v > 0) && r.some((v) => v < 0) ? H / 2 - 12 : H - 24;
  const bw = (W - 10) / Math.max(total, r.length);
  svg.appendChild(s("line", { x1: 0, x2: W, y1: zero, y2: zero, stroke: "#30363d" }));
  r.forEach((v, i) => {
    const hgt = span * Math.abs(v || 0) / maxAbs;
    svg.appendChild(s("rect", {
      class: "reward-bar", x: 5 + i * bw, width: Math.max(bw - 1, 1), y: v >= 0 ? zero - hgt : zero, height: Math.max(hgt, 0.5),
      fill: v >= 0 ? "#3fb950" : "#f85149",
    }, s("title", {}, `step ${i + 1}: ${fmt(v, 4)}`)));
  });
  $("reward-note").textContent = r.length ? `last ${fmt(r[r.length - 1], 3)} · min ${fmt(Math.min(...r), 3)} · max ${fmt(Math.max(...r), 3)}` : "";
}

init().catch((err) => log(`cannot load /metadata: ${err.message}`, true));
