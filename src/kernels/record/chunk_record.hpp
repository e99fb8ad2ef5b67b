// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel record, version 4 (docs/kernels.md, "The record in the recording"),
// defined once for its writer and its readers: libgpulens_kernels.so compiles
// chunk_record.cpp into the job's process (it needs nlohmann's JSON and nothing
// else of gpulens), and the kernels layer reads what it wrote through the same
// types and key names (chunk_record_read.cpp).
//
// Versions 1 to 3 were one record per process, written at exit, whose busy
// intervals and synchronisations grew with the job: a 44-second job traced whole
// wrote one 14 MB line. Version 4 is a stream of lines, each at most
// kMaxRecordBytes, written as each trace window closes (or, traced whole, every
// kChunkSeconds), so a job of any length writes bounded lines and a job that
// dies keeps every window it closed:
//   process  once, first: pid, exe, CUPTI, clock, schedule;
//   names    before a chunk that uses them: ids of new kernel launch
//            configurations, kernel names, NVTX range names, and devices;
//   chunk    one window (or chunk of a whole-job trace): per configuration counts
//            and duration histograms, copies, memsets, streams, sketches of the
//            busy intervals and the synchronisations, NVTX ranges and instances,
//            and per device its first collective kernel instances;
//   end      at exit: status, reason, activity, NVTX status.
// Every list of a record may be cut into parts (lines with the same `seq` and a
// growing `part`); every entry of a list is whole in one part, and parts add.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpulens::kernels {

inline constexpr int kChunkRecordVersion = 4;
// Every line a version-4 writer writes is at most this long (the readers take
// lines of up to 8 MiB, core/input_limits.hpp).
inline constexpr std::size_t kMaxRecordBytes = std::size_t{256} << 10;
// One entry of a list (a configuration, a sketch, a name) is at most this long, so
// a line cut at kMaxRecordBytes - kMaxEntryBytes before its end always fits one more.
inline constexpr std::size_t kMaxEntryBytes = std::size_t{64} << 10;
// A busy or synchronisation sketch keeps at most this many spans per device and chunk.
inline constexpr std::size_t kMaxSketchSpans = 256;
// NVTX instances kept per chunk (the most recent by end); the reader keeps the
// most recent kMaxRangeInstances of each process, as version 3's library did.
inline constexpr std::size_t kMaxChunkInstances = 2000;
inline constexpr std::size_t kMaxRangeInstances = 20000;
// Collective kernel instances (kernel_names.hpp) kept per device and chunk, the
// first ones of the chunk; past it they are counted. One device's entry is at
// most 1024 x 2 numbers of at most 20 characters and a comma: 43 KB, inside
// kMaxEntryBytes. A 2-second window of a DDP step of 20 gradient buckets at
// 20 steps/s holds 800.
inline constexpr std::size_t kMaxChunkCollectives = 1024;
// Traced whole (--kernels-every 0), the library closes a chunk this often.
inline constexpr double kChunkSeconds = 2.0;
// Names, paths and reasons are cut to this many characters.
inline constexpr std::size_t kMaxTextChars = 1000;

// The record's keys, spelled here only.
namespace key {
inline constexpr const char* version = "x_kernels";
inline constexpr const char* record = "record";
inline constexpr const char* pid = "pid";
inline constexpr const char* seq = "seq";
inline constexpr const char* part = "part";
// process
inline constexpr const char* exe = "exe";
inline constexpr const char* cupti = "cupti";
inline constexpr const char* path = "path";
inline constexpr const char* cupti_version = "version";
inline constexpr const char* searched = "searched";
inline constexpr const char* clock = "clock";
inline constexpr const char* base_ns = "base_ns";
inline constexpr const char* base_unix_ns = "base_unix_ns";
inline constexpr const char* sampling = "sampling";
inline constexpr const char* first_s = "first_s";
inline constexpr const char* window_s = "window_s";
inline constexpr const char* every_s = "every_s";
inline constexpr const char* ramp_s = "ramp_s";
inline constexpr const char* schedule_error = "schedule_error";
inline constexpr const char* kinds = "kinds";
inline constexpr const char* kinds_note = "kinds_note";
// names
inline constexpr const char* kernel_names = "kernel_names";
inline constexpr const char* configs = "configs";
inline constexpr const char* range_names = "range_names";
inline constexpr const char* devices = "devices";
// chunk
inline constexpr const char* span = "span";
inline constexpr const char* window = "window";
inline constexpr const char* kernels = "kernels";
inline constexpr const char* copies = "copies";
inline constexpr const char* memsets = "memsets";
inline constexpr const char* streams = "streams";
inline constexpr const char* busy = "busy";
inline constexpr const char* syncs = "syncs";
inline constexpr const char* ranges = "ranges";
inline constexpr const char* instances = "instances";
inline constexpr const char* dropped = "dropped";
inline constexpr const char* instances_dropped = "instances_dropped";
inline constexpr const char* collectives = "collectives";
inline constexpr const char* names_folded = "names_folded";
inline constexpr const char* configs_folded = "configs_folded";
// end
inline constexpr const char* status = "status";
inline constexpr const char* reason = "reason";
inline constexpr const char* yielded_ns = "yielded_ns";
inline constexpr const char* activity = "activity";
inline constexpr const char* first_ns = "first_ns";
inline constexpr const char* last_ns = "last_ns";
inline constexpr const char* nvtx = "nvtx";
inline constexpr const char* unmatched = "unmatched";
inline constexpr const char* chunks = "chunks";
inline constexpr const char* detaches = "detaches";
inline constexpr const char* detach_note = "detach_note";
inline constexpr const char* detach_max_ns = "detach_max_ns";
inline constexpr const char* agent = "agent";
inline constexpr const char* sent = "sent";
inline constexpr const char* note = "note";
}  // namespace key

