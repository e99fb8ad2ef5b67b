// SPDX-License-Identifier: Apache-2.0
#include "kernels/analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/intervals.hpp"
#include "core/text_units.hpp"
#include "kernels/collectives.hpp"
#include "kernels/device_steps.hpp"
#include "kernels/kernel_findings.hpp"
#include "kernels/kernel_record.hpp"
#include "kernels/occupancy.hpp"
#include "kernels/trace_windows.hpp"

namespace gpulens::kernels {
namespace {

using Intervals = std::vector<std::pair<double, double>>;

// Representative duration of a log bucket (docs/kernels.md): the geometric middle.
double bucket_mid_ns(int bucket) {
  if (bucket <= 0) return 0;
  return std::exp2((bucket - 1 + 0.5) / 8.0);
}

double percentile_ns(const std::map<int, std::uint64_t>& hist, double q) {
  std::uint64_t total = 0;
  for (const auto& [b, n] : hist) total += n;
  if (total == 0) return 0;
  const double want = q * static_cast<double>(total);
  std::uint64_t seen = 0;
  for (const auto& [b, n] : hist) {
    seen += n;
    if (static_cast<double>(seen) >= want) return bucket_mid_ns(b);
  }
  return bucket_mid_ns(hist.rbegin()->first);
}

struct Config {
  LaunchShape shape;
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
};

struct NameAgg {
  std::uint32_t device = 0;
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
  std::map<int, std::uint64_t> hist;
  std::vector<Config> configs;
};

// Every record through the checked readers first (kernel_record.hpp): one the job
// garbled is skipped with a line saying which field, and the rest still count.
std::vector<KernelRecord> read_records(const Trace& trace, std::vector<std::string>& notes) {
  std::vector<KernelRecord> records;
  for (std::size_t i = 0; i < trace.kernel_records.size(); ++i) {
    auto read = read_kernel_record(trace.kernel_records[i]);
    if (read) {
      records.push_back(std::move(*read));
    } else {
      notes.push_back(kernel_record_name(trace.kernel_records[i], i) +
                      " skipped: " + read.error().message);
    }
  }
  return records;
}

// Times: seconds since the first record's clock origin, so doubles keep ns.
std::int64_t clock_origin_ns(const std::vector<KernelRecord>& records) {
  std::int64_t origin_ns = 0;
  bool have_origin = false;
  for (const auto& r : records) {
    const auto b = r.base_unix_ns;
    if (r.has_clock && b > 0 && (!have_origin || b < origin_ns)) origin_ns = b, have_origin = true;
  }
  return origin_ns;
}

// What the records hold, summed over the job's processes, on the analysis clock.
struct Gathered {
  std::map<std::string, NameAgg> names;
  std::map<std::pair<std::string, std::string>, CopyRow> copies;
  std::map<std::uint32_t, Intervals> busy;
  std::map<std::uint32_t, SmLimits> limits;
  std::map<std::uint32_t, std::string> device_names;
  Intervals syncs;
  std::vector<std::string> statuses;
  NvtxRanges nvtx;
  // Trace windows (trace_windows.hpp), per device: those of the processes that used it.
  std::map<std::uint32_t, Spans> opened;
  std::size_t processes_sampled = 0, processes_untraced = 0;
};

// A process without a kernel view says why: its own profiler took CUPTI, or its status.
void note_status(const KernelRecord& r, std::vector<std::string>& notes) {
  const std::string who = r.pid ? fmt::format("process {}", *r.pid) : "";
  if (r.status == "job_profiler" && r.yielded_ns) {
    notes.push_back(fmt::format(
        "{}: the job started its own CUPTI profiler (torch.profiler or similar) {:.1f} s after "
        "CUDA started; gpulens handed CUPTI over and its kernel view stops there",
        who, *r.yielded_ns / 1e9));
  } else if (r.status != "ok") {
    notes.push_back((who.empty() ? "" : who + ": ") + "no kernel view (" + r.status + ")" +
                    (r.reason.empty() ? "" : ": " + r.reason));
  }
}

void add_kernels(const KernelRecord& r, std::map<std::string, NameAgg>& names, KernelView& view) {
  for (const auto& k : r.kernels) {
    NameAgg& a = names[k.name];
    a.device = k.device;
    a.count += k.count;
    a.total_ns += k.total_ns;
    for (const auto& [bucket, n] : k.hist) a.hist[bucket] += n;
    Config c;
    c.shape = k.shape;
    c.count = k.count;
    c.total_ns = k.total_ns;
    a.configs.push_back(c);
    view.launches += k.count;
    view.kernel_s += static_cast<double>(k.total_ns) / 1e9;
  }
}

void add_copies(const KernelRecord& r,
                std::map<std::pair<std::string, std::string>, CopyRow>& copies) {
  for (const auto& c : r.copies) {
    CopyRow& row = copies[{c.kind, c.src + ">" + c.dst}];
    row.kind = c.kind, row.src = c.src, row.dst = c.dst;
    row.count += c.count;
    row.bytes += c.bytes;
    row.seconds += static_cast<double>(c.total_ns) / 1e9;
    row.pageable = c.src == "pageable" || c.dst == "pageable";
  }
}

// A sampled process's trace windows go to every device it used.
template <typename Clock>
void add_windows(const KernelRecord& r, const Clock& t, const std::set<std::uint32_t>& devices,
                 Gathered& g, Sampling& sampling) {
  ++g.processes_sampled;
  sampling.window_s = r.sampling->window_s;
  sampling.every_s = r.sampling->every_s;
  sampling.first_s = r.sampling->first_s;
  Spans mine;
  for (const auto& [from, to] : r.windows) mine.emplace_back(t(from), t(to));
  if (mine.empty()) ++g.processes_untraced;
  for (const auto dev : devices) {
    auto& spans = g.opened[dev];
    spans.insert(spans.end(), mine.begin(), mine.end());
  }
}

// One process's record into the totals.
void gather(const KernelRecord& r, std::int64_t origin_ns, Gathered& g, KernelView& view) {
  g.statuses.push_back(r.status);
  note_status(r, view.notes);
  view.dropped += r.dropped;
  // Both clocks are non-negative (the readers refuse others): no overflow here.
  const std::int64_t base = r.has_clock ? r.base_unix_ns - origin_ns : 0;
  // In doubles: a relative time as large as the record likes cannot overflow.
  auto t = [&](std::int64_t rel_ns) {
    return (static_cast<double>(base) + static_cast<double>(rel_ns)) / 1e9;
  };
  for (const auto& d : r.devices) {
    if (d.limits.sms > 0) g.limits[d.id] = d.limits;
    g.device_names[d.id] = d.name;
  }
  add_kernels(r, g.names, view);
  add_copies(r, g.copies);
  view.memsets += r.memsets;
  for (const auto& [a, b] : r.syncs) g.syncs.emplace_back(t(a), t(b));
  view.syncs += r.syncs.size();
  Intervals own_busy;  // this process's, for its NVTX ranges
  std::set<std::uint32_t> own_devices;
  for (const auto& b : r.busy) {
    auto& v = g.busy[b.device];
    own_devices.insert(b.device);
    for (const auto& [from, to] : b.intervals) {
      v.emplace_back(t(from), t(to));
      own_busy.push_back(v.back());
    }
  }
  if (r.sampling) add_windows(r, t, own_devices, g, view.sampling);
  if (r.nvtx) {
    merge_intervals(own_busy);
    g.nvtx.add_process(*r.nvtx, t, std::move(own_busy), std::move(own_devices));
  }
}

// No GPU work in any record (every record garbled, or no CUDA work): the notes
// say which field of each, or why.
void explain_no_view(const Gathered& g, std::size_t skipped, std::size_t records,
                     KernelView& view) {
  view.status = !g.statuses.empty() ? g.statuses.front() : skipped > 0 ? "malformed" : "none";
  if (view.notes.size() == skipped && g.processes_sampled > 0 &&
      g.processes_untraced == g.processes_sampled) {
    view.notes.push_back(fmt::format(
        "the job ended before its first trace window ({:g} s after it started): run it with "
        "--kernels-every 0 to trace a short job whole",
        view.sampling.first_s));
  }
  if (view.notes.size() == skipped && skipped < records) {
    view.notes.push_back("the job launched no CUDA work");
  }
}

// A view exists: "ok" unless a process said otherwise (the last one that did).
void settle_status(const std::vector<std::string>& statuses, KernelView& view) {
  view.available = true;
  view.status = "ok";
  for (const auto& s : statuses) {
    if (s != "ok") view.status = s;
  }
  if (view.dropped > 0) {
    view.notes.push_back(fmt::format("CUPTI dropped {} records (buffers full)", view.dropped));
  }
}

// The device's SM limits: from its CUPTI record, else from the recording's header.
std::optional<SmLimits> limits_of(std::uint32_t device, const Gathered& g, const Trace& trace) {
  if (auto it = g.limits.find(device); it != g.limits.end()) return it->second;
  if (const auto* dev = trace.header.device(static_cast<int>(device))) {
    return limits_for_architecture(dev->architecture,
                                   static_cast<std::uint32_t>(dev->sm_count.value_or(0)));
  }
  return std::nullopt;
}

// The launch configuration that holds most of the kernel's time, and its SM
// coverage when the device's limits are known.
void describe_main_config(const NameAgg& a, const Gathered& g, const Trace& trace, KernelRow& row) {
  const Config* main = nullptr;
  for (const auto& c : a.configs) {
    if (main == nullptr || c.total_ns > main->total_ns) main = &c;
  }
  if (main == nullptr) return;
  row.blocks = main->shape.blocks;
  row.threads = main->shape.threads;
  row.registers = main->shape.registers;
  row.shared_bytes = main->shape.shared_bytes;
  const std::optional<SmLimits> lim = limits_of(a.device, g, trace);
  if (lim && lim->sms > 0 && main->shape.threads > 0) {
    const Occupancy o = occupancy(main->shape, *lim);
    row.blocks_per_sm = o.blocks_per_sm;
    row.sms_used = o.sms_used;
    row.sms = lim->sms;
    row.waves = o.waves;
    row.limited_by = o.limited_by;
    row.coverage_known = true;
  }
}

// Kernels by GPU time, the first `top` of them.
std::vector<KernelRow> rank_kernels(const Gathered& g, const Trace& trace, double kernel_s,
                                    std::size_t top) {
  std::vector<std::pair<std::string, const NameAgg*>> order;
  for (const auto& [n, a] : g.names) order.emplace_back(n, &a);
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return x.second->total_ns != y.second->total_ns ? x.second->total_ns > y.second->total_ns
                                                    : x.first < y.first;
  });
  std::vector<KernelRow> rows;
  for (std::size_t i = 0; i < order.size() && i < top; ++i) {
    const NameAgg& a = *order[i].second;
    KernelRow row;
    row.name = order[i].first;
    row.short_name = short_kernel_name(row.name);
    row.count = a.count;
    row.total_s = static_cast<double>(a.total_ns) / 1e9;
    row.share = kernel_s > 0 ? row.total_s / kernel_s : 0;
    row.mean_us =
        a.count > 0 ? static_cast<double>(a.total_ns) / static_cast<double>(a.count) / 1e3 : 0;
    row.p50_us = percentile_ns(a.hist, 0.5) / 1e3;
    row.p99_us = percentile_ns(a.hist, 0.99) / 1e3;
    describe_main_config(a, g, trace, row);
    rows.push_back(std::move(row));
  }
  mark_collectives(rows);
  return rows;
}

