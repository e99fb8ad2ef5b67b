// SPDX-License-Identifier: Apache-2.0
#pragma once
// Host-side readings from procfs, with the root configurable so that tests run on
// committed fixture trees (like node_exporter's --path.procfs).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/sample.hpp"
#include "sources/host/file_buffer.hpp"
#include "sources/host/procfs_parse.hpp"
#include "sources/host/slurm_attribution.hpp"

namespace gpulens::sources {

struct HostSnapshot {
  std::optional<double> cpu_pct;     // whole host busy over the interval, 100 = all cores
  std::vector<double> per_core_pct;  // per core busy, 100 = that core; empty on first call
  std::optional<double> mem_total_mib;
  std::optional<double> mem_available_mib;
  std::optional<int> cpu_count;
  std::string error;  // why a figure above is absent although asked for; empty when none
};

// What a host sample reads. The sampler records only the CPU figure each tick, and
// /proc/meminfo costs as much kernel time to generate as /proc/stat.
enum class HostReadings { CpuOnly, CpuAndMemory };

struct HostOptions {
  std::string procfs_root = "/proc";
  bool with_cmdline = false;  // command lines can hold secrets: off unless asked for
};

// Not thread-safe: one sampler thread calls sample() and enrich().
class HostCollector {
 public:
  explicit HostCollector(HostOptions options = {});
  // CPU figures are deltas since the previous call (absent on the first call).
  HostSnapshot sample(HostReadings what = HostReadings::CpuAndMemory);
  // Fills name, user, cpu_pct, rss_mib, container, pod, slurm, ppid (and cmdline when
  // enabled) for processes reported by the GPU collector. cpu_pct is a delta since this PID was
  // last seen; processes whose /proc entry does not resolve (other PID namespace) keep
  // their name empty and get x_unresolved via the caller.
  void enrich(std::vector<ProcessSample>& procs, double now_s);
  // PIDs whose /proc entry could not be read on the last enrich call (all of them when
  // foreign_pid_namespace()). A PID seen twice in one tick (on two GPUs) is read once.
  const std::vector<std::uint32_t>& unresolved() const { return unresolved_; }
  // True when procfs belongs to a PID namespace other than the host's (a container
  // without hostPID): GPU PIDs are host PIDs, so none is looked up there, lest a
  // container process with the same number lend its name.
  bool foreign_pid_namespace() const { return foreign_pid_ns_; }
  // Per reason, how many processes' Slurm job could not be (fully) told, counted once
  // per process when it is first seen (docs/slurm.md).
  const SlurmProblemCounts& slurm_problems() const { return slurm_problems_; }

  // /proc/PID/environ is read up to this many bytes, once per process. Linux holds
  // argv and the environment together to a quarter of the stack limit (2 MiB with the
  // usual 8 MiB) and a real environment is a few KiB, Slurm's ~100 SLURM_* variables
  // included; the cap keeps a process that bloats its own environment from costing
  // the sampler more than this. Past it the process counts as environ_truncated and
  // its cgroup (which it cannot bloat) still names the job.
  static constexpr std::size_t kMaxEnvironBytes = 256 * 1024;

 private:
  struct ProcCache {
    std::uint64_t start_ticks = 0;  // distinguishes a reused PID
    std::uint64_t cpu_ticks = 0;    // utime+stime at seen_s
    double seen_s = 0;
    std::optional<double> cpu_pct, rss_mib;  // last reading, reused within one tick
    std::optional<std::uint32_t> ppid;
    std::optional<std::uint32_t> uid;  // real uid, from status
    std::string name, user, container, pod, cmdline;
    std::optional<SlurmJob> slurm;
  };
  ProcCache* refresh(std::uint32_t pid, double now_s);
  void load_identity(std::uint32_t pid, ProcCache& entry);
  void load_slurm(std::uint32_t pid, const SlurmCgroup& cgroup, ProcCache& entry);
  const std::string& user_name(std::uint32_t uid);
  const char* path_of(std::string_view file);
  const char* pid_path(std::uint32_t pid, std::string_view file);
  bool detect_foreign_pid_namespace();

  HostOptions options_;
  ProcStat prev_stat_;
  bool have_prev_stat_ = false;
  std::unordered_map<std::uint32_t, ProcCache> procs_;
  std::unordered_map<std::uint32_t, std::string> user_names_;
  std::vector<std::uint32_t> unresolved_;
  SlurmProblemCounts slurm_problems_{};
  FileBuffer buf_;
  KeptOpenFile stat_file_;    // /proc/stat, read every tick
  std::string path_;          // reused to build file names without allocating
  std::vector<char> pw_buf_;  // getpwuid_r scratch
  long clock_ticks_per_s_ = 100;
  long page_size_ = 4096;
  bool foreign_pid_ns_ = false;
};

}  // namespace gpulens::sources
