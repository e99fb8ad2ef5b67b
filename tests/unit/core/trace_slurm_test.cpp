// SPDX-License-Identifier: Apache-2.0
// A process's Slurm job in a recording: written as x_slurm, read back whole, absent
// from older recordings, and a malformed x_slurm reads as absent, never an error.
#include <gtest/gtest.h>

#include "core/json_format.hpp"
#include "core/trace_reader.hpp"

namespace gpulens {
namespace {

const std::string kSlurmHeader =
    R"({"format": "gpu-trace", "version": 1, "host": "h", "interval_s": 1, "devices": [{"index": 0}]})";

Sample sample_with(std::vector<ProcessSample> procs) {
  Sample s;
  s.t = 10;
  s.gpu = 0;
  s.procs = std::move(procs);
  return s;
}

TEST(TraceSlurm, RoundTrip) {
  ProcessSample in_job;
  in_job.pid = 42;
  in_job.name = "python";
  in_job.user = "alice";
  in_job.slurm = SlurmJob{"4101", "batch", "alice", "physics", "4100", "3", "cgroup", ""};
  ProcessSample unknown;
  unknown.pid = 43;
  unknown.slurm = SlurmJob{};
  unknown.slurm->unknown = "malformed SLURM_JOB_ID";
  ProcessSample plain;
  plain.pid = 44;
  std::string line;
  append_sample_json(line, sample_with({in_job, unknown, plain}));
  EXPECT_NE(line.find(R"("x_slurm": {"job": "4101", "step": "batch", "user": "alice", )"
                      R"("account": "physics", "array_job": "4100", "array_task": "3", )"
                      R"("from": "cgroup"})"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find(R"("x_slurm": {"unknown": "malformed SLURM_JOB_ID"})"), std::string::npos)
      << line;
  auto trace = read_trace_string(kSlurmHeader + "\n" + line + "\n", "slurm.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  const auto& procs = *trace->samples.at(0).procs;
  ASSERT_EQ(procs.size(), 3u);
  EXPECT_EQ(procs[0], in_job);
  EXPECT_EQ(procs[1], unknown);
  EXPECT_EQ(procs[2], plain);
  EXPECT_FALSE(procs[2].slurm.has_value());
}

TEST(TraceSlurm, OlderAndOddRecordingsRead) {
  const std::string text =
      kSlurmHeader + "\n" +
      R"({"t": 1, "gpu": 0, "procs": [{"pid": 1, "name": "a"}, )"
      R"({"pid": 2, "x_slurm": "4101"}, )"
      R"({"pid": 3, "x_slurm": {"job": 4101, "account": ["x"], "step": "0"}}]})"
      "\n";
  auto trace = read_trace_string(text, "odd.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  const auto& procs = *trace->samples.at(0).procs;
  EXPECT_FALSE(procs[0].slurm);  // a recording from before Slurm attribution
  EXPECT_FALSE(procs[1].slurm);  // not an object: absent
  ASSERT_TRUE(procs[2].slurm);   // fields of another type read as absent
  EXPECT_EQ(procs[2].slurm->job, "");
  EXPECT_EQ(procs[2].slurm->account, "");
  EXPECT_EQ(procs[2].slurm->step, "0");
}

// The jobs a scheduler says hold a GPU: written as x_allocation, read back whole;
// absent (not read) differs from empty (read, nobody holds it); an entry without
// a job, or of another type, names no owner.
TEST(TraceSlurm, AllocationRoundTrip) {
  Sample held;
  held.t = 10;
  held.gpu = 0;
  held.allocations = std::vector<GpuAllocation>{
      {"slurm", "4242", "alice", "physics", "gpu", 1795200000.5, "", "", ""}};
  Sample free = held;
  free.allocations = std::vector<GpuAllocation>{};
  Sample unread = held;
  unread.allocations.reset();
  std::string text = kSlurmHeader + "\n";
  for (const auto* s : {&held, &free, &unread}) {
    append_sample_json(text, *s);
    text += "\n";
  }
  EXPECT_NE(text.find(R"("x_allocation": [{"scheduler": "slurm", "job": "4242", "user": )"
                      R"("alice", "account": "physics", "partition": "gpu", "since": )"
                      R"(1795200000.500}])"),
            std::string::npos)
      << text;
  auto trace = read_trace_string(text, "alloc.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  ASSERT_EQ(trace->samples.size(), 3u);
  EXPECT_EQ(trace->samples[0].allocations, held.allocations);
  EXPECT_EQ(trace->samples[1].allocations, free.allocations);
  EXPECT_FALSE(trace->samples[2].allocations.has_value());

  // A pod (the kubelet's pod-resources API) is named by namespace, pod and
  // container, and has no job: it is read back whole too.
  GpuAllocation pod;
  pod.scheduler = "kubernetes";
  pod.namespace_name = "ml";
  pod.pod = "idle-1";
  pod.container = "notebook";
  Sample kube = held;
  kube.allocations = std::vector<GpuAllocation>{pod};
  std::string kube_text = kSlurmHeader + "\n";
  append_sample_json(kube_text, kube);
  EXPECT_NE(kube_text.find(R"("x_allocation": [{"scheduler": "kubernetes", "namespace": "ml", )"
                           R"("pod": "idle-1", "container": "notebook"}])"),
            std::string::npos)
      << kube_text;
  auto kube_trace = read_trace_string(kube_text + "\n", "pods.jsonl");
  ASSERT_TRUE(kube_trace) << kube_trace.error().message;
  ASSERT_EQ(kube_trace->samples.size(), 1u);
  EXPECT_EQ(kube_trace->samples[0].allocations, kube.allocations);

  const std::string odd = kSlurmHeader + "\n" +
                          R"({"t": 1, "gpu": 0, "x_allocation": [{"user": "x"}, 7, )"
                          R"({"job": "9", "since": "soon"}]})" +
                          "\n" + R"({"t": 2, "gpu": 0, "x_allocation": "9"})" + "\n";
  auto read = read_trace_string(odd, "odd-alloc.jsonl");
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->samples.at(0).allocations->size(), 1u);
  EXPECT_EQ(read->samples[0].allocations->at(0).job, "9");
  EXPECT_FALSE(read->samples[0].allocations->at(0).since.has_value());
  EXPECT_FALSE(read->samples[1].allocations.has_value());
}

}  // namespace
}  // namespace gpulens