// Copies by bytes, with their bandwidth on the copy engine.
std::vector<CopyRow> copy_rows(std::map<std::pair<std::string, std::string>, CopyRow>& copies) {
  std::vector<CopyRow> rows;
  for (auto& [k, c] : copies) {
    c.gb_per_s = c.seconds > 0 ? static_cast<double>(c.bytes) / c.seconds / 1e9 : 0;
    rows.push_back(c);
  }
  std::sort(rows.begin(), rows.end(),
            [](const CopyRow& a, const CopyRow& b) { return a.bytes > b.bytes; });
  return rows;
}

// Step marks, sorted, on the analysis clock.
std::vector<double> step_marks(const Trace& trace, double origin_s) {
  std::vector<double> steps;
  for (const auto& m : trace.marks) {
    if (m.name == "step") steps.push_back(m.t - origin_s);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

// Per device, where NVTX ranges split idle time and (traced in windows) what was traced.
struct Attribution {
  std::map<std::uint32_t, Spans> windows;
  std::map<std::uint32_t, Spans> traced;
};

// Each device's view (device_steps.cpp), in device order; the sampling totals
// and the notes of steps no window held whole.
Attribution add_devices(Gathered& g, const std::vector<double>& steps, double origin_s,
                        const AnalysisOptions& options, KernelView& view) {
  Attribution out;
  for (auto& [dev, v] : g.busy) {
    merge_intervals(v);
    const Spans* opened = nullptr;
    if (auto w = g.opened.find(dev); w != g.opened.end()) {
      merge_intervals(w->second);
      opened = &w->second;
    }
    DeviceSteps d = device_steps({.device = dev,
                                  .name = g.device_names[dev],
                                  .busy = &v,
                                  .opened = opened,
                                  .steps = &steps,
                                  .syncs = &g.syncs,
                                  .origin_s = origin_s,
                                  .strips = options.strips});
    if (d.traced) {
      view.sampling.windows = std::max(view.sampling.windows, d.traced->size());
      out.traced[dev] = std::move(*d.traced);
    }
    view.sampling.traced_s = std::max(view.sampling.traced_s, d.view.activity.window_s);
    out.windows[dev] = std::move(d.attribution);
    if (d.no_step_inside_windows) {
      view.notes.push_back(fmt::format(
          "no marked step lies whole inside a trace window of {:g} s: per-step figures need a "
          "longer --kernels-window",
          view.sampling.window_s));
    }
    view.devices.push_back(std::move(d.view));
  }
  return out;
}

}  // namespace

void GapHistogram::add(double gap_s) {
  std::size_t i = 0;
  while (i < kGapEdgesS.size() && gap_s >= kGapEdgesS[i]) ++i;
  ++count[i];
  seconds[i] += gap_s;
}

IdleStats idle_over(const Intervals& busy, double from, double to) {
  IdleStats st;
  if (!(to > from)) return st;
  st.window_s = to - from;
  double cursor = from;  // end of the last busy time seen inside the window
  for (const auto& [a, b] : busy) {
    if (b <= from) continue;
    if (a >= to) break;
    const double s = std::max(a, from);
    const double e = std::min(b, to);
    if (s > cursor) st.gaps.add(s - cursor);
    st.busy_s += e - s;
    cursor = std::max(cursor, e);
  }
  if (to > cursor) st.gaps.add(to - cursor);  // a window with no work at all is one gap
  st.idle_share = 1 - st.busy_s / st.window_s;
  return st;
}

std::string short_kernel_name(const std::string& name) {
  std::string s;
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') {
      ++depth;
    } else if (c == '>') {
      if (depth > 0) --depth;
    } else if (depth == 0) {
      s += c;
    }
  }
  for (const char* anon : {"(anonymous namespace)::", "(anonymous namespace)"}) {
    for (auto p = s.find(anon); p != std::string::npos; p = s.find(anon)) {
      s.erase(p, std::string(anon).size());
    }
  }
  if (auto p = s.find('('); p != std::string::npos) s.resize(p);
  if (auto p = s.rfind(' '); p != std::string::npos) s = s.substr(p + 1);
  if (auto p = s.rfind("::"); p != std::string::npos) s = s.substr(p + 2);
  if (s.empty()) return name.size() > 60 ? name.substr(0, 60) : name;
  return s;
}

