// SPDX-License-Identifier: Apache-2.0
#include "verdict/evidence_gaps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

namespace gpulens::verdict {
namespace {

// What settles each thing the classifier says it could not judge
// (diagnosis/classifier.cpp, `cannot`), found by the words that start it. One
// table here rather than a field on every finding: the classifier states the
// gap, the verdict knows the tools that fill it.
struct Settler {
  std::string_view starts;
  std::string_view kind;  // gaps of one kind are summed
  std::string_view settle;
};

constexpr Settler kSettlers[] = {
    {"SM activity not available", "gpm",
     "a recording with SM, tensor and DRAM activity: GPM on a Hopper or newer GPU (not "
     "denied to the container), or DCGM's profiling on an older one (docs/dcgm.md)"},
    {"without SM activity", "gpm",
     "a recording with SM, tensor and DRAM activity: GPM on a Hopper or newer GPU (not "
     "denied to the container), or DCGM's profiling on an older one (docs/dcgm.md)"},
    {"kernels run most of the time; whether they fill the SMs", "gpm",
     "a recording with SM, tensor and DRAM activity: GPM on a Hopper or newer GPU (not "
     "denied to the container), or DCGM's profiling on an older one (docs/dcgm.md)"},
    {"neither utilization nor SM activity", "nothing",
     "a recording of this GPU's utilization: the recorder could not read it (see its notes)"},
    {"DRAM bandwidth not measured", "dram", "GPM's DRAM activity (Hopper or newer)"},
    {"PCIe traffic not measured", "pcie", "NVML's PCIe throughput counters in the recording"},
    {"integer pipe not measured", "int",
     "a recording by this version of gpulens, which reads GPM's integer pipe"},
    {"no per-process CPU figures", "cpu",
     "per-process CPU: run gpulens where it can read the job's /proc (the job's user, or "
     "root)"},
    {"processes not sampled", "procs",
     "the GPU's processes: run gpulens in the job's PID namespace, or on the host"},
    {"device memory size or use unknown", "memory", "NVML's memory figures in the recording"},
    {"utilization not measured", "util", ""},
};

const Settler* settler_for(const std::string& cannot) {
  for (const auto& s : kSettlers) {
    if (std::string_view(cannot).substr(0, s.starts.size()) == s.starts) return &s;
  }
  return nullptr;
}

// A run's seconds inside the steady state of its GPU (all of it without work).
double steady_seconds(const diagnosis::TimelineRun& r, const SteadyState& steady) {
  for (const auto& g : steady.gpus) {
    if (g.gpu != r.gpu) continue;
    if (!g.work_start || !g.work_end) return r.end - r.start;
    return std::max(0.0, std::min(r.end, *g.work_end) - std::max(r.start, *g.work_start));
  }
  return r.end - r.start;
}

}  // namespace

std::vector<EvidenceGap> evidence_gaps(const diagnosis::DiagnosisReport& report,
                                       const SteadyState& steady,
                                       const EvidenceGapOptions& options) {
  double total = 0;
  double low = 0;  // seconds judged at low confidence
  struct Sum {
    std::string what, settle;
    double seconds = 0;
  };
  std::map<std::string, Sum, std::less<>> by_kind;
  for (const auto& r : report.timeline) {
    const double s = steady_seconds(r, steady);
    if (s <= 0) continue;
    total += s;
    if (r.state != diagnosis::GpuState::Unknown && r.confidence < 0.5) low += s;
    std::vector<std::string> seen;  // a run counts once per kind
    for (const auto& c : r.cannot_tell) {
      const Settler* st = settler_for(c);
      const std::string kind = st ? std::string(st->kind) : c;
      if (std::find(seen.begin(), seen.end(), kind) != seen.end()) continue;
      seen.push_back(kind);
      Sum& sum = by_kind[kind];
      if (sum.what.empty()) {
        sum.what = c;
        sum.settle = st ? std::string(st->settle) : std::string();
      }
      sum.seconds += s;
    }
  }
  std::vector<EvidenceGap> out;
  if (total <= 0) return out;
  for (auto& [kind, sum] : by_kind) {
    const double share = sum.seconds / total;
    if (share >= kEvidenceGapMinShare) out.push_back({sum.what, sum.settle, share});
  }
  if (low / total >= kEvidenceGapMinShare) {
    // Short work cannot fill a window of its own samples; long work judged
    // weakly sits near a threshold, where the kernels behind the counters decide.
    const double per_gpu =
        total / static_cast<double>(std::max<std::size_t>(1, steady.gpus.size()));
    EvidenceGap g;
    g.share = low / total;
    if (per_gpu < 3 * options.window_s) {
      g.what = fmt::format(
          "judged at low confidence: the steady state ({:.0f} s a GPU) is short against the "
          "{:.0f} s diagnosis window",
          per_gpu, options.window_s);
      g.settle =
          fmt::format("a longer run: at least {:.0f} s of steady work", 3 * options.window_s);
    } else {
      g.what =
          "judged at low confidence: the counters sit near the thresholds that separate the "
          "states";
      g.settle = options.kernel_view
                     ? "the kernel view below: its kernels and gaps show what the counters average"
                     : "`gpulens run --kernels`: the kernels and gaps behind the counters";
    }
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(),
            [](const EvidenceGap& a, const EvidenceGap& b) { return a.share > b.share; });
  return out;
}

}  // namespace gpulens::verdict
