// SPDX-License-Identifier: Apache-2.0
// The one-line status of `gpulens run --live`: its figures in top's compact style
// (core/text_units points_compact), so a near-idle GPU shows "0.8%", not "1%".
#include "jobs/live_status.hpp"

#include <gtest/gtest.h>

#include <string>

#include "verdict/mfu.hpp"

namespace gpulens::jobs {
namespace {

TraceHeader one_gpu() {
  TraceHeader h;
  h.interval_s = 1.0;
  DeviceInfo d;
  d.index = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm_count = 132;
  h.devices.push_back(d);
  return h;
}

Tick tick_at(double t, double util, double sm, double tensor) {
  Tick tick;
  tick.t = t;
  Sample s;
  s.t = t;
  s.gpu = 0;
  s.values.set(Metric::GpuUtil, util);
  s.values.set(Metric::SmActive, sm);
  s.values.set(Metric::TensorActive, tensor);
  s.values.set(Metric::PowerW, 151);
  tick.samples.push_back(std::move(s));
  return tick;
}

TEST(LiveStatus, FiguresInTheCompactStyleOfTop) {
  LiveStatus status(one_gpu(), std::nullopt);
  status.on_tick(tick_at(100, 98.4, 0.76, 5.3));
  status.on_tick(tick_at(101, 98.4, 0.76, 5.3));
  const std::string line = status.take_line(165, {});
  EXPECT_EQ(line.rfind("gpulens 1:05 | GPU0 ", 0), 0u) << line;
  EXPECT_NE(line.find(" util 98% SM 0.8% tensor 5.3% 151W"), std::string::npos) << line;
}

TEST(LiveStatus, ModelFlopsUtilizationInTheSameStyle) {
  LiveStatus status(one_gpu(), 1000.0);  // TFLOP/s peak of all GPUs
  status.on_tick(tick_at(0, 90, 50, 40));
  Mark step;
  step.name = verdict::kStepMark;
  step.fields = {{"flops", 4.5e14}, {"steps", 1}};
  status.on_mark(step);
  const std::string line = status.take_line(10, {});
  // 4.5e14 FLOP over 10 s = 45 TFLOP/s, 4.5 % of the peak.
  EXPECT_NE(line.find(" | 1 steps 45.0 TFLOP/s MFU 4.5%"), std::string::npos) << line;
}

}  // namespace
}  // namespace gpulens::jobs
