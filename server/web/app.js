// dcops web console: plain JavaScript over the same HTTP API agents use (no build step).
// Text from the server (rationales, ids) is only ever inserted as text nodes, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const BANDS = { low: 18, high: 27, max: 32 };

const S = {
  sessionId: null, task: null, family: null, obs: null, meta: null, tasks: [],
  rewards: [], inletSeries: [], done: false, busy: false, autoplay: false,
  selection: null, baseline: "",
};

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

async function api(method, path, body) {
  const headers = { Accept: "application/json" };
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
  S.rewards = []; S.inletSeries = []; S.done = false; S.selection = null;
  S.baseline = reply.metadata.baseline || "";
  $("intro").classList.add("hidden");
  $("workspace").classList.remove("hidden");
  $("baseline-name").textContent = S.baseline ? `baseline: ${S.baseline}` : "";
  log(`new episode of ${task} (seed ${reply.metadata.seed}, episode ${reply.metadata.episode_id.slice(0, 8)})`);
  render(reply, true);
}

async function play(action) {
  const reply = await api("POST", "/step", { action });
  S.rewards.push(reply.reward);
  const note = reply.metadata.info && reply.metadata.info.invalid_reason ? ` — invalid: ${reply.metadata.info.invalid_reason}` : "";
  log(`step ${reply.metadata.step}: reward ${fmt(reply.reward, 3)}${note}`, Boolean(note));
  render(reply, false);
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
  if (reply.done) {
    const score = reply.metadata.info && reply.metadata.info.score;
    log(`episode over: return ${fmt(reply.metadata.total_reward, 3)}${score !== undefined ? `, score ${fmt(score, 3)}` : ""}`);
  }
  const view = $("view");
  view.replaceChildren();
  if (S.family === "cooling") renderCooling(view, fresh);
  else if (S.family === "placement") renderPlacement(view, fresh);
  else if (S.family === "queue") renderQueue(view, fresh);
  else if (S.family === "cluster") renderCluster(view, fresh);
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
  view.appendChild(inletChart(o.zones.map((z) => z.id), o.n_steps));

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
  if (fresh) buildCoolingControls(o);
}

function kpi(label, value, ...extra) {
  return h("div", { class: "kpi" }, h("div", { class: "label" }, label), h("div", { class: "value" }, value), ...extra);
}

function inletChart(names, nSteps) {
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
  buildPlacementControls(st);
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
  $("controls").replaceChildren(h("div", { class: "small muted" }, "pick the job to run next (negative slack: already late)"));
}

// ------------------------------------------------------------------------------------------ cluster
function flagCount(team, v) {
  const t = v.teams && v.teams[team];
  if (!t) return 0;
  return Object.values(t.flags_so_far || {}).reduce((a, b) => a + b, 0);
}

