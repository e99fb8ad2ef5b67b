// SPDX-License-Identifier: Apache-2.0
#include "verdict/outcome.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <map>

namespace gpulens::verdict {

std::string_view job_end_id(JobEnd end) {
  switch (end) {
    case JobEnd::Exited:
      return "exited";
    case JobEnd::Failed:
      return "failed";
    case JobEnd::Killed:
      return "killed";
    case JobEnd::Unknown:
      break;
  }
  return "unknown";
}

std::string signal_name(int signal) {
  // The signals that end jobs in practice; sigabbrev_np is glibc-only.
  static const std::map<int, const char*> kNames = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
      {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
      {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
      {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
  };
  const auto it = kNames.find(signal);
  return it != kNames.end() ? it->second : fmt::format("signal {}", signal);
}

std::string_view JobOutcome::out_of_memory_basis() const {
  if (said_out_of_memory()) return memory_at_ceiling ? "stderr_and_counters" : "stderr";
  return memory_at_ceiling ? "counters" : "none";
}

JobOutcome job_outcome(const Trace& trace, const JobRecord& job, const std::vector<int>& gpus) {
  JobOutcome o;
  if (!job.present || (!job.exit_code && !job.signal)) return o;
  o.exit_code = job.exit_code;
  o.signal = job.signal;
  o.end = job.signal ? JobEnd::Killed : *job.exit_code == 0 ? JobEnd::Exited : JobEnd::Failed;
  o.end_t = job.end;
  o.stderr_scan = job.stderr_scan;
  if (!o.died()) return o;

  // The fullest memory of each GPU in the last seconds before the end.
  std::optional<double> last_t;
  for (const auto& s : trace.samples) {
    if (std::find(gpus.begin(), gpus.end(), s.gpu) == gpus.end()) continue;
    last_t = std::max(last_t.value_or(s.t), s.t);
  }
  const double end = job.end.value_or(last_t.value_or(0));
  std::map<int, double> peak;
  for (const auto& s : trace.samples) {
    if (std::find(gpus.begin(), gpus.end(), s.gpu) == gpus.end()) continue;
    if (s.t < end - kOomLookbackS || s.t > end + 1.0) continue;
    if (const auto m = s.get(Metric::MemUsedMib)) peak[s.gpu] = std::max(peak[s.gpu], *m);
  }
  // The GPU closest to its ceiling (by share) is the one that ran out.
  double best_share = -1;
  for (const auto& [gpu, used] : peak) {
    const auto* d = trace.header.device(gpu);
    const std::optional<double> total =
        d != nullptr && d->mem_total_mib && *d->mem_total_mib > 0 ? d->mem_total_mib : std::nullopt;
    const double share = total ? used / *total : 0;
    if (o.gpu && share <= best_share) continue;
    best_share = share;
    o.gpu = gpu;
    o.memory_peak_mib = used;
    o.memory_total_mib = total;
  }
  if (o.memory_peak_mib && o.memory_total_mib) {
    const double margin = std::max(kOomMarginShare * *o.memory_total_mib, kOomMarginMib);
    o.memory_at_ceiling = *o.memory_peak_mib >= *o.memory_total_mib - margin;
  }
  o.out_of_memory = o.memory_at_ceiling || o.said_out_of_memory();
  return o;
}

}  // namespace gpulens::verdict
