// SPDX-License-Identifier: Apache-2.0
#include "kernels/record/chunk_record.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

namespace gpulens::kernels {
namespace {

using nlohmann::json;

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Fills lines with a record's fixed fields and then its lists' entries, as many
// per line as fit in kMaxRecordBytes. The first line also carries `first_only`
// (counters that must not be added twice); later lines repeat only `head`.
class LinePacker {
 public:
  LinePacker(std::string head, std::string first_only)
      : head_(std::move(head)), first_only_(std::move(first_only)) {
    open_line();
  }

  // One entry of the list `list` (lists come one after another, entries in order).
  void add(const char* list, const std::string& entry) {
    const bool opens = list != in_list_;
    const std::size_t need =
        entry.size() + 1 + (opens ? std::char_traits<char>::length(list) + 5 : 0) + 2;
    if (entries_in_line_ > 0 && line_.size() + need > kMaxRecordBytes) {
      close_line();
      open_line();
    }
    if (list != in_list_) {
      if (in_list_ != nullptr) line_ += ']';
      line_ += ",\"";
      line_ += list;
      line_ += "\":[";
      in_list_ = list;
    } else {
      line_ += ',';
    }
    line_ += entry;
    ++entries_in_line_;
  }

  std::vector<std::string> finish() {
    close_line();
    return std::move(lines_);
  }

 private:
  void open_line() {
    line_ = head_;
    line_ += ",\"";
    line_ += key::part;
    line_ += "\":" + std::to_string(lines_.size());
    if (lines_.empty()) line_ += first_only_;
    entries_in_line_ = 0;
    in_list_ = nullptr;
  }
  void close_line() {
    if (in_list_ != nullptr) line_ += ']';
    line_ += '}';
    lines_.push_back(std::move(line_));
    in_list_ = nullptr;
  }

  std::string head_, first_only_;
  std::string line_;
  const char* in_list_ = nullptr;  // the list open in the current line
  std::size_t entries_in_line_ = 0;
  std::vector<std::string> lines_;
};

std::string head(std::int64_t pid, const char* kind, std::uint64_t seq) {
  json h = {
      {key::version, kChunkRecordVersion}, {key::record, kind}, {key::pid, pid}, {key::seq, seq}};
  std::string s = dump(h);
  s.pop_back();  // the closing brace: fields follow
  return s;
}

// `,"key":value` for the fields of `j`, in its order.
std::string fields(const json& j) {
  std::string s;
  for (auto it = j.begin(); it != j.end(); ++it) {
    s += ',';
    s += dump(json(it.key()));
    s += ':';
    s += dump(it.value());
  }
  return s;
}

json sketch_json(const std::vector<SketchSpan>& spans) {
  // [start, length, gap, length, ...]: small numbers; then [index, parts, closed,
  // gap_ns] for the spans that stand for more than one interval.
  json flat = json::array();
  json merged = json::array();
  std::int64_t last_end = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const SketchSpan& s = spans[i];
    flat.push_back(i == 0 ? s.start : s.start - last_end);
    flat.push_back(s.end - s.start);
    last_end = s.end;
    if (s.parts > 1 || s.closed > 0) {
      merged.push_back(i);
      merged.push_back(s.parts);
      merged.push_back(s.closed);
      merged.push_back(s.gap_ns);
    }
  }
  return json::array({flat, merged});
}

// [device, dropped, [start, length, step, length, ...]]: the first start, then
// each start as the step from the one before (sorted by start; instances on
// several streams may overlap, so a step from the previous end could be negative).
json collectives_json(const CollectiveInstances& c) {
  std::vector<std::pair<std::int64_t, std::int64_t>> sorted(
      c.instances.begin(), c.instances.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                     c.instances.size(), kMaxChunkCollectives)));
  std::sort(sorted.begin(), sorted.end());
  // Steps and lengths are differences: taken in unsigned arithmetic, and an
  // instance whose step or length would not fit the reader's range (no clock of
  // a real job) is counted as dropped.
  auto diff = [](std::int64_t a, std::int64_t b) {
    return a < b ? 0 : static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b);
  };
  constexpr auto kMax = static_cast<std::uint64_t>(INT64_MAX);
  json flat = json::array();
  std::uint64_t dropped = c.dropped + (c.instances.size() - sorted.size());
  std::optional<std::int64_t> last_start;
  for (const auto& [start, end] : sorted) {
    const std::uint64_t step = last_start ? diff(start, *last_start) : 0;
    const std::uint64_t len = diff(end, start);
    if (step > kMax || len > kMax) {
      ++dropped;
      continue;
    }
    if (last_start) {
      flat.push_back(step);
    } else {
      flat.push_back(start);
    }
    flat.push_back(len);
    last_start = start;
  }
  return json::array({c.device, dropped, flat});
}

