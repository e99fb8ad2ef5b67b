// SPDX-License-Identifier: Apache-2.0
// "Where the time went": the kernels that jobs on this node sent their agent
// (docs/kernels-agent.md), per GPU and process over the history's time range,
// summed by the agent over every window of the range (/api/v1/kernels/summary):
// a day of an 8-GPU node is tens of thousands of windows, a few kilobytes summed.
// Each trace window names its top kernels and an `other` remainder; summed over
// the range, a kernel's time is what the windows that named it say, so the
// remainder also holds its time in windows where it was not in the top.
const kernelView = { timer: null };
// Distinct hues for the named kernels; `other` and idle have their own.
const KERNEL_COLOURS = ["#38bdf8", "#22c55e", "#f59e0b", "#a78bfa", "#f472b6", "#14b8a6"];
const KERNELS_NAMED = KERNEL_COLOURS.length;

function work(w) { return { count: (w && w.count) || 0, bytes: (w && w.bytes) || 0, time: (w && w.time_s) || 0 }; }

// One process of /api/v1/kernels/summary, which the agent sums over every
// window of the range (named kernels merged by name, the first KERNELS_NAMED
// kept, the rest in `other`), as the blocks below read it.
function kernelProcess(p) {
  return {
    gpu: p.gpu, pid: p.pid, process: p.process, windows: p.windows, busy: p.busy_s || 0, idle: p.idle_s || 0,
    kernelTime: p.kernel_time_s || 0, newest: p.newest_end || 0,
    named: (p.kernels || []).map((k) => ({ name: k.name, launches: k.launches || 0, time: k.time_s || 0 })),
    other: { launches: (p.other && p.other.launches) || 0, time: (p.other && p.other.time_s) || 0 },
    collectives: work(p.collectives), copies: work(p.copies), memsets: work(p.memsets),
    cuptiDropped: p.cupti_dropped || 0,
  };
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
  const range = RANGES.find(([r]) => r === history.range)[1];
  try {
    // Asked first, so an agent without the socket is never sent a request it
    // answers with 503 (a browser logs that as an error).
    const health = await getJson("/api/v1/health");
    if (!health.kernels || !health.kernels.enabled) {
      panel.hidden = document.body.classList.contains("wall");
      root.replaceChildren(el("p", { class: "muted",
        text: "This agent does not receive jobs' kernels: start it with --kernels-socket (docs/kernels-agent.md)." }));
    } else {
      const data = await getJson(`/api/v1/kernels/summary?from=-${range}s&top=${KERNELS_NAMED}`);
      panel.hidden = false;
      const procs = data.processes.map(kernelProcess);
      const now = Date.now() / 1000;
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
