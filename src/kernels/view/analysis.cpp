// SPDX-License-Identifier: Apache-2.0
#include "kernels/view/analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/intervals.hpp"
#include "core/phase.hpp"
#include "core/text_units.hpp"
#include "kernels/record/kernel_names.hpp"
#include "kernels/record/legacy_record_read.hpp"
#include "kernels/view/collectives.hpp"
#include "kernels/view/device_steps.hpp"
#include "kernels/view/kernel_findings.hpp"
#include "kernels/view/occupancy.hpp"
#include "kernels/view/reconcile.hpp"
#include "kernels/view/record_gatherer.hpp"
#include "kernels/view/trace_windows.hpp"

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

// The earliest clock among the records (version 1 to 3 records and version 4's
// process lines keep it under the same keys), so the analysis clock's zero does
// not depend on the records' order.
std::optional<std::int64_t> earliest_clock(const std::vector<nlohmann::json>& records) {
  std::optional<std::int64_t> origin;
  for (const auto& r : records) {
    if (!r.is_object()) continue;
    const auto clock = r.find(key::clock);
    if (clock == r.end() || !clock->is_object()) continue;
    const auto base = clock->find(key::base_unix_ns);
    if (base == clock->end() || !base->is_number_integer()) continue;
    const auto b = base->get<std::int64_t>();
    if (b > 0 && (!origin || b < *origin)) origin = b;
  }
  return origin;
}

