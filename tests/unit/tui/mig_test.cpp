// SPDX-License-Identifier: Apache-2.0
// MIG GPU instances in `gpulens top`: each instance a row under its GPU, from the
// per-instance GPM metrics a sample carries in x_mig. The recording is synthetic
// (tests/fixtures/traces/mig-synthetic-h100.trace.jsonl, written by hand in the
// shape sources/nvml/nvml_gpm.cpp writes): no MIG GPU has been recorded yet.
#include <gtest/gtest.h>

#include "sampler/open_source.hpp"
#include "tui/layout.hpp"
#include "tui/top_model.hpp"

namespace gpulens::tui {
namespace {

const std::string kMig = std::string(GPULENS_FIXTURES) + "/traces/mig-synthetic-h100.trace.jsonl";

// The model after `ticks` ticks (0: all of them).
TopModel fed(std::size_t ticks) {
  sampler::SourceOptions so;
  so.replay = kMig;
  so.speed = 0;
  auto source = sampler::open_tick_source(so);
  EXPECT_TRUE(source) << (source ? "" : source.error().message);
  ModelBuilder builder((*source)->header(), 10);
  while (ticks == 0 || builder.ticks() < ticks) {
    auto tick = (*source)->next();
    if (!tick || !tick->has_value()) break;
    builder.on_tick(**tick, nullptr);
  }
  return builder.model();
}

std::vector<std::string> texts(const Screen& s) {
  std::vector<std::string> out;
  for (const auto& l : s.lines) {
    std::string t = l.text();
    while (!t.empty() && t.back() == ' ') t.pop_back();
    out.push_back(t);
  }
  return out;
}

std::size_t find_line(const std::vector<std::string>& lines, const std::string& start) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind(start, 0) == 0) return i;
  }
  return lines.size();
}

TEST(TopMig, InstancesAreKeptByIdAndUnmeasuredOnATickThatLacksThem) {
  TopModel m = fed(1);
  ASSERT_EQ(m.gpus.size(), 2u);
  ASSERT_EQ(m.gpus[0].mig.size(), 1u);
  EXPECT_EQ(m.gpus[0].mig[0].gpu_instance, 1);
  EXPECT_TRUE(m.gpus[1].mig.empty());  // GPU 1 is not in MIG mode
  m = fed(2);
  ASSERT_EQ(m.gpus[0].mig.size(), 2u);
  EXPECT_EQ(m.gpus[0].mig[1].gpu_instance, 2);
  EXPECT_EQ(m.gpus[0].mig[1].fp16, 3.0);
  m = fed(3);  // only instance 2 was read on the third tick
  ASSERT_EQ(m.gpus[0].mig.size(), 2u);
  EXPECT_FALSE(m.gpus[0].mig[0].sm_active);
  EXPECT_EQ(m.gpus[0].mig[1].sm_active, 6.0);
  EXPECT_FALSE(m.gpus[0].mig[1].fp16);
  m = fed(0);
  EXPECT_EQ(m.gpus[0].mig[0].sm_active, 44.0);
  EXPECT_EQ(m.gpus[0].mig[0].tensor, 14.0);
}

TEST(TopMig, FullViewIndentsEachInstanceUnderItsGpu) {
  const TopModel m = fed(0);
  ViewState view;
  view.density = Density::Full;
  const auto lines = texts(layout_top(m, view, FeedStatus{}, 120, 40, {}));
  const std::size_t gpu0 = find_line(lines, "GPU 0");
  const std::size_t gpu1 = find_line(lines, "GPU 1");
  ASSERT_LT(gpu0, gpu1);
  const std::size_t gi1 = find_line(lines, "    MIG GI 1");
  ASSERT_LT(gi1, gpu1);
  EXPECT_EQ(lines[gi1 - 1].rfind("  mem ", 0), 0u);  // right under the GPU's own lines
  EXPECT_EQ(lines[gi1], "    MIG GI 1   SM act 44%  occ 33%  tensor 14%  dram 22%");
  EXPECT_EQ(lines[gi1 + 1],
            "    MIG GI 2   SM act 7.0%  occ 5.0%  tensor 0%  dram 1.2%  fp16 3.5%  PCIe \u219314 "
            "\u21912 MiB/s");
  // GPU 1 has no instances, and the process table is still there.
  EXPECT_EQ(
      find_line(std::vector<std::string>(lines.begin() + static_cast<long>(gpu1), lines.end()),
                "    MIG"),
      lines.size() - gpu1);
  EXPECT_LT(find_line(lines, "    PID"), lines.size());
}

TEST(TopMig, CompactViewAndNarrowScreensKeepTheRows) {
  const TopModel m = fed(0);
  ViewState view;
  view.density = Density::Compact;
  const auto lines = texts(layout_top(m, view, FeedStatus{}, 80, 24, {}));
  const std::size_t gpu0 = find_line(lines, "   0 ");
  ASSERT_LT(gpu0, lines.size());
  EXPECT_EQ(lines[gpu0 + 1].rfind("    MIG GI 1   SM act 44%", 0), 0u);
  EXPECT_EQ(lines[gpu0 + 2].rfind("    MIG GI 2   SM act 7.0%", 0), 0u);
  EXPECT_EQ(lines[gpu0 + 3].rfind("   1 ", 0), 0u);
  // 40 columns: whole segments only, never a cut number.
  view.density = Density::Full;
  const auto narrow = texts(layout_top(m, view, FeedStatus{}, 40, 40, {}));
  const std::size_t gi2 = find_line(narrow, "    MIG GI 2");
  ASSERT_LT(gi2, narrow.size());
  EXPECT_EQ(narrow[gi2], "    MIG GI 2   SM act 7.0%  occ 5.0%");
}

}  // namespace
}  // namespace gpulens::tui
