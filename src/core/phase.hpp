// SPDX-License-Identifier: Apache-2.0
#pragma once
// Phases bounded by "NAME:start" / "NAME:end" marks, and per-phase metric means.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/sample.hpp"

namespace gpulens {

// Reports summarise at most this many phases (the first by start); a recording
// with more says how many it had. Each summarised phase costs a little work per
// sample while it is open, so the bound keeps a report of a recording with 100k
// overlapping phases to seconds, and the text to a length a person reads.
inline constexpr std::size_t kMaxPhases = 1000;

struct Phase {
  std::string name;
  double start = 0;
  double end = 0;
  nlohmann::json start_fields = nlohmann::json::object();
  nlohmann::json end_fields = nlohmann::json::object();
};

// A mark's role in a phase: the NAME of "NAME:start" or "NAME:end".
struct PhaseMark {
  bool start = false;
  std::string_view name;
};
std::optional<PhaseMark> phase_mark(std::string_view mark_name);

// Pairs start/end marks in time order: an end closes the most recent open phase
// of its name (phases may nest). A start without an end runs to `trace_end`.
// Linear in the number of marks.
std::vector<Phase> find_phases(const std::vector<Mark>& marks, double trace_end);

// Open phases by name, for pairing ends with starts in constant time: each name
// has a stack of the values its starts pushed.
template <typename T>
class OpenPhaseStacks {
 public:
  void push(std::string_view name, T value) { stacks_[std::string(name)].push_back(value); }
  // The most recent open phase of that name, removed; nullopt when none is open.
  std::optional<T> pop(std::string_view name) {
    const auto it = stacks_.find(std::string(name));
    if (it == stacks_.end() || it->second.empty()) return std::nullopt;
    T value = it->second.back();
    it->second.pop_back();
    if (it->second.empty()) stacks_.erase(it);
    return value;
  }

 private:
  std::unordered_map<std::string, std::vector<T>> stacks_;
};

// Mean of a metric over samples of one GPU whose t lies in [from, to]; nullopt when
// no sample in that window has the metric.
std::optional<double> mean_over(const std::vector<Sample>& samples, int gpu, Metric m, double from,
                                double to);

}  // namespace gpulens
