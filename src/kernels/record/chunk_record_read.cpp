// SPDX-License-Identifier: Apache-2.0
#include "kernels/record/chunk_record_read.hpp"

#include <fmt/format.h>

#include <string>

#include "kernels/record/checked_json.hpp"

namespace gpulens::kernels {
namespace {

using nlohmann::json;

// One entry of a list: a JSON array of `size` values (at least), read by position.
// Long lists hold hundreds of thousands of values: a value's path is written out
// only when it is at fault.
class Row {
 public:
  Row(Checked& c, const json& v, const char* list, std::size_t index, std::size_t size)
      : c_(c), v_(v), list_(list), index_(index) {
    if (!v.is_array() || v.size() < size) {
      c.fail(path(), fmt::format("is not a list of {} values", size));
      ok_ = false;
    }
  }
  bool ok() const { return ok_ && c_.problem.empty(); }
  std::uint64_t count(std::size_t i, std::uint64_t max = UINT64_MAX) {
    if (!ok_) return 0;
    const json& v = v_[i];
    if (v.is_number_unsigned() && v.get<std::uint64_t>() <= max) return v.get<std::uint64_t>();
    return c_.count(v, at(i), max);
  }
  std::uint32_t u32(std::size_t i) { return static_cast<std::uint32_t>(count(i, UINT32_MAX)); }
  std::int64_t integer(std::size_t i) {
    if (!ok_) return 0;
    const json& v = v_[i];
    if (Checked::fits_i64(v)) return v.get<std::int64_t>();
    return c_.integer(v, at(i));
  }
  std::string text(std::size_t i) {
    if (!ok_) return {};
    if (!v_[i].is_string()) {
      c_.fail(at(i), "is not a string");
      return {};
    }
    return v_[i].get<std::string>();
  }
  const json& at_value(std::size_t i) const { return v_[i]; }
  // "kernels[3]", or the field's own name when it is not in a list.
  std::string path() const { return index_ == kField ? list_ : Checked::item(list_, index_); }
  static constexpr std::size_t kField = static_cast<std::size_t>(-1);
  std::string at(std::size_t i) const { return Checked::item(path(), i); }

