#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the gpulens dashboards (dashboards/*.json, Grafana provisioning JSON)
from the panel lists below: one place to read every query. Run after editing:
  python3 deploy/grafana/make_dashboards.py
tests/e2e/grafana_dashboards.sh checks that the JSON is what this script writes,
that it type-checks against Grafana's dashboard schema (@grafana/schema), and
tools/fleet/fleet_sim.py that every target returns data from a real Prometheus.
"""
import json
import os

DS = {"type": "prometheus", "uid": "${datasource}"}
HERE = os.path.dirname(os.path.abspath(__file__))


def var_datasource():
    return {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
            "hide": 0, "refresh": 1}


def var_query(name, label, query, multi=False, include_all=False, all_value=None):
    v = {"name": name, "label": label, "type": "query", "datasource": DS,
         "query": {"query": query, "refId": "var"}, "refresh": 2, "sort": 1,
         "multi": multi, "includeAll": include_all, "hide": 0}
    if all_value is not None:
        v["allValue"] = all_value
    return v


class Board:
    def __init__(self, uid, title, description, variables):
        self.uid, self.title, self.description, self.variables = uid, title, description, variables
        self.panels = []
        self.y = 0
        self.x = 0
        self.row_h = 0

    def panel(self, kind, title, description, targets, w=12, h=8, unit=None, options=None,
              field_extra=None, min_=None, max_=None):
        if self.x + w > 24:
            self.x, self.y = 0, self.y + self.row_h
            self.row_h = 0
        defaults = {}
        if unit:
            defaults["unit"] = unit
        if min_ is not None:
            defaults["min"] = min_
        if max_ is not None:
            defaults["max"] = max_
        if field_extra:
            defaults.update(field_extra)
        p = {"id": len(self.panels) + 1, "type": kind, "title": title, "description": description,
             "datasource": DS, "gridPos": {"x": self.x, "y": self.y, "w": w, "h": h},
             "fieldConfig": {"defaults": defaults, "overrides": []}, "options": options or {},
             "targets": [dict({"datasource": DS, "refId": chr(ord("A") + i)}, **t)
                         for i, t in enumerate(targets)]}
        self.panels.append(p)
        self.x += w
        self.row_h = max(self.row_h, h)

    def json(self):
        return {"uid": self.uid, "title": self.title, "description": self.description,
                "tags": ["gpulens", "gpu"], "timezone": "browser", "editable": True,
                "graphTooltip": 1, "schemaVersion": 39, "version": 1, "refresh": "30s",
                "time": {"from": "now-6h", "to": "now"},
                "templating": {"list": self.variables}, "annotations": {"list": []},
                "links": [{"title": "gpulens dashboards", "type": "dashboards", "tags": ["gpulens"],
                           "asDropdown": True, "icon": "external link", "includeVars": True,
                           "keepTime": True, "targetBlank": False, "tooltip": "", "url": ""}],
                "panels": self.panels}


def t(expr, legend=None, instant=False, fmt=None):
    d = {"expr": expr, "range": not instant, "instant": instant}
    if legend:
        d["legendFormat"] = legend
    if fmt:
        d["format"] = fmt
    return d


C = 'cluster=~"$cluster"'
CLUSTER = var_query("cluster", "Cluster", "label_values(gpulens_gpu_info, cluster)", True, True, ".*")


def fleet():
    b = Board("gpulens-fleet", "gpulens / Fleet",
              "Where the fleet's GPU-seconds go: paid, allocated, kernel-active, SM-active, "
              "tensor-active; what the unused part costs, by namespace and pod.",
              [var_datasource(), CLUSTER])
    b.panel("bargauge", "Funnel: share of paid GPU-seconds",
            "Allocated: a process holds the GPU. Kernel-active: NVML utilization. SM-active and "
            "tensor-active: GPM. Each over every GPU paid for.",
            [t(f'sum(cluster:gpulens_funnel_allocated:ratio{{{C}}})', "allocated", True),
             t(f'sum(cluster:gpulens_funnel_kernel_active:ratio{{{C}}})', "kernel-active", True),
             t(f'sum(cluster:gpulens_funnel_sm_active:ratio{{{C}}})', "SM-active", True),
             t(f'sum(cluster:gpulens_funnel_tensor_active:ratio{{{C}}})', "tensor-active", True)],
            w=12, unit="percentunit", min_=0, max_=1,
            options={"orientation": "horizontal", "displayMode": "gradient"})
    b.panel("stat", "GPUs", "GPUs reporting, and how many a process holds.",
            [t(f'sum(cluster:gpulens_gpus:count{{{C}}})', "paid", True),
             t(f'sum(cluster:gpulens_allocated_gpus:sum{{{C}}})', "allocated", True)], w=6)
    b.panel("stat", "Unallocated, per hour", "Price of the GPUs no process holds.",
            [t(f'sum by (currency) (cluster:gpulens_unallocated_money_per_hour:sum{{{C}}})', "{{currency}}", True)],
            w=6, options={"colorMode": "value"})
    b.panel("timeseries", "Funnel over time", "The funnel's stages as GPUs' worth of work.",
            [t(f'sum(cluster:gpulens_allocated_gpus:sum{{{C}}})', "allocated"),
             t(f'sum(cluster:gpulens_kernel_active_gpus:sum{{{C}}})', "kernel-active"),
             t(f'sum(cluster:gpulens_sm_active_gpus:sum{{{C}}})', "SM-active"),
             t(f'sum(cluster:gpulens_tensor_active_gpus:sum{{{C}}})', "tensor-active")], w=12)
    b.panel("timeseries", "Money wasted per hour, by namespace",
            "Price x the share of allocated SM time no warp used, summed over a namespace's GPUs.",
            [t(f'sum by (namespace, currency) (cluster_namespace:gpulens_wasted_money_per_hour:sum{{{C}}})',
               "{{namespace}} ({{currency}})")], w=12)
    b.panel("bargauge", "Money wasted over the last day, by namespace",
            "The per-hour waste averaged over 24 h, times 24.",
            [t(f'sort_desc(sum by (namespace, currency) (cluster_namespace:gpulens_wasted_money:1d{{{C}}}))',
               "{{namespace}} ({{currency}})", True)], w=12, options={"orientation": "horizontal"})
    b.panel("table", "Top wasting pods", "Pods holding GPUs whose SMs sit unused, most money first.",
            [t(f'topk(10, sum by (namespace, pod, currency) (gpu:gpulens_wasted_money_per_hour:sum{{{C},pod!=""}}))',
               None, True, "table")], w=12)
    # From the kubelet's pod-resources API (gpulens_gpu_allocation_info): a pod's
    # GPUs count whether anything runs in it or not, so an idle pod is charged.
    b.panel("timeseries", "Money held idle per hour, by namespace",
            "Price x the share of time no kernel ran, on the GPUs each namespace's pods hold by the "
            "kubelet's pod-resources API (a pod that never starts a GPU process counts in full).",
            [t(f'cluster_namespace:gpulens_allocated_idle_money_per_hour:sum{{{C}}}',
               "{{namespace}} ({{currency}})")], w=12, min_=0)
    b.panel("table", "Held and idle over the last day, by namespace",
            "GPU-hours each namespace's pods held without a kernel over the last day, and what they cost.",
            [t(f'cluster_namespace:gpulens_allocated_idle_gpu_hours:1d{{{C}}}', None, True, "table"),
             t(f'cluster_namespace:gpulens_allocated_idle_money:1d{{{C}}}', None, True, "table")],
            w=12)
    b.panel("timeseries", "State shares", "Share of GPUs in each diagnosed state.",
            [t(f'sum by (state) (cluster_state:gpulens_gpus:share{{{C}}})', "{{state}}")],
            w=12, unit="percentunit", field_extra={"custom": {"stacking": {"mode": "normal"}, "fillOpacity": 60}})
    b.panel("timeseries", "Efficiency by namespace", "SM activity over utilization of each namespace's GPUs.",
            [t(f'cluster_namespace:gpulens_efficiency:ratio{{{C}}}', "{{namespace}}")],
            w=12, unit="percentunit", min_=0)
    b.panel("table", "Nodes", "Each node's GPUs, allocated and SM-active GPUs' worth.",
            [t(f'sum by (hostname) (cluster_node:gpulens_gpus:count{{{C}}})', None, True, "table"),
             t(f'sum by (hostname) (cluster_node:gpulens_allocated_gpus:sum{{{C}}})', None, True, "table"),
             t(f'sum by (hostname) (cluster_node:gpulens_sm_active_gpus:sum{{{C}}})', None, True, "table")],
            w=12, options={"showHeader": True})
    slurm_account_panels(b)
    b.panel("table", "Firing agent alerts", "gpulens_alert_firing across the fleet.",
            [t(f'sum by (hostname, gpu, rule, severity, namespace, pod) (gpulens_alert_firing{{{C}}})',
               None, True, "table")], w=24)
    kernel_panels(b)
    return b


def kernel_panels(b):
    """The kernels of jobs that send their node summaries (docs/kernels-agent.md)."""
    b.panel("bargauge", "Top kernels by GPU-hours, last day, by namespace",
            "Each kernel's share of its GPU while traced (windows of 2 s every 20 s), summed over "
            "a namespace's GPUs and the day: an estimate of GPU-hours. \"other\" is each GPU's "
            "kernels past its top N.",
            [t(f'topk(15, sum by (namespace, kernel) '
               f'(cluster_namespace_kernel:gpulens_kernel_gpu_hours:1d{{{C}}}))',
               "{{namespace}}: {{kernel}}", True)], w=12, unit="h",
            options={"orientation": "horizontal", "displayMode": "gradient"})
    b.panel("timeseries", "Top kernels now, GPUs' worth by namespace",
            "The same estimate as GPUs' worth (GPU-seconds per second), the 10 largest.",
            [t(f'topk(10, sum by (namespace, kernel) '
               f'(cluster_namespace_kernel:gpulens_kernel_gpus:sum{{{C}}}))',
               "{{namespace}}: {{kernel}}")], w=12, min_=0)
    b.panel("timeseries", "Most launched kernels, launches per second by namespace",
            "Every kernel launch of the processes that count them (libgpulens_launches.so with "
            "GPULENS_LAUNCHES_AGENT), the 10 most launched: a count, not time. Many launches of "
            "short kernels beside low SM activity is launch-bound work (CUDA graphs, fusion).",
            [t(f'topk(10, sum by (namespace, kernel) '
               f'(cluster_namespace_kernel:gpulens_kernel_launches:rate5m{{{C}}}))',
               "{{namespace}}: {{kernel}}")], w=24, min_=0)


def node():
    host = var_query("hostname", "Node", f'label_values(gpulens_gpu_info{{{C}}}, hostname)')
    b = Board("gpulens-node", "gpulens / Node", "One node's GPUs side by side.",
              [var_datasource(), CLUSTER, host])
    H = f'{C},hostname="$hostname"'
    b.panel("timeseries", "Utilization (NVML) by GPU", "Share of time a kernel ran.",
            [t(f'gpulens_gpu_utilization_ratio{{{H}}}', "GPU {{gpu}}")], unit="percentunit", min_=0, max_=1)
    b.panel("timeseries", "SM activity by GPU", "Share of cycles an SM had a warp (GPM).",
            [t(f'gpulens_sm_active_ratio{{{H}}}', "GPU {{gpu}}")], unit="percentunit", min_=0, max_=1)
    b.panel("state-timeline", "Diagnosed state", "Each GPU's state over the agent's window.",
            [t(f'max by (gpu, state) (gpulens_diagnosis_state{{{H}}}) == 1', "GPU {{gpu}} {{state}}")], w=24)
    b.panel("timeseries", "Power", "Board power draw.",
            [t(f'gpulens_power_watts{{{H}}}', "GPU {{gpu}}")], unit="watt")
    b.panel("timeseries", "Device memory used", "",
            [t(f'gpulens_memory_used_bytes{{{H}}}', "GPU {{gpu}}")], unit="bytes")
    b.panel("stat", "Processes per GPU", "Processes holding a context (0: free).",
            [t(f'gpulens_gpu_processes{{{H}}}', "GPU {{gpu}}", True)], w=12)
    b.panel("stat", "Node funnel", "Allocated, SM-active GPUs' worth over GPUs.",
            [t(f'cluster_node:gpulens_allocated_gpus:sum{{{H}}} / cluster_node:gpulens_gpus:count{{{H}}}', "allocated", True),
             t(f'cluster_node:gpulens_sm_active_gpus:sum{{{H}}} / cluster_node:gpulens_gpus:count{{{H}}}', "SM-active", True)],
            w=12, unit="percentunit")
    b.panel("timeseries", "Temperature", "", [t(f'gpulens_temperature_celsius{{{H}}}', "GPU {{gpu}}")], unit="celsius")
    b.panel("timeseries", "Host CPU busy", "Whole host: a starved input pipeline shows here.",
            [t(f'gpulens_host_cpu_busy_ratio{{{H}}}', "CPU")], unit="percentunit", min_=0, max_=1)
    b.panel("timeseries", "Kernel launches per second by GPU",
            "Launches of the processes that count them (GPULENS_LAUNCHES_AGENT); beside SM "
            "activity, many launches with few SMs busy is launch-bound work.",
            [t(f'sum by (gpu) (rate(gpulens_kernel_launches_total{{{H}}}[$__rate_interval]))', "GPU {{gpu}}"),
             t(f'sum by (gpu) (rate(gpulens_graph_launches_total{{{H}}}[$__rate_interval]))',
               "GPU {{gpu}} graphs")], min_=0)
    return b


def gpu():
    host = var_query("hostname", "Node", f'label_values(gpulens_gpu_info{{{C}}}, hostname)')
    g = var_query("gpu", "GPU", f'label_values(gpulens_gpu_info{{{C},hostname="$hostname"}}, gpu)')
    b = Board("gpulens-gpu", "gpulens / GPU", "One GPU: the classic number beside what the SMs did.",
              [var_datasource(), CLUSTER, host, g])
    G = f'{C},hostname="$hostname",gpu="$gpu"'
    b.panel("timeseries", "Utilization beside SM activity",
            "Utilization counts a kernel on one SM as busy; SM activity says how many SMs worked.",
            [t(f'gpulens_gpu_utilization_ratio{{{G}}}', "utilization (NVML)"),
             t(f'gpulens_sm_active_ratio{{{G}}}', "SM active (GPM)"),
             t(f'gpulens_sm_occupancy_ratio{{{G}}}', "SM occupancy (GPM)")],
            w=24, unit="percentunit", min_=0, max_=1)
    b.panel("timeseries", "Tensor pipes", "", [t(f'gpulens_tensor_active_ratio{{{G}}}', "tensor active")],
            unit="percentunit", min_=0, max_=1)
    b.panel("timeseries", "DRAM bandwidth", "Share of peak DRAM bandwidth used.",
            [t(f'gpulens_dram_active_ratio{{{G}}}', "DRAM active")], unit="percentunit", min_=0, max_=1)
    b.panel("state-timeline", "State band", "The diagnosed state over time.",
            [t(f'max by (state) (gpulens_diagnosis_state{{{G}}}) == 1', "{{state}}")], w=24, h=5)
    b.panel("table", "Alerts", "Agent alerts firing on this GPU.",
            [t(f'gpulens_alert_firing{{{G}}}', None, True, "table")], w=12)
    b.panel("stat", "Processes", "Processes on the GPU, and the pod when one pod holds it.",
            [t(f'max by (namespace, pod) (gpulens_gpu_processes{{{G}}})', "{{namespace}}/{{pod}}", True)], w=12)
    b.panel("timeseries", "PCIe and NVLink", "",
            [t(f'gpulens_pcie_throughput_bytes_per_second{{{G}}}', "PCIe {{direction}}")], unit="Bps")
    b.panel("timeseries", "Clocks and power", "",
            [t(f'gpulens_sm_clock_hertz{{{G}}}', "SM clock"), t(f'gpulens_power_watts{{{G}}}', "power (W)")])
    return b


# Slurm (docs/slurm.md, docs/fleet.md). The job and account labels live only on the
# per-process series (agents with --process-metrics): a GPU belongs to a job while
# one of the job's processes is on it, so per-GPU series are joined to jobs through
# JOB_GPUS, one series per (GPU, job) at each instant.
def job_gpus(selector):
    return (f'group by (cluster, instance, hostname, gpu, slurm_job, slurm_account) '
            f'(gpulens_process_memory_used_bytes{{{selector}}})')


def on_job_gpus(per_gpu, selector, keep=""):
    """A per-GPU series (one per GPU) for each selected job on the GPU, with the job's
    labels and the series' labels `keep`."""
    return f'({per_gpu}) * on (instance, gpu) group_right ({keep}) {job_gpus(selector)}'


