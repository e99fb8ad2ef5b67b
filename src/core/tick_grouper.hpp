// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a recording's lines become ticks, decided once: `diagnose --replay`,
// `stream`/`top` replays (sources/replay) and `report` (diagnosis/timeline) all
// group through this, so no two commands can group one recording differently.
//
// A tick is the samples whose times are within kSameTickSeconds of the first
// sample's time, plus the marks that came before them with a time no later than
// that tick's (a mark later than the open tick starts waiting for the next one).
// Marks after the last sample make a tick of their own, at the last mark's time.
#include <optional>

#include "core/sample.hpp"

namespace gpulens {

// The recorder writes one time per tick for every GPU; this only absorbs the
// rounding of times written as decimals.
inline constexpr double kSameTickSeconds = 1e-6;

class TickGrouper {
 public:
  // The next sample or mark in recording order; returns the tick it closed, if any.
  std::optional<Tick> add(Sample sample);
  std::optional<Tick> add(Mark mark);
  // At the end of the recording: the tick still open, if any (once).
  std::optional<Tick> finish();

 private:
  std::optional<Tick> close();

  Tick open_;
  bool have_sample_ = false;
};

}  // namespace gpulens