 private:
  Checked& c_;
  const json& v_;
  const char* list_;
  std::size_t index_;
  bool ok_ = true;
};

// A count at `v`, the path made only when it is at fault.
template <typename Path>
std::uint64_t fast_count(Checked& c, const json& v, std::uint64_t max, Path&& path) {
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= max) return v.get<std::uint64_t>();
  return c.count(v, path(), max);
}

// Each element of the list `key` (absent: none).
template <typename F>
void each(Checked& c, const json& line, const char* list, F&& read_one) {
  const json* items = c.array(line, "", list);
  if (items == nullptr) return;
  for (std::size_t i = 0; i < items->size() && c.problem.empty(); ++i) {
    read_one((*items)[i], list, i);
  }
}

// [start, length, gap, length, ...] and [index, parts, closed, gap_ns, ...]
// (chunk_record.cpp's sketch_json), back to spans.
std::vector<SketchSpan> read_sketch(Checked& c, const json& flat, const json& merged,
                                    const std::string& at) {
  std::vector<SketchSpan> spans;
  if (!flat.is_array() || flat.size() % 2 != 0) {
    c.fail(at, "does not hold [start, length, gap, length, ...]");
    return spans;
  }
  std::int64_t cursor = 0;
  for (std::size_t i = 0; i < flat.size() && c.problem.empty(); i += 2) {
    const std::int64_t step = Checked::fits_i64(flat[i]) ? flat[i].get<std::int64_t>()
                                                         : c.integer(flat[i], Checked::item(at, i));
    const std::uint64_t len =
        fast_count(c, flat[i + 1], INT64_MAX, [&] { return Checked::item(at, i + 1); });
    if (i > 0 && step < 0) c.fail(Checked::item(at, i), "is a negative gap");
    SketchSpan s;
    if (__builtin_add_overflow(i == 0 ? 0 : cursor, step, &s.start) ||
        __builtin_add_overflow(s.start, static_cast<std::int64_t>(len), &s.end)) {
      c.fail(Checked::item(at, i), "runs past the clock's range");
    }
    cursor = s.end;
    spans.push_back(s);
  }
  if (!merged.is_array() || merged.size() % 4 != 0) {
    c.fail(at, "has no [index, parts, closed, gap_ns, ...] list");
    return spans;
  }
  for (std::size_t i = 0; i < merged.size() && c.problem.empty(); i += 4) {
    const std::uint64_t index =
        fast_count(c, merged[i], spans.size(), [&] { return Checked::item(at + "'", i); });
    if (index >= spans.size()) {
      c.fail(Checked::item(at + "'", i), "is not the index of a span");
      break;
    }
    SketchSpan& s = spans[index];
    s.parts =
        fast_count(c, merged[i + 1], UINT64_MAX, [&] { return Checked::item(at + "'", i + 1); });
    s.closed =
        fast_count(c, merged[i + 2], UINT64_MAX, [&] { return Checked::item(at + "'", i + 2); });
    s.gap_ns = fast_count(c, merged[i + 3], static_cast<std::uint64_t>(s.end - s.start),
                          [&] { return Checked::item(at + "'", i + 3); });
  }
  return spans;
}

// [start, length, step, length, ...] (chunk_record.cpp's collectives_json) back
// to [start, end] pairs.
std::vector<std::pair<std::int64_t, std::int64_t>> read_collectives(Checked& c, const json& flat,
                                                                    const std::string& at) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  if (!flat.is_array() || flat.size() % 2 != 0) {
    c.fail(at, "does not hold [start, length, step, length, ...]");
    return out;
  }
  if (flat.size() / 2 > kMaxChunkCollectives) {
    c.fail(at, fmt::format("holds more than {} instances", kMaxChunkCollectives));
    return out;
  }
  out.reserve(flat.size() / 2);
  std::int64_t start = 0;
  for (std::size_t i = 0; i < flat.size() && c.problem.empty(); i += 2) {
    std::int64_t step = 0;
    if (i == 0) {
      step = Checked::fits_i64(flat[i]) ? flat[i].get<std::int64_t>()
                                        : c.integer(flat[i], Checked::item(at, i));
    } else {
      step = static_cast<std::int64_t>(
          fast_count(c, flat[i], INT64_MAX, [&] { return Checked::item(at, i); }));
    }
    const auto len = static_cast<std::int64_t>(
        fast_count(c, flat[i + 1], INT64_MAX, [&] { return Checked::item(at, i + 1); }));
    std::int64_t end = 0;
    if (__builtin_add_overflow(start, step, &start) || __builtin_add_overflow(start, len, &end)) {
      c.fail(Checked::item(at, i), "runs past the clock's range");
    }
    out.emplace_back(start, end);
  }
  return out;
}

ProcessRecord read_process(Checked& c, const json& line) {
  ProcessRecord p;
  p.exe = c.text(line, "", key::exe, "");
  if (const json* cupti = Checked::find(line, key::cupti); cupti && c.object(*cupti, key::cupti)) {
    p.cupti_path = c.text(*cupti, key::cupti, key::path, "");
    p.cupti_version = c.u32(*cupti, key::cupti, key::cupti_version);
    if (const json* s = c.array(*cupti, key::cupti, key::searched)) {
      for (const auto& e : *s) {
        if (e.is_string()) p.cupti_searched.push_back(e.get<std::string>());
      }
    }
  }
  if (const json* clock = Checked::find(line, key::clock); clock && c.object(*clock, key::clock)) {
    p.base_ns = c.count(*clock, key::clock, key::base_ns);
    p.base_unix_ns = static_cast<std::int64_t>(
        c.count(*clock, key::clock, key::base_unix_ns, static_cast<std::uint64_t>(INT64_MAX)));
  }
  if (const json* s = Checked::find(line, key::sampling); s && c.object(*s, key::sampling)) {
    ProcessRecord::Sampling sm;
    sm.first_s = c.number(*s, key::sampling, key::first_s, 0);
    sm.window_s = c.number(*s, key::sampling, key::window_s, 0);
    sm.every_s = c.number(*s, key::sampling, key::every_s, 0);
    sm.ramp_s = c.number(*s, key::sampling, key::ramp_s, 0);
    p.sampling = sm;
  }
  p.schedule_error = c.text(line, "", key::schedule_error, "");
  p.kinds = c.text(line, "", key::kinds, "");
  p.kinds_note = c.text(line, "", key::kinds_note, "");
  return p;
}

