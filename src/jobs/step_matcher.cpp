// SPDX-License-Identifier: Apache-2.0
#include "jobs/step_matcher.hpp"

#include <charconv>

#include "verdict/mfu.hpp"

namespace gpulens::jobs {

Result<StepMatcher> StepMatcher::create(const std::string& pattern, double flops_per_step) {
  StepMatcher m;
  try {
    m.re_ = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Error{"--step-regex '" + pattern + "' is not a valid regular expression: " + e.what()};
  }
  m.flops_per_step_ = flops_per_step;
  return m;
}

std::optional<Mark> StepMatcher::match(std::string_view line, double t) {
  std::match_results<std::string_view::const_iterator> found;
  if (!std::regex_search(line.begin(), line.end(), found, re_)) return std::nullopt;
  long long steps = 1;
  std::optional<long long> counter;
  if (found.size() > 1 && found[1].matched) {
    long long n = 0;
    const auto first = &*found[1].first;
    const auto last = first + found[1].length();
    const auto [end, ec] = std::from_chars(first, last, n);
    if (ec == std::errc() && end == last) counter = n;
  }
  if (counter) {
    // The first counter seen counts from zero; a counter that went back (a new
    // epoch numbering from 1) counts as one step.
    steps = last_counter_ ? (*counter > *last_counter_ ? *counter - *last_counter_ : 1)
                          : std::max<long long>(1, *counter);
    last_counter_ = counter;
  }
  Mark mark;
  mark.t = t;
  mark.name = verdict::kStepMark;
  mark.fields["flops"] = flops_per_step_ * static_cast<double>(steps);
  mark.fields["steps"] = steps;
  mark.fields["source"] = "stdout";
  return mark;
}

}  // namespace gpulens::jobs
