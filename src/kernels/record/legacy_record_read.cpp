// SPDX-License-Identifier: Apache-2.0
#include "kernels/record/legacy_record_read.hpp"

#include <fmt/format.h>

#include <limits>

#include "kernels/record/checked_json.hpp"

namespace gpulens::kernels {
namespace {

using nlohmann::json;

LegacyRecord::Device read_device(Checked& c, const json& d, const std::string& at) {
  LegacyRecord::Device dev;
  dev.id = c.u32(d, at, "id");
  dev.name = c.text(d, at, "name", "");
  dev.limits.sms = c.u32(d, at, "sms");
  dev.limits.max_blocks = c.u32(d, at, "max_blocks_per_sm");
  dev.limits.max_warps = c.u32(d, at, "max_warps_per_sm");
  dev.limits.registers = c.u32(d, at, "registers_per_sm");
  dev.limits.shared_bytes = c.u32(d, at, "shared_per_sm");
  return dev;
}

LegacyRecord::Kernel read_kernel(Checked& c, const json& k, const std::string& at) {
  LegacyRecord::Kernel kernel;
  kernel.name = c.text(k, at, "name", "(unnamed)");
  kernel.device = c.u32(k, at, "device");
  kernel.count = c.count(k, at, "count");
  kernel.total_ns = c.count(k, at, "total_ns");
  if (const json* hist = c.array(k, at, "hist")) {
    for (std::size_t i = 0; i < hist->size() && c.problem.empty(); ++i) {
      const json& h = (*hist)[i];
      const std::string hat = Checked::item(Checked::join(at, "hist"), i);
      if (!h.is_array() || h.size() != 2) {
        c.fail(hat, "is not a [bucket, count] pair");
        break;
      }
      const auto bucket = c.count(h[0], hat + "[0]", 1024);  // 2^128 ns: far past any kernel
      kernel.hist.emplace_back(static_cast<int>(bucket), c.count(h[1], hat + "[1]"));
    }
  }
  kernel.shape.blocks = c.dims(k, at, "grid", std::numeric_limits<std::uint64_t>::max());
  kernel.shape.threads = static_cast<std::uint32_t>(c.dims(k, at, "block", UINT32_MAX));
  kernel.shape.registers = c.u32(k, at, "registers");
  const std::uint64_t shared =
      c.u32(k, at, "static_smem") + std::uint64_t{c.u32(k, at, "dynamic_smem")};
  if (shared > UINT32_MAX)
    c.fail(Checked::join(at, "dynamic_smem"), "with static_smem is too large");
  kernel.shape.shared_bytes = static_cast<std::uint32_t>(shared);
  return kernel;
}

std::optional<NvtxRecord> read_nvtx(Checked& c, const json& record) {
  const json* n = Checked::find(record, "nvtx");
  if (n == nullptr) return std::nullopt;
  // Older readers ignored an `nvtx` that was not an object; so does this one.
  if (!n->is_object()) return std::nullopt;
  NvtxRecord nvtx;
  const std::string at = "nvtx";
  nvtx.status = c.text(*n, at, "status", "");
  nvtx.reason = c.text(*n, at, "reason", nvtx.status);
  if (const json* ranges = c.array(*n, at, "ranges")) {
    for (std::size_t i = 0; i < ranges->size() && c.problem.empty(); ++i) {
      const std::string rat = Checked::item(Checked::join(at, "ranges"), i);
      if (!c.object((*ranges)[i], rat)) break;
      NvtxRecord::Range r;
      r.domain = c.text((*ranges)[i], rat, "domain", "");
      r.name = c.text((*ranges)[i], rat, "name", "(unnamed)");
      r.count = c.count((*ranges)[i], rat, "count");
      r.total_ns = c.count((*ranges)[i], rat, "total_ns");
      nvtx.ranges.push_back(std::move(r));
    }
  }
  const auto flat = c.flat(*n, at, "instances", 3);
  for (std::size_t i = 0; i + 2 < flat.size() && c.problem.empty(); i += 3) {
    if (flat[i + 2] < 0) {
      c.fail(Checked::item("nvtx.instances", i + 2), "is negative (an index into `ranges`)");
      break;
    }
    nvtx.instances.push_back({flat[i], flat[i + 1], static_cast<std::uint64_t>(flat[i + 2])});
  }
  nvtx.instances_dropped = c.count(*n, at, "instances_dropped");
  nvtx.names_folded = c.count(*n, at, "names_folded");
  nvtx.unmatched = c.count(*n, at, "unmatched");
  return nvtx;
}

}  // namespace

Result<LegacyRecord> read_legacy_record(const json& record) {
  if (!record.is_object()) return Error{"it is not a JSON object"};
  Checked c;
  LegacyRecord r;
  // The record's version (docs/kernels.md): 1 or more; a later version than 3 is
  // read as far as its fields are known. A negative one is refused, not wrapped.
  if (const json* version = Checked::find(record, "x_kernels")) {
    if (c.count(*version, "x_kernels") == 0 && c.problem.empty()) {
      c.fail("x_kernels", "is not a record version (1 or more)");
    }
  }
  if (const json* pid = Checked::find(record, "pid")) r.pid = c.integer(*pid, "pid");
  r.status = c.text(record, "", "status", "ok");
  r.reason = c.text(record, "", "reason", "");
  if (Checked::find(record, "yielded_ns") != nullptr) {
    r.yielded_ns = c.number(record, "", "yielded_ns", 0);
  }
  r.dropped = c.count(record, "", "dropped");
  if (const json* clock = Checked::find(record, "clock")) {
    if (c.object(*clock, "clock")) {
      r.has_clock = true;
      r.base_unix_ns = static_cast<std::int64_t>(
          c.count(*clock, "clock", "base_unix_ns", static_cast<std::uint64_t>(INT64_MAX)));
    }
  }
  auto each = [&](const char* key, auto&& read_one) {
    const json* items = c.array(record, "", key);
    if (items == nullptr) return;
    for (std::size_t i = 0; i < items->size() && c.problem.empty(); ++i) {
      read_one((*items)[i], Checked::item(key, i));
    }
  };
  each("devices", [&](const json& d, const std::string& at) {
    if (c.object(d, at)) r.devices.push_back(read_device(c, d, at));
  });
  each("kernels", [&](const json& k, const std::string& at) {
    if (c.object(k, at)) r.kernels.push_back(read_kernel(c, k, at));
  });
  each("copies", [&](const json& cp, const std::string& at) {
    if (!c.object(cp, at)) return;
    LegacyRecord::Copy copy;
    copy.kind = c.text(cp, at, "kind", "unknown");
    copy.src = c.text(cp, at, "src", "unknown");
    copy.dst = c.text(cp, at, "dst", "unknown");
    copy.count = c.count(cp, at, "count");
    copy.bytes = c.count(cp, at, "bytes");
    copy.total_ns = c.count(cp, at, "total_ns");
    r.copies.push_back(std::move(copy));
  });
  each("memsets", [&](const json& m, const std::string& at) {
    if (c.object(m, at)) r.memsets += c.count(m, at, "count");
  });
  r.syncs = c.spans(record, "syncs", /*exact=*/false);
  each("busy", [&](const json& b, const std::string& at) {
    if (!c.object(b, at)) return;
    LegacyRecord::Busy busy;
    busy.device = c.u32(b, at, "device");
    const auto flat = c.flat(b, at, "intervals", 2);
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2)
      busy.intervals.emplace_back(flat[i], flat[i + 1]);
    r.busy.push_back(std::move(busy));
  });
  if (const json* sm = Checked::find(record, "sampling"); sm != nullptr && sm->is_object()) {
    LegacyRecord::Sampling s;
    s.window_s = c.number(*sm, "sampling", "window_s", 0);
    s.every_s = c.number(*sm, "sampling", "every_s", 0);
    s.first_s = c.number(*sm, "sampling", "first_s", 0);
    r.sampling = s;
    r.windows = c.spans(record, "windows", /*exact=*/true);
  }
  r.nvtx = read_nvtx(c, record);
  if (!c.problem.empty()) return Error{c.problem};
  return r;
}

std::string kernel_record_name(const json& record, std::size_t index) {
  if (record.is_object()) {
    if (const auto it = record.find("pid"); it != record.end() && it->is_number_integer()) {
      return fmt::format("kernel record of process {}", it->get<std::int64_t>());
    }
  }
  return fmt::format("kernel record {}", index + 1);
}

}  // namespace gpulens::kernels
