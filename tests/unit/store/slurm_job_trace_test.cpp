// SPDX-License-Identifier: Apache-2.0
// `gpulens report --slurm-job ID`: a synthetic history of four GPUs with two jobs
// on different GPUs at overlapping times; the verdict of each covers only its
// GPUs and its span, from raw samples or, once those are dropped, whole minutes;
// the errors say what the history holds.
#include "store/slurm_job_trace.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "core/duration.hpp"
#include "store/history_store.hpp"
#include "store_support.hpp"

namespace gpulens::store {
namespace {

using gpulens::testing::run_gpulens;

constexpr double kJobT0 = 1795200000;  // 2026-11-20T18:40:00Z: minutes start on it

StoredSample job_sample(int gpu, double t, double sm) {
  StoredSample s;
  s.gpu = gpu;
  s.t = t;
  s.values.set(Metric::GpuUtil, sm > 0 ? 100.0 : 0.0);
  s.values.set(Metric::SmActive, sm);
  s.values.set(Metric::TensorActive, sm / 2);
  s.values.set(Metric::PowerW, 100 + 3 * sm);
  s.values.set(Metric::MemUsedMib, sm > 0 ? 40000.0 : 500.0);
  s.state = sm > 0 ? "compute_bound" : "idle";
  return s;
}

// Job 100 (steps 0 and batch) on GPUs 0 and 1 over [kJobT0, kJobT0+119], SMs at 90 %;
// job 200 on GPUs 2 and 3 over [kJobT0+60, kJobT0+179], SMs at 40 %; idle otherwise.
// 240 s of 1 Hz samples of every GPU.
class SlurmJobReport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = gpulens::testing::scratch_dir(
        "sj-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    path_ = dir_ + "/history.db";
  }

  void write(double raw_retention_s = 48 * 3600.0, std::vector<SlurmJobUse> extra = {}) {
    std::vector<StoredSample> batch;
    SlurmJobUses uses;
    for (int i = 0; i < 240; ++i) {
      const double t = kJobT0 + i;
      const bool a = i < 120;
      const bool b = i >= 60 && i < 180;
      for (int g = 0; g < 2; ++g) {
        batch.push_back(job_sample(g, t, a ? 90 : 0));
        if (a) uses.add({"100", "0", g, "alice", "physics", t, t});
      }
      if (a) uses.add({"100", "batch", 0, "alice", "physics", t, t});
      for (int g = 2; g < 4; ++g) {
        batch.push_back(job_sample(g, t, b ? 40 : 0));
        if (b) uses.add({"200", "0", g, "bob", "chem", t, t});
      }
    }
    for (const auto& u : extra) uses.add(u);
    gpulens::testing::write_history(path_, gpulens::testing::h100_history_header(4), batch,
                                    uses.rows(), raw_retention_s);
  }

  nlohmann::json report_json(const std::string& job) {
    const auto r =
        run_gpulens(fmt::format("report --format json --db '{}' --slurm-job {}", path_, job));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  }

