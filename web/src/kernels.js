// SPDX-License-Identifier: Apache-2.0
// "Where the time went": the kernels that jobs on this node sent their agent
// (docs/kernels-agent.md), per GPU and process over the history's time range.
// Each trace window names its top kernels and an `other` remainder; summed over
// the range, a kernel's time is what the windows that named it say, so the
// remainder also holds its time in windows where it was not in the top.
const kernelView = { timer: null };
// Distinct hues for the named kernels; `other` and idle have their own.
const KERNEL_COLOURS = ["#38bdf8", "#22c55e", "#f59e0b", "#a78bfa", "#f472b6", "#14b8a6"];
const KERNELS_NAMED = KERNEL_COLOURS.length;

function emptyWork() { return { count: 0, bytes: 0, time: 0 }; }

function addWork(into, w) {
  into.count += w.count || 0;
  into.bytes += w.bytes || 0;
  into.time += w.time_s || 0;
}

// One entry per (GPU, pid): windows summed, kernels by name, newest first.
function aggregateKernelWindows(windows) {
  const byKey = new Map();
  for (const w of windows) {
    const key = `${w.gpu}:${w.pid}`;
    let a = byKey.get(key);
    if (!a) {
      a = { gpu: w.gpu, pid: w.pid, process: w.process, windows: 0, busy: 0, idle: 0, kernelTime: 0, newest: 0,
        kernels: new Map(), other: { launches: 0, time: 0 }, collectives: emptyWork(), copies: emptyWork(),
        memsets: emptyWork(), cuptiDropped: 0 };
      byKey.set(key, a);
    }
    a.windows += 1;
    a.busy += w.busy_s || 0;
    a.idle += w.idle_s || 0;
    a.kernelTime += w.kernel_time_s || 0;
    a.newest = Math.max(a.newest, w.end || 0);
    if (w.process) a.process = w.process;
    for (const k of w.kernels || []) {
      const seen = a.kernels.get(k.name) || { name: k.name, launches: 0, time: 0 };
      seen.launches += k.launches || 0;
      seen.time += k.time_s || 0;
      a.kernels.set(k.name, seen);
    }
    a.other.launches += (w.other && w.other.launches) || 0;
    a.other.time += (w.other && w.other.time_s) || 0;
    addWork(a.collectives, w.collectives || {});
    addWork(a.copies, w.copies || {});
    addWork(a.memsets, w.memsets || {});
    a.cuptiDropped += w.cupti_dropped || 0;
  }
  const out = [...byKey.values()];
  for (const a of out) {
    const ranked = [...a.kernels.values()].sort((x, y) => y.time - x.time);
    a.named = ranked.slice(0, KERNELS_NAMED);
    // Kernels past the named ones join `other`.
    for (const k of ranked.slice(KERNELS_NAMED)) {
      a.other.launches += k.launches;
      a.other.time += k.time;
    }
  }
  return out.sort((x, y) => x.gpu - y.gpu || y.kernelTime - x.kernelTime);
}

function share(part, whole) { return whole > 0 ? (100 * part) / whole : null; }

function seconds(s) {
  if (s == null) return "–";
  if (s >= 1) return `${s.toFixed(s >= 100 ? 0 : 1)} s`;
  if (s >= 1e-3) return `${(s * 1e3).toFixed(s >= 0.1 ? 0 : 1)} ms`;
  return `${(s * 1e6).toFixed(0)} µs`;
}

function bytes(b) {
  if (b >= 1e9) return `${(b / 1e9).toFixed(1)} GB`;
  if (b >= 1e6) return `${(b / 1e6).toFixed(1)} MB`;
  return `${Math.round(b / 1e3)} kB`;
}

// The traced time as one bar: idle, then the busy time split by kernel-time
// share (kernels on several streams overlap, so their times add up past busy).
function kernelBar(a) {
  const traced = a.busy + a.idle;
  const parts = a.named.map((k, i) => [k.name, k.time, KERNEL_COLOURS[i]]);
  parts.push(["other kernels", a.other.time, "#64748b"]);
  const spans = [];
  for (const [name, time, colour] of parts) {
    const width = traced > 0 && a.kernelTime > 0 ? (100 * (a.busy / traced) * time) / a.kernelTime : 0;
    if (width > 0) spans.push(el("span", { title: name, style: { width: `${width}%`, background: colour } }));
  }
  const idle = share(a.idle, traced);
  if (idle) spans.push(el("span", { class: "idle", title: "idle", style: { width: `${idle}%` } }));
  return el("div", { class: "kbar", role: "img", "aria-label": `idle ${fmt.pct(idle)} of traced time` }, ...spans);
}

