// SPDX-License-Identifier: Apache-2.0
// The metric table every layer keys readings by: one row per metric in enum
// order, keys and column titles that name one metric each, a key read back as
// its metric (and an unknown key as none), and the sources the sampler asks.
#include "core/metric.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace gpulens {
namespace {

TEST(Metric, KeysAndTitlesNameOneMetricEach) {
  std::set<std::string_view> keys;
  std::set<std::string_view> titles;
  for (const auto& info : all_metrics()) {
    EXPECT_TRUE(keys.insert(info.key).second) << "key twice: " << info.key;
    EXPECT_TRUE(titles.insert(info.title).second) << "title twice: " << info.title;
    EXPECT_FALSE(info.key.empty());
    EXPECT_EQ(info.key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"),
              std::string_view::npos)
        << info.key << ": a key is a lower-case JSON name";
  }
  EXPECT_EQ(keys.size(), kMetricCount);
}

TEST(Metric, EveryKeyReadsBackAsItsMetric) {
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const auto m = static_cast<Metric>(i);
    EXPECT_EQ(metric_info(m).id, m);
    EXPECT_EQ(index_of(m), i);
    const auto back = metric_from_key(metric_info(m).key);
    ASSERT_TRUE(back.has_value()) << metric_info(m).key;
    EXPECT_EQ(*back, m);
  }
  EXPECT_FALSE(metric_from_key("sm_activity").has_value());
  EXPECT_FALSE(metric_from_key("").has_value());
  EXPECT_FALSE(metric_from_key("SM_ACTIVE").has_value()) << "keys are matched exactly";
}

TEST(Metric, TheRowsSayWhereEachReadingComesFrom) {
  EXPECT_EQ(metric_info(Metric::SmActive).key, "sm_active");
  EXPECT_EQ(metric_info(Metric::SmActive).source, MetricSource::Gpm);
  EXPECT_EQ(metric_info(Metric::GpuUtil).source, MetricSource::Classic);
  EXPECT_EQ(metric_info(Metric::HostCpuPct).source, MetricSource::Host);
  EXPECT_EQ(metric_info(Metric::PcieRxMibs).unit, "MiB/s");
  EXPECT_TRUE(metric_info(Metric::SmClockMhz).integral);
  EXPECT_FALSE(metric_info(Metric::PowerW).integral);
  // Readings outside gpu-trace v1's own set carry the x_ prefix of an extension.
  EXPECT_TRUE(metric_info(Metric::EccCorrected).key.starts_with("x_"));
  EXPECT_FALSE(metric_info(Metric::MemUsedMib).key.starts_with("x_"));
}

}  // namespace
}  // namespace gpulens
