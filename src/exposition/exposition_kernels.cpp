// SPDX-License-Identifier: Apache-2.0
// The jobs' kernel summaries as counters per GPU and pod (docs/kernels-agent.md,
// "Prometheus series"). Every value is traced seconds: time inside the windows
// the jobs traced (2 s of every 20 s by default), never wall time; shares of GPU
// time are a family's rate over gpulens_kernel_traced_seconds_total's. Beside
// them, the jobs' launch counts (gpulens_kernel_launches_total and its kin): every
// launch of the processes that count, not a sample.
#include "exposition/exposition.hpp"
#include "exposition/prom_writer.hpp"
#include "kernels/record/kernel_label.hpp"

namespace gpulens::exposition {
namespace {

// The GPU's identity labels, then the pod's where known.
std::string row_labels(const agent::LiveSnapshot& snap, const agent::KernelSeriesRow& r) {
  std::string l;
  const agent::GpuLive* gpu = nullptr;
  for (const auto& g : snap.gpus) {
    if (g.device.index == r.gpu) gpu = &g;
  }
  if (gpu != nullptr) {
    l = gpu_identity_labels(snap, *gpu);
  } else {
    l = render_labels({{"gpu", std::to_string(r.gpu)}, {"hostname", snap.hostname}});
  }
  if (!r.pod.namespace_name.empty()) append_label(l, "namespace", r.pod.namespace_name);
  if (!r.pod.pod.empty()) append_label(l, "pod", r.pod.pod);
  if (!r.pod.container.empty()) append_label(l, "container", r.pod.container);
  return l;
}

struct KernelFamily {
  const char* name;
  const char* help;
  double agent::KernelSeriesRow::*seconds;
};

constexpr KernelFamily kFamilies[] = {
    {"gpulens_kernel_traced_seconds_total",
     "Wall time covered by the kernel trace windows of the jobs (per pod) that sent summaries "
     "(2 s of every 20 s by default): the denominator of the other gpulens_kernel_ families",
     &agent::KernelSeriesRow::traced_s},
    {"gpulens_kernel_idle_seconds_total",
     "Traced seconds in which the GPU ran none of the reporting processes' work (summed per "
     "process)",
     &agent::KernelSeriesRow::idle_s},
    {"gpulens_kernel_collective_seconds_total",
     "Traced GPU seconds in collective kernels (NCCL and the like); also in "
     "gpulens_kernel_seconds_total",
     &agent::KernelSeriesRow::collective_s},
    {"gpulens_kernel_copy_seconds_total", "Traced GPU seconds of memory copies",
     &agent::KernelSeriesRow::copy_s},
    {"gpulens_kernel_memset_seconds_total", "Traced GPU seconds of memsets",
     &agent::KernelSeriesRow::memset_s},
};

}  // namespace

namespace {

void render_launch_metrics(PromWriter& w, const KernelSeriesStatus& series,
                           const std::vector<std::string>& labels) {
  bool any = false;
  for (const auto& r : series.rows) any = any || r.has_launches;
  if (!any) return;
  w.family("gpulens_kernel_launches_total", "counter",
           "Kernel launches of the processes that count them (libgpulens_launches.so with "
           "GPULENS_LAUNCHES_AGENT), every one: the kernels with the most recent launches per "
           "GPU are named (short name, label kernel), the rest are kernel=\"other\"; a process "
           "on several GPUs counts on each");
  for (std::size_t i = 0; i < series.rows.size(); ++i) {
    const auto& r = series.rows[i];
    if (!r.has_launches) continue;
    for (const auto& [kernel, n] : r.named_launches) {
      w.sample("gpulens_kernel_launches_total", labels[i], "kernel", kernel, n);
    }
    w.sample("gpulens_kernel_launches_total", labels[i], "kernel", kernels::kOtherKernelLabel,
             r.other_launches);
  }
  w.family("gpulens_graph_launches_total", "counter",
           "CUDA graph launches of the processes that count them (the kernels inside a graph "
           "are not counted one by one)");
  for (std::size_t i = 0; i < series.rows.size(); ++i) {
    if (series.rows[i].has_launches) {
      w.sample("gpulens_graph_launches_total", labels[i], series.rows[i].graph_launches);
    }
  }
}

}  // namespace

void render_kernel_metrics(std::string& out, const agent::LiveSnapshot& snap,
                           const KernelSeriesStatus& series) {
  if (series.rows.empty()) return;
  PromWriter w(out);
  std::vector<std::string> labels;
  labels.reserve(series.rows.size());
  for (const auto& r : series.rows) labels.push_back(row_labels(snap, r));
  render_launch_metrics(w, series, labels);
  bool any_windows = false;
  for (const auto& r : series.rows) any_windows = any_windows || r.has_windows;
  if (!any_windows) return;
  w.family("gpulens_kernel_seconds_total", "counter",
           "Traced GPU seconds of a kernel (time inside the jobs' trace windows, 2 s of every "
           "20 s by default, not wall time); the kernels with the most recent time per GPU are "
           "named (short name, label kernel), the rest are kernel=\"other\"");
  for (std::size_t i = 0; i < series.rows.size(); ++i) {
    const auto& r = series.rows[i];
    if (!r.has_windows) continue;
    for (const auto& [kernel, secs] : r.named) {
      w.sample("gpulens_kernel_seconds_total", labels[i], "kernel", kernel, secs);
    }
    w.sample("gpulens_kernel_seconds_total", labels[i], "kernel", kernels::kOtherKernelLabel,
             r.other_s);
  }
  for (const auto& f : kFamilies) {
    w.family(f.name, "counter", f.help);
    for (std::size_t i = 0; i < series.rows.size(); ++i) {
      if (series.rows[i].has_windows) w.sample(f.name, labels[i], series.rows[i].*f.seconds);
    }
  }
}

}  // namespace gpulens::exposition