std::string cut(std::string s) {
  return bounded_text(std::move(s));
}

}  // namespace

std::string bounded_text(std::string s) {
  if (s.size() <= kMaxTextChars) return s;
  std::size_t n = kMaxTextChars;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not mid-character
  s.resize(n);
  return s;
}

std::vector<std::string> encode_process(std::int64_t pid, const ProcessRecord& p) {
  json f = json::object();
  f[key::exe] = cut(p.exe);
  json cupti = {{key::path, cut(p.cupti_path)}, {key::cupti_version, p.cupti_version}};
  if (!p.cupti_searched.empty()) {
    json searched = json::array();
    for (std::size_t i = 0; i < p.cupti_searched.size() && i < 8; ++i) {
      searched.push_back(cut(p.cupti_searched[i]));
    }
    cupti[key::searched] = std::move(searched);
  }
  f[key::cupti] = std::move(cupti);
  f[key::clock] = {{key::base_ns, p.base_ns}, {key::base_unix_ns, p.base_unix_ns}};
  if (p.sampling) {
    f[key::sampling] = {{key::first_s, p.sampling->first_s},
                        {key::window_s, p.sampling->window_s},
                        {key::every_s, p.sampling->every_s}};
    if (p.sampling->ramp_s > 0) f[key::sampling][key::ramp_s] = p.sampling->ramp_s;
  }
  if (!p.schedule_error.empty()) f[key::schedule_error] = cut(p.schedule_error);
  if (!p.kinds.empty()) f[key::kinds] = cut(p.kinds);
  if (!p.kinds_note.empty()) f[key::kinds_note] = cut(p.kinds_note);
  LinePacker lines(head(pid, kind::process, 0), fields(f));
  return lines.finish();
}

std::vector<std::string> encode_names(std::int64_t pid, std::uint64_t seq, const NamesRecord& n) {
  LinePacker lines(head(pid, kind::names, seq), "");
  for (const auto& [id, name] : n.kernel_names) {
    lines.add(key::kernel_names, dump(json::array({id, cut(name)})));
  }
  for (const auto& c : n.configs) {
    lines.add(key::configs, dump(json::array({c.id, c.name, c.device, c.grid[0], c.grid[1],
                                              c.grid[2], c.block[0], c.block[1], c.block[2],
                                              c.registers, c.static_smem, c.dynamic_smem})));
  }
  for (const auto& r : n.range_names) {
    lines.add(key::range_names, dump(json::array({r.id, cut(r.domain), cut(r.name)})));
  }
  for (const auto& d : n.devices) {
    lines.add(key::devices,
              dump(json::array({d.id, cut(d.name), d.sms, d.max_blocks_per_sm, d.max_threads_per_sm,
                                d.max_warps_per_sm, d.registers_per_sm, d.shared_per_sm, d.cc_major,
                                d.cc_minor})));
  }
  return lines.finish();
}

