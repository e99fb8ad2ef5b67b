// SPDX-License-Identifier: Apache-2.0
// Number formatting and small DOM helpers shared by the dashboard's parts.
const fmt = {
  pct(v, digits = 1) { return v == null ? "–" : `${v.toFixed(v >= 99.95 || v === 0 ? 0 : digits)} %`; },
  watts(v) { return v == null ? "–" : `${Math.round(v)} W`; },
  celsius(v) { return v == null ? "–" : `${Math.round(v)} °C`; },
  mhz(v) { return v == null ? "–" : `${Math.round(v)} MHz`; },
  gib(mib) { return mib == null ? "–" : `${(mib / 1024).toFixed(mib >= 102400 ? 0 : 1)} GiB`; },
  rate(mibs) {
    if (mibs == null) return "–";
    const bytes = mibs * 1048576;
    if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB/s`;
    if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB/s`;
    return `${(bytes / 1e3).toFixed(0)} kB/s`;
  },
  score(v) { return v == null ? "–" : `${Math.round(v)}`; },
  ago(seconds) {
    if (seconds == null || !isFinite(seconds)) return "";
    if (seconds < 90) return `${Math.max(0, Math.round(seconds))} s`;
    if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
    if (seconds < 172800) return `${(seconds / 3600).toFixed(1)} h`;
    return `${Math.round(seconds / 86400)} days`;
  },
  time(t) { return t == null ? "" : new Date(t * 1000).toLocaleTimeString(); },
  datetime(t) { return t == null ? "" : new Date(t * 1000).toLocaleString(); },
};

// Words and colours for each diagnosis state id (design.md's vocabulary). The
// colours are the HTML report's (src/render/html_svg.cpp state_color) and
// `gpulens top` draws their nearest terminal colours: docs/dashboard.md has the
// table. Each state has its own colour and a glyph, so no two states look alike
// even to a reader who does not tell red from amber.
const STATES = {
  unknown: { label: "unknown", colour: "#e6e8ec", glyph: "?" },
  idle: { label: "idle", colour: "#c3c9d2", glyph: "○" },
  idle_holding_memory: { label: "idle, holding memory", colour: "#8c96a3", glyph: "◐" },
  compute_bound: { label: "compute bound", colour: "#22a06b", glyph: "●" },
  memory_bound: { label: "memory bound", colour: "#e09b2d", glyph: "▤" },
  interconnect_bound: { label: "interconnect bound", colour: "#8a63d2", glyph: "⇄" },
  pcie_bound: { label: "PCIe bound", colour: "#d0567f", glyph: "⇅" },
  host_bound: { label: "host bound", colour: "#e5533c", glyph: "▲" },
  launch_bound: { label: "launch bound", colour: "#c7a82a", glyph: "»" },
  sm_underused: { label: "SMs underused", colour: "#3a86d4", glyph: "◔" },
  waiting_on_peer: { label: "waiting on a peer", colour: "#9a7350", glyph: "◇" },
  busy: { label: "busy with kernels", colour: "#2a9d9d", glyph: "◍" },
};
const stateInfo = (id) => STATES[id] || { label: String(id).replace(/_/g, " "), colour: STATES.unknown.colour, glyph: "?" };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    // Styles go through the CSSOM: the page's CSP forbids style attributes.
    else if (k === "style") Object.assign(node.style, v);
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c != null) node.append(c);
  return node;
}

async function getJson(path) {
  const res = await fetch(path, { cache: "no-store", credentials: "same-origin" });
  if (!res.ok) {
    let message = `${res.status}`;
    try { message = (await res.json()).error || message; } catch (_) { /* not JSON */ }
    const err = new Error(message);
    err.status = res.status;
    throw err;
  }
  return res.json();
}
