// SPDX-License-Identifier: Apache-2.0
// Fuzz target: one kernel record of `gpulens run --kernels` (docs/kernels.md), as
// the job's processes write it, through the whole kernel analysis and its text and
// JSON renderers, beside step marks and a good record.
//
// Structure-aware: a byte-level mutation of a 300 KB record almost always breaks
// its JSON, so the analysis would rarely run. The custom mutator parses the
// input and changes one value somewhere in the tree instead: another type, a
// negative or huge number, an array of another length, a field removed. Inputs
// that are not JSON are mutated as bytes (libFuzzer's own mutator).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/input_limits.hpp"
#include "core/trace_reader.hpp"
#include "kernels/view/analysis.hpp"
#include "render/kernels_output.hpp"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max);

namespace {

using nlohmann::json;

// Every value in the tree, for picking one at random.
void collect(json& j, std::vector<json*>& out) {
  out.push_back(&j);
  if (j.is_object() || j.is_array()) {
    for (auto& v : j) collect(v, out);
  }
}

json odd_value(std::minstd_rand& rng) {
  switch (rng() % 14) {
    case 0:
      return "x";
    case 1:
      return -1;
    case 2:
      return -9223372036854775807LL - 1;
    case 3:
      return 18446744073709551615ULL;
    case 4:
      return 1.5;
    case 5:
      return json::array();
    case 6:
      return json::array({1});
    case 7:
      return json::array({1, 2, 3});
    case 8:
      return json::object();
    case 9:
      return nullptr;
    case 10:
      return true;
    case 11:
      return 4294967296ULL;
    case 12:
      return 9223372036854775807LL;
    default:
      return static_cast<std::int64_t>(rng()) - 1000;
  }
}

void mutate_tree(json& root, std::minstd_rand& rng) {
  std::vector<json*> nodes;
  collect(root, nodes);
  json& node = *nodes[rng() % nodes.size()];
  switch (rng() % 5) {
    case 0:  // another value, often another type
      node = odd_value(rng);
      break;
    case 1:  // an element or field fewer
      if (node.is_array() && !node.empty()) {
        node.erase(node.begin() + static_cast<long>(rng() % node.size()));
      } else if (node.is_object() && !node.empty()) {
        auto it = node.begin();
        std::advance(it, static_cast<long>(rng() % node.size()));
        node.erase(it);
      }
      break;
    case 2:  // an element more: a copy of one, or an odd one
      if (node.is_array()) {
        node.push_back(!node.empty() && rng() % 2 ? node[rng() % node.size()] : odd_value(rng));
      }
      break;
    case 3:  // a number nudged: off by one, negated, scaled
      if (node.is_number_integer()) {
        // Wrapping arithmetic: the nudge itself must not overflow (UBSan stops
        // the fuzzer at INT64_MIN - 1); the wrapped values are odd inputs too.
        const auto v = static_cast<std::uint64_t>(node.get<std::int64_t>());
        const std::uint64_t choices[] = {v + 1, v - 1, 0 - v, v * 1000, 0};
        node = static_cast<std::int64_t>(choices[rng() % 5]);
      }
      break;
    default:  // a field the record knows, with an odd value
      if (node.is_object()) {
        static const char* const kKeys[] = {
            "status",      "reason",       "pid",         "kernels",  "copies",   "syncs",
            "busy",        "nvtx",         "windows",     "sampling", "clock",    "devices",
            "hist",        "grid",         "block",       "count",    "total_ns", "name",
            "intervals",   "ranges",       "instances",   "device",   "kind",     "registers",
            "static_smem", "dynamic_smem", "base_unix_ns"};
        node[kKeys[rng() % (sizeof kKeys / sizeof *kKeys)]] = odd_value(rng);
      }
      break;
  }
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  std::minstd_rand rng(seed);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = gpulens::parse_json_bounded(text);
  if (!parsed || !parsed->is_object() || rng() % 8 == 0) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  json& record = *parsed;
  const int rounds = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < rounds; ++i) mutate_tree(record, rng);
  const std::string out = record.dump();
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::copy(out.begin(), out.end(), data);
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto record = gpulens::parse_json_bounded(text);
  if (!record || !record->is_object()) return 0;
  gpulens::Trace trace;
  gpulens::DeviceInfo dev;
  dev.index = 0;
  dev.architecture = "Hopper";
  dev.sm_count = 132;
  trace.header.devices.push_back(dev);
  // Step marks on the record's clock, when it has one: per-step figures and strips.
  double base_s = 0;
  if (auto c = record->find("clock"); c != record->end() && c->is_object()) {
    if (auto b = c->find("base_unix_ns"); b != c->end() && b->is_number()) {
      base_s = b->get<double>() / 1e9;
    }
  }
  for (int i = 0; i < 8; ++i) {
    trace.marks.push_back({base_s + 0.05 * i, "step", json::object()});
  }
  trace.kernel_records.push_back(*record);
  // The same process twice: merged names, devices and NVTX ranges.
  trace.kernel_records.push_back(std::move(*record));
  if (const auto view = gpulens::kernels::analyze_kernels(trace)) {
    (void)gpulens::render::kernels_to_text(*view);
    (void)gpulens::render::kernels_to_json(*view).dump();
  }
  return 0;
}
