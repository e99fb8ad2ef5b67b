// SPDX-License-Identifier: Apache-2.0
#include "kernels/view/idle_time.hpp"

#include <algorithm>
#include <cmath>

namespace gpulens::kernels {
namespace {

// The share of each closed-idle record inside [from, to] turns busy time back
// into idle, as gaps of the record's mean gap length.
void add_hidden_idle(const HiddenIdles& hidden, double from, double to, IdleStats& st) {
  auto it = std::lower_bound(hidden.begin(), hidden.end(), from,
                             [](const HiddenIdle& h, double t) { return h.to <= t; });
  for (; it != hidden.end() && it->from < to; ++it) {
    const double len = it->to - it->from;
    if (!(len > 0) || !(it->gaps > 0)) continue;
    const double share = (std::min(it->to, to) - std::max(it->from, from)) / len;
    if (!(share > 0)) continue;
    const double idle = std::min(share * it->idle_s, st.busy_s);
    st.busy_s -= idle;
    const double gaps = share * it->gaps;
    std::size_t bucket = 0;
    while (bucket < kGapEdgesS.size() && it->idle_s / it->gaps >= kGapEdgesS[bucket]) ++bucket;
    st.gaps.count[bucket] += static_cast<std::uint64_t>(std::llround(gaps));
    st.gaps.seconds[bucket] += idle;
  }
}

}  // namespace

void GapHistogram::add(double gap_s) {
  std::size_t i = 0;
  while (i < kGapEdgesS.size() && gap_s >= kGapEdgesS[i]) ++i;
  ++count[i];
  seconds[i] += gap_s;
}

IdleStats idle_over(const std::vector<std::pair<double, double>>& busy, double from, double to,
                    const HiddenIdles* hidden) {
  IdleStats st;
  if (!(to > from)) return st;
  st.window_s = to - from;
  double cursor = from;  // end of the last busy time seen inside the window
  // Merged and sorted, so ends are sorted too: start at the first one past `from`
  // (a long job asks this of thousands of windows and steps).
  auto first = std::lower_bound(
      busy.begin(), busy.end(), from,
      [](const std::pair<double, double>& iv, double t) { return iv.second <= t; });
  for (auto it = first; it != busy.end(); ++it) {
    const auto [a, b] = *it;
    if (a >= to) break;
    const double s = std::max(a, from);
    const double e = std::min(b, to);
    if (s > cursor) st.gaps.add(s - cursor);
    st.busy_s += e - s;
    cursor = std::max(cursor, e);
  }
  if (to > cursor) st.gaps.add(to - cursor);  // a window with no work at all is one gap
  if (hidden != nullptr) add_hidden_idle(*hidden, from, to, st);
  st.idle_share = 1 - st.busy_s / st.window_s;
  return st;
}

}  // namespace gpulens::kernels
