// SPDX-License-Identifier: Apache-2.0
#pragma once
// A collective's time split into moving data and waiting for a peer, from the
// ranks' timelines (docs/kernels.md). A collective kernel starts on each rank
// when that rank reaches it and cannot finish before the last rank has arrived:
// the time from a rank's own start to the last rank's start is waiting, the rest
// is moving data. Pure: instance intervals in, one split per rank out.
//
// Assumptions: every rank issues its collectives in the same order (NCCL
// requires it of one communicator), so the k-th instance of each rank is the same
// collective; the intervals share one clock (the kernel records' CLOCK_REALTIME
// base, base_unix_ns: on one host every process reads the same clock, so there is
// no skew; across hosts NTP keeps them within about a millisecond, which
// `tolerance_s` absorbs).
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpulens::kernels {

struct RankTimeline {
  std::string label;  // "rank 1", "GPU 1 (pid 4242)": how the report names it
  // The rank's collective instances in issue order: [start, end] in seconds on
  // the shared clock.
  std::vector<std::pair<double, double>> instances;
};

struct RankSplit {
  std::string label;
  double waiting_s = 0;       // inside its collectives, before the last rank arrived
  double moving_s = 0;        // inside its collectives, after every rank had arrived
  std::size_t matched = 0;    // instances every rank has
  std::size_t unmatched = 0;  // instances past the shortest rank's count
  // The rank it waited for longest (an index into the input) and how long;
  // nullopt when it never waited.
  std::optional<std::size_t> waited_for;
  double waited_for_s = 0;
};

struct SplitOptions {
  // A wait this short or shorter counts as moving and blames no rank: one host
  // has no clock skew (0); across hosts pass the clocks' skew (1e-3 under NTP).
  double tolerance_s = 0;
};

// One split per rank, in the input's order. The first `matched` instances (the
// shortest rank's count) are matched by position. An instance past it is one a
// rank reached and another never did (a hang): all of it is waiting, for the
// rank with the fewest instances among those that lack it. A caller whose ranks
// were traced over different spans (trace windows) passes only the instances of
// the span they share, or a rank's untraced tail would read as a hang.
std::vector<RankSplit> split_collective_time(const std::vector<RankTimeline>& ranks,
                                             const SplitOptions& options = {});

}  // namespace gpulens::kernels
