// SPDX-License-Identifier: Apache-2.0
// Kernel records a job garbled (issue 31): the job's processes write them, so any
// field may hold anything. Each such record is skipped with a line naming the
// field, and the rest of the view, the verdict and every report still come out.
// Before the checked readers (kernels/record/legacy_record_read.cpp) each of these threw a
// nlohmann type_error out of the analysis: `gpulens report` and `gpulens run
// --kernels` ended in SIGABRT (134), and a negative count printed as 2^64 - 1.
#include "kernels/record/legacy_record_read.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "core/trace_reader.hpp"
#include "kernels/view/analysis.hpp"
#include "kernels/view/occupancy.hpp"
#include "render/kernels_output.hpp"

namespace gpulens::kernels {
namespace {

using gpulens::testing::read_file;
using gpulens::testing::run_gpulens;
using nlohmann::json;

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/kernels_malformed_" + std::to_string(getpid()) + "_" + name;
}

// A recording from an H100 (windows, NVTX ranges, copies, syncs): every field a
// record may have.
Trace h100_trace() {
  auto t = read_trace(std::string(GPULENS_FIXTURES) + "/kernels/windows-starved-h100.trace.jsonl");
  EXPECT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->kernel_records.size(), 1u);
  return *t;
}

struct Garbling {
  const char* pointer;  // JSON pointer into the record
  json value;           // what the job wrote there
  const char* said;     // the reason the report gives
};

const std::vector<Garbling>& garblings() {
  static const std::vector<Garbling> all = {
      {"/status", 5, "field `status` is not a string"},
      {"/reason", json::array(), "field `reason` is not a string"},
      {"/nvtx/status", 5, "field `nvtx.status` is not a string"},
      {"/copies/0/kind", 1, "field `copies[0].kind` is not a string"},
      {"/copies/0/src", json::object(), "field `copies[0].src` is not a string"},
      {"/kernels/0/name", 7, "field `kernels[0].name` is not a string"},
      {"/kernels", 3, "field `kernels` is not an array"},
      {"/kernels/0/count", -1, "field `kernels[0].count` is negative"},
      {"/kernels/0/total_ns", 1.5, "field `kernels[0].total_ns` is not a count"},
      {"/kernels/0/grid", json::array({1, 2}), "field `kernels[0].grid` is not an [x, y, z] array"},
      {"/kernels/0/block", json::array({4096, 4096, 4096}),
       "field `kernels[0].block` holds more than"},
      {"/kernels/0/hist/0", json::array({1}),
       "field `kernels[0].hist[0]` is not a [bucket, count]"},
      {"/kernels/0/hist/0/0", -3, "field `kernels[0].hist[0][0]` is negative"},
      {"/copies/0/bytes", -1, "field `copies[0].bytes` is negative"},
      {"/memsets", "x", "field `memsets` is not an array"},
      {"/syncs/0", json::array({1}), "field `syncs[0]` is not a [start_ns, end_ns, ...] list"},
      {"/syncs/0/1", "late", "field `syncs[0][1]` is not an integer"},
      {"/busy/0/intervals", json::array({1, 2, 3}),
       "field `busy[0].intervals` does not hold groups of 2 values"},
      {"/busy/0/device", -1, "field `busy[0].device` is negative"},
      {"/windows/0", json::array({1, 2, 3}), "field `windows[0]` is not a [start_ns, end_ns] pair"},
      {"/devices/0/sms", "132", "field `devices[0].sms` is not a count"},
      {"/devices/0", 0, "field `devices[0]` is not an object"},
      {"/clock/base_unix_ns", -5, "field `clock.base_unix_ns` is negative"},
      {"/dropped", -1, "field `dropped` is negative"},
      {"/nvtx/ranges/0/name", false, "field `nvtx.ranges[0].name` is not a string"},
      {"/nvtx/instances", json::array({0, 1}),
       "field `nvtx.instances` does not hold groups of 3 values"},
      {"/nvtx/instances/2", -1, "field `nvtx.instances[2]` is negative"},
      {"/sampling/window_s", "2", "field `sampling.window_s` is not a number"},
      {"/yielded_ns", "soon", "field `yielded_ns` is not a number"},
      {"/kernels/0/registers", 1ull << 40, "field `kernels[0].registers` is larger than"},
  };
  return all;
}

