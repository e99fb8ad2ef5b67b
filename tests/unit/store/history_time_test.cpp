// SPDX-License-Identifier: Apache-2.0
// Where the agent keeps its history unless told otherwise (store/history_time.hpp);
// the times people type to read it back are tested in duration_test.cpp.
#include "store/history_time.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace gpulens::store {
namespace {

TEST(HistoryPath, IsWhereTheAgentWritesByDefault) {
  const char* old = std::getenv("STATE_DIRECTORY");
  const std::string saved = old ? old : "";
  setenv("STATE_DIRECTORY", "/run/state/gpulens:/other", 1);
  EXPECT_EQ(default_history_path(), "/run/state/gpulens/history.db");
  if (old)
    setenv("STATE_DIRECTORY", saved.c_str(), 1);
  else
    unsetenv("STATE_DIRECTORY");
  if (!old && geteuid() == 0) {
    EXPECT_EQ(default_history_path(), "/var/lib/gpulens/history.db");
  }
}

}  // namespace
}  // namespace gpulens::store
