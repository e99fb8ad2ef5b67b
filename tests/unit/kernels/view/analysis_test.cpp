// SPDX-License-Identifier: Apache-2.0
// The kernel view's analysis on synthetic kernel records: what a launch-bound
// and a host-bound job look like in numbers, SM coverage from the occupancy
// arithmetic, copies from pageable memory.
#include "kernels/view/analysis.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/trace_reader.hpp"
#include "inject/chunk_builder.hpp"
#include "kernel_lines.hpp"
#include "kernels/view/occupancy.hpp"
#include "render/kernels_output.hpp"

namespace gpulens::kernels {
namespace {

using nlohmann::json;

using testing::kBaseUnixNs;

// The lines a process of the injection library writes, from its ChunkBuilder.
std::vector<json> record(inject::ChunkBuilder& c, testing::ProcessLines o = {}) {
  o.base_ns = 1000;
  return testing::process_lines(c, o);
}

using testing::key;

const Finding* finding(const KernelView& v, const std::string& kind) {
  for (const auto& f : v.findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

TEST(KernelsAnalysis, NoRecordsNoView) {
  Trace t;
  EXPECT_FALSE(analyze_kernels(t).has_value());
}

TEST(KernelsAnalysis, TinyKernelsBackToBackAreLaunchBoundAndUseFewSms) {
  // 1000 kernels of 5 us, each 15 us after the previous one ended, 4 blocks each.
  inject::ChunkBuilder c(1000);
  std::uint64_t t = 1000;
  for (int i = 0; i < 1000; ++i) {
    c.kernel(
        key("void at::native::(anonymous namespace)::softmax_kernel<float>(float*, int)", 4, 256),
        t, t + 5000, 7);
    t += 20000;
  }
  Trace trace;
  testing::add_lines(trace, record(c));
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v && v->available);
  EXPECT_EQ(v->launches, 1000u);
  EXPECT_NEAR(v->kernel_s, 5e-3, 1e-9);
  ASSERT_EQ(v->top.size(), 1u);
  const KernelRow& k = v->top[0];
  EXPECT_EQ(k.short_name, "softmax_kernel");
  EXPECT_NEAR(k.mean_us, 5.0, 1e-9);
  EXPECT_NEAR(k.p50_us, 5.0, 0.3);  // log buckets: within 5 %
  EXPECT_EQ(k.sms_used, 4u);
  EXPECT_EQ(k.sms, 132u);
  EXPECT_EQ(k.blocks_per_sm, 8u);  // 8 warps per block, 64 warps per SM
  ASSERT_EQ(v->devices.size(), 1u);
  const IdleStats& a = v->devices[0].activity;
  // First to last activity: 999 gaps of 15 us and 1000 kernels of 5 us.
  EXPECT_NEAR(a.window_s, 999 * 20e-6 + 5e-6, 1e-9);
  EXPECT_NEAR(a.idle_share, (999 * 15e-6) / a.window_s, 1e-9);
  EXPECT_EQ(a.gaps.count[1], 999u);  // all 10-100 us
  EXPECT_EQ(a.gaps.count[0] + a.gaps.count[2] + a.gaps.count[3] + a.gaps.count[4], 0u);
  EXPECT_NE(finding(*v, "launch_bound"), nullptr);
  EXPECT_EQ(finding(*v, "host_bound"), nullptr);
  EXPECT_NE(v->headline.find("The GPU was busy 25 % of the time from its first to its last work; "
                             "the idle 75 % lies mostly in gaps of 10-100 us"),
            std::string::npos)
      << v->headline;
  const Finding* low = finding(*v, "low_sm_coverage");
  ASSERT_NE(low, nullptr);
  EXPECT_NE(low->text.find("`softmax_kernel` takes 100 % of GPU time with 4 of 132 SMs busy"),
            std::string::npos)
      << low->text;
}

TEST(KernelsAnalysis, LongGapsInsideMarkedStepsAreHostBound) {
  // Steps of 300 ms: 50 ms of GEMMs on all SMs, then 250 ms waiting for data.
  inject::ChunkBuilder c(1000);
  Trace trace;
  for (int s = 0; s < 10; ++s) {
    const std::uint64_t step0 = 1000 + static_cast<std::uint64_t>(s) * 300'000'000;
    for (int i = 0; i < 10; ++i) {
      const std::uint64_t a = step0 + static_cast<std::uint64_t>(i) * 5'000'000;
      c.kernel(key("sm90_xmma_gemm_bf16bf16_bf16f32", 1056, 128), a, a + 5'000'000, 7);
    }
    trace.marks.push_back(
        {static_cast<double>(kBaseUnixNs) / 1e9 + static_cast<double>(step0 - 1000) / 1e9, "step",
         json::object()});
  }
  trace.marks.push_back({static_cast<double>(kBaseUnixNs) / 1e9 + 3.0, "step", json::object()});
  testing::add_lines(trace, record(c));
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v && v->available);
  const auto& d = v->devices.at(0);
  ASSERT_TRUE(d.steps.has_value());
  EXPECT_EQ(d.steps->steps, 10u);
  EXPECT_NEAR(d.steps->mean_step_s, 0.3, 1e-6);
  EXPECT_NEAR(d.steps->idle.idle_share, 250.0 / 300.0, 1e-4);
  EXPECT_NEAR(d.steps->mean_idle_per_step_s, 0.25, 1e-4);
  EXPECT_EQ(d.steps->idle.gaps.count[4], 10u);  // one 250 ms gap per step
  EXPECT_NE(finding(*v, "host_bound"), nullptr);
  EXPECT_EQ(finding(*v, "launch_bound"), nullptr);
  EXPECT_NE(v->headline.find("The GPU was busy 17 % of the marked steps; the idle 83 % lies mostly "
                             "in gaps of > 10 ms: the host"),
            std::string::npos)
      << v->headline;
  EXPECT_EQ(finding(*v, "low_sm_coverage"), nullptr);  // 1056 blocks cover all 132 SMs
  EXPECT_EQ(v->top[0].sms_used, 132u);
  EXPECT_EQ(d.strips.size(), 3u);
  ASSERT_FALSE(d.strips[0].busy.empty());
  EXPECT_NEAR(d.strips[0].busy.front().first, 0.0, 1e-6);
  EXPECT_NEAR(d.strips[0].busy.back().second, 0.05, 1e-6);
}

TEST(KernelsAnalysis, PageableCopiesAreNamedWithTheirBandwidth) {
  inject::ChunkBuilder c(0);
  c.copy({0, "HtoD", "pageable", "device"}, 50'000'000, 0, 10'000'000, 7);
  c.copy({0, "HtoD", "pinned", "device"}, 50'000'000, 20'000'000, 22'000'000, 7);
  Trace trace;
  testing::add_lines(trace, record(c));
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v && v->available);
  ASSERT_EQ(v->copies.size(), 2u);
  const Finding* f = finding(*v, "pageable_copies");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->text.find("50 MB copied HtoD from pageable host memory in 1 copies at 5.0 GB/s"),
            std::string::npos)
      << f->text;
}