bool has_note(const KernelView& v, const std::string& text) {
  for (const auto& n : v.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(HardenedKernels, AGarbledRecordIsSkippedWithTheFieldNamedAndTheOthersStillCount) {
  const Trace clean = h100_trace();
  const auto reference = analyze_kernels(clean);
  ASSERT_TRUE(reference && reference->available);
  for (const auto& g : garblings()) {
    SCOPED_TRACE(g.pointer);
    json bad = clean.kernel_records[0];
    bad["pid"] = 4242;
    bad[json::json_pointer(g.pointer)] = g.value;
    ASSERT_FALSE(read_legacy_record(bad)) << "the reader accepted it";
    Trace t = clean;
    t.kernel_records.push_back(bad);
    std::optional<KernelView> v;
    ASSERT_NO_THROW(v = analyze_kernels(t));
    ASSERT_TRUE(v && v->available);
    EXPECT_TRUE(has_note(*v, std::string("kernel record of process 4242 skipped: ") + g.said))
        << (v->notes.empty() ? "" : v->notes.front());
    // The good record alone, as if the garbled one were not there.
    EXPECT_EQ(v->launches, reference->launches);
    EXPECT_EQ(v->syncs, reference->syncs);
    EXPECT_NO_THROW((void)render::kernels_to_text(*v));
    EXPECT_NO_THROW((void)render::kernels_to_json(*v).dump());
  }
}

TEST(HardenedKernels, EveryRecordGarbledGivesNoViewAndSaysWhy) {
  Trace t;
  t.kernel_records.push_back({{"x_kernels", 3}, {"status", 5}});
  t.kernel_records.push_back({{"x_kernels", 3}, {"pid", "me"}, {"kernels", {{{"count", -2}}}}});
  std::optional<KernelView> v;
  ASSERT_NO_THROW(v = analyze_kernels(t));
  ASSERT_TRUE(v.has_value());
  EXPECT_FALSE(v->available);
  EXPECT_EQ(v->status, "malformed");
  ASSERT_EQ(v->notes.size(), 2u);
  EXPECT_EQ(v->notes[0], "kernel record 1 skipped: field `status` is not a string");
  EXPECT_EQ(v->notes[1], "kernel record 2 skipped: field `pid` is not an integer");
}

TEST(HardenedKernels, ANegativeCountIsRefusedNotPrintedAsTwoToTheSixtyFour) {
  Trace t;
  t.kernel_records.push_back({{"x_kernels", 3},
                              {"pid", 7},
                              {"kernels", {{{"name", "k"}, {"count", -1}, {"total_ns", 1000}}}},
                              {"busy", {{{"device", 0}, {"intervals", {0, 1000}}}}}});
  const auto v = analyze_kernels(t);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->launches, 0u);
  EXPECT_TRUE(has_note(*v,
                       "kernel record of process 7 skipped: field `kernels[0].count` is "
                       "negative"));
  EXPECT_EQ(render::kernels_to_text(*v).find("18446744073709551615"), std::string::npos);
}

// The record's version is a count too: -1 is refused, never 2^64 - 1 (issue 31).
TEST(HardenedKernels, ANegativeRecordVersionIsRefused) {
  for (const auto& [version, why] : {std::pair<nlohmann::json, std::string>{-1, "is negative"},
                                     {0, "is not a record version (1 or more)"},
                                     {"3", "is not a count (a non-negative integer)"}}) {
    Trace t;
    t.kernel_records.push_back({{"x_kernels", version},
                                {"pid", 7},
                                {"kernels", {{{"name", "k"}, {"count", 3}, {"total_ns", 1000}}}},
                                {"busy", {{{"device", 0}, {"intervals", {0, 1000}}}}}});
    const auto v = analyze_kernels(t);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->launches, 0u) << version.dump();
    std::string expected = "kernel record of process 7 skipped: field `x_kernels` ";
    expected += why;
    EXPECT_TRUE(has_note(*v, expected)) << version.dump();
    EXPECT_EQ(render::kernels_to_text(*v).find("18446744073709551615"), std::string::npos);
  }
}

// Registers and shared memory near 2^32 wrapped to 0 in 32-bit sums: a division by zero.
TEST(HardenedKernels, OccupancyOfAHugeLaunchShapeDoesNotDivideByZero) {
  SmLimits l;
  l.sms = 132, l.max_blocks = 32, l.max_warps = 64, l.registers = 65536, l.shared_bytes = 233472;
  LaunchShape s;
  s.blocks = 1;
  s.threads = UINT32_MAX;
  s.registers = 1u << 27;              // * 32 is 2^32
  s.shared_bytes = UINT32_MAX - 1023;  // + 1024 reserved is 2^32
  const Occupancy o = occupancy(s, l);
  EXPECT_EQ(o.blocks_per_sm, 1u);
  EXPECT_EQ(o.sms_used, 1u);
}

// The reproduction, through the binary: text, JSON and HTML all come out.
TEST(HardenedKernels, ReportOfARecordingWithAGarbledRecordGivesEveryFormat) {
  const std::string trace = temp_path("k.jsonl");
  std::ofstream(trace) << "{\"format\":\"gpu-trace\",\"version\":1,\"devices\":[{\"index\":0}]}\n"
                          "{\"t\":1,\"gpu\":0,\"gpu_util\":50}\n"
                          "{\"x_kernels\":3,\"status\":5}\n";
  const std::string said = "kernel record 1 skipped: field `status` is not a string";
  auto r = run_gpulens("report '" + trace + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(said), std::string::npos) << r.out;
  for (const char* ext : {".json", ".html"}) {
    const std::string out = temp_path(std::string("k") + ext);
    r = run_gpulens("report '" + trace + "' -o '" + out + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(read_file(out).find(said), std::string::npos) << ext;
    std::remove(out.c_str());
  }
  std::remove(trace.c_str());
}

}  // namespace
}  // namespace gpulens::kernels
