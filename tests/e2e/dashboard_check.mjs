// Loads the agent's dashboard in headless Chromium over the DevTools protocol
// (no npm packages: Node's WebSocket), waits for the cards, the timeline and
// the charts, compares the cards with the trace's last values and the agent's
// state text, fails on any console error, and keeps a screenshot.
// Usage: node --experimental-websocket dashboard_check.mjs URL EXPECTED.json SHOT.png
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, expectedPath, shotPath] = process.argv.slice(2);
const expected = JSON.parse(readFileSync(expectedPath, "utf8"));
const profile = mkdtempSync(join(tmpdir(), "gpulens-chromium-"));
const browser = spawn(process.env.CHROMIUM || "chromium", [
  "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
  "--disable-extensions", "--disable-background-networking", "--disable-sync",
  "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", `--user-data-dir=${profile}`,
  "--window-size=1440,1100", "about:blank"], { stdio: ["ignore", "ignore", "pipe"] });

const problems = [];
let finished = false;
function finish(code, message) {
  if (finished) return;
  finished = true;
  if (message) console.log(message);
  browser.kill("SIGKILL");
  try { rmSync(profile, { recursive: true, force: true }); } catch (_) { /* best effort */ }
  process.exit(code);
}
setTimeout(() => finish(1, "FAIL: timed out after 60 s"), 60000).unref();

const wsUrl = await new Promise((resolve, reject) => {
  let err = "";
  browser.stderr.on("data", (d) => {
    err += d;
    const m = err.match(/DevTools listening on (ws:\/\/\S+)/);
    if (m) resolve(m[1]);
  });
  browser.on("exit", (code) => reject(new Error(`chromium exited (${code}): ${err.slice(-2000)}`)));
}).catch((e) => finish(1, `FAIL: ${e.message}`));

const port = new URL(wsUrl).port;
const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
const page = targets.find((t) => t.type === "page");
const ws = new WebSocket(page.webSocketDebuggerUrl);
await new Promise((resolve) => ws.addEventListener("open", resolve, { once: true }));
let nextId = 1;
const pending = new Map();
const listeners = [];
ws.addEventListener("message", (ev) => {
  const msg = JSON.parse(ev.data);
  if (msg.id && pending.has(msg.id)) {
    const { resolve, reject } = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.error) reject(new Error(msg.error.message)); else resolve(msg.result);
  } else if (msg.method) {
    for (const l of listeners) l(msg);
  }
});
const send = (method, params = {}) => new Promise((resolve, reject) => {
  const id = nextId++;
  pending.set(id, { resolve, reject });
  ws.send(JSON.stringify({ id, method, params }));
});

// Every error the page reports: console.error, uncaught exceptions, failed
// loads, CSP violations.
listeners.push((msg) => {
  if (msg.method === "Runtime.consoleAPICalled" && ["error", "assert"].includes(msg.params.type)) {
    problems.push(`console.${msg.params.type}: ${msg.params.args.map((a) => a.value ?? a.description).join(" ")}`);
  } else if (msg.method === "Runtime.exceptionThrown") {
    const d = msg.params.exceptionDetails;
    problems.push(`exception: ${d.exception?.description || d.text}`);
  } else if (msg.method === "Log.entryAdded" && msg.params.entry.level === "error") {
    problems.push(`log (${msg.params.entry.source}): ${msg.params.entry.text} ${msg.params.entry.url || ""}`);
  }
});
await send("Runtime.enable");
await send("Log.enable");
await send("Page.enable");
await send("Page.navigate", { url });

const evaluate = async (expression) => {
  const r = await send("Runtime.evaluate", { expression, returnByValue: true });
  return r.result.value;
};
const ready = `(() => {
  const cards = document.querySelectorAll("article.card");
  const charts = document.querySelectorAll("#charts canvas");
  const runs = document.querySelectorAll("#timeline .tl-run");
  return cards.length > 0 && charts.length > 0 && runs.length > 0 &&
    !document.querySelector('[data-field="state"]').textContent.includes("unknown");
})()`;
let ok = false;
for (let i = 0; i < 100 && !ok; i++) {
  ok = await evaluate(ready);
  if (!ok) await new Promise((r) => setTimeout(r, 200));
}
if (!ok) problems.push("the dashboard did not render cards, charts and a timeline within 20 s");

const cards = await evaluate(`[...document.querySelectorAll("article.card")].map((c) => {
  const f = (name) => (c.querySelector('[data-field="' + name + '"]') || {}).textContent || "";
  return { gpu: c.dataset.gpu, gpu_util: f("gpu_util"), sm_active: f("sm_active"), state: f("state"),
    summary: f("summary"), power: f("power"), memory: f("memory"), fix: f("fix") };
})`);
const latest = await (await fetch(new URL("/api/v1/latest", url))).json();
const number = (text) => parseFloat(text.replace(/[^0-9.\-]/g, " ").trim().split(/\s+/)[0]);
for (const [gpu, sample] of Object.entries(expected.last)) {
  const card = cards.find((c) => c.gpu === gpu);
  if (!card) { problems.push(`no card for GPU ${gpu}`); continue; }
  // Cards round to one decimal (0 decimals at 0 and 100 %).
  for (const key of ["gpu_util", "sm_active"]) {
    const shown = number(card[key]);
    if (!(Math.abs(shown - sample[key]) <= 0.051)) problems.push(`GPU ${gpu} ${key}: card shows "${card[key]}", the trace says ${sample[key]}`);
  }
  if (!(Math.abs(number(card.power) - sample.power_w) <= 0.51)) problems.push(`GPU ${gpu} power: card shows "${card.power}", the trace says ${sample.power_w} W`);
  const api = latest.gpus.find((g) => String(g.gpu) === gpu);
  if (card.summary !== api.state.summary) problems.push(`GPU ${gpu} state text: card "${card.summary}", agent "${api.state.summary}"`);
  if (!card.state || card.state.includes("unknown")) problems.push(`GPU ${gpu}: no state shown`);
  if (api.state.fixes.length && !card.fix.includes(api.state.fixes[0])) problems.push(`GPU ${gpu}: the fix is not shown`);
}

const shot = await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: true });
writeFileSync(shotPath, Buffer.from(shot.data, "base64"));
if (problems.length) finish(1, `FAIL:\n  ${problems.join("\n  ")}\n(screenshot: ${shotPath})`);
finish(0, `dashboard e2e: ${cards.length} card(s) match the trace, no console errors; screenshot ${shotPath}\n` +
  cards.map((c) => `  GPU ${c.gpu}: util ${c.gpu_util}, SM ${c.sm_active}, ${c.state}: ${c.summary}`).join("\n"));
