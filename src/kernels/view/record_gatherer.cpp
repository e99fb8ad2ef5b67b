// SPDX-License-Identifier: Apache-2.0
#include "kernels/view/record_gatherer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <variant>

#include "core/intervals.hpp"
#include "kernels/record/chunk_record_read.hpp"

namespace gpulens::kernels {
namespace {

// "kernel record of process 1234" / "kernel record 3", for notes about a line.
std::string line_name(const nlohmann::json& line, std::size_t index) {
  return kernel_record_name(line, index);
}

void add_copy(std::map<std::pair<std::string, std::string>, CopyRow>& copies,
              const std::string& kind, const std::string& src, const std::string& dst,
              std::uint64_t count, std::uint64_t bytes, std::uint64_t total_ns) {
  CopyRow& row = copies[{kind, src + ">" + dst}];
  row.kind = kind, row.src = src, row.dst = dst;
  row.count += count;
  row.bytes += bytes;
  row.seconds += static_cast<double>(total_ns) / 1e9;
  row.pageable = src == "pageable" || dst == "pageable";
}

void add_kernel(NameAgg& a, std::uint32_t device, const LaunchShape& shape, std::uint64_t count,
                std::uint64_t total_ns, const std::vector<std::pair<int, std::uint64_t>>& hist,
                KernelView& view) {
  a.device = device;
  a.count += count;
  a.total_ns += total_ns;
  for (const auto& [bucket, n] : hist) a.hist[bucket] += n;
  // One entry per launch shape: a version-4 job repeats a configuration in every chunk.
  auto same = std::find_if(a.configs.begin(), a.configs.end(), [&](const LaunchConfig& c) {
    return c.shape.blocks == shape.blocks && c.shape.threads == shape.threads &&
           c.shape.registers == shape.registers && c.shape.shared_bytes == shape.shared_bytes;
  });
  if (same == a.configs.end()) same = a.configs.insert(a.configs.end(), LaunchConfig{shape, 0, 0});
  same->count += count;
  same->total_ns += total_ns;
  view.launches += count;
  view.kernel_s += static_cast<double>(total_ns) / 1e9;
}

LaunchShape shape_of(const ConfigEntry& c) {
  LaunchShape s;
  // Products saturate: three factors below 2^32 may pass 2^64.
  auto product = [](const std::uint32_t(&d)[3], std::uint64_t max) {
    std::uint64_t n = 1;
    for (const auto x : d) {
      if (__builtin_mul_overflow(n, std::uint64_t{x}, &n) || n > max) return max;
    }
    return n;
  };
  s.blocks = product(c.grid, UINT64_MAX);
  s.threads = static_cast<std::uint32_t>(product(c.block, UINT32_MAX));
  s.registers = c.registers;
  s.shared_bytes = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(std::uint64_t{c.static_smem} + c.dynamic_smem, UINT32_MAX));
  return s;
}

// Whether an instance ending at `end_s` is kept at thinning level `level`
// (kMaxCollectivesKept): its second is a multiple of 2^level.
bool kept_at(double end_s, int level) {
  if (level <= 0) return true;
  if (level >= 62) return false;
  const auto second = static_cast<std::int64_t>(std::floor(end_s));
  return (second & ((std::int64_t{1} << level) - 1)) == 0;
}

// Drops the instances of `v` not kept at `level`; returns how many.
std::uint64_t thin(std::vector<std::pair<double, double>>& v, int level) {
  const auto before = v.size();
  std::erase_if(v, [&](const auto& i) { return !kept_at(i.second, level); });
  return before - v.size();
}

}  // namespace

RecordGatherer::RecordGatherer(std::optional<std::int64_t> origin_ns, std::size_t max_spans,
                               std::size_t max_collectives)
    : origin_ns_(origin_ns),
      max_spans_(std::max<std::size_t>(max_spans, 2)),
      max_collectives_(std::max<std::size_t>(max_collectives, 1)) {}