std::vector<std::string> encode_chunk(std::int64_t pid, const ChunkRecord& c) {
  json first = json::object();
  first[key::span] = json::array({c.start_ns, c.end_ns});
  first[key::window] = c.window;
  if (c.dropped > 0) first[key::dropped] = c.dropped;
  if (c.instances_dropped > 0) first[key::instances_dropped] = c.instances_dropped;
  if (c.names_folded > 0) first[key::names_folded] = c.names_folded;
  if (c.configs_folded > 0) first[key::configs_folded] = c.configs_folded;
  LinePacker lines(head(pid, kind::chunk, c.seq), fields(first));
  for (const auto& k : c.kernels) {
    json hist = json::array();
    for (const auto& [b, n] : k.hist) {
      hist.push_back(b);
      hist.push_back(n);
    }
    lines.add(key::kernels,
              dump(json::array({k.config, k.count, k.total_ns, k.min_ns, k.max_ns, hist})));
  }
  for (const auto& cp : c.copies) {
    lines.add(key::copies, dump(json::array({cp.device, cut(cp.kind), cut(cp.src), cut(cp.dst),
                                             cp.count, cp.bytes, cp.total_ns})));
  }
  for (const auto& m : c.memsets) {
    lines.add(key::memsets, dump(json::array({m.device, m.count, m.bytes, m.total_ns})));
  }
  for (const auto& s : c.streams) {
    lines.add(key::streams, dump(json::array({s.device, s.stream, s.launches, s.busy_ns})));
  }
  for (const auto& b : c.busy) {
    json e = sketch_json(b.spans);
    e.insert(e.begin(), b.device);
    lines.add(key::busy, dump(e));
  }
  if (!c.syncs.empty()) lines.add(key::syncs, dump(sketch_json(c.syncs)));
  for (const auto& r : c.ranges) {
    lines.add(key::ranges, dump(json::array({r.range, r.count, r.total_ns, r.min_ns, r.max_ns})));
  }
  for (const auto& i : c.instances) {
    lines.add(key::instances, dump(json::array({i.start, i.end, i.range})));
  }
  for (const auto& col : c.collectives) {
    lines.add(key::collectives, dump(collectives_json(col)));
  }
  return lines.finish();
}

std::vector<std::string> encode_end(std::int64_t pid, const EndRecord& e) {
  json f = json::object();
  f[key::status] = cut(e.status);
  if (!e.reason.empty()) f[key::reason] = cut(e.reason);
  if (e.yielded_ns) f[key::yielded_ns] = *e.yielded_ns;
  if (e.activity) {
    f[key::activity] = {{key::first_ns, e.activity->first}, {key::last_ns, e.activity->second}};
  }
  json nvtx = {{key::status, cut(e.nvtx_status)}, {key::unmatched, e.unmatched}};
  if (!e.nvtx_reason.empty()) nvtx[key::reason] = cut(e.nvtx_reason);
  f[key::nvtx] = std::move(nvtx);
  f[key::chunks] = e.chunks;
  if (e.detaches > 0) f[key::detaches] = e.detaches;
  if (e.detach_max_ns > 0) f[key::detach_max_ns] = e.detach_max_ns;
  if (!e.detach_note.empty()) f[key::detach_note] = cut(e.detach_note);
  if (e.agent) {
    json agent = {{key::sent, e.agent_sent}, {key::dropped, e.agent_dropped}};
    if (!e.agent_note.empty()) agent[key::note] = cut(e.agent_note);
    f[key::agent] = std::move(agent);
  }
  LinePacker lines(head(pid, kind::end, e.chunks), fields(f));
  return lines.finish();
}

std::vector<SketchSpan> sketch_spans(std::vector<std::pair<std::int64_t, std::int64_t>> intervals,
                                     std::size_t max_spans) {
  std::vector<SketchSpan> spans;
  spans.reserve(intervals.size());
  for (const auto& [a, b] : intervals) spans.push_back({a, std::max(a, b), 1, 0, 0});
  join_and_close(spans, max_spans);
  return spans;
}

}  // namespace gpulens::kernels
