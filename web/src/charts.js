// SPDX-License-Identifier: Apache-2.0
// History from the agent's store: a state timeline per GPU and uPlot charts of
// utilization beside SM activity, power and memory, over 15 minutes to 90 days.
const RANGES = [["15m", 900], ["1h", 3600], ["6h", 21600], ["24h", 86400], ["7d", 604800], ["30d", 2592000], ["90d", 7776000]];
const PALETTE = ["#38bdf8", "#f472b6", "#a3e635", "#fbbf24", "#c084fc", "#fb7185", "#2dd4bf", "#f97316"];
// zoom: the x range [min, max] the user dragged, kept across redraws until a
// double-click resets it; drawnAt: when the charts were last drawn (ms).
const history = { range: "15m", charts: [], timer: null, zoom: null, drawnAt: null };

const CHARTS = [
  { title: "Utilization (dashed) vs SM activity (solid)", unit: "%", series: [["gpu_util", true, "util"], ["sm_active", false, "SM"]], max: 100 },
  { title: "Tensor and DRAM activity", unit: "%", series: [["tensor_active", false, "tensor"], ["dram_active", true, "DRAM"]], max: 100 },
  { title: "Power", unit: "W", series: [["power_w", false, "power"]] },
  { title: "Device memory used", unit: "GiB", series: [["mem_used_mib", false, "memory"]], scale: 1 / 1024 },
];

function buildRanges() {
  const root = document.getElementById("ranges");
  const saved = new URLSearchParams(location.search).get("range");
  if (saved && RANGES.some(([r]) => r === saved)) history.range = saved;
  root.replaceChildren(...RANGES.map(([name]) => {
    const b = el("button", { type: "button", "data-range": name, text: name });
    if (name === history.range) b.classList.add("active");
    b.addEventListener("click", () => {
      history.range = name;
      for (const x of root.children) x.classList.toggle("active", x.dataset.range === name);
      refreshHistory();
      refreshKernels();
    });
    return b;
  }));
}

// Joins each GPU's own bucket times into one x axis, with gaps as nulls.
function align(series, key, scale) {
  const xs = [...new Set(series.flatMap((s) => s.t))].sort((a, b) => a - b);
  const index = new Map(xs.map((t, i) => [t, i]));
  const ys = series.map((s) => {
    const y = new Array(xs.length).fill(null);
    const values = (s.metrics[key] || {}).mean || [];
    s.t.forEach((t, i) => { if (values[i] != null) y[index.get(t)] = values[i] * (scale || 1); });
    return y;
  });
  return { xs, ys };
}

function chartWidth(node) { return Math.max(280, node.clientWidth - 8); }

// Drag across a chart to zoom all of them to that time span; a double-click
// resets. The zoom survives the periodic redraw.
function zoomAll(min, max) {
  history.zoom = min == null ? null : [min, max];
  for (const c of history.charts) {
    const [lo, hi] = history.zoom || [c.data[0][0], c.data[0][c.data[0].length - 1]];
    c.setScale("x", { min: lo, max: hi });
  }
  document.getElementById("charts").classList.toggle("zoomed", history.zoom != null);
}