void RecordGatherer::add_collectives(Process& p, const CollectiveInstances& c, double base_s) {
  auto& kept = p.collectives[c.device];
  kept.not_recorded += c.dropped;
  for (const auto& [start, end] : c.instances) {
    const double end_s = base_s + static_cast<double>(end) / 1e9;
    if (!kept_at(end_s, kept.level)) {
      ++kept.thinned;
      continue;
    }
    kept.instances.emplace_back(base_s + static_cast<double>(start) / 1e9, end_s);
    while (kept.instances.size() > max_collectives_ && kept.level < 62) {
      kept.thinned += thin(kept.instances, ++kept.level);
    }
  }
}

// Every timeline thinned to the highest level any reached, so each keeps the
// same seconds of the job.
void RecordGatherer::settle_collectives() {
  int level = 0;
  for (const auto& [pid, p] : processes_) {
    for (const auto& [dev, kept] : p.collectives) level = std::max(level, kept.level);
  }
  for (auto& [pid, p] : processes_) {
    for (auto& [dev, kept] : p.collectives) {
      CollectiveTimeline t{pid, dev, std::move(kept.instances), kept.not_recorded, kept.thinned};
      t.thinned += thin(t.instances, level);
      g_.collectives.push_back(std::move(t));
    }
  }
}

// Past the bound, the spans join and close their smallest gaps down to half of it:
// amortised, each span is sorted a few times over the job.
void RecordGatherer::add_busy(BusySpans& spans, BusySpan s) {
  spans.push_back(s);
  if (spans.size() > max_spans_) join_and_close(spans, max_spans_ / 2);
}

std::int64_t RecordGatherer::origin(std::int64_t base_unix_ns, bool has_clock) {
  if (!origin_ns_ && has_clock && base_unix_ns > 0) origin_ns_ = base_unix_ns;
  return origin_ns_.value_or(0);
}

// Both clocks are non-negative (the readers refuse others): no overflow here; in
// doubles, a relative time as large as the record likes cannot overflow either.
double RecordGatherer::seconds(std::int64_t base_unix_ns, bool has_clock, std::int64_t rel_ns) {
  const std::int64_t o = origin(base_unix_ns, has_clock);
  const std::int64_t base = has_clock ? base_unix_ns - o : 0;
  return (static_cast<double>(base) + static_cast<double>(rel_ns)) / 1e9;
}

// A process without a kernel view says why: its own profiler took CUPTI, or its status.
void RecordGatherer::gather_status(const std::optional<std::int64_t>& pid,
                                   const std::string& status, const std::string& reason,
                                   std::optional<double> yielded_ns) {
  g_.statuses.push_back(status);
  const std::string who = pid ? fmt::format("process {}", *pid) : "";
  if (status == "job_profiler" && yielded_ns) {
    partial_.notes.push_back(fmt::format(
        "{}: the job started its own CUPTI profiler (torch.profiler or similar) {:.1f} s after "
        "CUDA started; gpulens handed CUPTI over and its kernel view stops there",
        who, *yielded_ns / 1e9));
  } else if (status != "ok") {
    partial_.notes.push_back((who.empty() ? "" : who + ": ") + "no kernel view (" + status + ")" +
                             (reason.empty() ? "" : ": " + reason));
  }
}

void RecordGatherer::add(const nlohmann::json& line) {
  const std::size_t index = g_.records++;
  if (is_chunk_line(line)) {
    auto read = read_chunk_line(line);
    if (!read) {
      ++g_.skipped;
      partial_.notes.push_back(line_name(line, index) + " skipped: " + read.error().message);
      return;
    }
    add_line(*read);
    return;
  }
  auto read = read_legacy_record(line);
  if (!read) {
    ++g_.skipped;
    partial_.notes.push_back(line_name(line, index) + " skipped: " + read.error().message);
    return;
  }
  add_whole(*read);
}

