// SPDX-License-Identifier: Apache-2.0
#pragma once
// The history store's fixture, shared by the writer's tests (store/history_store)
// and the reader's (store/history_query, store/history_timeline): a scratch
// directory and a history file in it, and a stored sample built in one line.
#include <gtest/gtest.h>

#include <string>

#include "server_support.hpp"
#include "store/history_store.hpp"

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
