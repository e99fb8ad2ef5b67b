// SPDX-License-Identifier: Apache-2.0
// Phases at scale (issue 31, item 6): ends pair with their starts by name in
// constant time, a report summarises the first kMaxPhases and says how many there
// were, and a phase's means come from running totals, not a pass per phase.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "core/phase.hpp"
#include "core/trace_reader.hpp"
#include "render/timeline_output.hpp"

namespace gpulens::diagnosis {
namespace {

Mark mark(double t, std::string name) {
  Mark m;
  m.t = t;
  m.name = std::move(name);
  return m;
}

TEST(PhaseLimits, NestedPhasesOfOneNameCloseInnermostFirst) {
  const std::vector<Mark> marks = {mark(1, "p:start"), mark(2, "q:start"), mark(3, "p:start"),
                                   mark(4, "p:end"),   mark(5, "q:end"),   mark(6, "p:end"),
                                   mark(7, "p:end"),   mark(8, "x:end")};
  const auto phases = find_phases(marks, 10.0);
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[0].name, "p");
  EXPECT_EQ(phases[0].end, 6);
  EXPECT_EQ(phases[1].name, "q");
  EXPECT_EQ(phases[1].end, 5);
  EXPECT_EQ(phases[2].name, "p");
  EXPECT_EQ(phases[2].end, 4);
}

TEST(PhaseLimits, PhaseMarkNamesItsPhase) {
  EXPECT_EQ(phase_mark("train:start")->name, "train");
  EXPECT_TRUE(phase_mark("train:start")->start);
  EXPECT_FALSE(phase_mark("a:b:end")->start);
  EXPECT_EQ(phase_mark("a:b:end")->name, "a:b");
  EXPECT_FALSE(phase_mark(":start"));
  EXPECT_FALSE(phase_mark("step"));
}

// kMaxPhases + 10 phases of one name, all nested: the last ten started are past
// the limit, and their ends come first. Each summarised phase must still get its
// own end (a pairing that forgot the unsummarised ones would close phase 999 at
// the first end), and its mean must be the mean of its own samples.
TEST(PhaseLimits, ThePhasesPastTheLimitAreCountedAndStillPaired) {
  const int n = static_cast<int>(kMaxPhases) + 10;
  Trace trace;
  trace.header.interval_s = 1.0;
  for (int t = 0; t <= 2 * n + 1; ++t) {
    Sample s;
    s.t = t;
    s.gpu = 0;
    s.values.set(Metric::PowerW, static_cast<double>(t));
    trace.samples.push_back(s);
  }
  for (int i = 0; i < n; ++i) trace.marks.push_back(mark(i + 0.5, "p:start"));
  for (int i = n - 1; i >= 0; --i) trace.marks.push_back(mark(2 * n - i + 0.5, "p:end"));

  const DiagnosisReport report = diagnose_trace(trace, DiagnosisConfig::defaults());
  ASSERT_EQ(report.phases.size(), kMaxPhases);
  for (std::size_t i = 0; i < report.phases.size(); ++i) {
    const PhaseSummary& p = report.phases[i];
    ASSERT_EQ(p.start, static_cast<double>(i) + 0.5);
    ASSERT_EQ(p.end, 2.0 * n - static_cast<double>(i) + 0.5) << "phase " << i;
    // Samples i+1 .. 2n-i: their power is their time, so the mean is n + 0.5.
    ASSERT_NEAR(p.means.get(Metric::PowerW).value_or(-1), n + 0.5, 1e-6) << "phase " << i;
  }
  bool noted = false;
  for (const auto& note : report.notes) {
    noted = noted || note == fmt::format(
                                 "{} phases in the recording; the first {} (by start) "
                                 "are summarised",
                                 n, kMaxPhases);
  }
  EXPECT_TRUE(noted) << render::report_to_text(report);
}

TEST(PhaseLimits, NoNoteUpToTheLimit) {
  Trace trace;
  for (int t = 0; t < 4; ++t) {
    Sample s;
    s.t = t;
    s.values.set(Metric::PowerW, 100.0);
    trace.samples.push_back(s);
  }
  trace.marks = {mark(0.5, "a:start"), mark(2.5, "a:end")};
  const DiagnosisReport report = diagnose_trace(trace, DiagnosisConfig::defaults());
  ASSERT_EQ(report.phases.size(), 1u);
  EXPECT_EQ(report.phases[0].end, 2.5);
  for (const auto& note : report.notes)
    EXPECT_EQ(note.find("phases in the recording"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::diagnosis
