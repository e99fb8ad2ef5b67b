// SPDX-License-Identifier: Apache-2.0
#include "exposition/api_params.hpp"

#include <gtest/gtest.h>

namespace gpulens::exposition {
namespace {

TEST(ServerParams, GpuLists) {
  EXPECT_EQ(parse_gpu_list("0"), std::vector<int>{0});
  EXPECT_EQ(parse_gpu_list("0,1,7"), (std::vector<int>{0, 1, 7}));
  for (const char* bad : {"", ",", "0,", "-1", "a", "99999", "1;2"}) {
    EXPECT_FALSE(parse_gpu_list(bad).has_value()) << bad;
  }
}

TEST(ServerParams, MetricLists) {
  std::string bad;
  const auto ok = parse_metric_list("sm_active,gpu_util", bad);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, (std::vector<Metric>{Metric::SmActive, Metric::GpuUtil}));
  EXPECT_FALSE(parse_metric_list("sm_active,nope", bad).has_value());
  EXPECT_EQ(bad, "nope");
}

}  // namespace
}  // namespace gpulens::exposition