def of_job(per_gpu, selector):
    """Per-GPU series, their own labels kept, while one job (the selector) holds the GPU."""
    return (f'{per_gpu} * on (instance, gpu) group_left () '
            f'group by (instance, gpu) (gpulens_process_memory_used_bytes{{{selector}}})')


def slurm_account_panels(b):
    A = f'{C},slurm_job!=""'
    b.panel("timeseries", "Money wasted per hour, by Slurm account",
            "As by namespace, for GPUs held by Slurm jobs: price x the share of SM time no warp used, "
            "summed over each account's GPUs (a GPU that jobs of two accounts share counts for both).",
            [t(f'sum by (slurm_account, currency) ({on_job_gpus("gpu:gpulens_wasted_money_per_hour:sum", A, "currency")})',
               "{{slurm_account}} ({{currency}})")], w=12)
    b.panel("timeseries", "Efficiency by Slurm account", "SM activity over utilization of each account's GPUs.",
            [t(f'sum by (slurm_account) ({on_job_gpus("gpulens_sm_active_ratio", A)}) / '
               f'sum by (slurm_account) ({on_job_gpus("gpulens_gpu_utilization_ratio", A)})', "{{slurm_account}}")],
            w=12, unit="percentunit", min_=0)
    # From Slurm's allocation (the prolog, gpulens_gpu_allocation_info): GPUs a job
    # holds count whether a process of it runs there or not.
    b.panel("timeseries", "GPUs held and idle, by Slurm account",
            "GPUs' worth that each account's jobs hold while no kernel runs on them (from Slurm's "
            "allocation: a job that never started a GPU process counts in full).",
            [t(f'cluster_slurm_account:gpulens_allocated_idle_gpus:sum{{{C}}}', "{{slurm_account}}")],
            w=12, min_=0)
    b.panel("table", "Held and idle over the last day, by Slurm account",
            "GPU-hours each account's jobs held without a kernel over the last day, and what they cost.",
            [t(f'cluster_slurm_account:gpulens_allocated_idle_gpu_hours:1d{{{C}}}', None, True, "table"),
             t(f'cluster_slurm_account:gpulens_allocated_idle_money:1d{{{C}}}', None, True, "table")],
            w=12)


