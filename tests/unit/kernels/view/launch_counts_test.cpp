// SPDX-License-Identifier: Apache-2.0
// A job's launch records summed: the most launched kernels over all processes, each
// process put on the GPUs the recording saw it on, and what could not be counted said.
#include "kernels/view/launch_counts.hpp"

#include <gtest/gtest.h>

#include "kernels/record/launch_record.hpp"

namespace gpulens::kernels {
namespace {

nlohmann::json record_of(std::uint32_t pid, std::vector<KernelLaunches> kernels, bool final,
                         std::uint64_t graph_launches = 0) {
  LaunchRecord r;
  r.pid = pid;
  r.comm = "python3";
  r.first_ns = 1'000'000'000;
  r.written_ns = 11'000'000'000;
  r.final = final;
  for (const auto& k : kernels) r.kernel_launches += k.launches;
  r.kernels = std::move(kernels);
  r.graph_launches = graph_launches;
  r.graphs = graph_launches > 0 ? 1 : 0;
  return nlohmann::json::parse(launch_record_line(r));
}

// Two GPUs sampled for 100 s; pid 10 on GPU 0, pid 11 on GPU 1.
Trace two_gpu_trace() {
  Trace t;
  for (int i = 0; i <= 100; ++i) {
    for (int gpu = 0; gpu < 2; ++gpu) {
      gpulens::Sample s;
      s.t = 1000.0 + i;
      s.gpu = gpu;
      ProcessSample p;
      p.pid = gpu == 0 ? 10 : 11;
      s.procs = std::vector<ProcessSample>{p};
      t.samples.push_back(std::move(s));
    }
  }
  return t;
}

TEST(LaunchCounts, KernelsAreSummedByNameOverTheProcesses) {
  const auto c = sum_launch_records({record_of(10, {{"gemm", 300}, {"add", 100}}, true),
                                     record_of(11, {{"add", 500}, {"nccl", 50}}, true, 20)},
                                    two_gpu_trace());
  EXPECT_EQ(c.kernel_launches, 950u);
  EXPECT_EQ(c.graph_launches, 20u);
  ASSERT_EQ(c.top.size(), 3u);
  EXPECT_EQ(c.top[0].name, "add");
  EXPECT_EQ(c.top[0].launches, 600u);
  EXPECT_EQ(c.top[1].name, "gemm");
  EXPECT_EQ(c.processes.front().pid, 11u) << "the most launches first";
  EXPECT_TRUE(c.notes.empty());
}

TEST(LaunchCounts, EachGpuIsFedItsProcessesLaunchesOverTheRecording) {
  const auto c = sum_launch_records(
      {record_of(10, {{"gemm", 400}}, true), record_of(11, {{"add", 100}}, true, 100)},
      two_gpu_trace());
  ASSERT_EQ(c.gpus.size(), 2u);
  EXPECT_DOUBLE_EQ(c.span_s, 100.0);
  EXPECT_EQ(c.gpus[0].gpu, 0);
  EXPECT_DOUBLE_EQ(c.gpus[0].per_second, 4.0);
  EXPECT_EQ(c.gpus[1].launches, 200u) << "graph launches feed a GPU too";
  EXPECT_EQ(c.processes[0].gpus, std::vector<int>{0});
}

TEST(LaunchCounts, AProcessNoSampleSawIsOnNoGpu) {
  const auto c = sum_launch_records({record_of(77, {{"k", 5}}, true)}, two_gpu_trace());
  EXPECT_TRUE(c.gpus.empty());
  EXPECT_TRUE(c.processes[0].gpus.empty());
  EXPECT_DOUBLE_EQ(c.processes[0].seconds, 10.0);
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("1 process was in no sample's process list"), std::string::npos)
      << c.notes[0];
}

TEST(LaunchCounts, RefusedRecordsAndProcessesThatSkippedExitAreSaid) {
  const auto c =
      sum_launch_records({record_of(10, {{"k", 5}}, false),
                          {{"x_launches", 1}, {"refused", "launches-9-1.json: not JSON"}}},
                         two_gpu_trace());
  EXPECT_EQ(c.kernel_launches, 5u);
  ASSERT_EQ(c.notes.size(), 2u);
  EXPECT_EQ(c.notes[0], "a launch record was refused: launches-9-1.json: not JSON");
  EXPECT_NE(c.notes[1].find("1 process ended without"), std::string::npos) << c.notes[1];
}

TEST(LaunchCounts, TheTopListIsCut) {
  std::vector<KernelLaunches> many;
  for (int i = 0; i < 30; ++i) many.push_back({"k" + std::to_string(i), 100u + i});
  const auto c = sum_launch_records({record_of(10, many, true)}, two_gpu_trace());
  ASSERT_EQ(c.top.size(), kTopLaunchedKernels);
  EXPECT_EQ(c.top[0].name, "k29");
}

}  // namespace
}  // namespace gpulens::kernels
