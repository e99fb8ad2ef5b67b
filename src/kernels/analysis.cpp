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

std::string fmt_pct(double share) {
  return fmt::format("{:.0f} %", share * 100);
}

std::string fmt_duration(double s) {
  if (s < 1e-3) return fmt::format("{:.0f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.1f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
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
      s.windows, s.windows == 1 ? "" : "s", s.window_s, s.every_s, fmt_duration(s.traced_s));
}

std::optional<KernelView> analyze_kernels(const Trace& trace, const AnalysisOptions& options) {
  if (trace.kernel_records.empty()) return std::nullopt;
  KernelView view;

  // Every record through the checked readers first (kernel_record.hpp): one the job
  // garbled is skipped with a line saying which field, and the rest still count.
  std::vector<KernelRecord> records;
  for (std::size_t i = 0; i < trace.kernel_records.size(); ++i) {
    auto read = read_kernel_record(trace.kernel_records[i]);
    if (read) {
      records.push_back(std::move(*read));
    } else {
      view.notes.push_back(kernel_record_name(trace.kernel_records[i], i) +
                           " skipped: " + read.error().message);
    }
  }
  const std::size_t skipped = trace.kernel_records.size() - records.size();

  // Times: seconds since the first record's clock origin, so doubles keep ns.
  std::int64_t origin_ns = 0;
  bool have_origin = false;
  for (const auto& r : records) {
    const auto b = r.base_unix_ns;
    if (r.has_clock && b > 0 && (!have_origin || b < origin_ns)) origin_ns = b, have_origin = true;
  }
  const double origin_s = static_cast<double>(origin_ns) / 1e9;

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

  for (const auto& r : records) {
    statuses.push_back(r.status);
    const std::string who = r.pid ? fmt::format("process {}", *r.pid) : "";
    if (r.status == "job_profiler" && r.yielded_ns) {
      view.notes.push_back(fmt::format(
          "{}: the job started its own CUPTI profiler (torch.profiler or similar) {:.1f} s after "
          "CUDA started; gpulens handed CUPTI over and its kernel view stops there",
          who, *r.yielded_ns / 1e9));
    } else if (r.status != "ok") {
      view.notes.push_back((who.empty() ? "" : who + ": ") + "no kernel view (" + r.status + ")" +
                           (r.reason.empty() ? "" : ": " + r.reason));
    }
    view.dropped += r.dropped;
    // Both clocks are non-negative (the readers refuse others): no overflow here.
    const std::int64_t base = r.has_clock ? r.base_unix_ns - origin_ns : 0;
    // In doubles: a relative time as large as the record likes cannot overflow.
    auto t = [&](std::int64_t rel_ns) {
      return (static_cast<double>(base) + static_cast<double>(rel_ns)) / 1e9;
    };

    for (const auto& d : r.devices) {
      if (d.limits.sms > 0) limits[d.id] = d.limits;
      device_names[d.id] = d.name;
    }
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
    for (const auto& c : r.copies) {
      CopyRow& row = copies[{c.kind, c.src + ">" + c.dst}];
      row.kind = c.kind, row.src = c.src, row.dst = c.dst;
      row.count += c.count;
      row.bytes += c.bytes;
      row.seconds += static_cast<double>(c.total_ns) / 1e9;
      row.pageable = c.src == "pageable" || c.dst == "pageable";
    }
    view.memsets += r.memsets;
    for (const auto& [a, b] : r.syncs) syncs.emplace_back(t(a), t(b));
    view.syncs += r.syncs.size();
    Intervals own_busy;  // this process's, for its NVTX ranges
    std::set<std::uint32_t> own_devices;
    for (const auto& b : r.busy) {
      auto& v = busy[b.device];
      own_devices.insert(b.device);
      for (const auto& [from, to] : b.intervals) {
        v.emplace_back(t(from), t(to));
        own_busy.push_back(v.back());
      }
    }
    if (r.sampling) {
      ++processes_sampled;
      view.sampling.window_s = r.sampling->window_s;
      view.sampling.every_s = r.sampling->every_s;
      view.sampling.first_s = r.sampling->first_s;
      Spans mine;
      for (const auto& [from, to] : r.windows) mine.emplace_back(t(from), t(to));
      if (mine.empty()) ++processes_untraced;
      for (const auto dev : own_devices) {
        auto& spans = opened[dev];
        spans.insert(spans.end(), mine.begin(), mine.end());
      }
    }
    if (r.nvtx) {
      merge_intervals(own_busy);
      nvtx.add_process(*r.nvtx, t, std::move(own_busy), std::move(own_devices));
    }
  }
  if (auto note = nvtx.missing_note()) view.notes.push_back(std::move(*note));
  view.sampling.sampled = processes_sampled > 0;
  if (view.launches == 0 && busy.empty()) {
    // Every record garbled: no view, and the notes say which field of each.
    view.status = !statuses.empty() ? statuses.front() : skipped > 0 ? "malformed" : "none";
    if (view.notes.size() == skipped && processes_sampled > 0 &&
        processes_untraced == processes_sampled) {
      view.notes.push_back(fmt::format(
          "the job ended before its first trace window ({:g} s after it started): run it with "
          "--kernels-every 0 to trace a short job whole",
          view.sampling.first_s));
    }
    if (view.notes.size() == skipped && skipped < trace.kernel_records.size()) {
      view.notes.push_back("the job launched no CUDA work");
    }
    return view;
  }
  view.available = true;
  view.status = "ok";
  for (const auto& s : statuses) {
    if (s != "ok") view.status = s;
  }
  if (view.dropped > 0) {
    view.notes.push_back(fmt::format("CUPTI dropped {} records (buffers full)", view.dropped));
  }

  // Kernels by GPU time.
  view.kernel_names = names.size();
  std::vector<std::pair<std::string, const NameAgg*>> order;
  for (const auto& [n, a] : names) order.emplace_back(n, &a);
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return x.second->total_ns != y.second->total_ns ? x.second->total_ns > y.second->total_ns
                                                    : x.first < y.first;
  });
  for (std::size_t i = 0; i < order.size() && i < options.top; ++i) {
    const NameAgg& a = *order[i].second;
    KernelRow row;
    row.name = order[i].first;
    row.short_name = short_kernel_name(row.name);
    row.count = a.count;
    row.total_s = static_cast<double>(a.total_ns) / 1e9;
    row.share = view.kernel_s > 0 ? row.total_s / view.kernel_s : 0;
    row.mean_us =
        a.count > 0 ? static_cast<double>(a.total_ns) / static_cast<double>(a.count) / 1e3 : 0;
    row.p50_us = percentile_ns(a.hist, 0.5) / 1e3;
    row.p99_us = percentile_ns(a.hist, 0.99) / 1e3;
    const Config* main = nullptr;
    for (const auto& c : a.configs) {
      if (main == nullptr || c.total_ns > main->total_ns) main = &c;
    }
    if (main != nullptr) {
      row.blocks = main->shape.blocks;
      row.threads = main->shape.threads;
      row.registers = main->shape.registers;
      row.shared_bytes = main->shape.shared_bytes;
      std::optional<SmLimits> lim;
      if (auto it = limits.find(a.device); it != limits.end()) lim = it->second;
      if (!lim) {
        if (const auto* dev = trace.header.device(static_cast<int>(a.device))) {
          lim = limits_for_architecture(dev->architecture,
                                        static_cast<std::uint32_t>(dev->sm_count.value_or(0)));
        }
      }
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
    view.top.push_back(std::move(row));
  }
  for (auto& [k, c] : copies) {
    c.gb_per_s = c.seconds > 0 ? static_cast<double>(c.bytes) / c.seconds / 1e9 : 0;
    view.copies.push_back(c);
  }
  std::sort(view.copies.begin(), view.copies.end(),
            [](const CopyRow& a, const CopyRow& b) { return a.bytes > b.bytes; });
  merge_intervals(syncs);  // a sync is host time: overlapping ones (threads) count once
  for (const auto& [a, b] : syncs) view.sync_s += b - a;

  // Step marks, on the same clock.
  std::vector<double> steps;
  for (const auto& m : trace.marks) {
    if (m.name == "step") steps.push_back(m.t - origin_s);
  }
  std::sort(steps.begin(), steps.end());

  std::map<std::uint32_t, Spans> attribution;  // per device: where NVTX ranges split idle time
  std::map<std::uint32_t, Spans> traced;       // per device, when traced in windows
  for (auto& [dev, v] : busy) {
    merge_intervals(v);
    DeviceView dv;
    dv.device = dev;
    dv.name = device_names[dev];
    // What was traced of this device: its windows as the GPU saw them, or the whole
    // job from the first to the last GPU work.
    Spans spans;
    if (auto w = opened.find(dev); w != opened.end()) {
      merge_intervals(w->second);
      spans = windows_as_seen(w->second, v);
      traced[dev] = spans;
      view.sampling.windows = std::max(view.sampling.windows, spans.size());
    } else if (!v.empty()) {
      spans = {{v.front().first, v.back().second}};
    }
    dv.activity = idle_over_spans(v, spans);
    view.sampling.traced_s = std::max(view.sampling.traced_s, dv.activity.window_s);
    attribution[dev] = spans;
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    if (steps.size() >= 2) {
      if (traced.contains(dev)) {
        runs = step_runs_inside(steps, spans);
        if (runs.empty()) {
          view.notes.push_back(fmt::format(
              "no marked step lies whole inside a trace window of {:g} s: per-step figures need a "
              "longer --kernels-window",
              view.sampling.window_s));
        }
      } else {
        runs = {{0, steps.size() - 1}};
      }
    }
    if (!runs.empty()) {
      StepStats st;
      Spans run_spans;
      for (const auto& [first, last] : runs) {
        st.steps += last - first;
        run_spans.emplace_back(steps[first], steps[last]);
      }
      attribution[dev] = run_spans;
      st.idle = idle_over_spans(v, run_spans);
      st.mean_step_s = st.idle.window_s / static_cast<double>(st.steps);
      st.mean_idle_per_step_s = (st.idle.window_s - st.idle.busy_s) / static_cast<double>(st.steps);
      std::size_t n = 0;
      double blocked = 0;
      for (const auto& [a, b] : syncs) {
        for (const auto& [from, to] : run_spans) {
          if (a >= from && a < to) ++n, blocked += b - a;
        }
      }
      st.syncs_per_step = static_cast<double>(n) / static_cast<double>(st.steps);
      st.sync_s_per_step = blocked / static_cast<double>(st.steps);
      dv.steps = st;
      // Strips: the steps whose length is nearest the median.
      std::vector<std::size_t> idx;
      for (const auto& [first, last] : runs) {
        for (std::size_t i = first; i < last; ++i) idx.push_back(i);
      }
      std::vector<double> lens(steps.size() - 1);
      for (std::size_t i = 0; i + 1 < steps.size(); ++i) lens[i] = steps[i + 1] - steps[i];
      std::vector<double> sorted;
      for (std::size_t i : idx) sorted.push_back(lens[i]);
      std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2),
                       sorted.end());
      const double median = sorted[sorted.size() / 2];
      std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        return std::abs(lens[a] - median) < std::abs(lens[b] - median);
      });
      idx.resize(std::min(idx.size(), options.strips));
      std::sort(idx.begin(), idx.end());
      for (std::size_t i : idx) {
        DeviceView::Strip strip;
        strip.start_unix = steps[i] + origin_s;
        strip.length_s = lens[i];
        auto it = std::lower_bound(v.begin(), v.end(), std::make_pair(steps[i], steps[i]),
                                   [](const auto& a, const auto& b) { return a.second < b.first; });
        for (; it != v.end() && it->first < steps[i + 1] && strip.busy.size() < 4000; ++it) {
          strip.busy.emplace_back(std::max(it->first, steps[i]) - steps[i],
                                  std::min(it->second, steps[i + 1]) - steps[i]);
        }
        dv.strips.push_back(std::move(strip));
      }
    }
    view.devices.push_back(std::move(dv));
  }

  // NVTX ranges (nvtx_ranges.cpp): where in the program the GPU sat idle.
  view.nvtx = nvtx.finish(busy, attribution, traced.empty() ? nullptr : &traced);

  if (!view.devices.empty()) {
    static const char* const kWhy[] = {"launch overhead between back-to-back kernels",
                                       "kernel launches the host could not issue faster",
                                       "short host stalls (Python, synchronisations)",
                                       "the host (data loading, Python, I/O)",
                                       "the host (data loading, I/O, long host work)"};
    const DeviceView& d = view.devices.front();
    const IdleStats& w = d.steps ? d.steps->idle : d.activity;
    std::size_t top_bucket = 0;
    for (std::size_t i = 1; i < w.gaps.seconds.size(); ++i) {
      if (w.gaps.seconds[i] > w.gaps.seconds[top_bucket]) top_bucket = i;
    }
    const char* over = d.steps                 ? "the marked steps"
                       : view.sampling.sampled ? "the trace windows"
                                               : "the time from its first to its last work";
    view.headline = fmt::format("The GPU was busy {:.0f} % of {}", (1 - w.idle_share) * 100, over);
    if (view.sampling.sampled && d.steps) view.headline += " inside the trace windows";
    if (w.idle_share > 0.005) {
      view.headline += fmt::format("; the idle {:.0f} % lies mostly in gaps of {}: {}",
                                   w.idle_share * 100, kGapLabels[top_bucket], kWhy[top_bucket]);
    }
    if (w.idle_share > 0.005 && view.nvtx && view.nvtx->window_idle_s > 0) {
      const RangeRow* most = nullptr;
      for (const auto& r : view.nvtx->ranges) {
        if (most == nullptr || r.attributed_idle_s > most->attributed_idle_s) most = &r;
      }
      const double share = most->attributed_idle_s / view.nvtx->window_idle_s;
      if (share >= 0.5) {
        view.headline +=
            fmt::format(", {:.0f} % of it inside the NVTX range `{}`", share * 100, most->name);
      }
    }
    if (!view.top.empty()) {
      view.headline += fmt::format(". `{}` holds {:.0f} % of kernel time",
                                   view.top.front().short_name, view.top.front().share * 100);
    }
    view.headline += ".";
  }

  // Findings: rules in docs/kernels.md.
  for (const auto& k : view.top) {
    if (k.coverage_known && k.share >= 0.05 && k.sms_used * 2 < k.sms) {
      view.findings.push_back(
          {"low_sm_coverage",
           fmt::format("`{}` takes {} of GPU time with {} of {} SMs busy ({} blocks of {} threads)",
                       k.short_name, fmt_pct(k.share), k.sms_used, k.sms, k.blocks, k.threads),
           "give it more parallel work (a larger batch, more blocks, split-K) or fuse it with its "
           "neighbours (torch.compile; FlashAttention for attention)"});
    }
  }
  if (!view.devices.empty()) {
    const DeviceView& d = view.devices.front();
    const IdleStats& w = d.steps ? d.steps->idle : d.activity;
    const char* where = d.steps                 ? "of the marked steps"
                        : view.sampling.sampled ? "in the trace windows"
                                                : "between the first and last GPU work";
    const double small = w.gaps.seconds[0] + w.gaps.seconds[1];
    const double large = w.gaps.seconds[3] + w.gaps.seconds[4];
    const std::uint64_t small_n = w.gaps.count[0] + w.gaps.count[1];
    const std::uint64_t large_n = w.gaps.count[3] + w.gaps.count[4];
    const double mean_kernel_us =
        view.launches > 0 ? view.kernel_s / static_cast<double>(view.launches) * 1e6 : 0;
    if (w.window_s > 0 && large / w.window_s >= 0.2) {
      std::string per_step;
      if (d.steps) {
        per_step =
            fmt::format("; per step {} idle of {}", fmt_duration(d.steps->mean_idle_per_step_s),
                        fmt_duration(d.steps->mean_step_s));
      }
      view.findings.push_back(
          {"host_bound",
           fmt::format("the GPU sat idle {} of the time {} in {} gaps of 1 ms or more{}: it waits "
                       "for the host (data loading, Python, I/O)",
                       fmt_pct(large / w.window_s), where, large_n, per_step),
           "feed it ahead of time: DataLoader(num_workers=N, pin_memory=True, prefetch), move "
           "per-step host work (decoding, augmentation, logging) off the critical path"});
    }
    if (w.window_s > 0 && small / w.window_s >= 0.2 && mean_kernel_us < 50) {
      view.findings.push_back(
          {"launch_bound",
           fmt::format("the GPU sat idle {} of the time {} in {} gaps shorter than 100 us, between "
                       "kernels of {:.0f} us on average: the host cannot launch them fast enough",
                       fmt_pct(small / w.window_s), where, small_n, mean_kernel_us),
           "launch fewer, larger kernels: CUDA graphs (torch.compile(mode=\"reduce-overhead\")), "
           "fused kernels, a larger batch"});
    }
    if (d.steps && d.steps->syncs_per_step >= 3) {
      view.findings.push_back(
          {"syncs",
           fmt::format(
               "{:.1f} CUDA synchronisations per step, the host blocked {} per step in them",
               d.steps->syncs_per_step, fmt_duration(d.steps->sync_s_per_step)),
           "remove .item(), .cpu(), print(tensor) and torch.cuda.synchronize() from the step; keep "
           "running values on the GPU and read them every N steps"});
    }
  }
  for (const auto& c : view.copies) {
    if (c.pageable && c.bytes >= (1u << 20)) {
      view.findings.push_back(
          {"pageable_copies",
           fmt::format("{:.0f} MB copied {} from pageable host memory in {} copies at {:.1f} GB/s",
                       static_cast<double>(c.bytes) / 1e6, c.kind, c.count, c.gb_per_s),
           "pin the host buffers (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with "
           "non_blocking=True, so copies run at full PCIe speed and overlap compute"});
    }
  }
  return view;
}

}  // namespace gpulens::kernels