function kernelRow(name, colour, time, launches, kernelTime, extraClass) {
  return el("li", { class: `krow ${extraClass || ""}` },
    el("i", { class: "swatch", style: { background: colour } }),
    el("span", { class: "kname", title: name, text: name }),
    el("span", { class: "num", text: fmt.pct(share(time, kernelTime)) }),
    el("span", { class: "num muted", text: `${seconds(time)} · ${launches} launches` }));
}

function kernelBlock(a, now) {
  const traced = a.busy + a.idle;
  const rows = a.named.map((k, i) => kernelRow(k.name, KERNEL_COLOURS[i], k.time, k.launches, a.kernelTime));
  if (a.other.time > 0) rows.push(kernelRow("other kernels", "#64748b", a.other.time, a.other.launches, a.kernelTime, "other"));
  const facts = [
    `idle ${fmt.pct(share(a.idle, traced))} of traced time`,
    a.collectives.count ? `communication ${fmt.pct(share(a.collectives.time, a.kernelTime))} of kernel time (${a.collectives.count} collectives)` : null,
    a.copies.count ? `copies ${a.copies.count} · ${bytes(a.copies.bytes)} · ${seconds(a.copies.time)}` : null,
    a.memsets.count ? `memsets ${a.memsets.count} · ${seconds(a.memsets.time)}` : null,
    a.cuptiDropped ? `CUPTI dropped ${a.cuptiDropped} records: times are low` : null,
  ].filter(Boolean);
  return el("article", { class: "kproc", "data-gpu": String(a.gpu), "data-pid": String(a.pid) },
    el("header", {},
      el("h3", { text: `GPU ${a.gpu} · ${a.process || "?"} · pid ${a.pid}` }),
      el("span", { class: "muted small",
        text: `${a.windows} window${a.windows === 1 ? "" : "s"} · ${seconds(traced)} traced · newest ${fmt.ago(now - a.newest)} ago` })),
    kernelBar(a),
    el("ol", { class: "klist" }, ...rows),
    el("p", { class: "kfacts muted small", text: facts.join(" · ") }));
}

async function refreshKernels() {
  const panel = document.getElementById("kernels-panel");
  const root = document.getElementById("kernels");
  const note = document.getElementById("kernels-note");
  const range = RANGES.find(([r]) => r === history.range)[1];
  try {
    // Asked first, so an agent without the socket is never sent a request it
    // answers with 503 (a browser logs that as an error).
    const health = await getJson("/api/v1/health");
    if (!health.kernels || !health.kernels.enabled) {
      panel.hidden = document.body.classList.contains("wall");
      note.textContent = "";
      root.replaceChildren(el("p", { class: "muted",
        text: "This agent does not receive jobs' kernels: start it with --kernels-socket (docs/kernels-agent.md)." }));
    } else {
      const data = await getJson(`/api/v1/kernels?from=-${range}s&limit=10000`);
      panel.hidden = false;
      const procs = aggregateKernelWindows(data.windows);
      const now = Date.now() / 1000;
      note.textContent = data.truncated ? "the newest 10000 windows of this range" : "";
      root.replaceChildren(...(procs.length ? procs.map((a) => kernelBlock(a, now))
        : [el("p", { class: "muted",
          text: `No job sent its kernels in the last ${history.range}. Jobs opt in with GPULENS_KERNELS_AGENT=1 (docs/kernels-agent.md).` })]));
    }
  } catch (err) {
    panel.hidden = false;
    root.replaceChildren(el("p", { class: "muted", text: `Kernels unavailable: ${err.message}` }));
  }
  clearTimeout(kernelView.timer);
  kernelView.timer = setTimeout(refreshKernels, 20000);
}