function drawCharts(data) {
  const root = document.getElementById("charts");
  for (const c of history.charts) c.destroy();
  history.charts = [];
  root.replaceChildren();
  if (!data.series.length) {
    root.append(el("p", { class: "muted", text: "No history in this range yet." }));
    return;
  }
  root.append(el("p", { class: "muted small chart-key", text: "Drag across a chart to zoom; double-click to reset." }));
  for (const spec of CHARTS) {
    const box = el("div", { class: "chart" }, el("h3", { text: `${spec.title} (${spec.unit})` }));
    root.append(box);
    const columns = [];
    const series = [{ label: "time", value: (u, t) => (t == null ? "–" : fmt.time(t)) }];
    let xs = null;
    for (const [key, dashed, words] of spec.series) {
      const a = align(data.series, key, spec.scale);
      xs = xs || a.xs;
      data.series.forEach((s, i) => {
        columns.push(a.ys[i]);
        series.push({ label: `GPU ${s.gpu} ${words}`, stroke: PALETTE[s.gpu % PALETTE.length], width: 2,
          dash: dashed ? [6, 4] : undefined, spanGaps: false, points: { show: false },
          value: (u, v) => (v == null ? "–" : `${v.toFixed(1)} ${spec.unit}`) });
      });
    }
    const opts = {
      width: chartWidth(box), height: 180, series,
      legend: { show: true, live: true },
      cursor: { drag: { x: true, y: false, setScale: false } },
      select: { show: true },
      hooks: {
        setSelect: [(u) => {
          if (u.select.width < 2) return;
          const min = u.posToVal(u.select.left, "x");
          const max = u.posToVal(u.select.left + u.select.width, "x");
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          zoomAll(min, max);
        }],
      },
      scales: { y: spec.max ? { range: [0, spec.max] } : {} },
      axes: [{ stroke: "#94a3b8", grid: { stroke: "#1e293b" } }, { stroke: "#94a3b8", grid: { stroke: "#1e293b" }, size: 56 }],
    };
    const u = new uPlot(opts, [xs, ...columns], box);
    u.over.addEventListener("dblclick", () => zoomAll(null));
    history.charts.push(u);
  }
  if (history.zoom) zoomAll(...history.zoom);
}

// The charts redraw less often than the cards: say how old they are.
function showHistoryAge() {
  const age = document.getElementById("history-age");
  if (!age || history.drawnAt == null) return;
  const s = (Date.now() - history.drawnAt) / 1000;
  age.textContent = `drawn ${s < 1.5 ? "just now" : `${fmt.ago(s)} ago`}${history.zoom ? " · zoomed" : ""}`;
}

function drawTimeline(data, from, to) {
  const root = document.getElementById("timeline");
  const byGpu = new Map();
  for (const r of data.runs) {
    if (!byGpu.has(r.gpu)) byGpu.set(r.gpu, []);
    byGpu.get(r.gpu).push(r);
  }
  const span = Math.max(1, to - from);
  const rows = [...byGpu.entries()].map(([gpu, runs]) => el("div", { class: "tl-row" },
    el("span", { class: "tl-label", text: `GPU ${gpu}` }),
    el("div", { class: "tl-track" }, ...runs.map((r) => {
      const left = Math.max(0, (r.start - from) / span) * 100;
      const width = Math.max(0.15, ((Math.min(r.end, to) - Math.max(r.start, from)) / span) * 100);
      const info = stateInfo(r.state);
      return el("span", { class: "tl-run", title: `${info.label}: ${fmt.datetime(r.start)} – ${fmt.time(r.end)}`,
        style: { left: `${left}%`, width: `${width}%`, background: info.colour } });
    }))));
  // A legend of the states that appear, in the colours of the bars.
  const seen = [...new Set(data.runs.map((r) => r.state))];
  const legend = el("div", { class: "tl-legend" }, ...seen.map((id) => {
    const info = stateInfo(id);
    return el("span", {}, el("i", { style: { background: info.colour } }), `${info.glyph} ${info.label}`);
  }));
  root.replaceChildren(...rows, legend);
}

async function refreshHistory() {
  const seconds = RANGES.find(([r]) => r === history.range)[1];
  const note = document.getElementById("history-note");
  try {
    const metrics = "gpu_util,sm_active,tensor_active,dram_active,power_w,mem_used_mib";
    const [data, timeline] = await Promise.all([
      getJson(`/api/v1/history?from=-${seconds}s&metrics=${metrics}`),
      getJson(`/api/v1/timeline?from=-${seconds}s`),
    ]);
    note.textContent = `${fmt.datetime(data.from)} – ${fmt.datetime(data.to)} · one point per ${fmt.ago(data.step)} · from ${data.source === "raw" ? "raw samples" : "one-minute rollups"}`;
    drawTimeline(timeline, data.from, data.to);
    drawCharts(data);
    history.drawnAt = Date.now();
    showHistoryAge();
  } catch (err) {
    note.textContent = `History unavailable: ${err.message}`;
  }
  clearTimeout(history.timer);
  history.timer = setTimeout(refreshHistory, seconds <= 3600 ? 10000 : 60000);
}

window.addEventListener("resize", () => {
  for (const c of history.charts) c.setSize({ width: chartWidth(c.root.parentNode), height: 180 });
});