NamesRecord read_names(Checked& c, const json& line) {
  NamesRecord n;
  each(c, line, key::kernel_names, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 2);
    const auto id = r.u32(0);
    auto name = r.text(1);
    if (r.ok()) n.kernel_names.emplace_back(id, std::move(name));
  });
  each(c, line, key::configs, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 12);
    ConfigEntry e;
    e.id = r.u32(0), e.name = r.u32(1), e.device = r.u32(2);
    for (std::size_t d = 0; d < 3; ++d) e.grid[d] = r.u32(3 + d), e.block[d] = r.u32(6 + d);
    e.registers = r.u32(9), e.static_smem = r.u32(10), e.dynamic_smem = r.u32(11);
    if (r.ok()) n.configs.push_back(e);
  });
  each(c, line, key::range_names, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 3);
    RangeName e;
    e.id = r.u32(0), e.domain = r.text(1), e.name = r.text(2);
    if (r.ok()) n.range_names.push_back(std::move(e));
  });
  each(c, line, key::devices, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 10);
    DeviceEntry d;
    d.id = r.u32(0), d.name = r.text(1), d.sms = r.u32(2), d.max_blocks_per_sm = r.u32(3);
    d.max_threads_per_sm = r.u32(4), d.max_warps_per_sm = r.u32(5), d.registers_per_sm = r.u32(6);
    d.shared_per_sm = r.u32(7), d.cc_major = r.u32(8), d.cc_minor = r.u32(9);
    if (r.ok()) n.devices.push_back(std::move(d));
  });
  return n;
}

ChunkRecord read_chunk(Checked& c, const json& line, std::uint64_t seq) {
  ChunkRecord k;
  k.seq = seq;
  if (const json* span = Checked::find(line, key::span)) {
    Row r(c, *span, key::span, Row::kField, 2);
    k.start_ns = r.integer(0), k.end_ns = r.integer(1);
  }
  if (const json* w = Checked::find(line, key::window)) {
    if (!w->is_boolean()) c.fail(key::window, "is not true or false");
    k.window = w->is_boolean() && w->get<bool>();
  }
  k.dropped = c.count(line, "", key::dropped);
  k.instances_dropped = c.count(line, "", key::instances_dropped);
  k.names_folded = c.count(line, "", key::names_folded);
  k.configs_folded = c.count(line, "", key::configs_folded);
  each(c, line, key::kernels, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 6);
    KernelEntry e;
    e.config = r.u32(0), e.count = r.count(1), e.total_ns = r.count(2);
    e.min_ns = r.count(3), e.max_ns = r.count(4);
    if (!r.ok()) return;
    const json& hist = r.at_value(5);
    if (!hist.is_array() || hist.size() % 2 != 0) {
      c.fail(r.at(5), "is not a [bucket, count, ...] list");
      return;
    }
    e.hist.reserve(hist.size() / 2);
    for (std::size_t h = 0; h < hist.size() && c.problem.empty(); h += 2) {
      const auto b = fast_count(c, hist[h], 1024, [&] { return Checked::item(r.at(5), h); });
      e.hist.emplace_back(static_cast<int>(b), fast_count(c, hist[h + 1], UINT64_MAX, [&] {
                            return Checked::item(r.at(5), h + 1);
                          }));
    }
    k.kernels.push_back(std::move(e));
  });
  each(c, line, key::copies, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 7);
    CopyEntry e;
    e.device = r.u32(0), e.kind = r.text(1), e.src = r.text(2), e.dst = r.text(3);
    e.count = r.count(4), e.bytes = r.count(5), e.total_ns = r.count(6);
    if (r.ok()) k.copies.push_back(std::move(e));
  });
  each(c, line, key::memsets, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 4);
    MemsetEntry e{r.u32(0), r.count(1), r.count(2), r.count(3)};
    if (r.ok()) k.memsets.push_back(e);
  });
  each(c, line, key::streams, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 4);
    StreamEntry e{r.u32(0), r.u32(1), r.count(2), r.count(3)};
    if (r.ok()) k.streams.push_back(e);
  });
  each(c, line, key::busy, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 3);
    BusySketch b;
    b.device = r.u32(0);
    if (r.ok()) b.spans = read_sketch(c, r.at_value(1), r.at_value(2), r.at(1));
    if (c.problem.empty()) k.busy.push_back(std::move(b));
  });
  each(c, line, key::syncs, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 2);
    if (!r.ok()) return;
    auto spans = read_sketch(c, r.at_value(0), r.at_value(1), r.at(0));
    k.syncs.insert(k.syncs.end(), spans.begin(), spans.end());
  });
  each(c, line, key::ranges, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 5);
    RangeEntry e{r.u32(0), r.count(1), r.count(2), r.count(3), r.count(4)};
    if (r.ok()) k.ranges.push_back(e);
  });
  each(c, line, key::instances, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 3);
    InstanceEntry e{r.integer(0), r.integer(1), r.u32(2)};
    if (r.ok()) k.instances.push_back(e);
  });
  each(c, line, key::collectives, [&](const json& v, const char* list, std::size_t i) {
    Row r(c, v, list, i, 3);
    CollectiveInstances col;
    col.device = r.u32(0), col.dropped = r.count(1);
    if (r.ok()) col.instances = read_collectives(c, r.at_value(2), r.at(2));
    if (c.problem.empty()) k.collectives.push_back(std::move(col));
  });
  return k;
}

