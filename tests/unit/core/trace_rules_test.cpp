// SPDX-License-Identifier: Apache-2.0
// data/trace_rules.json is the one table of the readers' value ranges and input
// limits: the Python reader (python/gpulens/trace.py) reads it, the C++ reader
// holds the same numbers as constants. This test fails where the two differ, so
// that a range or limit changed on one side cannot leave the other behind
// (python/tests/test_trace.py checks the Python side against the same file).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/input_limits.hpp"
#include "core/metric.hpp"
#include "core/regular_file.hpp"
#include "core/value_ranges.hpp"

namespace gpulens {
namespace {

nlohmann::json rules() {
  std::ifstream in(std::string(GPULENS_SOURCE_DIR) + "/data/trace_rules.json");
  EXPECT_TRUE(in.good()) << "data/trace_rules.json is missing";
  return nlohmann::json::parse(in);
}

TEST(TraceRules, EveryMetricInOrderWithItsUnitAndRange) {
  const auto table = rules()["metrics"];
  ASSERT_EQ(table.size(), all_metrics().size()) << "a metric added on one side only";
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& info = all_metrics()[i];
    const auto& row = table[i];
    SCOPED_TRACE(std::string(info.key));
    EXPECT_EQ(row["key"].get<std::string>(), info.key);
    EXPECT_EQ(row["unit"].get<std::string>(), info.unit);
    const ValueRange r = value_range(info.id);
    EXPECT_EQ(row["min"].get<double>(), r.min);
    EXPECT_EQ(row["max"].get<double>(), r.max);
    EXPECT_EQ(row["tolerance"].get<double>(), r.tolerance);
  }
}

TEST(TraceRules, TimesAndLimits) {
  const auto j = rules();
  EXPECT_EQ(j["time"]["earliest"].get<double>(), kEarliestTime);
  EXPECT_EQ(j["time"]["latest"].get<double>(), kLatestTime);
  const auto& limits = j["limits"];
  EXPECT_EQ(limits["max_line_bytes"].get<std::size_t>(), kMaxLineBytes);
  EXPECT_EQ(limits["max_json_depth"].get<std::size_t>(), kMaxJsonDepth);
  EXPECT_EQ(limits["max_devices"].get<std::size_t>(), kMaxDevices);
  EXPECT_EQ(limits["max_procs_per_sample"].get<std::size_t>(), kMaxProcsPerSample);
}

// The kinds the table names are the words the C++ reader refuses each with,
// checked on those a test can make (a block device needs root; open(2) of a
// socket fails before its kind is looked at).
TEST(TraceRules, RefusedFileKindsAreTheReadersWords) {
  const auto j = rules();
  std::set<std::string> kinds;
  for (const auto& k : j["refused_file_kinds"]) kinds.insert(k.get<std::string>());
  EXPECT_EQ(kinds, (std::set<std::string>{"a FIFO", "a character device", "a block device",
                                          "a directory", "a socket"}));
  char dir_template[] = "/tmp/gpulens-rules-XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {
      {fifo, "a FIFO"}, {"/dev/null", "a character device"}, {dir, "a directory"}};
  for (const auto& [path, kind] : cases) {
    SCOPED_TRACE(path);
    const auto fd = open_regular_file(path);
    ASSERT_FALSE(fd);
    EXPECT_EQ(fd.error().message, "not a regular file (" + kind + ")");
    EXPECT_TRUE(kinds.count(kind));
  }
  ::unlink(fifo.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace gpulens
