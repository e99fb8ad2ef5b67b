// SPDX-License-Identifier: Apache-2.0
#include "core/tick_grouper.hpp"

#include <cmath>
#include <utility>

namespace gpulens {

std::optional<Tick> TickGrouper::close() {
  std::optional<Tick> done{std::move(open_)};
  open_ = Tick{};
  have_sample_ = false;
  return done;
}

std::optional<Tick> TickGrouper::add(Sample sample) {
  std::optional<Tick> done;
  if (have_sample_ && std::fabs(sample.t - open_.t) > kSameTickSeconds) done = close();
  if (!have_sample_) {
    have_sample_ = true;
    open_.t = sample.t;
  }
  open_.samples.push_back(std::move(sample));
  return done;
}

std::optional<Tick> TickGrouper::add(Mark mark) {
  std::optional<Tick> done;
  if (have_sample_ && mark.t > open_.t + kSameTickSeconds) done = close();
  open_.marks.push_back(std::move(mark));
  return done;
}

std::optional<Tick> TickGrouper::finish() {
  if (!have_sample_ && open_.marks.empty()) return std::nullopt;
  if (!have_sample_) open_.t = open_.marks.back().t;
  return close();
}

}  // namespace gpulens
