// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the verdict's evidence is thin, in words, and what would settle it
// (docs/diagnosis.md, "How sure the verdict is"). The states and fixes of a job
// rest on counters some recordings lack (no GPM before Hopper, no per-process CPU
// where /proc is not readable, no integer pipe in older recordings) and on
// windows that may sit near a threshold or be too short to judge. Each gap says
// what was not judged or judged weakly, for what share of the steady state, and
// the measurement that would settle it, so that a reader knows how far to trust a
// fix and what to do about it. Pure: the diagnosis timeline in, gaps out.
#include <string>
#include <vector>

#include "diagnosis/timeline.hpp"
#include "verdict/steady_state.hpp"

namespace gpulens::verdict {

struct EvidenceGap {
  std::string what;    // "SM activity not available: GPM needs Hopper or newer"
  std::string settle;  // "a recording with GPM: ..."; empty when nothing would
  double share = 0;    // of the steady state's GPU-seconds it concerns
};

// A gap that concerns less of the steady state than this is a moment, not the
// verdict's basis.
inline constexpr double kEvidenceGapMinShare = 0.1;

struct EvidenceGapOptions {
  double window_s = 5;       // the diagnosis window
  bool kernel_view = false;  // the recording has `gpulens run --kernels` data
};

// The gaps over the steady state (all of the timeline when there was no work),
// the largest share first; at most one per kind of evidence.
std::vector<EvidenceGap> evidence_gaps(const diagnosis::DiagnosisReport& report,
                                       const SteadyState& steady,
                                       const EvidenceGapOptions& options);

}  // namespace gpulens::verdict
