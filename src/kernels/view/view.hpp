// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel view's vocabulary (docs/kernels.md, "Where the GPU time went"): the
// types the analysis fills in and the report's writers read (render/kernels_*),
// and nothing that computes them. The pipeline over them: record_gatherer.hpp
// gathers a recording's records, analysis.hpp analyses them into a KernelView,
// kernel_findings.hpp turns that into findings; the steps between include this
// header and never the driver.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/view/collective_split.hpp"
#include "kernels/view/nvtx_ranges.hpp"

namespace gpulens::kernels {

// Gap lengths: < 10 us, 10-100 us, 0.1-1 ms, 1-10 ms, > 10 ms.
inline constexpr std::array<double, 4> kGapEdgesS = {10e-6, 100e-6, 1e-3, 10e-3};
inline constexpr std::array<const char*, 5> kGapLabels = {"< 10 us", "10-100 us", "0.1-1 ms",
                                                          "1-10 ms", "> 10 ms"};

struct GapHistogram {
  std::array<std::uint64_t, 5> count{};
  std::array<double, 5> seconds{};
  void add(double gap_s);  // idle_time.cpp
};

// Busy and idle over one window of one device.
struct IdleStats {
  double window_s = 0;
  double busy_s = 0;
  double idle_share = 0;  // 1 - busy / window
  GapHistogram gaps;
};

struct KernelRow {
  std::string name;        // demangled, as CUPTI gives it
  std::string short_name;  // without template arguments and parameter list
  std::uint64_t count = 0;
  double total_s = 0;
  double share = 0;  // of all kernel time
  double mean_us = 0, p50_us = 0, p99_us = 0;
  // The launch configuration that holds most of this kernel's time.
  std::uint64_t blocks = 0;
  std::uint32_t threads = 0, registers = 0, shared_bytes = 0;
  std::uint32_t blocks_per_sm = 0, sms_used = 0, sms = 0;
  double waves = 0;
  std::string limited_by;
  bool coverage_known = false;
  // A communication library's kernel (collectives.hpp): its time is moving data
  // or waiting for a peer, not compute, and SM-filling advice does not apply.
  bool collective = false;
};

struct CopyRow {
  std::string kind, src, dst;
  std::uint64_t count = 0, bytes = 0;
  double seconds = 0;
  double gb_per_s = 0;  // bytes / time on the copy engine
  bool pageable = false;
};

struct StepStats {
  std::size_t steps = 0;
  double mean_step_s = 0;
  IdleStats idle;  // over the marked steps only (first to last step mark)
  double mean_idle_per_step_s = 0;
  double syncs_per_step = 0;   // CUDA synchronisations (stream, device, event waits)
  double sync_s_per_step = 0;  // host time blocked in them
};

struct DeviceView {
  std::uint32_t device = 0;
  std::string name;
  IdleStats activity;  // from the first to the last GPU activity
  std::optional<StepStats> steps;
  // A few representative steps (the median-length ones) as busy intervals, for
  // the HTML timeline strip: seconds from the step's start.
  struct Strip {
    double start_unix = 0, length_s = 0;
    std::vector<std::pair<double, double>> busy;
  };
  std::vector<Strip> strips;
};

struct Finding {
  std::string kind;  // launch_bound, host_bound, pageable_copies, low_sm_coverage, syncs,
                     // communication
  std::string text;  // what was seen, in numbers
  std::string fix;   // what to do
};

// How the job was traced: in windows (the default of `gpulens run --kernels`) or
// whole (--kernels-every 0). Counts and times of a sampled view are those of its
// windows only; shares and per-step figures stand for the whole job as far as the
// windows are like the rest of it.
struct Sampling {
  bool sampled = false;
  double window_s = 0, every_s = 0, first_s = 0;  // the schedule asked for
  double ramp_s = 0;        // spread from the first CUDA start (inject/schedule.hpp); 0: fixed
  std::size_t windows = 0;  // traced windows (the device with most)
  double traced_s = 0;      // their total length as the GPU saw them
};

// A sampled view against the recording's counters (reconcile.hpp). It is said
// not to stand for the job when the windows hold less than this share of the
// job's kernel-active time, or their busy share is further than this from the
// counters' (as shares: 0.10 is 10 points); docs/kernels.md.
inline constexpr double kMinCoverage = 0.5;
inline constexpr double kMaxShareGap = 0.10;

// The span the figures are over: the job (from the first tick with kernels
// running to the last tick), or one phase of it.
struct SpanCheck {
  std::string name;  // "" for the job
  double from = 0, to = 0;
  double counters_share = 0;            // counters: kernel-active share over the span
  double counters_active_s = 0;         // counters: kernel-active seconds over it
  double windows_s = 0;                 // traced time inside the span
  std::optional<double> windows_share;  // busy share of that traced time; none: no window in it
  double coverage = 0;  // counters' kernel-active time inside the windows / over the span
  bool low_coverage() const { return coverage < kMinCoverage; }
  bool shares_differ() const;
  bool flagged() const { return low_coverage() || shares_differ(); }
};

struct Reconciliation {
  std::uint32_t device = 0;  // the kernel view's device
  int gpu = 0;               // the recording's GPU whose counters it is compared with
  SpanCheck job;
  std::vector<SpanCheck> phases;  // those the windows or the counters saw anything of
};

struct KernelView {
  bool available = false;
  Sampling sampling;
  std::string status;  // ok, job_profiler, no_cupti, cupti_error, no_cuda, not_built, ...
  std::vector<std::string> notes;  // why there is no view, or what it leaves out
  std::uint64_t launches = 0;
  double kernel_s = 0;
  std::vector<KernelRow> top;  // by GPU time
  std::size_t kernel_names = 0;
  std::vector<CopyRow> copies;
  std::uint64_t memsets = 0;
  std::uint64_t syncs = 0;
  double sync_s = 0;
  // False when a process recorded without CUDA synchronisations (its record's
  // `kinds` leaves them out): `syncs` and `sync_s` are then a floor, not a count.
  bool syncs_recorded = true;
  std::vector<DeviceView> devices;
  std::vector<Finding> findings;
  // One sentence: how busy the GPU was and where its idle time lies, in words.
  std::string headline;
  std::uint64_t dropped = 0;
  std::optional<NvtxView> nvtx;  // only when the job's NVTX ranges were recorded
  // A job of several processes: each rank's (process and device, "GPU 1 (pid
  // 4242)") collective time split into waiting for a peer and moving data, where
  // the other ranks' timelines show it (collective_split.hpp); empty otherwise.
  std::vector<RankSplit> collective_ranks;
  // Traced in windows, with the recording's counters beside them: per device, the
  // windows against the counters over the job and its phases (reconcile.hpp).
  std::vector<Reconciliation> reconciliation;
};

// Idle time inside a busy span that a version-4 record's sketch closed
// (chunk_record.hpp): `gaps` gaps of `idle_s` seconds in all, somewhere in
// [from, to]. A question over part of the span takes its share pro rata.
struct HiddenIdle {
  double from = 0, to = 0;
  double gaps = 0, idle_s = 0;
};
using HiddenIdles = std::vector<HiddenIdle>;  // sorted by `from`, disjoint

// Synchronisations on the analysis clock: a span may stand for `count` of them
// (a sketch joined them), the host blocked `blocked_s` in all.
struct SyncSpan {
  double from = 0, to = 0;
  double count = 1, blocked_s = 0;
};
using SyncSpans = std::vector<SyncSpan>;

}  // namespace gpulens::kernels
