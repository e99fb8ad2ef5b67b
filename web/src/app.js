// SPDX-License-Identifier: Apache-2.0
// The dashboard's main loop: one poll tick reads the latest values and the
// alerts together, so the alerts panel never contradicts the cards; the
// history charts redraw on their own slower timer and say how old they are.
// Everything comes from this agent.
const state = { interval: 1000, failures: 0 };

function setStatus(text, tone) {
  const pill = document.getElementById("status");
  pill.textContent = text;
  pill.className = `pill tone-${tone}`;
}

async function refreshLatest() {
  try {
    const [latest, alerts] = await Promise.all([getJson("/api/v1/latest"), getJson("/api/v1/alerts?limit=20")]);
    renderCards(latest);
    renderProcesses(latest);
    renderAlerts(alerts);
    showHistoryAge();
    document.getElementById("updated").textContent = latest.t ? `data at ${fmt.time(latest.t)}` : "waiting for the first sample";
    state.failures = 0;
  } catch (err) {
    state.failures += 1;
    setStatus(`no data: ${err.message}`, "red");
  }
  setTimeout(refreshLatest, state.failures ? Math.min(10000, 1000 * state.failures) : state.interval);
}

async function refreshHealth() {
  try {
    const h = await getJson("/api/v1/health");
    const tone = h.status === "ok" ? "green" : h.status === "degraded" ? "amber" : "red";
    let text = h.status;
    if (h.source.ended) text += " · replay ended";
    if (h.history.enabled && !h.history.healthy) text += " · history paused";
    // A scheduler's word expected but not in use: the GPUs' owners come from
    // processes (an idle pod's or job's GPU reads as nobody's), or an earlier
    // answer is kept. An absent source (not a Slurm or Kubernetes node) is silent.
    for (const [what, a] of [["Slurm jobs", h.source.allocation], ["pods", h.source.kube_allocation]]) {
      if (!a) continue;
      if (a.source === "processes" && a.fallback && !a.absent) text += ` · ${what} from processes: ${a.fallback}`;
      else if (a.last_error) text += ` · ${what} as last answered: ${a.last_error}`;
    }
    setStatus(text, tone);
    document.getElementById("source").textContent = h.source.description;
  } catch (err) {
    setStatus(err.message === "503" ? "failing" : `unreachable`, "red");
  }
  setTimeout(refreshHealth, 5000);
}

async function start() {
  if (new URLSearchParams(location.search).has("wall")) document.body.classList.add("wall");
  try {
    const [devices, version] = await Promise.all([getJson("/api/v1/devices"), getJson("/api/v1/version")]);
    document.getElementById("host").textContent = `${devices.hostname} · ${devices.devices.length} GPU${devices.devices.length === 1 ? "" : "s"} · driver ${devices.driver || "?"}`;
    document.getElementById("version").textContent = version.version;
    document.title = `gpulens · ${devices.hostname}`;
    if (devices.interval_s) state.interval = Math.max(500, Math.min(5000, devices.interval_s * 1000));
  } catch (err) {
    setStatus(`unreachable: ${err.message}`, "red");
  }
  buildRanges();
  refreshLatest();
  refreshHealth();
  refreshHistory();
  refreshKernels();
}

document.addEventListener("DOMContentLoaded", start);
