// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `gpulens top` shows, as plain data: per-GPU readings with the diagnosis
// beside them, a short history for sparklines, and the processes across GPUs.
// Built from ticks and the diagnosis engine; no terminal, no clocks, no I/O.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/sample.hpp"

namespace gpulens::diagnosis {
class DiagnosisEngine;
}

namespace gpulens::tui {

// One MIG GPU instance of a GPU: the GPM metrics the recorder read for it
// (a sample's x_mig). NVML gives no profile name with them, so only the id.
struct MigView {
  long gpu_instance = 0;
  std::optional<double> sm_active, occupancy, tensor, dram, fp64, fp32, fp16;
  std::optional<double> pcie_rx, pcie_tx, nvlink_rx, nvlink_tx;  // MiB/s
};

struct GpuView {
  int index = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::optional<double> util, sm_active, occupancy, tensor, dram;
  std::optional<double> pcie_rx, pcie_tx, nvlink_rx, nvlink_tx;  // MiB/s
  std::optional<double> mem_used, mem_total;                     // MiB
  std::optional<double> power, power_limit, temp;
  std::optional<double> sm_clock, max_sm_clock;
  std::string clock_reason;  // short label of the most important reason ("pwr"); "" when none
  std::optional<int> sm_count;
  // Why SM activity cannot be read ("GPM needs Hopper or newer"); empty when it can.
  std::string sm_unsupported;
  bool has_nvlink = false;
  // Who holds the GPU by the scheduler's allocation: "Slurm job 101 (alice)",
  // "Slurm jobs 103, 104", "no job" when read and free; empty when not read.
  std::string held_by;
  // MIG GPU instances by id, once seen; values "-" on a tick that lacks them.
  std::vector<MigView> mig;

  std::string state;        // stable id, "sm_underused"; empty without diagnosis
  std::string state_words;  // the user's words for the state
  double confidence = 0;
  std::string confidence_level;  // "high", "medium", "low"
  double state_for_s = 0;        // how long the state has held
  bool throttled = false;
  std::string throttle_cause;
  std::string summary;              // one sentence with the numbers
  std::string fix;                  // the first fix; empty when none
  std::vector<std::string> alerts;  // firing alerts' messages, most severe first
  bool critical = false;            // a critical alert is firing

  // Oldest first, one entry per tick; nullopt where the tick did not measure it.
  std::deque<std::optional<double>> util_history, sm_history;
};

struct ProcView {
  std::uint32_t pid = 0;
  std::string user;
  int gpu = 0;
  std::optional<double> mem_mib, sm_pct, cpu_pct, rss_mib;
  std::string container;  // short container id or "pod:<uid>"; empty outside one
  std::string job;        // Slurm "<job>.<step>" ("slurm:?" when unknown); empty outside
  std::string account;    // Slurm account; empty when unknown
  std::string command;    // command line when recorded (--cmdline), else the short name
  std::string name;       // the short name (comm); empty when the host could not tell
  // Live only: the start time (clock ticks since boot, /proc/PID/stat field 22) read
  // when the tick listed it, so that a signal reaches this process and no PID reuser.
  std::optional<std::uint64_t> start_ticks;
};

// What the process table's JOB/CONTAINER column shows: the Slurm job where there is
// one (on a Slurm node the job is what a process is charged to), else the container.
inline const std::string& where_label(const ProcView& p) {
  return p.job.empty() ? p.container : p.job;
}

struct TopModel {
  std::string host;
  std::string driver;
  double t = 0;             // newest tick
  double interval_s = 1.0;  // between ticks, for the sparkline's time span
  std::vector<GpuView> gpus;
  std::vector<ProcView> procs;  // every GPU's processes, one row per (pid, gpu)
  bool diagnosis = true;        // false with --no-diagnosis
  bool procs_listed = false;    // some tick carried a process list (not with --no-procs)
};

class ModelBuilder {
 public:
  ModelBuilder(const TraceHeader& header, std::size_t history_length);
  // Reads a PID's start time now; nullopt when it has none (exited).
  using StartTimeReader = std::function<std::optional<std::uint64_t>(std::uint32_t pid)>;
  // Live sources: each listed process gets its start time on the tick that lists it.
  void set_start_time_reader(StartTimeReader reader) { start_time_ = std::move(reader); }
  // Folds in one tick; `engine` (already fed the tick) supplies states and alerts, or
  // nullptr when diagnosis is off.
  void on_tick(const Tick& tick, const diagnosis::DiagnosisEngine* engine);
  const TopModel& model() const { return model_; }
  std::size_t ticks() const { return ticks_; }

 private:
  GpuView& gpu(int index);
  void rebuild_processes();

  TopModel model_;
  std::size_t history_length_;
  std::size_t ticks_ = 0;
  struct Listed {
    ProcessSample sample;
    std::optional<std::uint64_t> start_ticks;
  };
  // The newest process list of each GPU: processes are not listed on every tick.
  std::map<int, std::vector<Listed>> procs_;
  StartTimeReader start_time_;
  TraceHeader header_;
};

}  // namespace gpulens::tui
