// SPDX-License-Identifier: Apache-2.0
#include "kernels/kernel_record.hpp"

#include <fmt/format.h>

#include <limits>

namespace gpulens::kernels {
namespace {

using nlohmann::json;

// The checked readers: each reads one field of a JSON object as one type, and on
// a field of another type notes the first problem and gives the default. The
// record is judged once at the end (`problem` empty or not), so the reading code
// stays a plain list of fields.
class Checked {
 public:
  std::string problem;  // the first field at fault, in words; empty while all is well

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string item(const std::string& path, std::size_t i) {
    return fmt::format("{}[{}]", path, i);
  }

  // Notes a problem with the field at `path` ("kernels[2].name"): "is not a string".
  void fail(const std::string& path, const std::string& what) {
    if (problem.empty()) problem = fmt::format("field `{}` {}", path, what);
  }

  // The field, or nullptr when absent or null (a default applies).
  static const json* find(const json& obj, const char* key) {
    const auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }

  std::string text(const json& obj, const std::string& path, const char* key,
                   std::string fallback) {
    const json* v = find(obj, key);
    if (v == nullptr) return fallback;
    if (!v->is_string()) {
      fail(join(path, key), "is not a string");
      return fallback;
    }
    return v->get<std::string>();
  }

  double number(const json& obj, const std::string& path, const char* key, double fallback) {
    const json* v = find(obj, key);
    if (v == nullptr) return fallback;
    if (!v->is_number()) {
      fail(join(path, key), "is not a number");
      return fallback;
    }
    return v->get<double>();
  }

  // Whether `v` is an integer that fits in 64 signed bits: the fast path of the
  // long lists, which write an element's path only when it is at fault.
  static bool fits_i64(const json& v) {
    if (v.is_number_unsigned()) {
      return v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX);
    }
    return v.is_number_integer();
  }

  // Any integer that fits in 64 signed bits (times in ns may be negative).
  std::int64_t integer(const json& v, const std::string& path) {
    if (v.is_number_unsigned()) {
      if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
        fail(path, "is out of range");
        return 0;
      }
      return static_cast<std::int64_t>(v.get<std::uint64_t>());
    }
    if (v.is_number_integer()) return v.get<std::int64_t>();
    fail(path, "is not an integer");
    return 0;
  }
  std::int64_t integer(const json& obj, const std::string& path, const char* key) {
    const json* v = find(obj, key);
    return v == nullptr ? 0 : integer(*v, join(path, key));
  }

  // A count, a size, an index: a non-negative integer, at most `max`.
  std::uint64_t count(const json& v, const std::string& path,
                      std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
    std::uint64_t n = 0;
    if (v.is_number_unsigned()) {
      n = v.get<std::uint64_t>();
    } else if (v.is_number_integer()) {  // parsed text gives these only when negative
      if (v.get<std::int64_t>() < 0) {
        fail(path, "is negative");
        return 0;
      }
      n = static_cast<std::uint64_t>(v.get<std::int64_t>());
    } else {
      fail(path, "is not a count (a non-negative integer)");
      return 0;
    }
    if (n > max) {
      fail(path, fmt::format("is larger than {}", max));
      return 0;
    }
    return n;
  }
  std::uint64_t count(const json& obj, const std::string& path, const char* key,
                      std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
    const json* v = find(obj, key);
    return v == nullptr ? 0 : count(*v, join(path, key), max);
  }
  std::uint32_t u32(const json& obj, const std::string& path, const char* key) {
    return static_cast<std::uint32_t>(count(obj, path, key, UINT32_MAX));
  }

  // An array field: its elements, or nullptr when absent (or not an array: noted).
  const json* array(const json& obj, const std::string& path, const char* key) {
    const json* v = find(obj, key);
    if (v == nullptr) return nullptr;
    if (!v->is_array()) {
      fail(join(path, key), "is not an array");
      return nullptr;
    }
    return v;
  }
  // An element that must be an object.
  bool object(const json& v, const std::string& path) {
    if (v.is_object()) return true;
    fail(path, "is not an object");
    return false;
  }

