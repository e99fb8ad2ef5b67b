// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel record lines (version 4, kernels/record/chunk_record.hpp) a process of the
// injection library writes, made from a ChunkBuilder the tests fill as CUPTI would:
// the same ChunkBuilder::drain() and encoders the library runs, read back as JSON.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/trace_reader.hpp"
#include "inject/chunk_builder.hpp"
#include "kernels/record/chunk_record.hpp"

namespace gpulens::testing {

inline constexpr std::int64_t kBaseUnixNs = 1'800'000'000'000'000'000;

struct ProcessLines {
  std::int64_t pid = 42;
  std::int64_t base_unix_ns = kBaseUnixNs;
  std::uint64_t base_ns = 0;
  bool h100 = true;  // a device line for device 0, as CUPTI gives an H100's
  // Traced in windows: the schedule, and the windows (CUPTI ns) as opened and
  // closed; the collected work goes out with the first window's chunk.
  std::optional<kernels::ProcessRecord::Sampling> sampling;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;
  std::optional<kernels::EndRecord> end = ok_end();  // nullopt: the process died before its end

  static kernels::EndRecord ok_end() {
    kernels::EndRecord e;
    e.nvtx_status = "ok";
    return e;
  }
};

// A launch of `blocks` blocks of `threads` threads, 32 registers each.
inline inject::KernelLaunch key(const std::string& name, int blocks, int threads) {
  inject::KernelLaunch k;
  k.name = name;
  k.config.grid[0] = static_cast<std::uint32_t>(blocks), k.config.grid[1] = 1, k.config.grid[2] = 1;
  k.config.block[0] = static_cast<std::uint32_t>(threads), k.config.block[1] = 1,
  k.config.block[2] = 1;
  k.config.registers = 32;
  return k;
}

inline void add_device(inject::ChunkBuilder& c) {
  kernels::DeviceEntry d;
  d.id = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.sms = 132, d.max_blocks_per_sm = 32, d.max_warps_per_sm = 64, d.max_threads_per_sm = 2048;
  d.registers_per_sm = 65536, d.shared_per_sm = 233472, d.cc_major = 9, d.cc_minor = 0;
  c.device(d);
}

inline std::vector<nlohmann::json> process_lines(inject::ChunkBuilder& c, ProcessLines o = {}) {
  if (o.h100) add_device(c);
  std::vector<std::string> text;
  auto add = [&](std::vector<std::string> lines) {
    text.insert(text.end(), lines.begin(), lines.end());
  };
  kernels::ProcessRecord p;
  p.base_ns = o.base_ns;
  p.base_unix_ns = o.base_unix_ns;
  p.sampling = o.sampling;
  add(kernels::encode_process(o.pid, p));
  inject::Drained d = c.drain();
  std::uint64_t seq = 0;
  if (!d.names.empty()) add(kernels::encode_names(o.pid, seq, d.names));
  if (o.windows.empty()) {
    d.chunk.seq = seq++;
    add(kernels::encode_chunk(o.pid, d.chunk));
  }
  for (std::size_t i = 0; i < o.windows.size(); ++i) {
    kernels::ChunkRecord w = i == 0 ? std::move(d.chunk) : kernels::ChunkRecord{};
    w.seq = seq++;
    w.window = true;
    w.start_ns = static_cast<std::int64_t>(o.windows[i].first - o.base_ns);
    w.end_ns = static_cast<std::int64_t>(o.windows[i].second - o.base_ns);
    add(kernels::encode_chunk(o.pid, w));
  }
  if (o.end) {
    o.end->chunks = seq;
    o.end->unmatched = c.unmatched_ranges();
    add(kernels::encode_end(o.pid, *o.end));
  }
  std::vector<nlohmann::json> lines;
  for (const auto& t : text) lines.push_back(nlohmann::json::parse(t));
  return lines;
}

inline void add_lines(Trace& trace, const std::vector<nlohmann::json>& lines) {
  trace.kernel_records.insert(trace.kernel_records.end(), lines.begin(), lines.end());
}

}  // namespace gpulens::testing
