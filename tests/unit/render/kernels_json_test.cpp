// SPDX-License-Identifier: Apache-2.0
// The kernel view's JSON (render/kernels_json.cpp): every number goes through
// core's json_number, so a kernel's times keep microseconds, shares four
// decimals, bandwidths two, and a value that is not finite is null, never NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "render/kernels_output.hpp"

namespace gpulens::render {
namespace {

kernels::KernelView kernels_json_view() {
  kernels::KernelView v;
  v.available = true;
  v.kernel_s = 1.23456789;
  kernels::KernelRow row;
  row.name = "void gemm<float>(float*)";
  row.total_s = 0.000123456789;
  row.share = 1.0 / 3.0;
  row.mean_us = 12.3456789;
  v.top.push_back(row);
  kernels::CopyRow copy;
  copy.kind = "HtoD";
  copy.seconds = 0.5;
  copy.gb_per_s = 12.3456;
  v.copies.push_back(copy);
  kernels::DeviceView d;
  d.activity.window_s = 2;
  d.activity.idle_share = std::numeric_limits<double>::quiet_NaN();
  v.devices.push_back(d);
  return v;
}

}  // namespace

TEST(KernelsJson, NumbersAreRoundedToTheirNamedPrecision) {
  const auto j = kernels_to_json(kernels_json_view());
  EXPECT_EQ(j["kernel_s"].get<double>(), 1.234568);
  EXPECT_EQ(j["top"][0]["total_s"].get<double>(), 0.000123);
  EXPECT_EQ(j["top"][0]["share"].get<double>(), 0.3333);
  EXPECT_EQ(j["top"][0]["mean_us"].get<double>(), 12.346);
  EXPECT_EQ(j["copies"][0]["gb_per_s"].get<double>(), 12.35);
  EXPECT_EQ(j["copies"][0]["seconds"].get<double>(), 0.5);
  EXPECT_EQ(j["devices"][0]["activity"]["window_s"].get<double>(), 2);
}

TEST(KernelsJson, AValueThatIsNotFiniteIsNull) {
  const auto j = kernels_to_json(kernels_json_view());
  EXPECT_TRUE(j["devices"][0]["activity"]["idle_share"].is_null());
  EXPECT_EQ(j.dump().find("NaN"), std::string::npos);
}

}  // namespace gpulens::render
