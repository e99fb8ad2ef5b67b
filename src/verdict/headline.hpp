// SPDX-License-Identifier: Apache-2.0
#pragma once
// The verdict's headline: what matters most about the job, first. The order is
// fixed: a job that died (out of memory when its memory stood at the ceiling),
// a hang, critical alerts, then the job's steady state with any imbalance
// between its GPUs, then its start-up and tear-down, reported apart.
#include <optional>
#include <string>
#include <vector>

namespace gpulens::verdict {

struct Verdict;

struct HeadlineItem {
  std::string kind;  // "died", "out_of_memory", "hang", "critical_alert", "alert",
                     // "steady_state", "imbalance", "edges", "idle"
  std::string text;
  std::optional<int> gpu;
};

// Fills nothing: reads the verdict's outcome, alerts, steady state and usage.
std::vector<HeadlineItem> build_headline(const Verdict& v);

}  // namespace gpulens::verdict
