// SPDX-License-Identifier: Apache-2.0
// The history's Slurm job table (store/slurm_jobs.*): a batch of ticks collapsed
// to a row per job, step and GPU; upserts that extend the span; retention with
// the rollups; a file of the previous schema migrated; the agent's writer.
#include "store/slurm_jobs.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "server_support.hpp"
#include "store/history_store.hpp"
#include "store/store_writer.hpp"
#include "store_support.hpp"
#include "wait_for.hpp"

namespace gpulens::store {
namespace {

constexpr double kSlurmT0 = 1795200000;

ProcessSample proc(std::uint32_t pid, const std::string& job, const std::string& step,
                   const std::string& user = "alice", const std::string& account = "physics") {
  ProcessSample p;
  p.pid = pid;
  SlurmJob j;
  j.job = job;
  j.step = step;
  j.user = user;
  j.account = account;
  j.from = "cgroup";
  if (job.empty()) j.unknown = "malformed_job_id";
  p.slurm = j;
  return p;
}

Sample tick(int gpu, double t, std::vector<ProcessSample> procs) {
  Sample s;
  s.gpu = gpu;
  s.t = t;
  s.procs = std::move(procs);
  return s;
}

StoredSample stored(int gpu, double t) {
  StoredSample s;
  s.gpu = gpu;
  s.t = t;
  s.values.set(Metric::GpuUtil, 50);
  s.state = "compute_bound";
  return s;
}

TEST(SlurmJobUses, ABatchOfTicksIsOneRowPerJobStepAndGpu) {
  SlurmJobUses uses;
  for (int i = 0; i < 5; ++i) {
    // Two ranks of job 100 on GPU 0, one on GPU 1; a process outside Slurm; one
    // of an unknown job; a GPU whose processes were not sampled.
    ProcessSample outside;
    outside.pid = 9;
    uses.add_samples({tick(0, kSlurmT0 + i, {proc(1, "100", "0"), proc(2, "100", "0"), outside}),
                      tick(1, kSlurmT0 + i, {proc(3, "100", "0"), proc(4, "", "")}),
                      Sample{kSlurmT0 + i, 2, {}, std::nullopt, {}}});
  }
  const auto rows = uses.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (SlurmJobUse{"100", "0", 0, "alice", "physics", kSlurmT0, kSlurmT0 + 4}));
  EXPECT_EQ(rows[1].gpu, 1);
  EXPECT_DOUBLE_EQ(rows[1].first_t, kSlurmT0);
  EXPECT_DOUBLE_EQ(rows[1].last_t, kSlurmT0 + 4);
}

TEST(SlurmJobUses, SpansGrowBothWaysAndTheLatestNamesWin) {
  SlurmJobUses uses;
  uses.add({"7", "batch", 0, "alice", "", kSlurmT0 + 10, kSlurmT0 + 20});
  uses.add({"7", "batch", 0, "", "physics", kSlurmT0 + 30, kSlurmT0 + 30});  // later, no user known
  uses.add(
      {"7", "batch", 0, "mallory", "chem", kSlurmT0 + 5, kSlurmT0 + 5});  // earlier: names ignored
  const auto rows = uses.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0],
            (SlurmJobUse{"7", "batch", 0, "alice", "physics", kSlurmT0 + 5, kSlurmT0 + 30}));
}

TEST(SlurmJobUses, TrimKeepsTheUsesSeenLast) {
  SlurmJobUses uses;
  for (int j = 1; j <= 10; ++j)
    uses.add({std::to_string(j), "0", 0, "", "", kSlurmT0, kSlurmT0 + j});
  uses.trim(3);
  ASSERT_EQ(uses.size(), 3u);
  const auto rows = uses.rows();
  EXPECT_EQ(rows[0].job, "10");
  EXPECT_EQ(rows[1].job, "8");
  EXPECT_EQ(rows[2].job, "9");
}

// A history file in a scratch directory, opened by open().
class SlurmStoreTest : public gpulens::testing::StoreTest {};

