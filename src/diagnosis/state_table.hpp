// SPDX-License-Identifier: Apache-2.0
#pragma once
// One table of the diagnosis states (docs/diagnosis.md, "States" and "Fixes"):
// each row holds everything a state says in every output: its stable id, its
// meaning, its words in a sentence, its colour, how much a second in it asks for
// a change, the sentence of what was seen, and its fixes, each with the evidence
// it needs. The ids (state.cpp), the colours (state_colour.cpp), the words
// (verdict/state_words.cpp), the fixes and summaries (fixes.cpp), the verdict's
// ranking and the TUI all read it, so a state is added or reworded in one place.
#include <span>
#include <string>
#include <string_view>

#include "diagnosis/classifier.hpp"
#include "diagnosis/fix_context.hpp"
#include "diagnosis/hardware.hpp"
#include "diagnosis/state.hpp"
#include "diagnosis/state_colour.hpp"
#include "diagnosis/window.hpp"

namespace gpulens::diagnosis {

// What a summary, a fix's premise and a fix's text read: the finding (its
// facts), the window behind it, the GPU's limits and the context of the run.
struct FixInput {
  const StateFinding& finding;
  const WindowStats& window;
  const HardwareLimits& hw;
  const FixContext& ctx;
  const StateFacts& facts() const { return finding.facts; }
};

// The evidence a fix needs (fix_premises.hpp): true when the counters hold it.
using FixPremise = bool (*)(const FixInput&);
// A sentence built from what was seen.
using FixText = std::string (*)(const FixInput&);

// What was seen, in one sentence.
using SummaryText = std::string (*)(const StateFinding&, const HardwareLimits&);

// One fix: offered when its premise holds (always, when there is none).
struct FixRow {
  FixPremise premise = nullptr;
  FixText text = nullptr;
};

struct StateRow {
  GpuState state = GpuState::Unknown;
  std::string_view id;       // "launch_bound": JSON, metrics, the store
  std::string_view meaning;  // the user's words, from design.md
  std::string_view words;    // "launch-bound", in a sentence
  StateColour colour;        // every view's colour for it
  // How much a second in this state asks for a change, when the verdict ranks
  // the job's fixes: 1 for a bottleneck, less for the healthy or unjudged cases.
  double fix_weight = 1.0;
  SummaryText summary = nullptr;  // what was seen, in one sentence
  std::span<const FixRow> fixes;
};

// The row of a state (Unknown's for anything out of range).
const StateRow& state_row(GpuState state);
// Every row, in the enum's order.
std::span<const StateRow> state_rows();

}  // namespace gpulens::diagnosis
