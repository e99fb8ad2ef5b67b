// SPDX-License-Identifier: Apache-2.0
// GET /api/v1/slurm/job (src/exposition/api_slurm.cpp) on a running server: this
// node's part of a Slurm job as JSON lines, its header naming the node and the
// job, and the answers when the history is off, the id is not one or the job
// held no GPU here.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "http_test_client.hpp"
#include "server_support.hpp"
#include "store/history_store.hpp"
#include "store/slurm_jobs.hpp"

namespace gpulens::exposition {
namespace {

constexpr double kSlurmPartT0 = 1795200000;

// A history of two GPUs over 60 s at 1 Hz; job 77 (user alice, account physics,
// step 0) held GPU 1 over its first 30 s.
std::string slurm_part_history(const std::string& name) {
  const std::string path = gpulens::testing::scratch_dir(name) + "/history.db";
  store::StoreOptions o;
  o.path = path;
  auto st = store::HistoryStore::open(o);
  EXPECT_TRUE(st.ok()) << st.error().message;
  if (!st.ok()) return path;
  TraceHeader h;
  h.host = "recorded-host";
  h.interval_s = 1.0;
  for (int i = 0; i < 2; ++i) {
    DeviceInfo d;
    d.index = i;
    d.uuid = fmt::format("GPU-{}", i);
    d.name = "NVIDIA H100 80GB HBM3";
    h.devices.push_back(d);
  }
  EXPECT_TRUE(st->write_devices(h).ok());
  std::vector<store::StoredSample> rows;
  store::SlurmJobUses uses;
  for (int i = 0; i < 60; ++i) {
    const double t = kSlurmPartT0 + i;
    for (int g = 0; g < 2; ++g) {
      store::StoredSample s;
      s.gpu = g;
      s.t = t;
      s.values.set(Metric::SmActive, g == 1 && i < 30 ? 80.0 : 0.0);
      s.state = g == 1 && i < 30 ? "compute_bound" : "idle";
      rows.push_back(s);
    }
    if (i < 30) uses.add({"77", "0", 1, "alice", "physics", t, t});
  }
  EXPECT_TRUE(st->write(rows, {}, uses.rows()).ok());
  return path;
}

TEST(SlurmJobPart, TheNodesPartIsTheJobsSamplesUnderAHeaderNamingIt) {
  gpulens::testing::RunningServer r({}, slurm_part_history("slurm-part"));
  ASSERT_TRUE(r.server) << r.error;
  auto res = r.client().Get("/api/v1/slurm/job?id=77");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/x-ndjson");
  EXPECT_EQ(res->get_header_value("Cache-Control"), "no-store");
  std::istringstream lines(res->body);
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  const auto header = nlohmann::json::parse(line);
  ASSERT_TRUE(header.contains("x_slurm_job")) << line;
  const auto& job = header["x_slurm_job"];
  EXPECT_EQ(job["node"], "node-17");  // the agent's host name, as the snapshot has it
  EXPECT_EQ(header["host"], "node-17");
  EXPECT_EQ(job["job"], "77");
  EXPECT_EQ(job["user"], "alice");
  EXPECT_EQ(job["account"], "physics");
  EXPECT_EQ(job["steps"], nlohmann::json::array({"0"}));
  EXPECT_EQ(job["gpus"], nlohmann::json::array({1}));
  EXPECT_EQ(job["from"], kSlurmPartT0);
  EXPECT_EQ(job["to"], kSlurmPartT0 + 29);
  EXPECT_EQ(job["samples"], "raw");
  int samples = 0;
  while (std::getline(lines, line)) {
    const auto s = nlohmann::json::parse(line);
    EXPECT_EQ(s["gpu"], 1) << line;
    EXPECT_GE(s["t"].get<double>(), kSlurmPartT0) << line;
    EXPECT_LE(s["t"].get<double>(), kSlurmPartT0 + 29) << line;
    ++samples;
  }
  EXPECT_EQ(samples, 30);
}

// A job asked of every node of a job over several: where it held no GPU, 404
// with the history's words; an id that is not a Slurm job id is 400.
TEST(SlurmJobPart, UnknownJobsAre404AndBadIds400) {
  gpulens::testing::RunningServer r({}, slurm_part_history("slurm-part-ids"));
  ASSERT_TRUE(r.server) << r.error;
  auto c = r.client();
  auto unknown = c.Get("/api/v1/slurm/job?id=78");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404) << unknown->body;
  const auto why = nlohmann::json::parse(unknown->body);
  EXPECT_TRUE(why["error"].get<std::string>().starts_with("no Slurm job ")) << unknown->body;
  for (const char* bad : {"/api/v1/slurm/job", "/api/v1/slurm/job?id=abc",
                          "/api/v1/slurm/job?id=42.batch", "/api/v1/slurm/job?id=12345678901"}) {
    auto res = c.Get(bad);
    ASSERT_TRUE(res) << bad;
    EXPECT_EQ(res->status, 400) << bad << ": " << res->body;
    EXPECT_NE(res->body.find("id must be a Slurm job id"), std::string::npos) << res->body;
  }
}

TEST(SlurmJobPart, WithoutHistoryThereIsNoPart) {
  gpulens::testing::RunningServer r({});
  ASSERT_TRUE(r.server) << r.error;
  auto res = r.client().Get("/api/v1/slurm/job?id=77");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(nlohmann::json::parse(res->body)["error"], "history is disabled (--no-history)");
}

}  // namespace
}  // namespace gpulens::exposition