def slurm_job():
    # Jobs whose processes ran on a GPU, and jobs that Slurm's allocation says held
    # one (a job that never started a GPU process has no process series).
    job = var_query("job", "Slurm job",
                    f'label_values({{__name__=~"gpulens_process_memory_used_bytes|gpulens_gpu_allocation_info",'
                    f'{C},slurm_job!=""}}, slurm_job)')
    b = Board("gpulens-slurm-job", "gpulens / Slurm job",
              "One Slurm job: the GPUs its processes held, what they did, what it cost. Needs the agents' "
              "--process-metrics; for the verdict after the job: gpulens report --slurm-job.",
              [var_datasource(), CLUSTER, job])
    J = f'{C},slurm_job="$job"'
    b.panel("table", "GPUs of the job", "Each GPU a process of the job held, with its node, account and steps.",
            [t(f'count by (hostname, gpu, slurm_account, slurm_step) (gpulens_process_memory_used_bytes{{{J}}})',
               None, True, "table")], w=12)
    b.panel("table", "GPUs Slurm allocated to the job",
            "Each GPU the job holds by Slurm's allocation (the prolog), whether it runs anything there or not.",
            [t(f'count by (hostname, gpu, slurm_user, slurm_account, slurm_partition) '
               f'(gpulens_gpu_allocation_info{{{J}}})', None, True, "table")], w=12)
    b.panel("stat", "Cost per hour, and wasted", "The job's GPUs' price, and the part no warp used (SM activity).",
            [t(f'sum by (currency) ({of_job("gpulens_gpu_price_per_hour", J)})',
               "paid ({{currency}})", True),
             t(f'sum by (currency) ({of_job("gpu:gpulens_wasted_money_per_hour:sum", J)})',
               "wasted ({{currency}})", True)], w=6)
    b.panel("stat", "Cost over the time range",
            "Price x hours each GPU held the job, over the dashboard's range (sampled every $__interval).",
            [t(f'sum by (currency) (sum_over_time(({of_job("gpulens_gpu_price_per_hour", J)})'
               f'[$__range:$__interval])) * $__interval_ms / 3600000', "{{currency}}", True)], w=6)
    b.panel("state-timeline", "Diagnosed state of each GPU", "Each of the job's GPUs' state while the job held it.",
            [t(f'max by (hostname, gpu, state) ({of_job("gpulens_diagnosis_state", J)}) == 1',
               "{{hostname}} GPU {{gpu}} {{state}}")], w=24)
    b.panel("timeseries", "Utilization beside SM activity",
            "Utilization counts a kernel on one SM as busy; SM activity says how many SMs worked.",
            [t(f'max by (hostname, gpu) ({of_job("gpulens_gpu_utilization_ratio", J)})',
               "{{hostname}} GPU {{gpu}} utilization"),
             t(f'max by (hostname, gpu) ({of_job("gpulens_sm_active_ratio", J)})',
               "{{hostname}} GPU {{gpu}} SM active")], unit="percentunit", min_=0, max_=1)
    b.panel("timeseries", "Device memory of the job's processes", "",
            [t(f'sum by (hostname, gpu) (gpulens_process_memory_used_bytes{{{J}}})', "{{hostname}} GPU {{gpu}}")],
            unit="bytes")
    return b


if __name__ == "__main__":
    for board in (fleet(), node(), gpu(), slurm_job()):
        path = os.path.join(HERE, "dashboards", board.uid + ".json")
        with open(path, "w") as f:
            json.dump(board.json(), f, indent=2)
            f.write("\n")