std::string sampling_sentence(const Sampling& s) {
  if (!s.sampled) return {};
  return fmt::format(
      "Traced in {} window{} of {:g} s, one every {:g} s ({} in all, as the GPU ran them): counts "
      "and times are those of the windows; --kernels-every 0 traces the whole job",
      s.windows, s.windows == 1 ? "" : "s", s.window_s, s.every_s, kernel_time_text(s.traced_s));
}

std::optional<KernelView> analyze_kernels(const Trace& trace, const AnalysisOptions& options) {
  if (trace.kernel_records.empty()) return std::nullopt;
  KernelView view;
  const std::vector<KernelRecord> records = read_records(trace, view.notes);
  const std::size_t skipped = trace.kernel_records.size() - records.size();
  const std::int64_t origin_ns = clock_origin_ns(records);
  Gathered g;
  for (const auto& r : records) gather(r, origin_ns, g, view);
  if (auto note = g.nvtx.missing_note()) view.notes.push_back(std::move(*note));
  view.sampling.sampled = g.processes_sampled > 0;
  if (view.launches == 0 && g.busy.empty()) {
    explain_no_view(g, skipped, trace.kernel_records.size(), view);
    return view;
  }
  settle_status(g.statuses, view);
  view.kernel_names = g.names.size();
  view.top = rank_kernels(g, trace, view.kernel_s, options.top);
  view.copies = copy_rows(g.copies);
  merge_intervals(g.syncs);  // a sync is host time: overlapping ones (threads) count once
  for (const auto& [a, b] : g.syncs) view.sync_s += b - a;
  const double origin_s = static_cast<double>(origin_ns) / 1e9;
  const Attribution attribution =
      add_devices(g, step_marks(trace, origin_s), origin_s, options, view);
  // NVTX ranges (nvtx_ranges.cpp): where in the program the GPU sat idle.
  view.nvtx = g.nvtx.finish(g.busy, attribution.windows,
                            attribution.traced.empty() ? nullptr : &attribution.traced);
  view.headline = kernel_headline(view);
  view.findings = kernel_findings(view);
  return view;
}

}  // namespace gpulens::kernels
