// SPDX-License-Identifier: Apache-2.0
#include "store/store_writer.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "server_support.hpp"
#include "store/history_query.hpp"
#include "wait_for.hpp"

namespace gpulens::store {
namespace {

StoredSample sample(int gpu, double t) {
  StoredSample s;
  s.gpu = gpu;
  s.t = t;
  s.values.set(Metric::GpuUtil, 50);
  s.values.set(Metric::PowerW, 300);
  s.state = "compute_bound";
  return s;
}

struct Logs {
  std::mutex mutex;
  std::vector<std::pair<bool, std::string>> lines;
  StoreWriter::Log sink() {
    return [this](bool error, const std::string& message) {
      std::lock_guard lock(mutex);
      lines.emplace_back(error, message);
    };
  }
  bool any_error_containing(const std::string& text) {
    std::lock_guard lock(mutex);
    for (const auto& [error, line] : lines) {
      if (error && line.find(text) != std::string::npos) return true;
    }
    return false;
  }
};

using gpulens::testing::wait_for;

WriterOptions fast() {
  WriterOptions w;
  w.flush_interval_s = 0.02;
  w.retry_interval_s = 0.05;
  return w;
}

TEST(StoreWriter, WritesInTheBackgroundAndFlushesOnStop) {
  StoreOptions o;
  o.path = gpulens::testing::scratch_dir("writer") + "/h.db";
  Logs logs;
  {
    StoreWriter w(o, fast(), logs.sink());
    w.start(TraceHeader{});
    for (int i = 0; i < 100; ++i) w.push({sample(0, 1000 + i)}, {});
    w.stop();
    const auto st = w.status();
    EXPECT_TRUE(st.healthy) << st.error;
    EXPECT_EQ(st.samples_written, 100u);
  }
  HistoryReader reader(o.path);
  auto range = reader.range();
  ASSERT_TRUE(range.ok());
  EXPECT_DOUBLE_EQ(*range->raw_newest, 1099);
  // Stopping closes the last minute too.
  EXPECT_DOUBLE_EQ(*range->rollup_newest, 1080);
}

TEST(StoreWriter, AnUnwritableDirectoryIsReportedAndNothingStops) {
  StoreOptions o;
  o.path = "/proc/gpulens-not-writable/h.db";
  Logs logs;
  StoreWriter w(o, fast(), logs.sink());
  w.start(TraceHeader{});
  for (int i = 0; i < 10; ++i) w.push({sample(0, i)}, {});
  EXPECT_TRUE(wait_for([&] { return !w.status().error.empty(); }));
  const auto st = w.status();
  EXPECT_FALSE(st.healthy);
  EXPECT_FALSE(st.open);
  EXPECT_NE(st.error.find("/proc/gpulens-not-writable"), std::string::npos) << st.error;
  EXPECT_TRUE(logs.any_error_containing("live data is still served"));
  w.stop();
}

TEST(StoreWriter, AFullDatabaseIsReportedThenRecovers) {
  StoreOptions o;
  o.path = gpulens::testing::scratch_dir("writer-full") + "/h.db";
  // Room for a few hundred rows only; raw samples older than 10 s go, so the
  // writer gets space back as time moves on.
  o.max_bytes = 96 * 1024;
  o.raw_retention_s = 10;
  Logs logs;
  StoreWriter w(o, fast(), logs.sink());
  w.start(TraceHeader{});
  // One huge batch cannot fit even after freeing space: a clear error.
  std::vector<StoredSample> huge;
  for (int i = 0; i < 20000; ++i) huge.push_back(sample(i % 8, 1000 + i / 8.0));
  w.push(huge, {});
  EXPECT_TRUE(wait_for([&] { return w.status().write_errors > 0; }));
  EXPECT_TRUE(logs.any_error_containing("full")) << w.status().error;
  EXPECT_FALSE(w.status().healthy);
  w.stop();
}

// kill -9 while a writer commits batch after batch: the file reopens without
// corruption and holds every batch up to about the last second.
TEST(StoreWriter, SurvivesKillNineWhileWriting) {
  StoreOptions o;
  o.path = gpulens::testing::scratch_dir("writer-crash") + "/h.db";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto store = HistoryStore::open(o);
    if (!store) _exit(2);
    for (int batch = 0; batch < 1000000; ++batch) {
      std::vector<StoredSample> rows;
      for (int i = 0; i < 50; ++i) rows.push_back(sample(i % 4, batch * 100.0 + i));
      if (!store->write(rows, {})) _exit(3);
      (void)store->roll_up_closed();
    }
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer ended before the kill: " << status;

  auto store = HistoryStore::open(o);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto check = store->db().prepare("PRAGMA integrity_check");
  ASSERT_TRUE(check.ok());
  ASSERT_TRUE(*check->step());
  EXPECT_EQ(check->column_text(0), "ok");
  // Whole batches only: a transaction is all or nothing.
  const auto rows = *store->db().query_int("SELECT COUNT(*) FROM samples");
  EXPECT_GT(rows, 0);
  EXPECT_EQ(rows % 50, 0);
  // And writing goes on where it stopped.
  EXPECT_TRUE(store->write({sample(0, 1e9)}, {}).ok());
}

}  // namespace
}  // namespace gpulens::store
