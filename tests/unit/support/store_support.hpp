// SPDX-License-Identifier: Apache-2.0
#pragma once
// The history store's fixture, shared by the writer's tests (store/history_store,
// slurm_jobs, pod_uses) and the reader's (store/history_query, store/history_timeline):
// a scratch directory and a history file in it, and a stored sample built in one
// line; and a whole synthetic history written at once, for the tests that read one
// back as a trace (store/history_trace, store/slurm_job_trace).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "server_support.hpp"
#include "store/history_store.hpp"
#include "store/store_writer.hpp"

namespace gpulens::testing {

inline store::StoredSample stored_sample(int gpu, double t, double util, double sm,
                                         const std::string& state) {
  store::StoredSample s;
  s.gpu = gpu;
  s.t = t;
  s.values.set(Metric::GpuUtil, util);
  s.values.set(Metric::SmActive, sm);
  s.values.set(Metric::PowerW, 100 + util);
  s.values.set(Metric::EnergyMj, 123456789012.0);
  s.state = state;
  return s;
}

// The devices of a synthetic history: `count` H100s, GPU-0, GPU-1, ..., on node-7
// at 1 Hz.
inline TraceHeader h100_history_header(int count) {
  TraceHeader h;
  h.host = "node-7";
  h.interval_s = 1.0;
  for (int i = 0; i < count; ++i) {
    DeviceInfo d;
    d.index = i;
    d.uuid = "GPU-" + std::to_string(i);
    d.name = "NVIDIA H100 80GB HBM3";
    d.sm_count = 132;
    d.mem_total_mib = 81559;
    h.devices.push_back(d);
  }
  return h;
}

// Writes a new history at `path` in one batch, then rolls every minute up and drops
// what is past `raw_retention_s`, as the agent would have over that time.
inline void write_history(const std::string& path, const TraceHeader& header,
                          const std::vector<store::StoredSample>& samples,
                          const std::vector<store::SlurmJobUse>& slurm, double raw_retention_s) {
  store::StoreOptions o;
  o.path = path;
  o.raw_retention_s = raw_retention_s;
  auto st = store::HistoryStore::open(o);
  ASSERT_TRUE(st.ok()) << st.error().message;
  ASSERT_TRUE(st->write_devices(header).ok());
  ASSERT_TRUE(st->write(samples, {}, slurm).ok());
  ASSERT_TRUE(st->roll_up_closed(/*close_all=*/true).ok());
  ASSERT_TRUE(st->enforce_limits().ok());
}

// A history the writer cannot open until the test removes `blocker`: a file where
// the history's directory should be. The writer's flushes and retries come every
// few tens of milliseconds, so that the test waits little for either.
struct BlockedHistory {
  std::string blocker;
  store::StoreOptions store;
  store::WriterOptions writer;
};

inline BlockedHistory blocked_history(const std::string& name) {
  BlockedHistory b;
  b.blocker = scratch_dir(name) + "/state";
  std::ofstream(b.blocker) << "a file where the history's directory should be";
  b.store.path = b.blocker + "/history.db";
  b.writer.flush_interval_s = 0.02;
  b.writer.retry_interval_s = 0.05;
  return b;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_dir("store");
    options_.path = dir_ + "/history.db";
  }
  store::HistoryStore open() {
    auto s = store::HistoryStore::open(options_);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return std::move(*s);
  }
  std::string dir_;
  store::StoreOptions options_;
};

}  // namespace gpulens::testing