  std::string dir_;
  std::string path_;
};

TEST_F(SlurmJobReport, TheTraceHoldsOnlyTheJobsGpusAndSpan) {
  write();
  auto job = load_slurm_job_trace(path_, "100");
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(job->steps, (std::vector<std::string>{"0", "batch"}));
  EXPECT_EQ(job->user, "alice");
  EXPECT_EQ(job->account, "physics");
  EXPECT_DOUBLE_EQ(job->first_t, kJobT0);
  EXPECT_DOUBLE_EQ(job->last_t, kJobT0 + 119);
  EXPECT_TRUE(job->shared.empty());
  const Trace& t = job->history.trace;
  ASSERT_EQ(t.samples.size(), 240u);
  for (const auto& s : t.samples) {
    EXPECT_TRUE(s.gpu == 0 || s.gpu == 1) << s.gpu;
    EXPECT_GE(s.t, kJobT0);
    EXPECT_LE(s.t, kJobT0 + 119);
  }
  ASSERT_EQ(t.header.devices.size(), 2u);
  EXPECT_EQ(job->history.source, "raw");
}

TEST_F(SlurmJobReport, EachJobsVerdictCoversItsOwnGpusAndTime) {
  write();
  const auto a = report_json("100");
  const auto b = report_json("200");
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  for (const auto& [j, gpus, sm, job] : {std::tuple{a, std::vector<int>{0, 1}, 0.9, "100"},
                                         std::tuple{b, std::vector<int>{2, 3}, 0.4, "200"}}) {
    ASSERT_EQ(j["gpus"].size(), 2u);
    EXPECT_EQ(j["gpus"][0]["index"], gpus[0]);
    EXPECT_EQ(j["gpus"][1]["index"], gpus[1]);
    EXPECT_NEAR(j["funnel"]["sm_active"].get<double>(), sm, 0.001) << job;
    EXPECT_NEAR(j["duration_s"].get<double>(), 120, 1.01) << job;
    EXPECT_EQ(j["source"]["kind"], "slurm_job");
    EXPECT_EQ(j["source"]["db"], path_);
    EXPECT_EQ(j["source"]["samples"], "raw");
    EXPECT_EQ(j["source"]["slurm"]["job"], job);
    EXPECT_EQ(j["source"]["slurm"]["gpus"].get<std::vector<int>>(), gpus);
  }
  EXPECT_EQ(a["source"]["slurm"]["user"], "alice");
  EXPECT_EQ(b["source"]["slurm"]["account"], "chem");
  EXPECT_DOUBLE_EQ(b["source"]["from"].get<double>(), kJobT0 + 60);
  EXPECT_DOUBLE_EQ(b["source"]["to"].get<double>(), kJobT0 + 179);
  EXPECT_EQ(a["source"]["slurm"]["uses"].size(), 3u);  // GPU 0 steps 0 and batch, GPU 1 step 0
}

TEST_F(SlurmJobReport, TextAndHtmlNameTheJob) {
  write();
  const auto text = run_gpulens(fmt::format("report --db '{}' --slurm-job 0100", path_));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(text.out.starts_with("gpulens: Slurm job 100 on node-7, "))
      << text.out.substr(0, 200);
  EXPECT_NE(text.out.find("  slurm    job 100, user alice, account physics, steps 0, batch\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(fmt::format("  source   {}, {} to {} (raw samples)", path_,
                                      format_utc_time(kJobT0), format_utc_time(kJobT0 + 119))),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("note: Slurm job 100: GPUs 0, 1 from"), std::string::npos) << text.out;

  const std::string html = dir_ + "/job.html";
  const auto page =
      run_gpulens(fmt::format("report --db '{}' --slurm-job 200 -o '{}'", path_, html));
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_NE(
      gpulens::testing::read_file(html).find("<title>gpulens report: Slurm job 200 on node-7"),
      std::string::npos);
}

TEST_F(SlurmJobReport, AnotherJobOnTheSameGpuIsNamed) {
  write(48 * 3600.0, {{"300", "0", 1, "carol", "", kJobT0 + 100, kJobT0 + 150}});
  auto job = load_slurm_job_trace(path_, "100");
  ASSERT_TRUE(job.ok()) << job.error().message;
  ASSERT_EQ(job->shared.size(), 1u);
  EXPECT_EQ(job->shared[0].job, "300");
  bool named = false;
  for (const auto& w : job->history.trace.warnings) {
    named = named || w.starts_with("GPU 1 also ran Slurm job 300 (step 0) from");
  }
  EXPECT_TRUE(named);
  // Job 300 holds GPU 1 only: GPU 0 is none of its.
  auto other = load_slurm_job_trace(path_, "300");
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ(other->gpus, (std::vector<int>{1}));
}

TEST_F(SlurmJobReport, RolledUpJobsAreJudgedFromWholeMinutes) {
  write(/*raw_retention_s=*/60);  // raw samples before kJobT0+179 are gone
  auto job = load_slurm_job_trace(path_, "100");
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->history.source, "rollup_1m");
  // Its two minutes on its two GPUs, the last minute whole.
  EXPECT_EQ(job->history.trace.samples.size(), 4u);
  const auto text = run_gpulens(fmt::format("report --db '{}' --slurm-job 100", path_));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("(1-minute rollups: raw samples were no longer kept)"), std::string::npos)
      << text.out;
  const auto j = report_json("100");
  EXPECT_EQ(j["source"]["samples"], "rollup_1m");
  EXPECT_NEAR(j["funnel"]["sm_active"].get<double>(), 0.9, 0.001);
}

