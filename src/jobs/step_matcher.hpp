// SPDX-License-Identifier: Apache-2.0
#pragma once
// Turns a job's stdout lines into step marks (--step-regex with
// --flops-per-step), for training scripts that print progress but were not
// written to report their FLOPs.
#include <optional>
#include <regex>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "core/sample.hpp"

namespace gpulens::jobs {

class StepMatcher {
 public:
  // ECMAScript syntax, searched anywhere in the line. When the pattern has a
  // capture group holding a whole number, it is taken as the step counter, so a
  // log line every N steps counts as N steps.
  static Result<StepMatcher> create(const std::string& pattern, double flops_per_step);

  // A "step" mark stamped `t` when the line matches; nullopt otherwise.
  std::optional<Mark> match(std::string_view line, double t);

 private:
  std::regex re_;
  double flops_per_step_ = 0;
  std::optional<long long> last_counter_;
};

}  // namespace gpulens::jobs
