// SPDX-License-Identifier: Apache-2.0
#pragma once
// A collective's time split into moving data and waiting for a peer, from the
// ranks' timelines (docs/kernels.md). A collective kernel starts on each rank
// when that rank reaches it and cannot finish before the last rank has arrived:
// the time from a rank's own start to the last rank's start is waiting, the rest
// is moving data. Pure: instance intervals in, one split per rank out.
//
// Instances are matched across ranks by their END: every rank leaves a
// collective at nearly the same moment (the data moves once the last rank is in,
// and all finish with it), whereas their starts differ by the very wait being
// measured. Matching by end needs no common count or order, so it survives what
// a recording leaves out: a cap on instances per chunk, trace windows opened at
// different moments on different ranks, records CUPTI dropped, a sub-communicator
// some ranks are not in.
//
// Assumptions: the intervals share one clock (the kernel records' CLOCK_REALTIME
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
  // The rank's collective instances, any order: [start, end] in seconds on the
  // shared clock.
  std::vector<std::pair<double, double>> instances;
};

struct RankSplit {
  std::string label;
  double waiting_s = 0;       // inside its matched collectives, before the last rank arrived
  double moving_s = 0;        // inside its matched collectives, after every rank had arrived
  std::size_t matched = 0;    // instances matched on at least one other rank
  std::size_t unmatched = 0;  // instances no other rank's timeline shows: not split
  double unmatched_s = 0;     // their time
  // The rank it waited for longest (an index into the input) and how long;
  // nullopt when it never waited.
  std::optional<std::size_t> waited_for;
  double waited_for_s = 0;
};

struct SplitOptions {
  // The clocks' skew: a wait this short or shorter counts as moving and blames no
  // rank, and ends this much further apart still match. One host has no skew (0);
  // across hosts pass it (1e-3 under NTP).
  double tolerance_s = 0;
};

// Ends further apart than this never match, however long the instances: a rank
// that waited seconds in a collective must not match another collective of its
// peer that ended within half of that.
inline constexpr double kMaxEndGapS = 1e-3;

// How far apart two instances' ends may be and still be one collective:
// min(half the shorter instance, kMaxEndGapS) + the clocks' skew. Half the
// shorter one, because consecutive collectives of one rank on one stream end at
// least the later one's length apart, so an instance's nearest peer end within
// half of it is its own collective, not the one before or after.
double end_match_tolerance(double length_a, double length_b, double skew_s);

// One split per rank, in the input's order. Each instance of each rank is
// matched, on every other rank, to the instance whose end is nearest within
// end_match_tolerance(); the last of the matched ranks to start is the one it
// waited for. An instance no other rank shows (that rank was not traced then, its
// instance was past the cap or dropped, or it is not in that communicator) is
// counted in `unmatched`, not split: nothing says whom it waited for. A
// collective that never ended on a rank (a hang) leaves no kernel record at all;
// the verdict's hang detection says that, not this split.
std::vector<RankSplit> split_collective_time(const std::vector<RankTimeline>& ranks,
                                             const SplitOptions& options = {});

}  // namespace gpulens::kernels
