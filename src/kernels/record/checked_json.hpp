// SPDX-License-Identifier: Apache-2.0
#pragma once
// Checked readers of JSON fields, shared by the readers of the kernel records
// (legacy_record_read.cpp: versions 1 to 3; chunk_record_read.cpp: version 4).
#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace gpulens::kernels {

using NsSpan = std::pair<std::int64_t, std::int64_t>;

// The checked readers: each reads one field of a JSON object as one type, and on
// a field of another type notes the first problem and gives the default. The
// record is judged once at the end (`problem` empty or not), so the reading code
// stays a plain list of fields.
class Checked {
  using json = nlohmann::json;

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

}  // namespace gpulens::kernels
