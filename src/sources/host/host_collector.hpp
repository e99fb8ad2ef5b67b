#pragma once
// Host-side readings from procfs, with the root configurable so that tests run on
// committed fixture trees (like node_exporter's --path.procfs).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/sample.hpp"

namespace gpulens {

struct HostSnapshot {
  std::optional<double> cpu_pct;      // whole host busy over the interval, 100 = all cores
  std::vector<double> per_core_pct;   // per core busy, 100 = that core; empty on first call
  std::optional<double> mem_total_mib;
  std::optional<double> mem_available_mib;
  std::optional<int> cpu_count;
};

struct HostOptions {
  std::string procfs_root = "/proc";
  bool with_cmdline = false;  // command lines can hold secrets: off unless asked for
};

class HostCollector {
 public:
  explicit HostCollector(HostOptions options = {});
  // CPU figures are deltas since the previous call (absent on the first call).
  HostSnapshot sample();
  // Fills name, user, cpu_pct, rss_mib, container, pod, ppid (and cmdline when enabled)
  // for processes reported by the GPU collector. cpu_pct is a delta since this PID was
  // last seen; processes whose /proc entry does not resolve (other PID namespace) keep
  // their name empty and get x_unresolved via the caller.
  void enrich(std::vector<ProcessSample>& procs, double now_s);
  // PIDs whose /proc entry could not be read on the last enrich call.
  const std::vector<std::uint32_t>& unresolved() const { return unresolved_; }

 private:
  struct CpuTimesCache;
  struct ProcCache {
    std::uint64_t start_ticks = 0;  // distinguishes a reused PID
    double cpu_s = 0;
    double seen_s = 0;
    std::string name, user, container, pod, cmdline;
    std::optional<std::uint32_t> ppid;
  };
  HostOptions options_;
  std::vector<std::uint64_t> prev_busy_, prev_total_;  // index 0 = all cores, then per core
  std::unordered_map<std::uint32_t, ProcCache> procs_;
  std::map<std::uint32_t, std::string> user_names_;
  std::vector<std::uint32_t> unresolved_;
  long clock_ticks_per_s_ = 100;
  long page_size_ = 4096;
};

}  // namespace gpulens
