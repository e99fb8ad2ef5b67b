// SPDX-License-Identifier: Apache-2.0
// What the gatherer keeps of a job's version-4 kernel records: a long job reads
// in the memory of its sketches, not its kernels, within the reader's bound over
// any number of windows; a process that died keeps the windows it closed; the
// notes say when CUPTI was detached between windows, or why not.
#include "kernels/view/record_gatherer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/trace_reader.hpp"
#include "inject/chunk_builder.hpp"
#include "kernel_lines.hpp"
#include "kernels/view/analysis.hpp"

namespace gpulens::kernels {
namespace {

using nlohmann::json;

// 50 windows of 5,000 kernels each, 1 us apart, as the library writes them.
Trace long_job() {
  inject::ChunkBuilder c(0);
  inject::KernelLaunch k = testing::key("elementwise_kernel", 132, 256);
  Trace trace;
  ProcessRecord p;
  p.base_unix_ns = testing::kBaseUnixNs;
  p.sampling = ProcessRecord::Sampling{10, 2, 20};
  auto add = [&](const std::vector<std::string>& lines) {
    for (const auto& l : lines) trace.kernel_records.push_back(json::parse(l));
  };
  add(encode_process(42, p));
  constexpr std::uint64_t kWindow = 20'000'000'000;
  for (std::uint64_t w = 0; w < 50; ++w) {
    const std::uint64_t open = w * kWindow;
    for (std::uint64_t i = 0; i < 5000; ++i) {
      c.kernel(k, open + i * 5000, open + i * 5000 + 4000, 7);
    }
    inject::Drained d = c.drain();
    d.chunk.seq = w;
    d.chunk.window = true;
    d.chunk.start_ns = static_cast<std::int64_t>(open);
    d.chunk.end_ns = static_cast<std::int64_t>(open + 100'000'000);
    if (!d.names.empty()) add(encode_names(42, w, d.names));
    for (const auto& b : d.chunk.busy) EXPECT_LE(b.spans.size(), kMaxSketchSpans);
    add(encode_chunk(42, d.chunk));
  }
  add(encode_end(42, testing::ProcessLines::ok_end()));
  return trace;
}

// One process, one window of kernels, recorded with `kinds` and `note` in its
// process line.
Trace one_window(const std::string& kinds, const std::string& note) {
  inject::ChunkBuilder c(0);
  const inject::KernelLaunch k = testing::key("gemm", 132, 256);
  Trace trace;
  ProcessRecord p;
  p.base_unix_ns = testing::kBaseUnixNs;
  p.sampling = ProcessRecord::Sampling{10, 2, 20};
  p.kinds = kinds;
  p.kinds_note = note;
  auto add = [&](const std::vector<std::string>& lines) {
    for (const auto& l : lines) trace.kernel_records.push_back(json::parse(l));
  };
  add(encode_process(42, p));
  for (std::uint64_t i = 0; i < 100; ++i) c.kernel(k, i * 5000, i * 5000 + 4000, 7);
  inject::Drained d = c.drain();
  d.chunk.window = true;
  d.chunk.end_ns = 1'000'000;
  if (!d.names.empty()) add(encode_names(42, 0, d.names));
  add(encode_chunk(42, d.chunk));
  add(encode_end(42, testing::ProcessLines::ok_end()));
  return trace;
}

bool notes_hold_exactly(const KernelView& v, const std::string& note) {
  return std::find(v.notes.begin(), v.notes.end(), note) != v.notes.end();
}

TEST(ChunkRecord, AProcessThatWithheldSynchronisationsSaysSoInTheView) {
  const auto withheld = analyze_kernels(
      one_window("kernel,memcpy,memset,nvtx", "CUDA synchronisations were not recorded"));
  ASSERT_TRUE(withheld && withheld->available);
  EXPECT_FALSE(withheld->syncs_recorded);
  EXPECT_TRUE(notes_hold_exactly(*withheld, "process 42: CUDA synchronisations were not recorded"));
  const auto knob = analyze_kernels(one_window("kernel", ""));
  ASSERT_TRUE(knob);
  EXPECT_FALSE(knob->syncs_recorded);
  EXPECT_TRUE(notes_hold_exactly(
      *knob, "process 42 recorded only kernel: CUDA synchronisations are not counted"));
  const auto all = analyze_kernels(one_window("", ""));
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->syncs_recorded);
  const auto with_sync = analyze_kernels(one_window("kernel,sync", ""));
  ASSERT_TRUE(with_sync);
  EXPECT_TRUE(with_sync->syncs_recorded);
}

TEST(ChunkRecord, AProcessThatExecsKeepsBothImagesWindowsAndSaysWhatWasLost) {
  // Image 1 (no end line: exec runs no atexit), then image 2 under the same pid,
  // its own clock 10 s later and its kernel ids from 0 again, naming another kernel.
  Trace first = one_window("", "");
  first.kernel_records.pop_back();  // the end line
  Trace second = one_window("", "");
  for (auto& line : second.kernel_records) {
    if (line.contains("clock"))
      line["clock"]["base_unix_ns"] = testing::kBaseUnixNs + 10'000'000'000;
    if (line.contains("kernel_names")) line["kernel_names"][0][1] = "second_image_kernel";
  }
  Trace both = first;
  both.kernel_records.insert(both.kernel_records.end(), second.kernel_records.begin(),
                             second.kernel_records.end());
  const auto v = analyze_kernels(both);
  ASSERT_TRUE(v && v->available);
  EXPECT_EQ(v->launches, 200u);
  EXPECT_EQ(v->sampling.windows, 2u);
  bool first_name = false, second_name = false;
  for (const auto& k : v->top) {
    first_name = first_name || k.name == "gemm";
    second_name = second_name || k.name == "second_image_kernel";
  }
  EXPECT_TRUE(first_name);
  EXPECT_TRUE(second_name);
  EXPECT_TRUE(notes_hold_exactly(
      *v,
      "process 42 replaced its program 1 time (exec): each image before the last "
      "kept the windows it had closed, and lost a window still open at the exec"));
}

TEST(ChunkRecord, ALongJobReadsInMemoryOfItsSketchesNotItsKernels) {
  // The view keeps at most kMaxSketchSpans busy spans per window, and its numbers
  // stay exact.
  const auto v = analyze_kernels(long_job());
  ASSERT_TRUE(v && v->available);
  EXPECT_EQ(v->launches, 50u * 5000u);
  EXPECT_NEAR(v->kernel_s, 50 * 5000 * 4e-6, 1e-6);
  EXPECT_EQ(v->sampling.windows, 50u);
  ASSERT_EQ(v->devices.size(), 1u);
  // Busy 4 us of every 5 inside the work; the sketches closed the 1 us gaps and
  // gave their idle time back.
  const IdleStats& a = v->devices[0].activity;
  EXPECT_NEAR(a.busy_s, 50 * 5000 * 4e-6, 1e-3);
  EXPECT_GT(a.gaps.count[0], 50u * 4500u);  // the < 10 us gaps, counted back
}

TEST(ChunkRecord, TheReaderKeepsItsBoundOverAnyNumberOfWindows) {
  // The same job read with a bound of 1,000 spans a device (50 windows of up to
  // 256 spans would be 12,800): the spans stay within it, and busy and idle time
  // stay what the job had, the closed gaps' idle given back.
  const Trace trace = long_job();
  RecordGatherer small(std::nullopt, 1000);
  for (const auto& line : trace.kernel_records) small.add(line);
  KernelView counts;
  const Gathered g = small.finish(counts);
  ASSERT_EQ(g.busy.count(0), 1u);
  EXPECT_LE(g.busy.at(0).size(), 1000u);
  RecordGatherer again(std::nullopt, 1000);
  for (const auto& line : trace.kernel_records) again.add(line);
  const auto v = analyze_kernels(std::move(again), trace);
  ASSERT_TRUE(v && v->available);
  const IdleStats& a = v->devices.at(0).activity;
  EXPECT_NEAR(a.busy_s, 50 * 5000 * 4e-6, 1e-3);
  EXPECT_GT(a.gaps.count[0], 50u * 4500u);
  EXPECT_EQ(v->sampling.windows, 50u);
}

TEST(ChunkRecord, AProcessThatDiedKeepsTheWindowsItClosed) {
  inject::ChunkBuilder c(0);
  inject::KernelLaunch k;
  k.name = "gemm";
  c.kernel(k, 1000, 2000, 7);
  testing::ProcessLines o;
  o.end.reset();
  Trace trace;
  testing::add_lines(trace, testing::process_lines(c, o));
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v && v->available);
  EXPECT_EQ(v->launches, 1u);
  bool said = false;
  for (const auto& n : v->notes) said = said || n.find("wrote no end") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(ChunkRecord, TheViewSaysWhenCuptiWasDetachedOrWhyNot) {
  auto notes_with = [](std::uint64_t detaches, const std::string& why) {
    inject::ChunkBuilder c(0);
    inject::KernelLaunch k;
    k.name = "gemm";
    c.kernel(k, 1000, 2000, 7);
    testing::ProcessLines o;
    o.end->detaches = detaches;
    o.end->detach_max_ns = 2'500'000;
    o.end->detach_note = why;
    Trace trace;
    testing::add_lines(trace, testing::process_lines(c, o));
    const auto v = analyze_kernels(trace);
    EXPECT_TRUE(v && v->available);
    std::string all;
    for (const auto& n : v->notes) all += n + "\n";
    return all;
  };
  EXPECT_NE(notes_with(12, "").find("detached between trace windows 12 times, the longest taking "
                                    "2.5 ms"),
            std::string::npos);
  EXPECT_NE(notes_with(0, "cuptiSubscribe: taken").find("cuptiSubscribe: taken"),
            std::string::npos);
  EXPECT_EQ(notes_with(0, "").find("detach"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::kernels
