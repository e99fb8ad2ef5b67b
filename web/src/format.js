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

// Words and colours for each diagnosis state id (design.md's vocabulary).
const STATES = {
  unknown: { label: "unknown", tone: "gray" },
  idle: { label: "idle", tone: "gray" },
  idle_holding_memory: { label: "idle, holding memory", tone: "orange" },
  compute_bound: { label: "compute bound", tone: "green" },
  memory_bound: { label: "memory bound", tone: "teal" },
  interconnect_bound: { label: "interconnect bound", tone: "amber" },
  pcie_bound: { label: "PCIe bound", tone: "amber" },
  host_bound: { label: "host bound", tone: "red" },
  launch_bound: { label: "launch bound", tone: "red" },
  sm_underused: { label: "SMs underused", tone: "red" },
  waiting_on_peer: { label: "waiting on a peer", tone: "amber" },
};
const stateInfo = (id) => STATES[id] || { label: id.replace(/_/g, " "), tone: "gray" };

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
    throw new Error(message);
  }
  return res.json();
}