// A record of versions 1 to 3: the whole process at once.
void RecordGatherer::add_whole(const LegacyRecord& r) {
  gather_status(r.pid, r.status, r.reason, r.yielded_ns);
  partial_.dropped += r.dropped;
  auto t = [&](std::int64_t rel_ns) { return seconds(r.base_unix_ns, r.has_clock, rel_ns); };
  for (const auto& d : r.devices) {
    if (d.limits.sms > 0) g_.limits[d.id] = d.limits;
    g_.device_names[d.id] = d.name;
  }
  for (const auto& k : r.kernels) {
    add_kernel(g_.names[k.name], k.device, k.shape, k.count, k.total_ns, k.hist, partial_);
  }
  for (const auto& c : r.copies) {
    add_copy(g_.copies, c.kind, c.src, c.dst, c.count, c.bytes, c.total_ns);
  }
  partial_.memsets += r.memsets;
  for (const auto& [a, b] : r.syncs) g_.syncs.push_back({t(a), t(b), 1, t(b) - t(a)});
  Spans own_busy;  // this process's, for its NVTX ranges
  std::set<std::uint32_t> own_devices;
  for (const auto& b : r.busy) {
    auto& v = busy_[b.device];
    own_devices.insert(b.device);
    for (const auto& [from, to] : b.intervals) {
      add_busy(v, {t(from) * 1e9, t(to) * 1e9});
      own_busy.emplace_back(t(from), t(to));
    }
  }
  if (r.sampling) {
    ++g_.processes_sampled;
    partial_.sampling.window_s = r.sampling->window_s;
    partial_.sampling.every_s = r.sampling->every_s;
    partial_.sampling.first_s = r.sampling->first_s;
    Spans mine;
    for (const auto& [from, to] : r.windows) mine.emplace_back(t(from), t(to));
    if (mine.empty()) ++g_.processes_untraced;
    for (const auto dev : own_devices) {
      auto& spans = g_.opened[dev];
      spans.insert(spans.end(), mine.begin(), mine.end());
    }
  }
  if (r.nvtx) {
    merge_intervals(own_busy);
    g_.nvtx.add_process(*r.nvtx, t, std::move(own_busy), std::move(own_devices));
  }
}

void RecordGatherer::add_line(const ChunkLine& line) {
  Process& p = processes_[line.pid];
  std::visit(
      [&](const auto& rec) {
        using T = std::decay_t<decltype(rec)>;
        if constexpr (std::is_same_v<T, ProcessRecord>) {
          if (p.started) {
            // A new image (exec): its clock, names and configurations are its own.
            ++p.execs;
            p.kernel_names.clear();
            p.configs.clear();
          }
          p.started = true;
          p.start = rec;
        } else if constexpr (std::is_same_v<T, NamesRecord>) {
          add_names(p, rec);
        } else if constexpr (std::is_same_v<T, ChunkRecord>) {
          add_chunk(p, line.pid, rec);
        } else {
          p.end = rec;
        }
      },
      line.record);
}

void RecordGatherer::add_names(Process& p, const NamesRecord& n) {
  for (const auto& [id, name] : n.kernel_names) p.kernel_names[id] = name;
  for (const auto& c : n.configs) p.configs[c.id] = c;
  for (const auto& r : n.range_names) {
    if (r.id >= p.nvtx.ranges.size()) {
      if (r.id >= 100000) continue;  // the library folds past 1,000 names
      p.nvtx.ranges.resize(r.id + 1);
    }
    p.nvtx.ranges[r.id].domain = r.domain;
    p.nvtx.ranges[r.id].name = r.name;
  }
  for (const auto& d : n.devices) {
    p.devices[d.id] = d;
    SmLimits lim;
    lim.sms = d.sms;
    lim.max_blocks = d.max_blocks_per_sm;
    lim.max_warps = d.max_warps_per_sm;
    lim.registers = d.registers_per_sm;
    lim.shared_bytes = d.shared_per_sm;
    if (lim.sms > 0) g_.limits[d.id] = lim;
    g_.device_names[d.id] = d.name;
  }
}

