// SPDX-License-Identifier: Apache-2.0
// "Kernel launches" in the report's three forms: the same figures in each, and a
// kernel name, which the job chose, made safe for a terminal and a page.
#include "render/launches_output.hpp"

#include <gtest/gtest.h>

namespace gpulens::render {
namespace {

kernels::LaunchCounts counts() {
  kernels::LaunchCounts c;
  c.kernel_launches = 1'234'567;
  c.graph_launches = 1200;
  c.graphs = 3;
  c.span_s = 60;
  c.top = {{"<script>alert(1)</script>", 1'000'000}, {"gemm\x1b[31m", 234'567}};
  c.gpus = {{0, 1'235'767, 20'596.1}};
  kernels::ProcessLaunchCounts p;
  p.pid = 7;
  p.comm = "python3";
  p.gpus = {0};
  p.kernel_launches = 1'234'567;
  p.graph_launches = 1200;
  p.seconds = 59;
  p.final = true;
  c.processes = {p, p};
  c.processes[1].pid = 8;
  c.processes[1].final = false;
  c.notes = {"1 process ended without running exit handlers"};
  return c;
}

TEST(LaunchesOutput, TextSaysTheCountsTheRatesAndTheTopKernels) {
  const std::string t = launches_to_text(counts());
  EXPECT_NE(t.find("1,234,567 kernel launches and 1,200 CUDA-graph launches (3 graphs"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("from 2 processes"), std::string::npos);
  EXPECT_NE(t.find("GPU 0: 20596 launches/s"), std::string::npos) << t;
  EXPECT_NE(t.find("81.0%"), std::string::npos) << t;
  EXPECT_NE(t.find("pid 8 python3  GPU 0  1,235,767 launches in 59 s (to its last write)"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find('\x1b'), std::string::npos) << "a name cannot drive the terminal";
  EXPECT_NE(t.find("note: 1 process ended"), std::string::npos);
}

TEST(LaunchesOutput, JsonHoldsEveryFigure) {
  const auto j = launches_to_json(counts());
  EXPECT_EQ(j["kernel_launches"], 1'234'567);
  EXPECT_EQ(j["top"][0]["launches"], 1'000'000);
  EXPECT_NEAR(j["top"][0]["share_pct"].get<double>(), 81.0, 0.05);
  EXPECT_EQ(j["gpus"][0]["gpu"], 0);
  EXPECT_EQ(j["processes"][1]["final"], false);
  EXPECT_EQ(j["notes"].size(), 1u);
}

TEST(LaunchesOutput, HtmlEscapesNamesAndGoesBeforeThePagesScript) {
  const std::string page = insert_launches_html("<html><body><script>x()</script>", counts());
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_LT(page.find("id=\"launches\""), page.find("<script>x()"));
}

}  // namespace
}  // namespace gpulens::render