EndRecord read_end(Checked& c, const json& line) {
  EndRecord e;
  e.status = c.text(line, "", key::status, "ok");
  e.reason = c.text(line, "", key::reason, "");
  if (const json* y = Checked::find(line, key::yielded_ns))
    e.yielded_ns = c.integer(*y, key::yielded_ns);
  if (const json* a = Checked::find(line, key::activity); a && c.object(*a, key::activity)) {
    e.activity = std::make_pair(c.integer(*a, key::activity, key::first_ns),
                                c.integer(*a, key::activity, key::last_ns));
  }
  if (const json* n = Checked::find(line, key::nvtx); n && c.object(*n, key::nvtx)) {
    e.nvtx_status = c.text(*n, key::nvtx, key::status, "");
    e.nvtx_reason = c.text(*n, key::nvtx, key::reason, "");
    e.unmatched = c.count(*n, key::nvtx, key::unmatched);
  }
  e.chunks = c.count(line, "", key::chunks);
  e.detaches = c.count(line, "", key::detaches);
  e.detach_max_ns = c.count(line, "", key::detach_max_ns);
  e.detach_note = c.text(line, "", key::detach_note, "");
  if (const json* a = Checked::find(line, key::agent); a && c.object(*a, key::agent)) {
    e.agent = true;
    e.agent_sent = c.count(*a, key::agent, key::sent);
    e.agent_dropped = c.count(*a, key::agent, key::dropped);
    e.agent_note = c.text(*a, key::agent, key::note, "");
  }
  return e;
}

}  // namespace

bool is_chunk_line(const nlohmann::json& line) {
  if (!line.is_object()) return false;
  const auto v = line.find(key::version);
  return v != line.end() && v->is_number_integer() && v->get<std::int64_t>() >= kChunkRecordVersion;
}

Result<ChunkLine> read_chunk_line(const nlohmann::json& line) {
  Checked c;
  ChunkLine out;
  const std::string record = c.text(line, "", key::record, "");
  if (const json* pid = Checked::find(line, key::pid)) {
    out.pid = c.integer(*pid, key::pid);
  } else {
    c.fail(key::pid, "is missing");
  }
  out.seq = c.count(line, "", key::seq);
  out.part = c.count(line, "", key::part);
  if (!c.problem.empty()) return Error{c.problem};
  if (record == kind::process) {
    out.record = read_process(c, line);
  } else if (record == kind::names) {
    out.record = read_names(c, line);
  } else if (record == kind::chunk) {
    out.record = read_chunk(c, line, out.seq);
  } else if (record == kind::end) {
    out.record = read_end(c, line);
  } else {
    const auto v = line.find(key::version);
    return Error{
        fmt::format("record kind \"{}\" is not one of version 4's (this line is of "
                    "version {}; a newer gpulens reads it)",
                    record, v->get<std::int64_t>())};
  }
  if (!c.problem.empty()) return Error{c.problem};
  return out;
}

}  // namespace gpulens::kernels
