// SPDX-License-Identifier: Apache-2.0
// One card per GPU: the classic utilization beside SM activity, the efficiency
// score, the state in words with its fix, then memory, power, temperature,
// clocks and throttling; advanced metrics on demand.
const openAdvanced = new Set();  // GPUs whose "advanced" section the user opened

function meter(label, caption, value, field, tone) {
  const v = value == null ? null : Math.max(0, Math.min(100, value));
  return el("div", { class: `meter ${tone || ""}` },
    el("div", { class: "meter-label", text: label }),
    el("div", { class: "meter-value", "data-field": field, text: fmt.pct(value) }),
    el("div", { class: "bar" }, el("span", { style: { width: `${v == null ? 0 : v}%` } })),
    el("div", { class: "meter-caption muted", text: caption }));
}

function row(label, value, field, extra) {
  return el("div", { class: "row" }, el("span", { class: "muted", text: label }),
    el("span", { "data-field": field, text: value }), extra || null);
}

function advanced(g) {
  const m = g.metrics;
  const items = [
    ["SM occupancy", fmt.pct(m.sm_occupancy), "sm_occupancy"],
    ["Tensor (any)", fmt.pct(m.tensor_active), "tensor_active"],
    ["Tensor HMMA", fmt.pct(m.hmma_active), "hmma_active"],
    ["Tensor IMMA", fmt.pct(m.imma_active), "imma_active"],
    ["Tensor DFMA", fmt.pct(m.dfma_active), "dfma_active"],
    ["DRAM bandwidth", fmt.pct(m.dram_active), "dram_active"],
    ["FP64 / FP32 / FP16", `${fmt.pct(m.fp64_active)} / ${fmt.pct(m.fp32_active)} / ${fmt.pct(m.fp16_active)}`, "fp_active"],
    ["Integer pipe", fmt.pct(m.int_active), "int_active"],
    ["PCIe tx / rx", `${fmt.rate(m.pcie_tx_mibs)} / ${fmt.rate(m.pcie_rx_mibs)}`, "pcie"],
    ["NVLink tx / rx", `${fmt.rate(m.nvlink_tx_mibs)} / ${fmt.rate(m.nvlink_rx_mibs)}`, "nvlink"],
    ["Memory controller", fmt.pct(m.mem_util), "mem_util"],
    ["Graphics engine", fmt.pct(m.graphics_active), "graphics_active"],
    ["P-state", m.pstate == null ? "–" : `P${m.pstate}`, "pstate"],
  ];
  const details = el("details", { class: "advanced" }, el("summary", { text: "Advanced metrics" }),
    el("div", { class: "grid2" }, ...items.map(([l, v, f]) => row(l, v, f))));
  if (openAdvanced.has(g.gpu)) details.open = true;
  details.addEventListener("toggle", () => {
    if (details.open) openAdvanced.add(g.gpu); else openAdvanced.delete(g.gpu);
  });
  return details;
}

// Who holds the GPU by its scheduler's allocation (Slurm's prolog, the kubelet's
// pod-resources API), running anything or not: "Slurm job 101 · alice · physics",
// "pod ml/train-0 · trainer"; null where no allocation is read.
function heldByText(g) {
  if (!Array.isArray(g.allocation)) return null;
  if (!g.allocation.length) return "no job";
  return g.allocation.map((a) => (a.scheduler === "kubernetes"
    ? [`pod ${a.namespace}/${a.pod}`, a.container]
    : [`Slurm job ${a.job}`, a.user, a.account]).filter(Boolean).join(" · ")).join("; ");
}

function card(g, latestT) {
  const heldBy = heldByText(g);
  const m = g.metrics;
  const s = g.state;
  const info = stateInfo(s.id);
  const lim = g.limits || {};
  const memShare = m.mem_used_mib != null && lim.mem_total_mib ? (100 * m.mem_used_mib) / lim.mem_total_mib : null;
  const throttle = s.throttled ? `throttled: ${s.throttle_cause || "power or thermal limit"}`
    : (g.clock_reasons.length ? g.clock_reasons.map((r) => r.words).join(", ") : "none");
  const fixes = s.fixes || [];
  const stale = g.t != null && latestT != null && latestT - g.t > 10;
  return el("article", { class: `card${g.lost || stale ? " stale" : ""}`, "data-gpu": String(g.gpu), "data-state": s.id,
    style: { borderLeftColor: info.colour } },
    el("header", {},
      el("div", {}, el("h3", { text: `GPU ${g.gpu}` }), el("div", { class: "muted model", text: g.name })),
      el("span", { class: "badge state", "data-field": "state", title: s.meaning, style: { background: info.colour } },
        el("span", { class: "glyph", "aria-hidden": "true", text: info.glyph }), info.label)),
    el("div", { class: "meters" },
      meter("Utilization", "classic: time any kernel ran", m.gpu_util, "gpu_util", "classic"),
      meter("SM activity", "true: share of SMs working", m.sm_active, "sm_active", "true")),
    el("div", { class: "score" },
      el("span", { class: "muted", text: "Efficiency" }),
      el("strong", { "data-field": "efficiency", text: fmt.score(g.efficiency) }),
      el("span", { class: "muted small", text: "SM activity ÷ utilization × 100" })),
    el("p", { class: "summary", "data-field": "summary", text: g.lost ? "The GPU stopped answering." : s.summary }),
    fixes.length ? el("p", { class: "fix", "data-field": "fix" }, el("strong", { text: "Fix: " }), fixes[0]) : null,
    fixes.length > 1 ? el("details", { class: "more-fixes" }, el("summary", { text: `${fixes.length - 1} more` }),
      el("ul", {}, ...fixes.slice(1).map((f) => el("li", { text: f })))) : null,
    g.alerts.length ? el("div", { class: "card-alerts" }, ...g.alerts.map((a) => el("span", { class: "badge tone-red", text: a }))) : null,
    el("div", { class: "facts" },
      heldBy ? row("Held by", heldBy, "held_by") : null,
      row("Memory", `${fmt.gib(m.mem_used_mib)} of ${fmt.gib(lim.mem_total_mib)}`, "memory",
        el("div", { class: "bar thin" }, el("span", { style: { width: `${memShare == null ? 0 : Math.min(100, memShare)}%` } }))),
      row("Power", `${fmt.watts(m.power_w)} of ${fmt.watts(lim.power_limit_w)}`, "power"),
      row("Temperature", `${fmt.celsius(m.temp_c)}${m.mem_temp_c != null ? ` · HBM ${fmt.celsius(m.mem_temp_c)}` : ""}`, "temperature"),
      row("Clocks", `SM ${fmt.mhz(m.sm_clock_mhz)} of ${fmt.mhz(lim.max_sm_clock_mhz)} · mem ${fmt.mhz(m.mem_clock_mhz)}`, "clocks"),
      row("Throttle", throttle, "throttle")),
    advanced(g));
}