// The `record` values.
namespace kind {
inline constexpr const char* process = "process";
inline constexpr const char* names = "names";
inline constexpr const char* chunk = "chunk";
inline constexpr const char* end = "end";
}  // namespace kind

struct ProcessRecord {
  std::int64_t pid = 0;
  std::string exe;
  std::string cupti_path;
  std::uint32_t cupti_version = 0;
  std::vector<std::string> cupti_searched;  // where libcupti was looked for, when not found
  std::uint64_t base_ns = 0;                // CUPTI's clock at the first attach ...
  std::int64_t base_unix_ns = 0;            // ... and CLOCK_REALTIME then
  struct Sampling {
    double first_s = 0, window_s = 0, every_s = 0;
    double ramp_s = 0;  // the spread layout's first slot (inject/schedule.hpp); 0: fixed
  };
  std::optional<Sampling> sampling;  // traced in windows
  std::string schedule_error;
  // The kinds recorded, when not every one: $GPULENS_KERNELS_KINDS of a
  // measurement run, or those left when synchronisations were withheld
  // (inject/cupti_seam.hpp); `kinds_note` then says why.
  std::string kinds;
  std::string kinds_note;
};

struct ConfigEntry {  // one launch configuration of one kernel on one device
  std::uint32_t id = 0, name = 0, device = 0;
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint32_t block[3] = {0, 0, 0};
  std::uint32_t registers = 0, static_smem = 0, dynamic_smem = 0;
};

struct DeviceEntry {
  std::uint32_t id = 0;
  std::string name;
  std::uint32_t sms = 0, max_blocks_per_sm = 0, max_threads_per_sm = 0, max_warps_per_sm = 0;
  std::uint32_t registers_per_sm = 0, shared_per_sm = 0, cc_major = 0, cc_minor = 0;
};

struct RangeName {
  std::uint32_t id = 0;
  std::string domain, name;
};

struct NamesRecord {
  std::vector<std::pair<std::uint32_t, std::string>> kernel_names;  // id, demangled name
  std::vector<ConfigEntry> configs;
  std::vector<RangeName> range_names;
  std::vector<DeviceEntry> devices;
  bool empty() const {
    return kernel_names.empty() && configs.empty() && range_names.empty() && devices.empty();
  }
};

// Spans of time (relative ns) as a bounded sketch: sorted, disjoint; a span that
// stands for several has `parts` intervals and `closed` gaps of `gap_ns` in all
// inside it, which the sketch closed to stay within kMaxSketchSpans (the
// smallest gaps close first, so the long idle stretches stay exact).
struct SketchSpan {
  std::int64_t start = 0, end = 0;
  std::uint64_t parts = 1, closed = 0, gap_ns = 0;
};

struct BusySketch {
  std::uint32_t device = 0;
  std::vector<SketchSpan> spans;
};

struct KernelEntry {  // per configuration, over the chunk
  std::uint32_t config = 0;
  std::uint64_t count = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  std::vector<std::pair<int, std::uint64_t>> hist;  // [log bucket, count]
};

struct CopyEntry {
  std::uint32_t device = 0;
  std::string kind, src, dst;
  std::uint64_t count = 0, bytes = 0, total_ns = 0;
};

struct MemsetEntry {
  std::uint32_t device = 0;
  std::uint64_t count = 0, bytes = 0, total_ns = 0;
};

struct StreamEntry {
  std::uint32_t device = 0, stream = 0;
  std::uint64_t launches = 0, busy_ns = 0;
};

struct RangeEntry {  // an NVTX range name's instances that ended in the chunk
  std::uint32_t range = 0;
  std::uint64_t count = 0, total_ns = 0, min_ns = 0, max_ns = 0;
};

struct InstanceEntry {
  std::int64_t start = 0, end = 0;
  std::uint32_t range = 0;
};

// One device's collective kernel instances in a chunk (relative ns), sorted by
// start, at most kMaxChunkCollectives; `dropped` past it. For the split of
// collective time into moving data and waiting for a peer (collective_split.hpp).
struct CollectiveInstances {
  std::uint32_t device = 0;
  std::uint64_t dropped = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> instances;  // [start, end]
};

