// SPDX-License-Identifier: Apache-2.0
// Whose a GPU is by Slurm's allocation, on `gpulens top`'s GPU line: the job and
// its user when one job holds it, the jobs when several share it, "no job" when
// the allocation was read and nobody holds it, nothing when it was not read.
#include <gtest/gtest.h>

#include "tui/layout.hpp"
#include "tui/top_model.hpp"

namespace gpulens::tui {
namespace {

TopModel held_model(const std::vector<std::optional<std::vector<GpuAllocation>>>& per_gpu) {
  TraceHeader h;
  h.interval_s = 1;
  Tick tick;
  tick.t = 100;
  for (std::size_t i = 0; i < per_gpu.size(); ++i) {
    DeviceInfo d;
    d.index = static_cast<int>(i);
    d.name = "NVIDIA H100 80GB HBM3";
    h.devices.push_back(d);
    Sample s;
    s.t = 100;
    s.gpu = d.index;
    s.values.set(Metric::GpuUtil, 0);
    s.allocations = per_gpu[i];
    tick.samples.push_back(s);
  }
  ModelBuilder builder(h, 10);
  builder.on_tick(tick, nullptr);
  return builder.model();
}

TEST(TopHeldBy, TheGpuLineNamesItsJob) {
  const GpuAllocation alice{"slurm", "101", "alice", "physics", "gpu", 1.0, "", "", ""};
  const GpuAllocation bob{"slurm", "102", "bob", "chem", "gpu", 2.0, "", "", ""};
  const TopModel m =
      held_model({std::vector<GpuAllocation>{alice}, std::vector<GpuAllocation>{alice, bob},
                  std::vector<GpuAllocation>{}, std::nullopt});
  ASSERT_EQ(m.gpus.size(), 4u);
  EXPECT_EQ(m.gpus[0].held_by, "Slurm job 101 (alice)");
  EXPECT_EQ(m.gpus[1].held_by, "Slurm jobs 101, 102");
  EXPECT_EQ(m.gpus[2].held_by, "no job");
  EXPECT_EQ(m.gpus[3].held_by, "");
  ViewState view;
  view.density = Density::Full;
  const Screen screen = layout_top(m, view, FeedStatus{}, 120, 60, {});
  bool named = false;
  for (const auto& l : screen.lines) {
    const std::string t = l.text();
    if (t.rfind("GPU 0", 0) == 0) named = t.find("Slurm job 101 (alice)") != std::string::npos;
  }
  EXPECT_TRUE(named);
}

// The title says where owners come from processes though a scheduler's word was
// expected, where the line has room, and never at the cost of the time.
TEST(TopHeldBy, TheTitleSaysWhenOwnersComeFromProcesses) {
  const TopModel m = held_model({std::nullopt});
  FeedStatus feed;
  feed.note = "pods from processes: /k.sock gave no answer within 2.0 s";
  const auto title = [&](int width) {
    return layout_top(m, ViewState{}, feed, width, 24, {}).lines.front().text();
  };
  EXPECT_NE(title(160).find(feed.note), std::string::npos) << title(160);
  const std::string narrow = title(80);
  EXPECT_EQ(narrow.find("pods from processes"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find(":"), std::string::npos) << narrow;  // the clock is still there
}

TEST(TopHeldBy, PodsAreNamedByNamespaceAndName) {
  GpuAllocation pod;
  pod.scheduler = "kubernetes";
  pod.namespace_name = "ml";
  pod.pod = "train-0";
  pod.container = "trainer";
  GpuAllocation other = pod;
  other.pod = "idle-1";
  const GpuAllocation slurm{"slurm", "7", "", "", "", std::nullopt, "", "", ""};
  const TopModel m =
      held_model({std::vector<GpuAllocation>{pod}, std::vector<GpuAllocation>{pod, other},
                  std::vector<GpuAllocation>{slurm, pod}});
  ASSERT_EQ(m.gpus.size(), 3u);
  EXPECT_EQ(m.gpus[0].held_by, "pod ml/train-0");
  EXPECT_EQ(m.gpus[1].held_by, "pods ml/train-0, ml/idle-1");
  EXPECT_EQ(m.gpus[2].held_by, "Slurm job 7, pod ml/train-0");
}

}  // namespace
}  // namespace gpulens::tui