void RecordGatherer::add_chunk(Process& p, std::int64_t pid, const ChunkRecord& c) {
  const bool clock = p.started && p.start.base_unix_ns > 0;
  auto t = [&](std::int64_t rel_ns) { return seconds(p.start.base_unix_ns, clock, rel_ns); };
  if (c.seq >= p.chunks) p.chunks = c.seq + 1;
  partial_.dropped += c.dropped;
  for (const auto& k : c.kernels) {
    const auto cfg = p.configs.find(k.config);
    if (cfg == p.configs.end()) {
      if (!p.config_unknown_noted) {
        partial_.notes.push_back(fmt::format(
            "kernel record of process {}: launch configuration {} was never named (a names line "
            "is missing); its kernels count as `(unnamed)`",
            pid, k.config));
        p.config_unknown_noted = true;
      }
      add_kernel(g_.names["(unnamed)"], 0, LaunchShape{}, k.count, k.total_ns, k.hist, partial_);
      continue;
    }
    const auto name = p.kernel_names.find(cfg->second.name);
    add_kernel(g_.names[name != p.kernel_names.end() ? name->second : "(unnamed)"],
               cfg->second.device, shape_of(cfg->second), k.count, k.total_ns, k.hist, partial_);
  }
  for (const auto& cp : c.copies) {
    add_copy(g_.copies, cp.kind, cp.src, cp.dst, cp.count, cp.bytes, cp.total_ns);
  }
  for (const auto& m : c.memsets) partial_.memsets += m.count;
  for (const auto& s : c.syncs) {
    const double from = t(s.start), to = t(s.end);
    g_.syncs.push_back({from, to, static_cast<double>(s.parts),
                        std::max(0.0, (to - from) - static_cast<double>(s.gap_ns) / 1e9)});
  }
  // A process's own busy time is kept only for its NVTX ranges: a process that
  // named none by this chunk costs nothing twice.
  const bool keep_own = !p.nvtx.ranges.empty();
  for (const auto& b : c.busy) {
    auto& v = busy_[b.device];
    p.own_devices.insert(b.device);
    for (const auto& s : b.spans) {
      const BusySpan span{t(s.start) * 1e9, t(s.end) * 1e9, s.parts, s.closed,
                          static_cast<double>(s.gap_ns)};
      add_busy(v, span);
      if (keep_own) add_busy(p.own_busy, span);
    }
  }
  for (const auto& col : c.collectives) add_collectives(p, col, t(0));
  if (c.window) p.windows.emplace_back(t(c.start_ns), t(c.end_ns));
  // NVTX: totals per range id, and the most recent instances.
  for (const auto& r : c.ranges) {
    if (r.range >= p.nvtx.ranges.size()) {
      if (r.range >= 100000) continue;
      p.nvtx.ranges.resize(r.range + 1);
    }
    p.nvtx.ranges[r.range].count += r.count;
    p.nvtx.ranges[r.range].total_ns += r.total_ns;
  }
  for (const auto& i : c.instances) {
    p.recent.push_back({i.start, i.end, i.range});
    if (p.recent.size() > kMaxRangeInstances) {
      p.recent.pop_front();
      ++p.nvtx.instances_dropped;
    }
  }
  p.nvtx.instances_dropped += c.instances_dropped;
  p.nvtx.names_folded += c.names_folded;
}

