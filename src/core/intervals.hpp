// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one interval merge: the injection library's busy intervals (relative ns,
// inject/chunk_builder.cpp) and the kernel view's busy times, syncs and trace windows
// (seconds, kernels/) go through it. A template so that inject, which links
// nothing but core's headers into the job's process, needs no object of core.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace gpulens {

// Sorts the intervals and joins those that overlap or touch (one starting where
// the previous one ends) into one; zero-length ones are kept as intervals too.
template <typename T>
void merge_intervals(std::vector<std::pair<T, T>>& intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::size_t out = 0;
  for (std::size_t i = 0; i < intervals.size(); ++i) {
    if (out > 0 && intervals[i].first <= intervals[out - 1].second) {
      intervals[out - 1].second = std::max(intervals[out - 1].second, intervals[i].second);
    } else {
      intervals[out++] = intervals[i];
    }
  }
  intervals.resize(out);
}

}  // namespace gpulens