TEST_F(SlurmStoreTest, UpsertsExtendTheRowAcrossBatches) {
  auto store = open();
  ASSERT_TRUE(
      store.write({stored(0, kSlurmT0)}, {}, {{"42", "0", 0, "alice", "", kSlurmT0, kSlurmT0}})
          .ok());
  ASSERT_TRUE(store
                  .write({stored(0, kSlurmT0 + 1)}, {},
                         {{"42", "0", 0, "", "physics", kSlurmT0 + 1, kSlurmT0 + 60}})
                  .ok());
  // Slurm's "no value" id and a non-number never reach the table.
  ASSERT_TRUE(store
                  .write({}, {},
                         {{"4294967294", "0", 0, "", "", kSlurmT0, kSlurmT0},
                          {"12abc", "0", 0, "", "", kSlurmT0, kSlurmT0},
                          {"44", std::string(17, '9'), 0, "", "", kSlurmT0, kSlurmT0},
                          {"43", "0", 1, "bob", "", kSlurmT0 + 2, kSlurmT0 + 3}})
                  .ok());
  auto job = read_slurm_job(store.db(), "42");
  ASSERT_TRUE(job.ok()) << job.error().message;
  ASSERT_EQ(job->size(), 1u);
  EXPECT_EQ((*job)[0], (SlurmJobUse{"42", "0", 0, "alice", "physics", kSlurmT0, kSlurmT0 + 60}));
  EXPECT_EQ(*store.db().query_int("SELECT COUNT(*) FROM slurm_jobs"), 2);
  // A replayed recording may carry any name: cut to what the attribution accepts.
  ASSERT_TRUE(
      store.write({}, {}, {{"45", "0", 0, std::string(300, 'u'), "", kSlurmT0, kSlurmT0}}).ok());
  auto long_name = read_slurm_job(store.db(), "45");
  ASSERT_TRUE(long_name.ok() && long_name->size() == 1u);
  EXPECT_EQ((*long_name)[0].user.size(), 128u);
  auto latest = latest_slurm_jobs(store.db(), 5);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(*latest, (std::vector<std::string>{"42", "43", "45"}));  // by the last tick seen
  auto none = read_slurm_job(store.db(), "41");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_F(SlurmStoreTest, JobsAreKeptAsLongAsTheRollups) {
  options_.raw_retention_s = 3600;
  options_.rollup_retention_s = 86400;
  auto store = open();
  ASSERT_TRUE(
      store.write({stored(0, kSlurmT0)}, {}, {{"1", "0", 0, "", "", kSlurmT0, kSlurmT0 + 100}})
          .ok());
  ASSERT_TRUE(store.write({}, {}, {{"2", "0", 0, "", "", kSlurmT0, kSlurmT0 + 7200}}).ok());
  // A day after job 1 ended, job 2 a little less.
  ASSERT_TRUE(store.write({stored(0, kSlurmT0 + 86400 + 101)}, {}).ok());
  ASSERT_TRUE(store.enforce_limits().ok());
  auto one = read_slurm_job(store.db(), "1");
  auto two = read_slurm_job(store.db(), "2");
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_TRUE(one->empty());
  EXPECT_EQ(two->size(), 1u);
}

TEST_F(SlurmStoreTest, AFileOfSchemaOneIsMigratedAndKeepsItsSamples) {
  {  // What gpulens wrote before the Slurm table: migration 1 and its columns.
    auto db = Database::open(options_.path, false, true);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec(migrations()[0]).ok());
    ASSERT_TRUE(db->exec("ALTER TABLE samples ADD COLUMN gpu_util INTEGER").ok());
    ASSERT_TRUE(db->exec("INSERT INTO metric_columns VALUES ('gpu_util', 100.0)").ok());
    ASSERT_TRUE(
        db->exec(fmt::format("INSERT INTO samples (t_ms, gpu, gpu_util) VALUES ({}, 0, 4200)",
                             static_cast<std::int64_t>(kSlurmT0 * 1000)))
            .ok());
    ASSERT_TRUE(db->exec("PRAGMA user_version = 1").ok());
  }
  ASSERT_GE(kSchemaVersion, 2);
  auto store = open();
  EXPECT_EQ(*store.db().query_int("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(*store.db().query_int("SELECT gpu_util FROM samples"), 4200);
  ASSERT_TRUE(store.write({}, {}, {{"5", "batch", 0, "", "", kSlurmT0, kSlurmT0}}).ok());
  EXPECT_EQ(*store.db().query_int("SELECT COUNT(*) FROM slurm_jobs"), 1);
  // Reopening a migrated file changes nothing.
  auto again = open();
  EXPECT_EQ(*again.db().query_int("SELECT COUNT(*) FROM slurm_jobs"), 1);
}

using gpulens::testing::wait_for;

// Uses pushed while the history cannot be opened wait, merged, and are written
// once it can.
TEST(SlurmStoreWriter, KeepsUsesWhileTheFileCannotBeOpened) {
  auto blocked = gpulens::testing::blocked_history("slurm-writer");
  StoreWriter writer(blocked.store, blocked.writer, [](bool, const std::string&) {});
  writer.start(TraceHeader{});
  SlurmJobUses first;
  first.add({"9", "0", 0, "alice", "", kSlurmT0, kSlurmT0 + 1});
  writer.push({stored(0, kSlurmT0)}, {}, first);
  ASSERT_TRUE(wait_for([&] { return !writer.status().error.empty(); }));
  SlurmJobUses second;
  second.add({"9", "0", 0, "", "", kSlurmT0 + 2, kSlurmT0 + 5});
  writer.push({stored(0, kSlurmT0 + 5)}, {}, second);
  std::filesystem::remove(blocked.blocker);
  ASSERT_TRUE(wait_for([&] { return writer.status().samples_written == 2; }));
  writer.stop();
  auto store = HistoryStore::open(blocked.store);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto job = read_slurm_job(store->db(), "9");
  ASSERT_TRUE(job.ok());
  ASSERT_EQ(job->size(), 1u);
  EXPECT_EQ((*job)[0], (SlurmJobUse{"9", "0", 0, "alice", "", kSlurmT0, kSlurmT0 + 5}));
}

}  // namespace
}  // namespace gpulens::store
