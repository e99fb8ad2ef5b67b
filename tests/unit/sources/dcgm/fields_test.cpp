// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "sources/dcgm/dcgm_fields.hpp"

namespace gpulens::sources::dcgm {
namespace {

FieldValue_v2 double_value(unsigned short field, double v, int status = 0) {
  FieldValue_v2 fv{};
  fv.fieldId = field;
  fv.fieldType = kFieldTypeDouble;
  fv.status = status;
  fv.value.dbl = v;
  return fv;
}

FieldValue_v2 int64_value(unsigned short field, std::int64_t v) {
  FieldValue_v2 fv{};
  fv.fieldId = field;
  fv.fieldType = kFieldTypeInt64;
  fv.value.i64 = v;
  return fv;
}

// The ids as dcgm_fields.h defines them, typed in again here: the table must name
// the field each metric's meaning comes from.
TEST(DcgmFields, TableMapsDcgmIdsOntoTheGpmMetrics) {
  const std::pair<unsigned short, Metric> expected[] = {
      {1002, Metric::SmActive},     {1003, Metric::SmOccupancy},  {1004, Metric::TensorActive},
      {1005, Metric::DramActive},   {1006, Metric::Fp64Active},   {1007, Metric::Fp32Active},
      {1008, Metric::Fp16Active},   {1009, Metric::PcieTxMibs},   {1010, Metric::PcieRxMibs},
      {1011, Metric::NvlinkTxMibs}, {1012, Metric::NvlinkRxMibs},
  };
  ASSERT_EQ(kFieldMappings.size(), std::size(expected));
  for (const auto& [field, metric] : expected) {
    const FieldMapping* m = find_mapping(field);
    ASSERT_NE(m, nullptr) << field;
    EXPECT_EQ(m->metric, metric) << field;
    // Every metric DCGM fills is one the GPM path fills, in the same unit.
    EXPECT_EQ(metric_info(metric).source, MetricSource::Gpm) << field;
  }
  EXPECT_EQ(find_mapping(1001), nullptr);  // graphics engine: not mapped
  EXPECT_EQ(find_mapping(kFieldGpuUuid), nullptr);
  std::set<Metric> metrics;
  for (const auto& m : kFieldMappings) EXPECT_TRUE(metrics.insert(m.metric).second);
}

TEST(DcgmFields, RatiosBecomePercentAndByteRatesMibPerSecond) {
  const auto* sm = find_mapping(kFieldSmActive);
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(metric_info(sm->metric).unit, "%");
  EXPECT_DOUBLE_EQ(*convert_value(*sm, double_value(kFieldSmActive, 0.415)), 41.5);
  EXPECT_DOUBLE_EQ(*convert_value(*sm, double_value(kFieldSmActive, 0.0)), 0.0);
  EXPECT_DOUBLE_EQ(*convert_value(*sm, double_value(kFieldSmActive, 1.0)), 100.0);

  const auto* tx = find_mapping(kFieldPcieTxBytes);
  ASSERT_NE(tx, nullptr);
  EXPECT_EQ(metric_info(tx->metric).unit, "MiB/s");
  EXPECT_DOUBLE_EQ(*convert_value(*tx, int64_value(kFieldPcieTxBytes, 3 * 1048576)), 3.0);
  const auto* nvl = find_mapping(kFieldNvlinkRxBytes);
  ASSERT_NE(nvl, nullptr);
  EXPECT_DOUBLE_EQ(*convert_value(*nvl, int64_value(kFieldNvlinkRxBytes, 524288)), 0.5);
  // A byte rate sent as a double (a DCGM that changed the type) reads the same.
  EXPECT_DOUBLE_EQ(*convert_value(*tx, double_value(kFieldPcieTxBytes, 2097152.0)), 2.0);
}

TEST(DcgmFields, BlanksErrorsAndNonsenseReadAsAbsent) {
  const auto& sm = *find_mapping(kFieldSmActive);
  const auto& tx = *find_mapping(kFieldPcieTxBytes);
  // DCGM_FP64_BLANK and the codes above it (NOT_FOUND = blank + 1, ...).
  EXPECT_FALSE(convert_value(sm, double_value(kFieldSmActive, 140737488355328.0)));
  EXPECT_FALSE(convert_value(sm, double_value(kFieldSmActive, 140737488355329.0)));
  // DCGM_INT64_BLANK and DCGM_INT64_NOT_FOUND.
  EXPECT_FALSE(convert_value(tx, int64_value(kFieldPcieTxBytes, 0x7ffffffffffffff0)));
  EXPECT_FALSE(convert_value(tx, int64_value(kFieldPcieTxBytes, 0x7ffffffffffffff1)));
  // Just under the blank base is a number.
  EXPECT_TRUE(convert_value(tx, int64_value(kFieldPcieTxBytes, 0x7fffffffffffffef)));
  // A value with an error status (e.g. DCGM_ST_NOT_SUPPORTED, -6) is none.
  EXPECT_FALSE(convert_value(sm, double_value(kFieldSmActive, 0.5, -6)));
  EXPECT_FALSE(convert_value(sm, double_value(kFieldSmActive, std::nan(""))));
  EXPECT_FALSE(
      convert_value(sm, double_value(kFieldSmActive, std::numeric_limits<double>::infinity())));
  EXPECT_FALSE(convert_value(sm, double_value(kFieldSmActive, -0.1)));
  FieldValue_v2 text{};
  text.fieldType = kFieldTypeString;
  EXPECT_FALSE(convert_value(sm, text));
}

}  // namespace
}  // namespace gpulens::sources::dcgm