// A version-4 process once all its lines are in: status, windows, NVTX.
void RecordGatherer::settle(std::int64_t pid, Process& p) {
  const bool clock = p.started && p.start.base_unix_ns > 0;
  auto t = [&](std::int64_t rel_ns) { return seconds(p.start.base_unix_ns, clock, rel_ns); };
  if (p.end && !p.end->detach_note.empty()) {
    partial_.notes.push_back(fmt::format("process {}: {}", pid, p.end->detach_note));
  } else if (p.end && p.end->detaches > 0) {
    partial_.notes.push_back(fmt::format(
        "process {}: CUPTI was detached between trace windows {} time{}, the longest taking {:.1f} "
        "ms of a job thread (the detach experiment of an older library, since removed: not safe "
        "for real jobs)",
        pid, p.end->detaches, p.end->detaches == 1 ? "" : "s",
        static_cast<double>(p.end->detach_max_ns) / 1e6));
  }
  if (p.execs > 0) {
    // exec runs no atexit handler: the image before it wrote no last chunk.
    partial_.notes.push_back(fmt::format(
        "process {} replaced its program {} time{} (exec): each image before the last kept "
        "the windows it had closed, and lost a window still open at the exec",
        pid, p.execs, p.execs == 1 ? "" : "s"));
  }
  if (p.end) {
    gather_status(pid, p.end->status, p.end->reason,
                  p.end->yielded_ns ? std::optional<double>(static_cast<double>(*p.end->yielded_ns))
                                    : std::nullopt);
  } else {
    g_.statuses.push_back("ok");
    partial_.notes.push_back(fmt::format(
        "process {} wrote no end to its kernel record (it was killed or crashed): the view holds "
        "the {} window{} it closed",
        pid, p.chunks, p.chunks == 1 ? "" : "s"));
  }
  if (p.started && !p.start.kinds.empty() &&
      (',' + p.start.kinds + ',').find(",sync,") == std::string::npos) {
    if (partial_.syncs_recorded) {
      partial_.notes.push_back(
          p.start.kinds_note.empty()
              ? fmt::format("process {} recorded only {}: CUDA synchronisations are not counted",
                            pid, p.start.kinds)
              : fmt::format("process {}: {}", pid, p.start.kinds_note));
    }
    partial_.syncs_recorded = false;
  }
  if (p.started && p.start.sampling) {
    ++g_.processes_sampled;
    partial_.sampling.window_s = p.start.sampling->window_s;
    partial_.sampling.every_s = p.start.sampling->every_s;
    partial_.sampling.first_s = p.start.sampling->first_s;
    partial_.sampling.ramp_s = p.start.sampling->ramp_s;
    if (p.windows.empty()) ++g_.processes_untraced;
    for (const auto dev : p.own_devices) {
      auto& spans = g_.opened[dev];
      spans.insert(spans.end(), p.windows.begin(), p.windows.end());
    }
  }
  if (!p.nvtx.ranges.empty() || (p.end && !p.end->nvtx_status.empty())) {
    p.nvtx.status = p.end ? p.end->nvtx_status : "";
    p.nvtx.reason = p.end && !p.end->nvtx_reason.empty() ? p.end->nvtx_reason : p.nvtx.status;
    p.nvtx.unmatched = p.end ? p.end->unmatched : 0;
    p.nvtx.instances.assign(p.recent.begin(), p.recent.end());
    Spans own;
    own.reserve(p.own_busy.size());
    for (const auto& b : p.own_busy) own.emplace_back(b.start / 1e9, b.end / 1e9);
    p.own_busy = {};
    merge_intervals(own);
    g_.nvtx.add_process(p.nvtx, t, std::move(own), std::move(p.own_devices));
  }
}

Gathered RecordGatherer::finish(KernelView& view) {
  for (auto& [pid, p] : processes_) settle(pid, p);
  settle_collectives();
  processes_.clear();
  // Each device's spans joined (several processes may share it), then split into
  // the busy intervals and the idle time the sketches closed inside them.
  for (auto& [dev, spans] : busy_) {
    join_and_close(spans, spans.size());
    Spans& busy = g_.busy[dev];
    busy.reserve(spans.size());
    for (const auto& b : spans) {
      busy.emplace_back(b.start / 1e9, b.end / 1e9);
      if (b.closed > 0) {
        g_.hidden[dev].push_back(
            {busy.back().first, busy.back().second, static_cast<double>(b.closed), b.gap_ns / 1e9});
      }
    }
    spans = {};
  }
  busy_.clear();
  g_.origin_ns = origin_ns_.value_or(0);
  view.launches = partial_.launches;
  view.kernel_s = partial_.kernel_s;
  view.memsets = partial_.memsets;
  view.syncs_recorded = partial_.syncs_recorded;
  view.dropped = partial_.dropped;
  view.sampling = partial_.sampling;
  view.notes.insert(view.notes.end(), partial_.notes.begin(), partial_.notes.end());
  return std::move(g_);
}

}  // namespace gpulens::kernels
