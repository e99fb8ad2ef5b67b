// SPDX-License-Identifier: Apache-2.0
// Reading one line of a version-4 kernel record (chunk_record_read.hpp): which
// lines are of version 4, and a line at fault refused with the field named
// (what the writer encodes reading back: chunk_record_test.cpp).
#include "kernels/record/chunk_record_read.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace gpulens::kernels {
namespace {

using nlohmann::json;

std::string read_problem(const json& line) {
  auto r = read_chunk_line(line);
  return r ? std::string() : r.error().message;
}

TEST(ChunkRecordRead, OnlyObjectsOfVersionFourOrLaterAreChunkLines) {
  EXPECT_TRUE(is_chunk_line({{"x_kernels", 4}, {"record", "chunk"}}));
  EXPECT_TRUE(is_chunk_line({{"x_kernels", 5}}));  // a newer one: read_chunk_line says why not
  EXPECT_FALSE(is_chunk_line({{"x_kernels", 3}, {"pid", 1}}));  // the legacy reader's
  EXPECT_FALSE(is_chunk_line({{"x_kernels", "4"}}));
  EXPECT_FALSE(is_chunk_line({{"x_kernels", 4.5}}));
  EXPECT_FALSE(is_chunk_line({{"record", "chunk"}}));
  EXPECT_FALSE(is_chunk_line(json::array({4})));
}

TEST(ChunkRecordRead, TheLineHeadIsReadBeforeItsKind) {
  const json base = {{"x_kernels", 4}, {"record", "end"}, {"pid", -7}, {"seq", 3}, {"part", 1}};
  auto r = read_chunk_line(base);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->pid, -7);
  EXPECT_EQ(r->seq, 3u);
  EXPECT_EQ(r->part, 1u);
  EXPECT_EQ(std::get<EndRecord>(r->record).status, "ok");  // no status: ok
  json bad = base;
  bad["pid"] = "7";
  EXPECT_NE(read_problem(bad).find("`pid`"), std::string::npos) << read_problem(bad);
  bad = base;
  bad["seq"] = -1;
  EXPECT_NE(read_problem(bad).find("`seq`"), std::string::npos) << read_problem(bad);
  bad = base;
  bad["record"] = 4;
  EXPECT_NE(read_problem(bad).find("`record`"), std::string::npos) << read_problem(bad);
}

TEST(ChunkRecord, TheReaderNamesTheFieldAtFault) {
  auto problem = [](const json& line) {
    auto r = read_chunk_line(line);
    return r ? std::string() : r.error().message;
  };
  const json base = {{"x_kernels", 4}, {"record", "chunk"}, {"pid", 1}, {"seq", 0}};
  json bad = base;
  bad["busy"] = json::array({json::array({0, json::array({0, 10}), json::array({5, 2, 1, 0})})});
  EXPECT_NE(problem(bad).find("busy[0][1]'[0]"), std::string::npos) << problem(bad);
  bad = base;
  bad["kernels"] = json::array({json::array({0, 1, 2})});
  EXPECT_NE(problem(bad).find("`kernels[0]` is not a list of 6 values"), std::string::npos)
      << problem(bad);
  bad = base;
  bad["record"] = "telemetry";
  bad["x_kernels"] = 5;
  EXPECT_NE(problem(bad).find("record kind \"telemetry\" is not one of version 4's"),
            std::string::npos)
      << problem(bad);
  bad = base;
  bad.erase("pid");
  EXPECT_NE(problem(bad).find("`pid` is missing"), std::string::npos) << problem(bad);
}

}  // namespace
}  // namespace gpulens::kernels