TEST_F(SlurmJobReport, ErrorsSayWhatTheHistoryHolds) {
  write();
  auto unknown = load_slurm_job_trace(path_, "999");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(
      unknown.error().message.find(fmt::format(
          "no Slurm job 999 in the history at {} (jobs seen, newest first: 200, 100)", path_)),
      std::string::npos)
      << unknown.error().message;

  {  // The size bound dropped the samples of job 100's time, its row is left.
    auto db = Database::open(path_, false, false);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec(fmt::format("DELETE FROM samples WHERE t_ms < {0}; DELETE FROM rollup_1m "
                                     "WHERE minute < {1}",
                                     static_cast<std::int64_t>(kJobT0 + 180) * 1000,
                                     static_cast<std::int64_t>(kJobT0 + 180)))
                    .ok());
  }
  auto gone = load_slurm_job_trace(path_, "100");
  ASSERT_FALSE(gone.ok());
  const std::string& m = gone.error().message;
  EXPECT_NE(m.find(fmt::format("Slurm job 100 held GPUs 0, 1 from {} to {}, but the history at {} "
                               "no longer holds samples of that time (it holds raw samples from {}",
                               format_utc_time(kJobT0), format_utc_time(kJobT0 + 119), path_,
                               format_utc_time(kJobT0 + 180))),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("--history-max-size"), std::string::npos) << m;

  const auto cli = run_gpulens(fmt::format("report --db '{}' --slurm-job 999", path_));
  EXPECT_EQ(cli.exit_code, 1);
  EXPECT_NE(cli.err.find("gpulens report: no Slurm job 999"), std::string::npos) << cli.err;
}

TEST_F(SlurmJobReport, AHistoryWithoutJobsOrOfAnOlderSchemaSaysSo) {
  {
    StoreOptions o;
    o.path = path_;
    auto store = HistoryStore::open(o);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(store->write({job_sample(0, kJobT0, 0)}, {}).ok());
  }
  auto none = load_slurm_job_trace(path_, "5");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("it has seen no Slurm job"), std::string::npos)
      << none.error().message;

  {  // As an agent of schema 1 left it: the report reads it, never migrates it.
    auto db = Database::open(path_, false, false);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec("DROP TABLE slurm_jobs; PRAGMA user_version = 1").ok());
  }
  auto old = load_slurm_job_trace(path_, "5");
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message.find("keeps no Slurm jobs: an older gpulens wrote it (history "
                                     "schema 1"),
            std::string::npos)
      << old.error().message;

  auto missing = load_slurm_job_trace(dir_ + "/absent.db", "5");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no history database at " + dir_ + "/absent.db"),
            std::string::npos);
}

// Job 400 holds GPUs 2 and 3 from its prolog to its epilog, [kJobT0+190,
// kJobT0+229], and no process of it ever runs there: the history has its
// allocation alone, and the verdict says it held them idle, and the cost.
TEST_F(SlurmJobReport, AJobThatHeldGpusAndRanNothingIsJudged) {
  std::vector<SlurmJobUse> held;
  for (int g = 2; g < 4; ++g) {
    held.push_back(
        {"400", std::string(kAllocationStep), g, "dave", "idlers", kJobT0 + 190, kJobT0 + 229});
  }
  write(48 * 3600.0, held);
  auto job = load_slurm_job_trace(path_, "400");
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_TRUE(job->allocated);
  EXPECT_TRUE(job->steps.empty());
  EXPECT_EQ(job->gpus, (std::vector<int>{2, 3}));
  for (const auto& s : job->history.trace.samples) {
    ASSERT_TRUE(s.allocations.has_value()) << s.t;
    EXPECT_EQ(s.allocations->at(0).job, "400");
  }
  const auto j = report_json("400");
  ASSERT_FALSE(j.is_null());
  EXPECT_NEAR(j["funnel"]["allocated"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(j["funnel"]["kernel_active"].get<double>(), 0.0, 1e-9);
  EXPECT_EQ(j["source"]["slurm"]["allocated"], true);
  const std::string headline = j["headline"].get<std::string>();
  EXPECT_TRUE(headline.starts_with("Held 2 GPUs for 40.0 s and ran nothing on them: $"))
      << headline;
  EXPECT_NE(headline.find("paid for idle GPUs"), std::string::npos) << headline;

  const auto text = run_gpulens(fmt::format("report --db '{}' --slurm-job 400", path_));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("job 400, user dave, account idlers, no process of it seen on a GPU, "
                          "GPUs from its prolog's allocation"),
            std::string::npos)
      << text.out;
}

// The same job seen by a process too: its allocation and its steps both count,
// and a job that ran without an allocation entry is judged as before.
TEST_F(SlurmJobReport, AllocationRowsFromSamplesAreKept) {
  Sample s;
  s.t = kJobT0;
  s.gpu = 1;
  s.allocations =
      std::vector<GpuAllocation>{{"slurm", "500", "erin", "bio", "gpu", kJobT0 - 5, "", "", ""}};
  s.procs = std::vector<ProcessSample>{};
  SlurmJobUses uses;
  uses.add_samples({s});
  const auto rows = uses.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].job, "500");
  EXPECT_EQ(rows[0].step, kAllocationStep);
  EXPECT_EQ(rows[0].gpu, 1);
  EXPECT_EQ(rows[0].account, "bio");
}

}  // namespace
}  // namespace gpulens::store