struct ChunkRecord {
  std::uint64_t seq = 0;
  std::int64_t start_ns = 0, end_ns = 0;  // the window as opened and closed, or the chunk
  bool window = false;                    // a trace window (else a chunk of a whole-job trace)
  std::vector<KernelEntry> kernels;
  std::vector<CopyEntry> copies;
  std::vector<MemsetEntry> memsets;
  std::vector<StreamEntry> streams;
  std::vector<BusySketch> busy;
  std::vector<SketchSpan> syncs;  // synchronisations (host time blocked)
  std::vector<RangeEntry> ranges;
  std::vector<InstanceEntry> instances;
  std::vector<CollectiveInstances> collectives;  // absent in lines before it was added
  std::uint64_t dropped = 0;                     // records CUPTI dropped
  std::uint64_t instances_dropped = 0;           // NVTX instances past kMaxChunkInstances
  std::uint64_t names_folded = 0;                // NVTX instances folded into "(other ranges)"
  std::uint64_t configs_folded = 0;  // launches of configurations past the library's cap
};

struct EndRecord {
  std::string status = "ok", reason;
  std::optional<std::int64_t> yielded_ns;
  std::optional<std::pair<std::int64_t, std::int64_t>> activity;  // first, last GPU work
  std::string nvtx_status, nvtx_reason;
  std::uint64_t unmatched = 0;  // NVTX starts without an end, ends without a start
  std::uint64_t chunks = 0;
  // CUPTI detached between windows (the detach experiment of libraries before
  // 2026-11-29, on with $GPULENS_KERNELS_DETACH=1): how often, the longest a job
  // thread spent finalising it, or why it could not. Read from old records only.
  std::uint64_t detaches = 0;
  std::uint64_t detach_max_ns = 0;
  std::string detach_note;
  // Window summaries sent to the node agent ($GPULENS_KERNELS_AGENT,
  // docs/kernels-agent.md), and those dropped because it was absent or full.
  bool agent = false;
  std::uint64_t agent_sent = 0, agent_dropped = 0;
  std::string agent_note;  // why none were sent although asked for
};

// The lines of each record, each at most kMaxRecordBytes, without newlines.
std::vector<std::string> encode_process(std::int64_t pid, const ProcessRecord& p);
std::vector<std::string> encode_names(std::int64_t pid, std::uint64_t seq, const NamesRecord& n);
std::vector<std::string> encode_chunk(std::int64_t pid, const ChunkRecord& c);
std::vector<std::string> encode_end(std::int64_t pid, const EndRecord& e);

// Intervals (relative ns, any order, overlapping ones allowed) as a sketch of at
// most `max_spans` spans: overlapping and touching intervals join, then the
// smallest gaps close until at most `max_spans` remain.
std::vector<SketchSpan> sketch_spans(std::vector<std::pair<std::int64_t, std::int64_t>> intervals,
                                     std::size_t max_spans = kMaxSketchSpans);

// The one sketching step, for the library's sketches (SketchSpan, integer ns) and
// the reader's bound over a long job (record_gatherer.cpp, seconds): spans (any
// order) sorted, overlapping and touching ones joined, then the smallest gaps
// closed (ties: the later first) until at most `max_spans` remain. A span that
// absorbs another adds its `parts`, `closed` and `gap_ns`; a closed gap adds one
// to `closed` and its length to `gap_ns`.
template <typename Span>
void join_and_close(std::vector<Span>& spans, std::size_t max_spans) {
  using Gap = decltype(Span::gap_ns);
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.start < b.start; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (out > 0 && spans[i].start <= spans[out - 1].end) {
      Span& m = spans[out - 1];
      m.end = std::max(m.end, spans[i].end);
      m.parts += spans[i].parts, m.closed += spans[i].closed, m.gap_ns += spans[i].gap_ns;
    } else {
      spans[out++] = spans[i];
    }
  }
  spans.resize(out);
  if (max_spans == 0) max_spans = 1;
  if (spans.size() <= max_spans) return;
  const std::size_t gaps = spans.size() - 1, close = spans.size() - max_spans;
  auto gap = [&](std::size_t i) { return spans[i + 1].start - spans[i].end; };
  std::vector<std::size_t> order(gaps);
  for (std::size_t i = 0; i < gaps; ++i) order[i] = i;
  std::nth_element(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(close), order.end(),
      [&](std::size_t x, std::size_t y) { return gap(x) != gap(y) ? gap(x) < gap(y) : x > y; });
  std::vector<bool> closed(gaps, false);
  for (std::size_t i = 0; i < close; ++i) closed[order[i]] = true;
  out = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (i > 0 && closed[i - 1]) {
      Span& m = spans[out - 1];
      m.gap_ns += static_cast<Gap>(spans[i].start - m.end) + spans[i].gap_ns;
      m.closed += 1 + spans[i].closed;
      m.parts += spans[i].parts;
      m.end = spans[i].end;
    } else {
      spans[out++] = spans[i];
    }
  }
  spans.resize(out);
}

// A string cut to kMaxTextChars characters without splitting a UTF-8 sequence.
std::string bounded_text(std::string s);

}  // namespace gpulens::kernels
