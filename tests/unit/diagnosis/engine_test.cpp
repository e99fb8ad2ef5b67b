// SPDX-License-Identifier: Apache-2.0
// The live engine across GPUs: the GPUs of one job are compared (a GPU waiting on
// a busy peer), GPUs of different jobs are not, and a GPU never seen is unknown.
#include "diagnosis/engine.hpp"

#include <gtest/gtest.h>

#include "diagnosis/config.hpp"
#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

using testing::h100;

// Through the engine: GPUs of one job are compared; GPUs of different jobs are not.
Tick two_gpu_tick(double t, double sm0, double sm1) {
  Tick tick;
  tick.t = t;
  for (int g = 0; g < 2; ++g) {
    Sample s;
    s.t = t;
    s.gpu = g;
    s.values.set(Metric::GpuUtil, 99);
    s.values.set(Metric::SmActive, g == 0 ? sm0 : sm1);
    tick.samples.push_back(s);
  }
  return tick;
}

TraceHeader two_h100() {
  TraceHeader h;
  h.interval_s = 0.1;
  h.devices = {h100(), h100()};
  h.devices[1].index = 1;
  return h;
}

TEST(Engine, WaitingOnPeerAcrossAllWatchedGpus) {
  DiagnosisEngine engine(two_h100(), DiagnosisConfig::defaults());
  for (int i = 0; i < 50; ++i) engine.on_tick(two_gpu_tick(100 + 0.1 * i, 95, 0.75));
  EXPECT_EQ(engine.status(0).state.state, GpuState::ComputeBound);
  EXPECT_EQ(engine.status(1).state.state, GpuState::WaitingOnPeer);
  EXPECT_EQ(engine.brief(1).state, "waiting_on_peer");
  EXPECT_FALSE(engine.fixes(1).empty());
}

TEST(Engine, ExplicitJobGroupsKeepSeparateJobsApart) {
  DiagnosisEngine engine(two_h100(), DiagnosisConfig::defaults(), {{0}, {1}});
  for (int i = 0; i < 50; ++i) engine.on_tick(two_gpu_tick(100 + 0.1 * i, 95, 0.75));
  EXPECT_EQ(engine.status(1).state.state, GpuState::SmUnderused);
}

TEST(Engine, UnseenGpuIsUnknown) {
  DiagnosisEngine engine(two_h100(), DiagnosisConfig::defaults());
  EXPECT_EQ(engine.status(7).state.state, GpuState::Unknown);
  EXPECT_FALSE(engine.status(0).seen);
  EXPECT_EQ(engine.brief(0).state, "unknown");
}

}  // namespace
}  // namespace gpulens::diagnosis
