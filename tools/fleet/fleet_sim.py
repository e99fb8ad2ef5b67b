#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A simulated GPU fleet on loopback: N gpulens agents replaying 8-GPU recordings
(tools/fleet/make_traces.py), one real Prometheus scraping them with the rules of
deploy/prometheus, a real Alertmanager, and a webhook listener that receives the
`stalled` alert of the node that replays a hung collective.

Every pod of the fleet runs a stand-in job that sends its node's agent kernel
summaries (tools/fleet/kernel_job.py: a training job per node, and an inference
server whose JIT names two new kernels per window); its PID is the process the
recordings show on the pod's GPUs.

Checks (exit 1 on failure): the webhook receives GpulensStalled with hostname,
gpu and pod; with --dashboards, every target of every panel returns data through
Prometheus' HTTP API. Measures: series per GPU (native, --compat dcgm,
--process-metrics, with kernel summaries), scrape duration p50/p99, Prometheus
RSS, rule evaluation time per cycle, the alert's delays. Writes
--out/results.json and prints a table.
Exit 77 when prometheus or prometheus-alertmanager is not installed.

Rule groups run at --rule-interval (rewritten in a copy of the rule files) so
that the day-long groups (5 m) evaluate within a short run.
"""
import argparse
import http.server
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import make_traces  # noqa: E402

PROCS = []


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_for(what, fn, seconds):
    end = time.time() + seconds
    while time.time() < end:
        try:
            v = fn()
            if v:
                return v
        except Exception:
            pass
        time.sleep(0.25)
    raise SystemExit(f"FAIL: {what} within {seconds} s")


def start(cmd, log):
    p = subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                         preexec_fn=lambda: os.nice(5))
    PROCS.append(p)
    return p


def start_agent(gpulens, log, args):
    p = start([gpulens, "serve", "--listen", "127.0.0.1:0", *args], log)

    def url():
        if p.poll() is not None:
            raise SystemExit(f"FAIL: agent exited: {open(log).read()[-2000:]}")
        m = re.search(r" on (http://127\.0\.0\.1:\d+) \(TLS", open(log).read())
        return m.group(1) if m else None
    return p, wait_for("an agent listening", url, 60)


class Webhook(http.server.BaseHTTPRequestHandler):
    received = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Webhook.received.append((time.time(), json.loads(body)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *a):
        pass


def kernel_series_ready(url, gpus, windows):
    """True once `windows` summaries were accepted and `gpus` GPUs have kernel series."""
    health = json.loads(get(url + "/api/v1/health"))
    if health.get("kernels", {}).get("accepted", 0) < windows:
        return False
    text = get(url + "/metrics")
    return len(set(re.findall(r'^gpulens_kernel_seconds_total\{gpu="(\d+)"', text, re.M))) >= gpus


def series_per_gpu(gpulens, trace, kube, tmp, extra, ready=None):
    """Series per GPU (mean over the node's 8, and the most on one) and the rest."""
    p, url = start_agent(gpulens, os.path.join(tmp, "count.log"),
                         ["--replay", trace, "--speed", "0", "--no-history",
                          "--kube-log-dir", kube, *extra])
    wait_for("the replay to end", lambda: json.loads(get(url + "/api/v1/health"))["source"]["ended"], 60)
    if ready:
        wait_for("kernel summaries", lambda: ready(url), 60)
    text = get(url + "/metrics")
    p.terminate()
    p.wait()
    PROCS.remove(p)
    gpu_series = [l for l in text.splitlines() if l and not l.startswith("#") and re.search(r'[{,](gpu|UUID)="', l)]
    other = [l for l in text.splitlines() if l and not l.startswith("#") and l not in gpu_series]
    by_gpu = {}
    for l in gpu_series:
        g = re.search(r'[{,](?:gpu|gpu_index|UUID)="([^"]+)"', l).group(1)
        by_gpu[g] = by_gpu.get(g, 0) + 1
    return len(gpu_series) / 8, max(by_gpu.values()), len(other)


def kernel_socket(tmp, node):
    return os.path.join(tmp, f"k-{node:03d}.sock")


def start_kernel_jobs(tmp, nodes):
    """Two jobs per node (one per pod of 3 GPUs); {(node, pod): pid}."""
    pids = {}
    for node in range(nodes):
        for pod, args in ((0, ["--kind", "train"]), (1, ["--kind", "serve", "--jit", "2"])):
            p = start([sys.executable, os.path.join(HERE, "kernel_job.py"), "--socket",
                       kernel_socket(tmp, node), "--devices", "3", *args],
                      os.path.join(tmp, f"job-{node}-{pod}.log"))
            pids[(node, pod)] = p.pid
    return pids


def rewrite_rules(src_dir, dst_dir, interval):
    os.makedirs(dst_dir, exist_ok=True)
    files = []
    for f in sorted(os.listdir(src_dir)):
        if f.endswith(".rules.yml"):
            text = open(os.path.join(src_dir, f)).read()
            if interval:
                text = re.sub(r"(\n\s+interval:) \S+", rf"\1 {interval}", text)
            dst = os.path.join(dst_dir, f)
            open(dst, "w").write(text)
            files.append(dst)
    return files


def substitute(expr, variables):
    # Longest names first: $__interval_ms is not $__interval followed by "_ms".
    for k, v in sorted(variables.items(), key=lambda kv: -len(kv[0])):
        expr = expr.replace("${" + k + "}", v).replace("$" + k, v)
    return expr


def check_dashboards(prom, dash_dir, variables):
    results = []
    for f in sorted(os.listdir(dash_dir)):
        if not f.endswith(".json"):
            continue
        d = json.load(open(os.path.join(dash_dir, f)))
        panels = []
        for p in d.get("panels", []):
            panels.append(p)
            panels.extend(p.get("panels", []))
        for p in panels:
            for t in p.get("targets", []):
                expr = substitute(t["expr"], variables)
                r = json.loads(get(prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})))
                n = len(r["data"]["result"]) if r["status"] == "success" else -1
                results.append({"dashboard": f, "panel": p["title"], "expr": expr, "series": n})
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpulens", required=True)
    ap.add_argument("--nodes", type=int, default=2, help="8-GPU agents (plus one stalled node)")
    ap.add_argument("--scrape-interval", default="15s")
    ap.add_argument("--rule-interval", default="", help="rewrite every group's interval (e.g. 5s)")
    ap.add_argument("--speed", type=float, default=1.0, help="replay speed")
    ap.add_argument("--measure-s", type=float, default=60, help="how long to collect after everything runs")
    ap.add_argument("--dashboards", default="", help="deploy/grafana/dashboards: check every panel")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    for tool in ("prometheus", "prometheus-alertmanager"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed (Debian: apt-get install {tool})", file=sys.stderr)
            sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="gpulens-fleet.")
    t0 = time.time()
    results = {"nodes": a.nodes, "gpus": a.nodes * 8 + 1, "scrape_interval": a.scrape_interval}
    try:
        pids = start_kernel_jobs(tmp, a.nodes)
        make_traces.main_args(REPO + "/tests/fixtures/traces", tmp, a.nodes, pids=pids)
        facts = json.load(open(os.path.join(tmp, "facts.json")))
        kube = os.path.join(tmp, "kube", "log")
        node0 = os.path.join(tmp, "node-000.trace.jsonl")
        # With kernels: 6 busy GPUs, after 20 windows (the JIT's names churning).
        ready = lambda url: kernel_series_ready(url, 6, 20)
        for name, extra, wait in (("native", [], None), ("native_and_dcgm", ["--compat", "dcgm"], None),
                                  ("process_metrics", ["--process-metrics"], None),
                                  ("kernels", ["--kernels-socket", kernel_socket(tmp, 0)], ready)):
            per_gpu, most, other = series_per_gpu(a.gpulens, node0, kube, tmp, extra, wait)
            results[f"series_per_gpu_{name}"] = per_gpu
            results[f"series_most_on_one_gpu_{name}"] = most
            results[f"series_per_agent_not_per_gpu_{name}"] = other
        if results["series_most_on_one_gpu_kernels"] > 150:
            raise SystemExit(f"FAIL: {results['series_most_on_one_gpu_kernels']} series on one GPU with "
                             "kernel summaries (the goal: at most 150)")

        # Alertmanager and the webhook.
        hook_port = free_port()
        server = http.server.ThreadingHTTPServer(("127.0.0.1", hook_port), Webhook)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        am_port = free_port()
        open(os.path.join(tmp, "am.yml"), "w").write(f"""
route:
  receiver: hook
  group_by: [alertname, hostname, gpu]
  group_wait: 1s
  group_interval: 5s
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs:
      - url: http://127.0.0.1:{hook_port}/
""")
        start(["prometheus-alertmanager", f"--config.file={tmp}/am.yml", f"--storage.path={tmp}/am",
               f"--web.listen-address=127.0.0.1:{am_port}", "--cluster.listen-address="],
              os.path.join(tmp, "am.log"))
        wait_for("Alertmanager ready", lambda: get(f"http://127.0.0.1:{am_port}/-/ready") is not None, 60)

        # The agents: the fleet, then the stalled node last (its clock matters).
        targets = []
        # No config: the money panels must have data from the built-in price table alone.
        # --process-metrics: the Slurm job and account labels (odd nodes) are on
        # the per-process series only, which the Slurm panels join to the GPUs.
        common = ["--no-history", "--kube-log-dir", kube, "--speed", str(a.speed), "--process-metrics"]
        for node in range(a.nodes):
            trace = os.path.join(tmp, f"node-{node:03d}.trace.jsonl")
            _, url = start_agent(a.gpulens, os.path.join(tmp, f"agent-{node}.log"),
                                 ["--replay", trace, "--kernels-socket", kernel_socket(tmp, node), *common])
            targets.append(url[len("http://"):])
        results["agents_started_s"] = round(time.time() - t0, 1)

        prom_port = free_port()
        rules = rewrite_rules(os.path.join(REPO, "deploy", "prometheus"), os.path.join(tmp, "rules"),
                              a.rule_interval)
        open(os.path.join(tmp, "prometheus.yml"), "w").write(f"""
global:
  scrape_interval: {a.scrape_interval}
  evaluation_interval: {a.rule_interval or '30s'}
  external_labels: {{cluster: sim}}
rule_files: {json.dumps(rules)}
alerting:
  alertmanagers:
    - static_configs: [{{targets: ['127.0.0.1:{am_port}']}}]
scrape_configs:
  - job_name: prometheus
    static_configs: [{{targets: ['127.0.0.1:{prom_port}']}}]
  - job_name: gpulens
    static_configs:
      - targets: {json.dumps(targets)}
        labels: {{cluster: sim}}
  - job_name: gpulens-stalled
    static_configs:
      - targets: []
        labels: {{cluster: sim}}
""")
        prom = start(["prometheus", f"--config.file={tmp}/prometheus.yml", f"--storage.tsdb.path={tmp}/tsdb",
                      f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn", "--web.enable-lifecycle"],
                     os.path.join(tmp, "prometheus.log"))
        purl = f"http://127.0.0.1:{prom_port}"
        def prom_ready():
            if prom.poll() is not None:
                raise SystemExit("FAIL: Prometheus exited: " + open(os.path.join(tmp, "prometheus.log")).read()[-2000:])
            return get(purl + "/-/ready") is not None
        wait_for("Prometheus ready", prom_ready, 120)

        # The stalled node joins the scrape config once Prometheus runs.
        _, surl = start_agent(a.gpulens, os.path.join(tmp, "agent-stalled.log"),
                              ["--replay", os.path.join(tmp, "stalled.trace.jsonl"), *common])
        cfg = open(os.path.join(tmp, "prometheus.yml")).read().replace(
            "      - targets: []", f"      - targets: ['{surl[len('http://'):]}']")
        open(os.path.join(tmp, "prometheus.yml"), "w").write(cfg)
        urllib.request.urlopen(urllib.request.Request(purl + "/-/reload", method="POST"), timeout=30)

        def agent_fires():
            alerts = json.loads(get(surl + "/api/v1/alerts"))
            firing = alerts.get("firing", alerts if isinstance(alerts, list) else [])
            hit = [x for x in firing if x.get("rule") == "stalled"]
            return (time.time(), hit[0]["fired_at"]) if hit else None
        # Polled every 0.25 s: the wall time it was first seen is within that of its firing.
        fired_wall, fired_trace_t = wait_for("the agent's stalled alert", agent_fires, 240 / a.speed + 120)

        def webhook_got():
            for t, payload in Webhook.received:
                for al in payload.get("alerts", []):
                    if al["labels"].get("alertname") == "GpulensStalled" and al["status"] == "firing":
                        return t, al
            return None
        hook_wall, alert = wait_for("the webhook to receive GpulensStalled", webhook_got, 180)
        for label in ("hostname", "gpu", "pod"):
            if label not in alert["labels"]:
                raise SystemExit(f"FAIL: the webhook's alert lacks `{label}`: {alert['labels']}")
        results["alert_labels"] = alert["labels"]
        # The agent's part in trace seconds (its `for` and window), the rest wall seconds.
        results["alert_hang_to_agent_trace_s"] = round(fired_trace_t - facts["stalled_start"], 1)
        results["alert_agent_to_webhook_s"] = round(hook_wall - fired_wall, 1)
        results["alert_hang_to_webhook_s"] = round(results["alert_hang_to_agent_trace_s"] + hook_wall - fired_wall, 1)

        # Steady state: measure, sampling the rule groups' last evaluation times.
        cycles = []
        end = time.time() + a.measure_s
        while time.time() < end:
            gs = json.loads(get(purl + "/api/v1/rules"))["data"]["groups"]
            cycles.append(sum(g.get("evaluationTime", 0) for g in gs))
            time.sleep(min(5, max(0, end - time.time())))
        results["rule_eval_s_per_cycle_median"] = round(statistics.median(cycles), 4)
        results["rule_eval_s_per_cycle_max"] = round(max(cycles), 4)
        q = lambda e: json.loads(get(purl + "/api/v1/query?" + urllib.parse.urlencode({"query": e})))["data"]["result"]
        window = f"{int(a.measure_s)}s"
        durations = [float(v[1]) for r in
                     json.loads(get(purl + "/api/v1/query?" + urllib.parse.urlencode(
                         {"query": f'scrape_duration_seconds{{job="gpulens"}}[{window}]'})))["data"]["result"]
                     for v in r["values"]]
        durations.sort()
        if durations:
            results["scrape_samples"] = len(durations)
            results["scrape_p50_ms"] = round(1000 * statistics.median(durations), 2)
            results["scrape_p99_ms"] = round(1000 * durations[min(len(durations) - 1, int(0.99 * len(durations)))], 2)
        agent_rss = []
        for p in PROCS:
            try:
                st = open(f"/proc/{p.pid}/status").read()
                if open(f"/proc/{p.pid}/cmdline").read().split("\0")[0] == a.gpulens:
                    agent_rss.append(int(re.search(r"VmRSS:\s+(\d+)", st).group(1)) / 1024)
            except (OSError, AttributeError):
                pass
        if agent_rss:
            results["agent_rss_mib_mean"] = round(statistics.mean(agent_rss), 1)
        results["series_in_head"] = int(float(q("prometheus_tsdb_head_series")[0]["value"][1])) if q("prometheus_tsdb_head_series") else None
        status = open(f"/proc/{prom.pid}/status").read()
        results["prometheus_rss_mib"] = round(int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024, 1)
        groups = json.loads(get(purl + "/api/v1/rules"))["data"]["groups"]
        results["rule_eval_s_per_cycle_last"] = round(sum(g.get("evaluationTime", 0) for g in groups), 4)
        results["rule_eval_s_by_group"] = {g["name"]: round(g.get("evaluationTime", 0), 4) for g in groups}
        # "unknown": not evaluated yet (the 5-minute group in a short run).
        results["rules_not_yet_evaluated"] = [r["name"] for g in groups for r in g["rules"]
                                              if r.get("health") == "unknown"]
        bad = [r for g in groups for r in g["rules"] if r.get("health") not in ("ok", "unknown", None)]
        if bad:
            raise SystemExit(f"FAIL: rules unhealthy: {[(r['name'], r.get('lastError')) for r in bad]}")

        if a.dashboards:
            hosts = sorted({r["metric"]["hostname"] for r in q('gpulens_gpu_info')})
            pods = q('gpulens_gpu_info{pod!=""}')
            variables = {"cluster": "sim", "hostname": pods[0]["metric"]["hostname"],
                         "gpu": pods[0]["metric"]["gpu"], "namespace": ".*",
                         "job": (q('gpulens_process_memory_used_bytes{slurm_job!=""}') or
                                 [{"metric": {"slurm_job": "none"}}])[0]["metric"]["slurm_job"],
                         "datasource": "prometheus", "__rate_interval": "1m", "__interval": "15s", "__interval_ms": "15000",
                         "__range": "1h"}
            stall = [h for h in hosts if h == "node-stalled"]
            checks = check_dashboards(purl, a.dashboards, variables)
            # Panels about alerts are checked on the node whose alert fires.
            alert_vars = dict(variables, hostname=stall[0] if stall else variables["hostname"], gpu="0")
            for c in checks:
                if c["series"] <= 0 and "alert" in c["expr"]:
                    c2 = check_dashboards(purl, a.dashboards, alert_vars)
                    c["series"] = max(x["series"] for x in c2 if x["panel"] == c["panel"] and x["dashboard"] == c["dashboard"])
            results["panels_checked"] = len(checks)
            empty = [c for c in checks if c["series"] <= 0]
            results["panels_without_data"] = empty
            if empty:
                for c in empty:
                    print(f"EMPTY: {c['dashboard']} / {c['panel']}: {c['expr']}", file=sys.stderr)
                raise SystemExit(f"FAIL: {len(empty)} panel queries returned no data")
    finally:
        results["wall_s"] = round(time.time() - t0, 1)
        print(json.dumps(results, indent=1))
        if a.out:
            os.makedirs(a.out, exist_ok=True)
            json.dump(results, open(os.path.join(a.out, "results.json"), "w"), indent=1)
        for p in PROCS:
            p.send_signal(signal.SIGTERM)
        for p in PROCS:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        if os.environ.get("GPULENS_FLEET_KEEP"):
            print("kept", tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
