// SPDX-License-Identifier: Apache-2.0
#include "core/tick_grouper.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/trace_reader.hpp"
#include "diagnosis/timeline.hpp"
#include "sources/replay/replay_source.hpp"

namespace gpulens {
namespace {

Sample sample_at(double t, int gpu) {
  Sample s;
  s.t = t;
  s.gpu = gpu;
  return s;
}

Mark mark_at(double t, std::string name) {
  Mark m;
  m.t = t;
  m.name = std::move(name);
  return m;
}

// Feeds events in order and lists each tick as "t:samples:marks".
std::vector<std::string> group(const std::vector<TraceEvent>& events) {
  TickGrouper grouper;
  std::vector<std::string> out;
  const auto keep = [&](std::optional<Tick> tick) {
    if (tick)
      out.push_back(fmt::format("{}:{}:{}", tick->t, tick->samples.size(), tick->marks.size()));
  };
  for (const auto& e : events)
    keep(std::visit([&](auto v) { return grouper.add(std::move(v)); }, e));
  keep(grouper.finish());
  EXPECT_FALSE(grouper.finish().has_value()) << "finish gives the last tick once";
  return out;
}

TEST(TickGrouper, SamplesOfOneTimeAndTheMarksBeforeThemMakeATick) {
  const std::vector<TraceEvent> events = {mark_at(0.5, "start"),
                                          sample_at(1.0, 0),
                                          sample_at(1.0000004, 1),  // rounding of one time
                                          mark_at(1.0, "same time, after the samples"),
                                          mark_at(1.5, "between"),
                                          sample_at(2.0, 0),
                                          sample_at(2.0, 1),
                                          mark_at(9.0, "after the last sample")};
  EXPECT_EQ(group(events), (std::vector<std::string>{"1:2:2", "2:2:1", "9:0:1"}));
}

TEST(TickGrouper, NothingGivesNoTickAndMarksAloneGiveOne) {
  EXPECT_TRUE(group({}).empty());
  EXPECT_EQ(group({mark_at(3, "a"), mark_at(4, "b")}), (std::vector<std::string>{"4:0:2"}));
}

TEST(TickGrouper, ReplayAndReportGroupARecordingAlike) {
  // Before, the replay source and the report each had their own grouping.
  for (const char* name : {"multi-gpu-h200x2.trace.jsonl", "training-h100.trace.jsonl",
                           "calibration-gpulens-h100.trace.jsonl"}) {
    const std::string path = std::string(GPULENS_FIXTURES) + "/traces/" + name;
    auto trace = read_trace(path, TraceReadOptions{.lenient = true});
    ASSERT_TRUE(trace) << trace.error().message;
    const auto from_report = diagnosis::ticks_from_trace(*trace);
    auto source = sources::ReplaySource::open(path, 0, true);
    ASSERT_TRUE(source) << source.error().message;
    std::vector<Tick> from_replay;
    while (true) {
      auto tick = (*source)->next();
      ASSERT_TRUE(tick);
      if (!tick->has_value()) break;
      from_replay.push_back(std::move(**tick));
    }
    ASSERT_EQ(from_replay.size(), from_report.size()) << name;
    for (std::size_t i = 0; i < from_report.size(); ++i) {
      EXPECT_EQ(from_replay[i].t, from_report[i].t) << name << " tick " << i;
      EXPECT_EQ(from_replay[i].samples.size(), from_report[i].samples.size())
          << name << " tick " << i;
      EXPECT_EQ(from_replay[i].marks.size(), from_report[i].marks.size()) << name << " tick " << i;
    }
  }
}

}  // namespace
}  // namespace gpulens
