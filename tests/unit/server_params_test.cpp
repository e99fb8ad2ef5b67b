#include <gtest/gtest.h>

#include "exposition/api_params.hpp"

namespace gpulens::server {
namespace {

TEST(ServerParams, Durations) {
  EXPECT_EQ(parse_duration_param("90"), 90);
  EXPECT_EQ(parse_duration_param("90s"), 90);
  EXPECT_EQ(parse_duration_param("250ms"), 0.25);
  EXPECT_EQ(parse_duration_param("15m"), 900);
  EXPECT_EQ(parse_duration_param("1.5h"), 5400);
  EXPECT_EQ(parse_duration_param("90d"), 90 * 86400);
  EXPECT_EQ(parse_duration_param("2w"), 14 * 86400);
  for (const char* bad : {"", "-5", "m", "5x", "1e3", "inf", "nan", " 5", "5 ", "0x10", "5mm"}) {
    EXPECT_FALSE(parse_duration_param(bad).has_value()) << bad;
  }
}

TEST(ServerParams, Times) {
  EXPECT_EQ(parse_time_param("now", 1000), 1000);
  EXPECT_EQ(parse_time_param("-15m", 1000), 100);
  EXPECT_EQ(parse_time_param("now-1m", 1000), 940);
  EXPECT_EQ(parse_time_param("1732200000.5", 0), 1732200000.5);
  for (const char* bad : {"", "yesterday", "-", "now+1m", "12abc", "--5m"}) {
    EXPECT_FALSE(parse_time_param(bad, 1000).has_value()) << bad;
  }
}

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
}  // namespace gpulens::server