function renderCards(latest) {
  const root = document.getElementById("cards");
  if (!latest.gpus.length) {
    root.replaceChildren(el("p", { class: "muted", text: "No GPU found." }));
    return;
  }
  root.style.setProperty("--cols", String(Math.min(latest.gpus.length, 4)));
  root.replaceChildren(...latest.gpus.map((g) => card(g, latest.t)));
}

// The table's columns; on a narrow screen each row stacks into labelled cells
// (app.css), so the labels travel with the cells.
const PROC_COLUMNS = ["GPU", "PID", "Process", "User", "Job / container", "GPU memory", "SM share", "CPU"];

// "slurm 1234.0 (physics)": the Slurm job, step and account; "slurm ?" with the
// reason as the title when the process shows signs of Slurm but its job is unknown.
function slurmText(s) {
  if (!s) return "";
  if (!s.job) return "slurm ?";
  const id = s.step ? `${s.job}.${s.step}` : s.job;
  return `slurm ${id}${s.account ? ` (${s.account})` : ""}`;
}

function renderProcesses(latest) {
  const body = document.querySelector("#procs tbody");
  const rows = [];
  const cell = (i, text, extra) => el("td", { "data-label": PROC_COLUMNS[i], text, ...(extra || {}) });
  for (const g of latest.gpus) {
    for (const p of g.processes || []) {
      const where = [slurmText(p.slurm), p.container && p.container.slice(0, 12), p.pod].filter(Boolean).join(" / ");
      const whereTitle = p.slurm && p.slurm.unknown ? p.slurm.unknown : null;
      rows.push(el("tr", {},
        cell(0, String(g.gpu)), cell(1, String(p.pid)),
        cell(2, p.name || "?", { class: "name", title: p.cmdline || null }), cell(3, p.user || ""),
        cell(4, where, { class: where ? "where" : "where empty", title: whereTitle }), cell(5, fmt.gib(p.used_mib), { class: "num" }),
        cell(6, fmt.pct(p.sm_util), { class: "num" }),
        cell(7, p.cpu_pct == null ? "–" : `${Math.round(p.cpu_pct)} %`, { class: "num" })));
    }
  }
  if (!rows.length) rows.push(el("tr", { class: "none" }, el("td", { colspan: "8", class: "muted", text: "No process is using a GPU." })));
  body.replaceChildren(...rows);
}

function renderAlerts(alerts) {
  const root = document.getElementById("alerts");
  const count = document.getElementById("alert-count");
  count.textContent = alerts.firing.length ? String(alerts.firing.length) : "";
  const items = alerts.firing.map((a) => el("div", { class: `alert sev-${a.severity}` },
    el("div", {}, el("strong", { text: a.rule.replace(/_/g, " ") }), el("span", { class: "muted", text: ` · GPU ${a.gpu} · ${a.severity} · since ${fmt.time(a.since)}` })),
    el("div", { text: a.message }),
    a.fixes && a.fixes.length ? el("div", { class: "fix" }, el("strong", { text: "Fix: " }), a.fixes[0]) : null));
  const recent = alerts.events.slice(0, 8).map((e) => el("li", { class: "muted" },
    `${fmt.datetime(e.t)} · ${e.kind} · ${e.rule.replace(/_/g, " ")} · GPU ${e.gpu}`));
  const children = items.length ? items : [el("p", { class: "muted", text: "No alert is firing." })];
  if (recent.length) {
    children.push(el("details", { class: "events" }, el("summary", { text: "Recent alert events" }), el("ul", {}, ...recent)));
  }
  root.replaceChildren(...children);
}
