// SPDX-License-Identifier: Apache-2.0
// A Slurm job over several nodes from its parts: the GPUs numbered node after
// node, the samples in one timeline, the names and span joined; a file that is no
// part, another job's part or a node given twice is refused with the file named.
#include "cli/slurm_job_parts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace gpulens::cli {
namespace {

class SlurmJobParts : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::path(::testing::TempDir()) /
            ("gpulens-parts-" + std::to_string(getpid())))
               .string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A node's part of `job` as the agent serves it: two GPUs, samples at t0, t0+1.
  std::string part(const std::string& node, const std::string& job, double t0,
                   bool with_header = true) {
    nlohmann::json h = {{"format", "gpu-trace"}, {"version", 1}, {"host", node}, {"interval_s", 1}};
    h["devices"] = {{{"index", 0}, {"name", "NVIDIA H100 80GB HBM3"}},
                    {{"index", 1}, {"name", "NVIDIA H100 80GB HBM3"}}};
    if (with_header) {
      h["x_slurm_job"] = {{"node", node},     {"job", job},         {"user", "alice"},
                          {"account", "phy"}, {"steps", {"0"}},     {"gpus", {0, 1}},
                          {"from", t0},       {"to", t0 + 1},       {"allocated", true},
                          {"samples", "raw"}, {"notes", {"a note"}}};
    }
    const std::string path = dir_ + "/" + node + "-" + job + ".jsonl";
    std::ofstream f(path);
    f << h.dump() << "\n";
    for (int i = 0; i < 2; ++i) {
      for (int g = 0; g < 2; ++g) {
        f << nlohmann::json{{"t", t0 + i}, {"gpu", g}, {"gpu_util", 100}}.dump() << "\n";
      }
    }
    return path;
  }

  std::string dir_;
};

TEST_F(SlurmJobParts, NodesAreNumberedOneAfterTheOther) {
  auto job = load_slurm_job_parts({part("node-a", "77", 100), part("node-b", "77", 99.5)}, "77");
  ASSERT_TRUE(job) << job.error().message;
  const Trace& t = job->history.trace;
  EXPECT_EQ(t.header.host, "node-a, node-b");
  ASSERT_EQ(t.header.devices.size(), 4u);
  EXPECT_EQ(t.header.devices[3].index, 3);
  EXPECT_EQ(t.header.devices[3].extra["x_node"], "node-b");
  EXPECT_EQ(t.header.devices[3].extra["x_node_gpu"], 1);
  EXPECT_EQ(job->gpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(job->node_parts,
            (std::vector<std::string>{"node-a GPUs 0, 1", "node-b GPUs 2, 3 (its 0, 1)"}));
  EXPECT_DOUBLE_EQ(job->first_t, 99.5);
  EXPECT_DOUBLE_EQ(job->last_t, 101);
  EXPECT_TRUE(job->allocated);
  EXPECT_EQ(job->user, "alice");
  ASSERT_EQ(t.samples.size(), 8u);
  for (std::size_t i = 1; i < t.samples.size(); ++i) {
    EXPECT_LE(t.samples[i - 1].t, t.samples[i].t);  // one timeline
  }
  EXPECT_EQ(t.samples.front().gpu, 2);  // node-b's first sample is the earliest
}

TEST_F(SlurmJobParts, WhatIsNoPartOfTheJobIsRefused) {
  const std::string a = part("node-a", "77", 100);
  auto other = load_slurm_job_parts({a, part("node-b", "78", 100)}, "77");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("node node-b's part of Slurm job 78, not of 77"),
            std::string::npos)
      << other.error().message;
  auto twice = load_slurm_job_parts({a, a}, "77");
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("node node-a is given twice"), std::string::npos);
  auto plain = load_slurm_job_parts({part("node-c", "77", 100, false)}, "77");
  ASSERT_FALSE(plain);
  EXPECT_NE(plain.error().message.find("not a node's part of a Slurm job"), std::string::npos);
  auto missing = load_slurm_job_parts({dir_ + "/nothing.jsonl"}, "77");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("nothing.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::cli
