// SPDX-License-Identifier: Apache-2.0
// One device's part of the kernel view from its busy time and the job's step
// marks: idle over what was traced, the per-step figures (synchronisations
// counted only inside the steps), the median-length steps drawn as strips, and,
// traced in windows, only the steps lying whole inside one window.
#include "kernels/view/device_steps.hpp"

#include <gtest/gtest.h>

namespace gpulens::kernels {
namespace {

// The inputs of one device, over spans the test owns.
DeviceInputs device_inputs(const Spans& busy, const std::vector<double>& steps,
                           const SyncSpans& syncs, const Spans* opened = nullptr) {
  DeviceInputs in;
  in.device = 3;
  in.name = "NVIDIA H100";
  in.busy = &busy;
  in.opened = opened;
  in.steps = &steps;
  in.syncs = &syncs;
  in.origin_s = 1000;
  return in;
}

TEST(KernelsDeviceSteps, TracedWholeTheStepsGiveIdleAndSyncsPerStep) {
  const Spans busy = {{1, 9}, {11, 19}, {21, 29}};
  const std::vector<double> steps = {0, 10, 20, 35};
  // Two synchronisations inside the steps, one after the last step mark.
  const SyncSpans syncs = {{5, 6, 2, 0.5}, {40, 41, 1, 3}};
  DeviceInputs in = device_inputs(busy, steps, syncs);
  in.strips = 2;
  const DeviceSteps d = device_steps(in);
  EXPECT_EQ(d.view.device, 3u);
  EXPECT_EQ(d.view.name, "NVIDIA H100");
  EXPECT_FALSE(d.traced.has_value());
  EXPECT_FALSE(d.no_step_inside_windows);
  // The whole job: from the first GPU work to the last.
  EXPECT_DOUBLE_EQ(d.view.activity.window_s, 28);
  EXPECT_DOUBLE_EQ(d.view.activity.busy_s, 24);
  ASSERT_TRUE(d.view.steps.has_value());
  const StepStats& st = *d.view.steps;
  EXPECT_EQ(st.steps, 3u);
  EXPECT_DOUBLE_EQ(st.idle.window_s, 35);
  EXPECT_DOUBLE_EQ(st.idle.busy_s, 24);
  EXPECT_NEAR(st.mean_step_s, 35.0 / 3, 1e-12);
  EXPECT_NEAR(st.mean_idle_per_step_s, 11.0 / 3, 1e-12);
  EXPECT_NEAR(st.syncs_per_step, 2.0 / 3, 1e-12);
  EXPECT_NEAR(st.sync_s_per_step, 0.5 / 3, 1e-12);
  EXPECT_EQ(d.attribution, (Spans{{0, 35}}));
  // The two 10 s steps are the median's; the 15 s one is not drawn.
  ASSERT_EQ(d.view.strips.size(), 2u);
  EXPECT_DOUBLE_EQ(d.view.strips[0].start_unix, 1000);
  EXPECT_DOUBLE_EQ(d.view.strips[1].start_unix, 1010);
  EXPECT_DOUBLE_EQ(d.view.strips[1].length_s, 10);
  // Busy time from the step's start, cut at its end.
  EXPECT_EQ(d.view.strips[1].busy, (std::vector<std::pair<double, double>>{{1, 9}}));
}

TEST(KernelsDeviceSteps, InWindowsOnlyTheStepsWholeInsideOneWindowCount) {
  const Spans busy = {{1, 5}, {21, 25}, {31, 35}};
  const Spans opened = {{0, 12}, {20, 40}};
  // The step from 2 to 22 spans the gap between the windows: left out.
  const std::vector<double> steps = {2, 22, 27, 32};
  const SyncSpans syncs = {{3, 4, 1, 0.1}, {23, 24, 4, 0.2}};
  const DeviceSteps d = device_steps(device_inputs(busy, steps, syncs, &opened));
  ASSERT_TRUE(d.traced.has_value());
  EXPECT_EQ(*d.traced, opened);  // no work ran past a window's close
  EXPECT_DOUBLE_EQ(d.view.activity.window_s, 32);
  EXPECT_DOUBLE_EQ(d.view.activity.busy_s, 12);
  ASSERT_TRUE(d.view.steps.has_value());
  EXPECT_EQ(d.view.steps->steps, 2u);
  EXPECT_DOUBLE_EQ(d.view.steps->idle.window_s, 10);
  EXPECT_DOUBLE_EQ(d.view.steps->syncs_per_step, 2);  // the 4 inside, over 2 steps
  EXPECT_EQ(d.attribution, (Spans{{22, 32}}));
  EXPECT_FALSE(d.no_step_inside_windows);
}

TEST(KernelsDeviceSteps, NoStepInsideAWindowIsSaidAndTheWindowsStay) {
  const Spans busy = {{1, 5}, {21, 25}};
  const Spans opened = {{0, 12}, {20, 40}};
  const std::vector<double> steps = {2, 22};
  const SyncSpans syncs;
  const DeviceSteps d = device_steps(device_inputs(busy, steps, syncs, &opened));
  EXPECT_TRUE(d.no_step_inside_windows);
  EXPECT_FALSE(d.view.steps.has_value());
  EXPECT_TRUE(d.view.strips.empty());
  EXPECT_EQ(d.attribution, opened);
}

TEST(KernelsDeviceSteps, WithoutTwoStepMarksOnlyTheActivityIsSaid) {
  const Spans busy = {{2, 4}, {6, 10}};
  const std::vector<double> one_step = {3};
  const SyncSpans syncs = {{3, 4, 1, 1}};
  const DeviceSteps d = device_steps(device_inputs(busy, one_step, syncs));
  EXPECT_FALSE(d.view.steps.has_value());
  EXPECT_FALSE(d.no_step_inside_windows);  // traced whole: nothing to say
  EXPECT_DOUBLE_EQ(d.view.activity.window_s, 8);
  EXPECT_DOUBLE_EQ(d.view.activity.idle_share, 0.25);
  EXPECT_EQ(d.attribution, (Spans{{2, 10}}));
  // A device that never ran anything: nothing traced, nothing idle.
  const Spans none;
  const DeviceSteps idle = device_steps(device_inputs(none, one_step, syncs));
  EXPECT_DOUBLE_EQ(idle.view.activity.window_s, 0);
  EXPECT_TRUE(idle.attribution.empty());
}

}  // namespace
}  // namespace gpulens::kernels