// Overlapping synchronisations (several threads, several processes) block the
// host once: joined, with the overlap taken out of their blocked time.
void merge_syncs(SyncSpans& syncs) {
  std::sort(syncs.begin(), syncs.end(),
            [](const SyncSpan& a, const SyncSpan& b) { return a.from < b.from; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < syncs.size(); ++i) {
    if (out > 0 && syncs[i].from <= syncs[out - 1].to) {
      SyncSpan& m = syncs[out - 1];
      const double overlap = std::min(m.to, syncs[i].to) - syncs[i].from;
      m.blocked_s = std::max(0.0, m.blocked_s + syncs[i].blocked_s - std::max(0.0, overlap));
      m.count += syncs[i].count;
      m.to = std::max(m.to, syncs[i].to);
    } else {
      syncs[out++] = syncs[i];
    }
  }
  syncs.resize(out);
}

// No GPU work in any record (every record garbled, or no CUDA work): the notes
// say which field of each, or why.
void explain_no_view(const Gathered& g, KernelView& view) {
  const std::size_t skipped = g.skipped, records = g.records;
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
  const LaunchConfig* main = nullptr;
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

const HiddenIdles* hidden_of(const Gathered& g, std::uint32_t device) {
  const auto it = g.hidden.find(device);
  return it == g.hidden.end() ? nullptr : &it->second;
}

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
                                  .hidden = hidden_of(g, dev),
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

// The ranks' collective time split (collective_split.hpp), one timeline per
// process and device; only for a job of several processes, on one host's clock.
void split_ranks(const Gathered& g, KernelView& view) {
  std::set<std::int64_t> pids;
  std::vector<RankTimeline> ranks;
  std::uint64_t not_recorded = 0, thinned = 0;
  for (const auto& t : g.collectives) {
    not_recorded += t.not_recorded, thinned += t.thinned;
    if (t.instances.empty()) continue;
    pids.insert(t.pid);
    ranks.push_back({fmt::format("GPU {} (pid {})", t.device, t.pid), t.instances});
  }
  if (pids.size() < 2) return;
  view.collective_ranks = split_collective_time(ranks);
  std::size_t unmatched = 0, all = 0;
  for (const auto& r : view.collective_ranks)
    unmatched += r.unmatched, all += r.unmatched + r.matched;
  if (unmatched + not_recorded + thinned == 0) return;
  view.notes.push_back(fmt::format(
      "collectives split into waiting and moving data: {} of {} instances matched on another "
      "rank (the rest ran where no other rank was traced, or their peers were dropped){}{}",
      all - unmatched, all,
      not_recorded > 0 ? fmt::format("; {} past the library's {} per device and chunk were not "
                                     "recorded",
                                     not_recorded, kMaxChunkCollectives)
                       : "",
      thinned > 0 ? fmt::format("; {} were thinned out, evenly in time, to keep the report's "
                                "memory bounded",
                                thinned)
                  : ""));
}

// The recording's GPU whose counters stand beside the view's `device` (a CUDA
// ordinal): the one of that index, else the only one recorded. A job that
// renumbered its GPUs (CUDA_VISIBLE_DEVICES) on a host of several is compared
// with the GPU of the ordinal's index.
std::optional<int> counter_gpu(const Trace& trace, std::uint32_t device) {
  if (trace.header.device(static_cast<int>(device)) != nullptr) return static_cast<int>(device);
  if (trace.header.devices.size() == 1) return trace.header.devices.front().index;
  return std::nullopt;
}

// Traced in windows: each device's windows against the counters of its GPU,
// over the job and its phases (reconcile.hpp).
void add_reconciliation(const Gathered& g, const Attribution& attribution, const Trace& trace,
                        double origin_s, KernelView& view) {
  if (attribution.traced.empty() || trace.samples.empty()) return;
  std::vector<NamedSpan> phases;
  for (const auto& p : find_phases(trace.marks, trace.samples.back().t)) {
    phases.push_back({p.name, p.start - origin_s, p.end - origin_s});
  }
  for (const auto& [dev, windows] : attribution.traced) {
    const auto gpu = counter_gpu(trace, dev);
    const auto busy = g.busy.find(dev);
    if (!gpu || busy == g.busy.end()) continue;
    const auto ticks = counter_ticks(trace.samples, *gpu, trace.header.interval_s, origin_s);
    auto r = reconcile({.ticks = &ticks,
                        .windows = &windows,
                        .busy = &busy->second,
                        .hidden = hidden_of(g, dev),
                        .phases = &phases});
    if (!r) continue;
    r->device = dev;
    r->gpu = *gpu;
    view.reconciliation.push_back(std::move(*r));
  }
}

}  // namespace

std::string sampling_sentence(const Sampling& s) {
  if (!s.sampled) return {};
  if (s.ramp_s > 0) {
    return fmt::format(
        "Traced in {} window{} of {:g} s from the job's first CUDA work, closer together at its "
        "start, then one in every {:g} s ({} in all, as the GPU ran them): counts and times are "
        "those of the windows; --kernels-every 0 traces the whole job",
        s.windows, s.windows == 1 ? "" : "s", s.window_s, s.every_s, kernel_time_text(s.traced_s));
  }
  return fmt::format(
      "Traced in {} window{} of {:g} s, one every {:g} s ({} in all, as the GPU ran them): counts "
      "and times are those of the windows; --kernels-every 0 traces the whole job",
      s.windows, s.windows == 1 ? "" : "s", s.window_s, s.every_s, kernel_time_text(s.traced_s));
}

std::optional<KernelView> analyze_kernels(const Trace& trace, const AnalysisOptions& options) {
  if (trace.kernel_records.empty()) return std::nullopt;
  RecordGatherer gatherer(earliest_clock(trace.kernel_records));
  for (const auto& line : trace.kernel_records) gatherer.add(line);
  return analyze_kernels(std::move(gatherer), trace, options);
}

std::optional<KernelView> analyze_kernels(RecordGatherer&& gatherer, const Trace& trace,
                                          const AnalysisOptions& options) {
  KernelView view;
  Gathered g = gatherer.finish(view);  // read: every record, summed
  if (g.records == 0) return std::nullopt;
  if (auto note = g.nvtx.missing_note()) view.notes.push_back(std::move(*note));
  view.sampling.sampled = g.processes_sampled > 0;
  if (view.launches == 0 && g.busy.empty()) {
    explain_no_view(g, view);
    return view;
  }
  settle_status(g.statuses, view);
  view.kernel_names = g.names.size();  // rank: kernels by time, copies by bytes
  view.top = rank_kernels(g, trace, view.kernel_s, options.top);
  view.copies = copy_rows(g.copies);
  merge_syncs(g.syncs);  // a sync is host time: overlapping ones (threads) count once
  for (const auto& s : g.syncs) {
    view.syncs += static_cast<std::uint64_t>(std::llround(s.count));
    view.sync_s += s.blocked_s;
  }
  const double origin_s = static_cast<double>(g.origin_ns) / 1e9;
  const Attribution attribution =  // per device: idle, steps, strips
      add_devices(g, step_marks(trace, origin_s), origin_s, options, view);
  // NVTX ranges (nvtx_ranges.cpp): where in the program the GPU sat idle.
  view.nvtx = g.nvtx.finish(g.busy, attribution.windows,
                            attribution.traced.empty() ? nullptr : &attribution.traced);
  split_ranks(g, view);  // collectives: waiting vs moving, per rank
  add_reconciliation(g, attribution, trace, origin_s, view);  // windows against counters
  view.headline = kernel_headline(view);                      // findings (kernel_findings.cpp)
  view.findings = kernel_findings(view);
  return view;
}

}  // namespace gpulens::kernels
