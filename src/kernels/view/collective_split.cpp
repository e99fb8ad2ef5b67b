// SPDX-License-Identifier: Apache-2.0
#include "kernels/view/collective_split.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace gpulens::kernels {
namespace {

using Instance = std::pair<double, double>;  // [start, end]

// A rank's instances sorted by end, for the nearest-end search.
std::vector<Instance> by_end(const std::vector<Instance>& instances) {
  std::vector<Instance> out(instances);
  std::sort(out.begin(), out.end(),
            [](const Instance& a, const Instance& b) { return a.second < b.second; });
  return out;
}

double length(const Instance& i) {
  return std::max(0.0, i.second - i.first);
}

// The instance of `peer` (sorted by end) whose end is nearest `x`'s, if within
// the tolerance.
const Instance* match(const Instance& x, const std::vector<Instance>& peer, double skew_s) {
  auto it = std::lower_bound(peer.begin(), peer.end(), x.second,
                             [](const Instance& p, double end) { return p.second < end; });
  const Instance* best = nullptr;
  for (auto c : {it, it == peer.begin() ? peer.end() : std::prev(it)}) {
    if (c == peer.end()) continue;
    const double gap = std::abs(c->second - x.second);
    if (gap > end_match_tolerance(length(x), length(*c), skew_s)) continue;
    if (best == nullptr || gap < std::abs(best->second - x.second)) best = &*c;
  }
  return best;
}

}  // namespace

double end_match_tolerance(double length_a, double length_b, double skew_s) {
  return std::min(0.5 * std::min(length_a, length_b), kMaxEndGapS) + skew_s;
}

std::vector<RankSplit> split_collective_time(const std::vector<RankTimeline>& ranks,
                                             const SplitOptions& options) {
  std::vector<RankSplit> out(ranks.size());
  std::vector<std::vector<Instance>> sorted;
  sorted.reserve(ranks.size());
  for (const auto& r : ranks) sorted.push_back(by_end(r.instances));
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    RankSplit& s = out[r];
    s.label = ranks[r].label;
    std::map<std::size_t, double> blame;  // the wait blamed on each other rank
    for (const Instance& x : sorted[r]) {
      // The last of the ranks that show this collective to arrive.
      bool seen = false;
      std::optional<std::size_t> last;
      double last_arrival = x.first;
      for (std::size_t q = 0; q < ranks.size(); ++q) {
        if (q == r) continue;
        const Instance* y = match(x, sorted[q], options.tolerance_s);
        if (y == nullptr) continue;
        seen = true;
        if (y->first > last_arrival) last_arrival = y->first, last = q;
      }
      const double len = length(x);
      if (!seen) {
        ++s.unmatched;
        s.unmatched_s += len;
        continue;
      }
      // A rank that ended before the last one started (clocks apart by more than
      // the collective) waited all of it; the split never exceeds the instance.
      double wait = std::clamp(std::min(x.second, last_arrival) - x.first, 0.0, len);
      if (wait <= options.tolerance_s) wait = 0;
      s.waiting_s += wait;
      s.moving_s += len - wait;
      ++s.matched;
      if (wait > 0 && last) blame[*last] += wait;
    }
    for (const auto& [peer, seconds] : blame) {
      if (seconds > s.waited_for_s) s.waited_for = peer, s.waited_for_s = seconds;
    }
  }
  return out;
}

}  // namespace gpulens::kernels
