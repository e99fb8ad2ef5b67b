// SPDX-License-Identifier: Apache-2.0
// NVTX ranges in the kernel view: the ChunkBuilder pairing CUPTI's marker records
// into ranges within its bounds, the split of idle time by innermost range, and a
// starved training job whose data-loading range holds the GPU's idle time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/trace_reader.hpp"
#include "inject/chunk_builder.hpp"
#include "kernel_lines.hpp"
#include "kernels/view/analysis.hpp"
#include "render/kernels_output.hpp"

namespace gpulens::kernels {
namespace {

using nlohmann::json;

using testing::kBaseUnixNs;
constexpr std::uint64_t kMs = 1'000'000;

std::vector<json> nvtx_record(inject::ChunkBuilder& c, int pid = 42,
                              testing::ProcessLines o = testing::ProcessLines{}) {
  o.pid = pid;
  o.h100 = false;
  return testing::process_lines(c, o);
}

// The NVTX part of a collector's next chunk, as the reader keeps it.
struct NvtxChunk {
  kernels::NamesRecord names;
  kernels::ChunkRecord chunk;
};
NvtxChunk drained(inject::ChunkBuilder& c) {
  inject::Drained d = c.drain();
  return {std::move(d.names), std::move(d.chunk)};
}

inject::KernelLaunch gemm() {
  inject::KernelLaunch k;
  k.name = "sm90_xmma_gemm_bf16bf16_bf16f32";
  k.config.grid[0] = 1056, k.config.grid[1] = 1, k.config.grid[2] = 1;
  k.config.block[0] = 128, k.config.block[1] = 1, k.config.block[2] = 1;
  return k;
}

TEST(KernelsNvtxCollector, PairsStartsAndEndsByIdIntoPerNameTotalsAndInstances) {
  inject::ChunkBuilder c(1000);
  c.range_start(1, 1000, "step", "");
  c.range_start(2, 1100, "data", "");  // nested, as push/pop gives it
  c.range_end(2, 1600);
  c.range_start(3, 1600, "data", "");
  c.range_end(3, 1800);
  c.range_end(1, 3000);
  c.range_start(4, 3000, "io", "mylib");
  c.range_end(9, 3100);  // an end whose start CUPTI never saw
  c.range_start(5, 3200, "open at exit", "");
  const NvtxChunk n = drained(c);
  ASSERT_EQ(n.names.range_names.size(), 4u);
  EXPECT_EQ(n.names.range_names[0].name, "step");
  EXPECT_EQ(n.names.range_names[1].name, "data");
  EXPECT_EQ(n.names.range_names[2].domain, "mylib");
  ASSERT_EQ(n.chunk.ranges.size(), 2u);  // only ranges that ended have totals
  EXPECT_EQ(n.chunk.ranges[0].range, 0u);
  EXPECT_EQ(n.chunk.ranges[0].count, 1u);
  EXPECT_EQ(n.chunk.ranges[0].total_ns, 2000u);
  EXPECT_EQ(n.chunk.ranges[1].range, 1u);
  EXPECT_EQ(n.chunk.ranges[1].count, 2u);
  EXPECT_EQ(n.chunk.ranges[1].total_ns, 700u);
  EXPECT_EQ(n.chunk.ranges[1].min_ns, 200u);
  EXPECT_EQ(n.chunk.ranges[1].max_ns, 500u);
  // Instances in the order they ended, relative to the base, with the name index.
  ASSERT_EQ(n.chunk.instances.size(), 3u);
  EXPECT_EQ(n.chunk.instances[0].start, 100);
  EXPECT_EQ(n.chunk.instances[0].end, 600);
  EXPECT_EQ(n.chunk.instances[0].range, 1u);
  EXPECT_EQ(n.chunk.instances[2].start, 0);
  EXPECT_EQ(n.chunk.instances[2].end, 2000);
  EXPECT_EQ(n.chunk.instances[2].range, 0u);
  EXPECT_EQ(c.unmatched_ranges(), 3u);  // the stray end and the two ranges still open
  EXPECT_EQ(n.chunk.instances_dropped, 0u);
}

TEST(KernelsNvtxCollector, NamesAndInstancesStayBounded) {
  inject::ChunkBuilder c(0);
  std::uint32_t id = 0;
  for (std::size_t i = 0; i < inject::kMaxRangeNames + 5; ++i) {
    c.range_start(++id, i, "step " + std::to_string(i), "");
    c.range_end(id, i + 1);
  }
  c.range_start(++id, 0, std::string(5000, 'x'), "");
  c.range_end(id, 1);
  for (std::size_t i = 0; i < inject::kMaxRangeInstances; ++i) {
    c.range_start(++id, 10 * i, "step 0", "");
    c.range_end(id, 10 * i + 5);
  }
  const NvtxChunk n = drained(c);
  ASSERT_EQ(n.names.range_names.size(), inject::kMaxRangeNames + 1);
  EXPECT_EQ(n.names.range_names.back().name, inject::kOtherRanges);
  EXPECT_EQ(n.chunk.names_folded, 6u);  // 5 past the cap and the long name
  // One chunk keeps its most recent instances; the reader keeps kMaxRangeInstances.
  EXPECT_EQ(n.chunk.instances.size(), kernels::kMaxChunkInstances);
  EXPECT_EQ(n.chunk.instances_dropped,
            inject::kMaxRangeNames + 6 + inject::kMaxRangeInstances - kernels::kMaxChunkInstances);
  EXPECT_EQ(n.chunk.ranges[0].count, inject::kMaxRangeInstances + 1);

  inject::ChunkBuilder d(0);
  d.range_start(1, 0, std::string(5000, 'y'), "");
  d.range_end(1, 1);
  EXPECT_EQ(drained(d).names.range_names[0].name.size(), inject::kMaxRangeNameChars);
}

TEST(KernelsNvtxIdle, IdleGoesToTheInnermostOpenRange) {
  // step [0, 10] holds data [0, 4] and forward [4, 6]; the GPU works in [5, 10].
  const std::vector<std::pair<double, double>> busy = {{5, 10}};
  const std::vector<RangeSpan> spans = {{0, 10, 0}, {0, 4, 1}, {4, 6, 2}};
  const auto idle = idle_by_innermost_range(busy, spans, 3, -2, 12);
  ASSERT_EQ(idle.size(), 4u);
  EXPECT_DOUBLE_EQ(idle[0], 0);  // step: every idle moment has an inner range
  EXPECT_DOUBLE_EQ(idle[1], 4);  // data
  EXPECT_DOUBLE_EQ(idle[2], 1);  // forward, before its GPU work starts
  EXPECT_DOUBLE_EQ(idle[3], 4);  // outside: [-2, 0] and [10, 12]
  // Overlapping, not nested: the range started last is the innermost.
  const auto o = idle_by_innermost_range({}, {{0, 5, 0}, {3, 8, 1}}, 2, 0, 8);
  EXPECT_DOUBLE_EQ(o[0], 3);
  EXPECT_DOUBLE_EQ(o[1], 5);
  EXPECT_DOUBLE_EQ(o[2], 0);
  EXPECT_DOUBLE_EQ(busy_within({{1, 2}, {3, 5}, {6, 7}}, 1.5, 6.5), 0.5 + 2 + 0.5);
}

// Ten steps of 300 ms: 250 ms inside "data" with the GPU idle, then 50 ms of
// GEMMs inside "forward"; each step inside "step".
Trace starved_job() {
  inject::ChunkBuilder c(0);
  Trace trace;
  std::uint32_t id = 0;
  for (std::uint64_t s = 0; s < 10; ++s) {
    const std::uint64_t t0 = s * 300 * kMs;
    const std::uint32_t step = ++id;
    c.range_start(step, t0, "step", "");
    c.range_start(++id, t0, "data", "");
    c.range_end(id, t0 + 250 * kMs);
    c.range_start(++id, t0 + 250 * kMs, "forward", "");
    for (std::uint64_t i = 0; i < 10; ++i) {
      const std::uint64_t a = t0 + 250 * kMs + i * 5 * kMs;
      c.kernel(gemm(), a, a + 5 * kMs, 7);
    }
    c.range_end(id, t0 + 300 * kMs);
    c.range_end(step, t0 + 300 * kMs);
    trace.marks.push_back(
        {static_cast<double>(kBaseUnixNs) / 1e9 + static_cast<double>(t0) / 1e9, "step", {}});
  }
  trace.marks.push_back({static_cast<double>(kBaseUnixNs) / 1e9 + 3.0, "step", {}});
  testing::add_lines(trace, nvtx_record(c));
  return trace;
}

const RangeRow& row(const NvtxView& n, const std::string& name) {
  for (const auto& r : n.ranges) {
    if (r.name == name) return r;
  }
  throw std::runtime_error("no range " + name);
}

TEST(KernelsNvtx, AStarvedJobsDataRangeHoldsTheGpusIdleTime) {
  const auto v = analyze_kernels(starved_job());
  ASSERT_TRUE(v && v->available && v->nvtx);
  const NvtxView& n = *v->nvtx;
  ASSERT_EQ(n.ranges.size(), 3u);
  EXPECT_EQ(n.ranges[0].name, "step");  // by total time
  const RangeRow& data = row(n, "data");
  EXPECT_EQ(data.count, 10u);
  EXPECT_NEAR(data.total_s, 2.5, 1e-9);
  EXPECT_NEAR(data.mean_s, 0.25, 1e-9);
  EXPECT_NEAR(data.busy_share, 0, 1e-9);
  EXPECT_NEAR(data.idle_s, 2.5, 1e-9);
  EXPECT_NEAR(data.attributed_idle_s, 2.5, 1e-6);
  const RangeRow& fwd = row(n, "forward");
  EXPECT_NEAR(fwd.busy_share, 1, 1e-9);
  EXPECT_NEAR(fwd.attributed_idle_s, 0, 1e-9);
  EXPECT_NEAR(row(n, "step").busy_share, 50.0 / 300.0, 1e-9);
  EXPECT_NEAR(row(n, "step").attributed_idle_s, 0, 1e-9);
  EXPECT_NEAR(n.window_idle_s, 2.5, 1e-6);
  EXPECT_NEAR(n.unranged_idle_s, 0, 1e-6);
  EXPECT_NE(v->headline.find("100 % of it inside the NVTX range `data`"), std::string::npos)
      << v->headline;

  const std::string text = render::kernels_to_text(*v);
  EXPECT_NE(text.find("NVTX ranges"), std::string::npos) << text;
  EXPECT_NE(text.find("       10    2.50 s 250.00 ms    0.0 %      2.50 s      100.0 %  data"),
            std::string::npos)
      << text;
  const auto j = render::kernels_to_json(*v);
  ASSERT_TRUE(j.contains("nvtx"));
  EXPECT_EQ(j["nvtx"]["ranges"][0]["name"], "step");
  EXPECT_NEAR(j["nvtx"]["window_idle_s"].get<double>(), 2.5, 1e-6);
  const std::string html = render::kernels_to_html(*v);
  EXPECT_NE(html.find("<h3>NVTX ranges</h3>"), std::string::npos);
  EXPECT_NE(html.find("<td><code>data</code></td><td>10</td>"), std::string::npos);
}

TEST(KernelsNvtx, NoRangesNoTable) {
  inject::ChunkBuilder c(0);
  c.kernel(gemm(), 0, kMs, 7);
  Trace trace;
  testing::add_lines(trace, nvtx_record(c));
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v && v->available);
  EXPECT_FALSE(v->nvtx.has_value());
  EXPECT_EQ(render::kernels_to_text(*v).find("NVTX"), std::string::npos);
  EXPECT_FALSE(render::kernels_to_json(*v).contains("nvtx"));
  EXPECT_EQ(render::kernels_to_html(*v).find("NVTX"), std::string::npos);
}

TEST(KernelsNvtx, RangesMergeByNameAcrossProcessesWithTheirDomain) {
  Trace trace;
  for (int pid : {1, 2}) {
    inject::ChunkBuilder c(0);
    c.kernel(gemm(), 0, 10 * kMs, 7);
    c.range_start(1, 0, "fwd", "");
    c.range_end(1, 20 * kMs);
    c.range_start(2, 0, "load", "io");
    c.range_end(2, 5 * kMs);
    testing::add_lines(trace, nvtx_record(c, pid));
  }
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v && v->nvtx);
  ASSERT_EQ(v->nvtx->ranges.size(), 2u);
  EXPECT_EQ(v->nvtx->ranges[0].name, "fwd");
  EXPECT_EQ(v->nvtx->ranges[0].count, 2u);
  EXPECT_NEAR(v->nvtx->ranges[0].busy_share, 0.5, 1e-9);
  EXPECT_EQ(v->nvtx->ranges[1].name, "io: load");
}

TEST(KernelsNvtx, AnNvtxToolOfTheJobsOwnIsSaidOnceInTheNotes) {
  Trace trace;
  for (int pid : {1, 2}) {
    inject::ChunkBuilder c(0);
    c.kernel(gemm(), 0, kMs, 7);
    testing::ProcessLines o;
    o.end->nvtx_status = "injection_taken";
    o.end->nvtx_reason =
        "NVTX_INJECTION64_PATH names another tool (/opt/nsight/libToolsInjection64.so): the job's "
        "NVTX ranges go to it";
    testing::add_lines(trace, nvtx_record(c, pid, o));
  }
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v && v->available);
  EXPECT_FALSE(v->nvtx.has_value());
  std::size_t lines = 0;
  for (const auto& n : v->notes) lines += n.starts_with("NVTX ranges not recorded: ") ? 1 : 0;
  EXPECT_EQ(lines, 1u);
  EXPECT_NE(render::kernels_to_text(*v).find(
                "note: NVTX ranges not recorded: NVTX_INJECTION64_PATH names "
                "another tool (/opt/nsight/libToolsInjection64.so)"),
            std::string::npos);
}

}  // namespace
}  // namespace gpulens::kernels