  // A flat list of integers whose length is a multiple of `group`. Up to millions
  // of values: an element's path is written out only when it is at fault.
  std::vector<std::int64_t> flat(const json& obj, const std::string& path, const char* key,
                                 std::size_t group) {
    std::vector<std::int64_t> out;
    const json* v = array(obj, path, key);
    if (v == nullptr) return out;
    if (v->size() % group != 0) {
      fail(join(path, key), fmt::format("does not hold groups of {} values", group));
      return out;
    }
    out.reserve(v->size());
    for (std::size_t i = 0; i < v->size(); ++i) {
      const json& e = (*v)[i];
      if (fits_i64(e)) {
        out.push_back(e.get<std::int64_t>());
      } else {
        integer(e, item(join(path, key), i));
        break;
      }
    }
    return out;
  }

  // A list of [start_ns, end_ns] pairs (`exact`: nothing more in each; else more
  // values may follow, as a synchronisation's type does).
  std::vector<NsSpan> spans(const json& obj, const char* key, bool exact) {
    std::vector<NsSpan> out;
    const json* v = array(obj, "", key);
    if (v == nullptr) return out;
    out.reserve(v->size());
    for (std::size_t i = 0; i < v->size() && problem.empty(); ++i) {
      const json& e = (*v)[i];
      const bool shape = e.is_array() && (exact ? e.size() == 2 : e.size() >= 2);
      if (shape && fits_i64(e[0]) && fits_i64(e[1])) {
        out.emplace_back(e[0].get<std::int64_t>(), e[1].get<std::int64_t>());
        continue;
      }
      const std::string at = item(key, i);  // the slow path: say what is wrong
      if (!shape) {
        fail(at,
             exact ? "is not a [start_ns, end_ns] pair" : "is not a [start_ns, end_ns, ...] list");
        break;
      }
      const auto a = integer(e[0], at + "[0]");
      const auto b = integer(e[1], at + "[1]");
      if (problem.empty()) out.emplace_back(a, b);
    }
    return out;
  }

  // [x, y, z] of a grid or block: their product (blocks or threads), at most `max`.
  std::uint64_t dims(const json& obj, const std::string& path, const char* key, std::uint64_t max) {
    const json* v = find(obj, key);
    if (v == nullptr) return 0;
    const std::string at = join(path, key);
    if (!v->is_array() || v->size() != 3) {
      fail(at, "is not an [x, y, z] array");
      return 0;
    }
    std::uint64_t product = 1;
    for (std::size_t i = 0; i < 3; ++i) {
      const std::uint64_t d = count((*v)[i], item(at, i), UINT32_MAX);
      if (__builtin_mul_overflow(product, d, &product) || product > max) {
        fail(at, fmt::format("holds more than {} in all", max));
        return 0;
      }
    }
    return product;
  }
};

KernelRecord::Device read_device(Checked& c, const json& d, const std::string& at) {
  KernelRecord::Device dev;
  dev.id = c.u32(d, at, "id");
  dev.name = c.text(d, at, "name", "");
  dev.limits.sms = c.u32(d, at, "sms");
  dev.limits.max_blocks = c.u32(d, at, "max_blocks_per_sm");
  dev.limits.max_warps = c.u32(d, at, "max_warps_per_sm");
  dev.limits.registers = c.u32(d, at, "registers_per_sm");
  dev.limits.shared_bytes = c.u32(d, at, "shared_per_sm");
  return dev;
}

KernelRecord::Kernel read_kernel(Checked& c, const json& k, const std::string& at) {
  KernelRecord::Kernel kernel;
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

Result<KernelRecord> read_kernel_record(const json& record) {
  if (!record.is_object()) return Error{"it is not a JSON object"};
  Checked c;
  KernelRecord r;
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
    KernelRecord::Copy copy;
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
    KernelRecord::Busy busy;
    busy.device = c.u32(b, at, "device");
    const auto flat = c.flat(b, at, "intervals", 2);
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2)
      busy.intervals.emplace_back(flat[i], flat[i + 1]);
    r.busy.push_back(std::move(busy));
  });
  if (const json* sm = Checked::find(record, "sampling"); sm != nullptr && sm->is_object()) {
    KernelRecord::Sampling s;
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