function renderCluster(view, fresh) {
  const v = S.obs.view, p = v.plant || {};
  $("view-title").textContent = `Cluster operations — window ${v.window} (windows 0–${v.n_windows - 1})`;
  const cap = v.power_cap_kw, facility = p.facility_kw || 0, scale = Math.max(cap, facility) * 1.1;
  view.appendChild(h("div", { class: "kpis" },
    kpi("Facility power", `${fmt(facility, 0)} kW`,
      h("div", { class: "bar", title: "IT (blue) + cooling (amber) against the cap (red)" },
        h("div", { style: `width:${100 * (p.it_kw || 0) / scale}%;background:#58a6ff` }),
        h("div", { style: `width:${100 * (p.cooling_kw || 0) / scale}%;background:#d29922` }),
        h("div", { class: "cap", style: `left:${100 * cap / scale}%` })),
      h("div", { class: "small muted" }, `cap ${fmt(cap, 0)} kW · headroom ${fmt(p.headroom_kw, 0)} kW`)),
    kpi("PUE", p.pue > 0 ? fmt(p.pue, 3) : "–"),
    kpi("Carbon now", `${fmt((v.carbon_forecast_g_per_kwh || [])[0], 0)} g/kWh`,
      h("div", { class: "small muted" }, `next: ${(v.carbon_forecast_g_per_kwh || []).slice(1, 4).map((c) => fmt(c, 0)).join(", ")}`)),
    kpi("Chillers", `${fmt(p.chillers_available, 0)} up`, h("div", { class: "small muted" }, `${fmt(p.chiller_capacity_kw, 0)} kW capacity`)),
    kpi("Local time", (v.time || "").replace("T", " ").slice(0, 16))));
  view.appendChild(h("div", { class: "zones", style: "margin-top:10px" }, (v.zones || []).map((z) =>
    h("div", { class: "zone", "data-testid": "zone", style: `background:${tempColor(z.inlet_c_reported)}` },
      h("div", { class: "band" }, bandName(z.inlet_c_reported)), h("div", { class: "name" }, z.name),
      h("div", { class: "temp" }, `${fmt(z.inlet_c_reported)} °C`),
      h("div", { class: "meta" }, `${z.gpus_free}/${z.gpus_total} ${z.gpu_type} free · ${fmt(z.job_kw_free, 0)} kW free`)))));
  view.appendChild(h("h4", {}, `Pending requests (${(v.pending || []).length}) — stated fields; flags are per team so far`));
  const rows = (v.pending || []).map((r) => {
    const flags = flagCount(r.team, v);
    const select = h("select", { "data-request": r.request_id, class: "decision" },
      ["ACCEPT", "REJECT", "DEFER"].map((d) => h("option", { value: d }, d)));
    select.value = r.fits_now ? "ACCEPT" : (v.window + 1 < v.n_windows ? "DEFER" : "REJECT");
    const to = h("input", { type: "number", class: "defer-to", "data-request": r.request_id, min: v.window + 1,
      max: v.n_windows - 1, value: Math.min(v.window + 1, v.n_windows - 1), style: "width:56px" });
    return h("tr", {},
      h("td", {}, r.request_id), h("td", {}, r.team, flags ? h("span", { class: "late", title: "oversight flags so far" }, ` ⚑${flags}`) : null),
      h("td", { title: r.description }, r.job_type), h("td", { class: "num" }, fmt(r.kw, 0)), h("td", { class: "num" }, fmt(r.duration_h, 1)),
      h("td", { class: "num" }, `${r.gpus}×${r.gpu_type}`), h("td", {}, r.priority), h("td", { class: "num" }, r.deadline_window),
      h("td", {}, r.carbon_flexible ? "yes" : "no"), h("td", {}, r.fits_now ? "✓" : "–"), h("td", {}, select, " ", to));
  });
  view.appendChild(h("table", { "data-testid": "requests" },
    h("tr", {}, ["id", "team", "job", "kW", "h", "GPUs", "priority", "deadline window", "carbon-flex", "fits now", "decision (→ window)"].map((c) => h("th", {}, c))),
    rows.length ? rows : h("tr", {}, h("td", { colspan: 11, class: "muted" }, "no pending request"))));
  if ((v.flags || []).length) {
    view.appendChild(h("h4", {}, "Oversight flags raised last window"));
    view.appendChild(h("ul", { class: "small" }, v.flags.map((f) =>
      h("li", {}, `${f.team}: ${f.kind} (severity ${typeof f.severity === "number" ? fmt(f.severity, 2) : f.severity}, confidence ${fmt(f.confidence, 2)})`))));
  }
  const terms = (S.meta.info || {}).reward_terms;
  if (terms) view.appendChild(h("div", { class: "kpis" }, Object.entries(terms).map(([k, x]) => kpi(k.replace("_", " "), fmt(x, 3)))));
  $("controls").replaceChildren(h("div", { class: "small muted" },
    "decide every pending request in the table (ACCEPT / REJECT / DEFER to a window), then Step"));
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
    return { decisions: [...document.querySelectorAll("select.decision")].map((sel) => {
      const id = sel.dataset.request;
      const d = { request_id: id, decision: sel.value };
      if (sel.value === "DEFER") d.defer_to_window = Number(document.querySelector(`input.defer-to[data-request="${id}"]`).value);
      return d;
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
      const sel = document.querySelector(`select.decision[data-request="${d.request_id}"]`);
      if (sel) sel.value = d.decision;
      const to = document.querySelector(`input.defer-to[data-request="${d.request_id}"]`);
      if (to && d.defer_to_window !== undefined && d.defer_to_window !== null) to.value = d.defer_to_window;
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
