// SPDX-License-Identifier: Apache-2.0
#include "kernels/collective_split.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace gpulens::kernels {
namespace {

// Per rank, the wait blamed on each other rank.
using Blame = std::vector<std::map<std::size_t, double>>;

// Instance k of every rank: the last to arrive decides when the data can move.
void split_matched(const std::vector<RankTimeline>& ranks, std::size_t k, double tolerance_s,
                   std::vector<RankSplit>& out, Blame& blame) {
  std::size_t last = 0;
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    if (ranks[r].instances[k].first > ranks[last].instances[k].first) last = r;
  }
  const double last_arrival = ranks[last].instances[k].first;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const auto [start, end] = ranks[r].instances[k];
    const double length = std::max(0.0, end - start);
    // A rank that ended before the last one started (clocks apart by more than
    // the collective) waited all of it; the split never exceeds the instance.
    double wait = std::clamp(std::min(end, last_arrival) - start, 0.0, length);
    if (wait <= tolerance_s) wait = 0;
    out[r].waiting_s += wait;
    out[r].moving_s += length - wait;
    ++out[r].matched;
    if (wait > 0) blame[r][last] += wait;
  }
}

// Instance k exists on some ranks only: those that have it wait through all of it
// for the one that never came (the one with fewest instances).
void split_unmatched(const std::vector<RankTimeline>& ranks, std::size_t k,
                     std::vector<RankSplit>& out, Blame& blame) {
  std::size_t missing = 0;
  std::size_t fewest = std::numeric_limits<std::size_t>::max();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (ranks[r].instances.size() < fewest) fewest = ranks[r].instances.size(), missing = r;
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (ranks[r].instances.size() <= k) continue;
    const auto [start, end] = ranks[r].instances[k];
    const double wait = std::max(0.0, end - start);
    out[r].waiting_s += wait;
    ++out[r].unmatched;
    if (wait > 0) blame[r][missing] += wait;
  }
}

}  // namespace

std::vector<RankSplit> split_collective_time(const std::vector<RankTimeline>& ranks,
                                             const SplitOptions& options) {
  std::vector<RankSplit> out(ranks.size());
  Blame blame(ranks.size());
  std::size_t common = ranks.empty() ? 0 : std::numeric_limits<std::size_t>::max();
  std::size_t most = 0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    out[r].label = ranks[r].label;
    common = std::min(common, ranks[r].instances.size());
    most = std::max(most, ranks[r].instances.size());
  }
  for (std::size_t k = 0; k < common; ++k) {
    split_matched(ranks, k, options.tolerance_s, out, blame);
  }
  for (std::size_t k = common; k < most; ++k) split_unmatched(ranks, k, out, blame);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const auto& [peer, seconds] : blame[r]) {
      if (seconds > out[r].waited_for_s) out[r].waited_for = peer, out[r].waited_for_s = seconds;
    }
  }
  return out;
}

}  // namespace gpulens::kernels
