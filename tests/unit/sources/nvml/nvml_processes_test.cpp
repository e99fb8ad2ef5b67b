// SPDX-License-Identifier: Apache-2.0
// The NVML collector's process list (src/sources/nvml/nvml_processes.cpp) against
// the fake NVML.
#include <gtest/gtest.h>

#include "nvml_fake.hpp"

namespace gpulens::sources {
namespace {

using namespace gpulens::testing;  // the NVML fake

TEST_F(NvmlCollectorTest, ProcessesParseAndMerge) {
  constexpr unsigned long long kMiB = 1024 * 1024;
  fake.gpus[0].compute = {{4242, 2048 * kMiB, 0xffffffff, 0xffffffff},
                          {5151, nvml::kValueNotAvailable, 1, 2},
                          {6060, 10 * kMiB, 0, 0}};
  fake.gpus[0].graphics = {{6060, 12 * kMiB, 0, 0}, {7070, 1 * kMiB, 0, 0}};
  fake.gpus[0].util_samples = {{4242, 1, 99, 0, 0, 0}};  // from before open: not counted
  NvmlOptions options;
  options.process_util_every_s = 1;  // every tick below reads the SM share afresh
  auto c = open(options);
  const auto at = static_cast<unsigned long long>((fake.wall + 0.5) * 1e6);
  fake.gpus[0].util_samples.push_back({4242, at, 30, 5, 0, 0});
  fake.gpus[0].util_samples.push_back({4242, at + 100000, 80, 5, 0, 0});
  fake.gpus[0].util_samples.push_back({7070, at, 2, 0, 0, 0});
  const Sample s = tick(*c, 0, 1.0);
  ASSERT_TRUE(s.procs);
  ASSERT_EQ(s.procs->size(), 4u);
  const auto& p = *s.procs;
  EXPECT_EQ(p[0].pid, 4242u);
  EXPECT_EQ(p[0].used_mib, 2048.0);
  EXPECT_EQ(p[0].sm_util, 80.0);  // max over the interval
  EXPECT_EQ(p[1].pid, 5151u);
  EXPECT_FALSE(p[1].used_mib);  // NVML_VALUE_NOT_AVAILABLE
  EXPECT_FALSE(p[1].sm_util);
  EXPECT_EQ(p[2].pid, 6060u);
  EXPECT_EQ(p[2].used_mib, 12.0);  // in both lists: merged, larger reading
  EXPECT_EQ(p[3].pid, 7070u);
  EXPECT_EQ(p[3].sm_util, 2.0);

  // Nothing newer since: the next tick lists the processes without an SM share.
  const Sample next = tick(*c, 0, 1.0);
  ASSERT_TRUE(next.procs);
  EXPECT_FALSE((*next.procs)[0].sm_util);

  // No processes: an empty list, not "not sampled".
  const Sample none = tick(*c, 1, 1.0);
  ASSERT_TRUE(none.procs);
  EXPECT_TRUE(none.procs->empty());
}

TEST_F(NvmlCollectorTest, ProcessSmShareIsReadAtMostEveryFiveSecondsByDefault) {
  fake.gpus[0].compute = {{4242, 1 << 20, 0, 0}};
  auto c = open();
  const int at_open = fake.count("nvmlDeviceGetProcessUtilization", 0);
  const auto at = static_cast<unsigned long long>((fake.wall + 0.1) * 1e6);
  fake.gpus[0].util_samples.push_back({4242, at, 55, 0, 0, 0});
  EXPECT_EQ((*tick(*c, 0, 0.2).procs)[0].sm_util, 55.0);
  // Ticks within the next five seconds reuse the answer instead of paying for the call.
  EXPECT_EQ((*tick(*c, 0, 0.3).procs)[0].sm_util, 55.0);
  fake.gpus[0].util_samples.push_back({4242, at + 700000, 20, 0, 0, 0});
  EXPECT_EQ((*tick(*c, 0, 4.0).procs)[0].sm_util, 55.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetProcessUtilization", 0), at_open + 1);
  EXPECT_EQ((*tick(*c, 0, 0.8).procs)[0].sm_util, 20.0);
  EXPECT_EQ(fake.count("nvmlDeviceGetProcessUtilization", 0), at_open + 2);
}

TEST_F(NvmlCollectorTest, ManyProcessesGrowTheBufferOnce) {
  for (unsigned pid = 1; pid <= 100; ++pid) fake.gpus[0].compute.push_back({pid, 1 << 20, 0, 0});
  auto c = open();
  EXPECT_EQ(tick(*c, 0, 1.0).procs->size(), 100u);
  const int calls = fake.count("nvmlDeviceGetComputeRunningProcesses_v3", 0);
  EXPECT_EQ(tick(*c, 0, 1.0).procs->size(), 100u);
  EXPECT_EQ(fake.count("nvmlDeviceGetComputeRunningProcesses_v3", 0), calls + 1);
}

TEST_F(NvmlCollectorTest, ProcessesOffLeavesProcsUnset) {
  fake.gpus[0].compute = {{4242, 1 << 20, 0, 0}};
  NvmlOptions options;
  options.processes = false;
  auto c = open(options);
  EXPECT_FALSE(tick(*c, 0, 1.0).procs);
  EXPECT_EQ(fake.count("nvmlDeviceGetComputeRunningProcesses_v3", 0), 0);
}

}  // namespace
}  // namespace gpulens::sources