TEST(KernelsAnalysis, ARecordWithoutActivitySaysWhy) {
  Trace trace;
  trace.kernel_records.push_back(
      {{"x_kernels", 1}, {"status", "no_cupti"}, {"reason", "libcupti was not found"}, {"pid", 9}});
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v.has_value());
  EXPECT_FALSE(v->available);
  EXPECT_EQ(v->status, "no_cupti");
  ASSERT_EQ(v->notes.size(), 1u);
  EXPECT_NE(v->notes[0].find("libcupti was not found"), std::string::npos);
  EXPECT_NE(render::kernels_to_text(*v).find("no kernel view"), std::string::npos);
  EXPECT_FALSE(render::kernels_to_json(*v)["available"].get<bool>());
}

TEST(KernelsAnalysis, TheJobsProfilerTakingOverIsSaid) {
  inject::ChunkBuilder c(0);
  c.kernel(key("k", 132, 128), 0, 1000, 7);
  testing::ProcessLines o;
  o.end->status = "job_profiler";
  o.end->yielded_ns = 2'500'000'000;
  Trace trace;
  testing::add_lines(trace, record(c, o));
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v && v->available);
  EXPECT_EQ(v->status, "job_profiler");
  ASSERT_FALSE(v->notes.empty());
  EXPECT_NE(v->notes[0].find("2.5 s after CUDA started"), std::string::npos) << v->notes[0];
}

TEST(KernelsTrace, KernelRecordLinesAreKeptByTheReader) {
  const std::string text =
      "{\"format\":\"gpu-trace\",\"version\":1,\"host\":\"h\",\"devices\":[]}\n"
      "{\"t\":1.0,\"mark\":\"step\"}\n"
      "{\"x_kernels\":1,\"status\":\"no_cuda\",\"reason\":\"r\"}\n";
  auto t = read_trace_string(text, "k.jsonl");
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->kernel_records.size(), 1u);
  EXPECT_EQ(t->kernel_records[0]["status"], "no_cuda");
  EXPECT_EQ(t->marks.size(), 1u);
}

}  // namespace
}  // namespace gpulens::kernels
