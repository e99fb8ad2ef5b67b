// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel records of a recording, summed as they are read: one record per
// process of versions 1 to 3 (kernels/record/legacy_record_read.hpp), or the lines of version 4
// (chunk_record.hpp) in any number. What it keeps grows with the number of
// kernel launch configurations, devices and processes, and with the bounded
// sketches of each chunk (kMaxSketchSpans spans per device), never with the
// number of kernels: a 24-hour job reads in the memory of a few minutes' one.
#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/record/chunk_record.hpp"
#include "kernels/record/chunk_record_read.hpp"
#include "kernels/record/legacy_record_read.hpp"
#include "kernels/view/nvtx_ranges.hpp"
#include "kernels/view/occupancy.hpp"
#include "kernels/view/trace_windows.hpp"
#include "kernels/view/view.hpp"

namespace gpulens::kernels {

struct LaunchConfig {
  LaunchShape shape;
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
};

struct NameAgg {
  std::uint32_t device = 0;
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
  std::map<int, std::uint64_t> hist;
  std::vector<LaunchConfig> configs;
};

// One process's collective kernel instances on one device (version 4 records
// only), for the split into moving data and waiting (collective_split.hpp).
struct CollectiveTimeline {
  std::int64_t pid = 0;
  std::uint32_t device = 0;
  std::vector<std::pair<double, double>> instances;  // [start, end], analysis clock (s)
  std::uint64_t not_recorded = 0;  // past the library's per-chunk cap (kMaxChunkCollectives)
  std::uint64_t thinned = 0;       // left out by the reader's bound (kMaxCollectivesKept)
};

// What the records hold, summed over the job's processes, on the analysis clock
// (seconds since `origin_ns`).
struct Gathered {
  std::int64_t origin_ns = 0;
  std::map<std::string, NameAgg> names;
  std::map<std::pair<std::string, std::string>, CopyRow> copies;
  std::map<std::uint32_t, Spans> busy;
  std::map<std::uint32_t, HiddenIdles> hidden;  // idle time the sketches closed
  std::map<std::uint32_t, SmLimits> limits;
  std::map<std::uint32_t, std::string> device_names;
  SyncSpans syncs;
  std::vector<std::string> statuses;
  NvtxRanges nvtx;
  // Trace windows (trace_windows.hpp), per device: those of the processes that used it.
  std::map<std::uint32_t, Spans> opened;
  std::size_t processes_sampled = 0, processes_untraced = 0;
  std::size_t records = 0, skipped = 0;         // kernel record lines read, and refused
  std::vector<CollectiveTimeline> collectives;  // by pid, then device
};

// Busy spans a device keeps over the whole job, at most: past it, the smallest gaps
// close (their idle time kept, as the library's sketches keep it), so a 24-hour
// job on 8 GPUs reads in bounded memory (about 8 MiB a device) at a resolution
// that coarsens with the job's length.
inline constexpr std::size_t kMaxReaderSpans = std::size_t{1} << 18;

// Collective instances a process keeps per device over the whole job, at most.
// Past it they are thinned evenly in time, the same way on every rank: the
// instances kept are those whose end falls in a kept second (second n is kept
// at thinning level L when n is a multiple of 2^L), and each time the bound is
// passed L goes up by one. Thinning by index (every other instance) would keep
// different collectives on different ranks, whose drops differ, and leave few
// to match; keeping the newest would lose the start of a long job. The kept
// seconds of a level are a subset of those of the level below, and finish()
// thins every timeline to the highest level reached, so what one rank keeps
// the others keep too (but an instance whose end lies within the tolerance of
// a second's edge).
inline constexpr std::size_t kMaxCollectivesKept = std::size_t{1} << 16;

class RecordGatherer {
 public:
  // `origin_ns`: the analysis clock's zero (Unix ns); unset, the first record's clock.
  // `max_spans`: kMaxReaderSpans (tests make it small).
  // `max_collectives`: kMaxCollectivesKept (tests make it small).
  explicit RecordGatherer(std::optional<std::int64_t> origin_ns = std::nullopt,
                          std::size_t max_spans = kMaxReaderSpans,
                          std::size_t max_collectives = kMaxCollectivesKept);

  // One line of the recording with "x_kernels" (any version). A line that cannot
  // be read is skipped with a note naming it and the field at fault.
  void add(const nlohmann::json& line);

  // Everything read, with each version-4 process's totals settled; `view` gets
  // the counts, the sampling and the notes.
  Gathered finish(KernelView& view);

 private:
  // A busy span on the analysis clock, in ns (join_and_close adds its gaps to
  // gap_ns in the unit of start and end), with the idle time sketches closed inside it.
  struct BusySpan {
    double start = 0, end = 0;  // ns since the analysis clock's zero
    std::uint64_t parts = 1, closed = 0;
    double gap_ns = 0;
  };
  using BusySpans = std::vector<BusySpan>;
  void add_busy(BusySpans& spans, BusySpan s);

  struct Process {
    bool started = false;
    ProcessRecord start;
    std::optional<EndRecord> end;
    std::unordered_map<std::uint32_t, std::string> kernel_names;
    std::unordered_map<std::uint32_t, ConfigEntry> configs;
    std::unordered_map<std::uint32_t, DeviceEntry> devices;
    NvtxRecord nvtx;                          // ranges by id, instances by end
    std::deque<NvtxRecord::Instance> recent;  // the most recent kMaxRangeInstances
    BusySpans own_busy;
    std::set<std::uint32_t> own_devices;
    Spans windows;
    struct Collectives {
      std::vector<std::pair<double, double>> instances;
      int level = 0;  // thinning: kept are the seconds that are multiples of 2^level
      std::uint64_t not_recorded = 0, thinned = 0;
    };
    std::map<std::uint32_t, Collectives> collectives;  // by device
    std::uint64_t chunks = 0;
    bool config_unknown_noted = false;
    // Process lines after the first: the process exec'd a new image, which loads
    // the library again and appends to the same record under the same pid.
    std::uint32_t execs = 0;
  };

  void add_whole(const LegacyRecord& r);
  void add_line(const ChunkLine& line);
  void add_names(Process& p, const NamesRecord& n);
  void add_chunk(Process& p, std::int64_t pid, const ChunkRecord& c);
  void add_collectives(Process& p, const CollectiveInstances& c, double base_s);
  void settle(std::int64_t pid, Process& p);
  void settle_collectives();
  double seconds(std::int64_t base_unix_ns, bool has_clock, std::int64_t rel_ns);
  std::int64_t origin(std::int64_t base_unix_ns, bool has_clock);
  void gather_status(const std::optional<std::int64_t>& pid, const std::string& status,
                     const std::string& reason, std::optional<double> yielded_ns);

  std::optional<std::int64_t> origin_ns_;
  std::size_t max_spans_;
  std::size_t max_collectives_;
  std::map<std::uint32_t, BusySpans> busy_;  // per device, bounded by max_spans_
  Gathered g_;
  KernelView partial_;  // counts and notes until finish()
  std::map<std::int64_t, Process> processes_;
};

}  // namespace gpulens::kernels
