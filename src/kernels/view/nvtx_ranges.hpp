// SPDX-License-Identifier: Apache-2.0
#pragma once
// NVTX ranges in the kernel view (docs/kernels.md, "NVTX ranges"): the ranges of
// every process's record merged by name, how busy each process's GPUs were inside
// them, and the idle time of each device's window split by the innermost open
// range. Separate from analysis.cpp because it is its own question (where in the
// program the GPU waited) with its own inputs (range instances).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/record/legacy_record_read.hpp"

namespace gpulens::kernels {

// One NVTX range name (all processes): how long the job spent inside it and how
// busy the GPU was meanwhile.
struct RangeRow {
  std::string name;  // "domain: name" outside NVTX's default domain
  std::uint64_t count = 0;
  double total_s = 0, mean_s = 0;  // wall time, all instances
  // Over the instances kept in the records (each process keeps its most recent ones):
  std::uint64_t measured = 0;  // instances
  double measured_s = 0;       // their wall time
  double busy_s = 0;           // a GPU of the process busy inside them
  double busy_share = 0;       // busy_s / measured_s
  double idle_s = 0;           // measured_s - busy_s
  // Idle time of the window (the marked steps, else first to last GPU work) for
  // which this range is the innermost one open, summed over devices.
  double attributed_idle_s = 0;
};

struct NvtxView {
  std::vector<RangeRow> ranges;  // by total wall time
  double window_idle_s = 0;      // idle time of the attribution windows, all devices
  double unranged_idle_s = 0;    // of it, inside no range
  bool window_clipped = false;   // older instances were let go: attribution starts later
  std::uint64_t instances_dropped = 0;
  std::uint64_t names_folded = 0;
  std::uint64_t unmatched = 0;  // starts without an end (or the reverse)
};

// A range instance on the analysis clock (seconds), `key` indexing the names.
struct RangeSpan {
  double start = 0, end = 0;
  std::size_t key = 0;
};

// Idle time of [from, to] (busy: merged, sorted) split by the innermost range open
// at each moment: the one started last, then the one ending first. Element `key`
// for each of `keys` names, the last element for the idle inside no range.
std::vector<double> idle_by_innermost_range(const std::vector<std::pair<double, double>>& busy,
                                            std::vector<RangeSpan> spans, std::size_t keys,
                                            double from, double to);

// Busy time of merged, sorted intervals inside [from, to].
double busy_within(const std::vector<std::pair<double, double>>& busy, double from, double to);

// Collects the `nvtx` part of each process's record, then computes the view.
class NvtxRanges {
 public:
  using Intervals = std::vector<std::pair<double, double>>;

  // One process's record: `nvtx` its record's nvtx part, `t` its clock (relative
  // ns to analysis seconds), `busy` its own GPU work on all its devices (merged,
  // sorted), `devices` the devices it used.
  void add_process(const NvtxRecord& nvtx, const std::function<double(std::int64_t)>& t,
                   Intervals busy, std::set<std::uint32_t> devices);
  // "NVTX ranges not recorded: why" when some process could not record them.
  std::optional<std::string> missing_note() const;
  // The view, when any ranges were recorded. `busy` per device (merged, sorted);
  // `windows` per device the spans whose idle time is split by range (the marked
  // steps, else the traced time); `traced` per device, for a job traced in
  // windows: only range instances inside them are measured (nullptr: all are).
  std::optional<NvtxView> finish(const std::map<std::uint32_t, Intervals>& busy,
                                 const std::map<std::uint32_t, Intervals>& windows,
                                 const std::map<std::uint32_t, Intervals>* traced);

 private:
  struct Process {
    std::vector<RangeSpan> spans;
    Intervals busy;
    std::set<std::uint32_t> devices;
    bool dropped = false;  // older instances were let go
    double kept_from = 0;  // then: the start of the oldest kept one
  };
  std::map<std::string, std::size_t> index_;  // name -> row
  std::vector<RangeRow> rows_;
  std::vector<Process> processes_;
  std::set<std::string> missing_;  // why a process's ranges could not be recorded
  NvtxView totals_;                // the counters summed over records
};

}  // namespace gpulens::kernels
