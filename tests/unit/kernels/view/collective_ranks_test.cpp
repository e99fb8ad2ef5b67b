// SPDX-License-Identifier: Apache-2.0
// Collectives across ranks, end to end: two processes' version-4 kernel records
// (made by the injection library's ChunkBuilder and encoders), where rank 1 reaches
// every all-reduce a known time before rank 0, read into the kernel view; the
// report (text, JSON, HTML) and the verdict's communication fix name rank 0 and
// the wait within 1 %. One process alone: no split, nothing new said. And the
// recording side: the library keeps each device's first collectives per chunk,
// counts the rest, and the reader thins a long job's evenly in time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/report_setup.hpp"
#include "core/trace_reader.hpp"
#include "inject/chunk_builder.hpp"
#include "kernel_lines.hpp"
#include "kernels/view/analysis.hpp"
#include "kernels/view/record_gatherer.hpp"
#include "render/kernels_output.hpp"

namespace gpulens::kernels {
namespace {

using testing::key;
using testing::ProcessLines;

constexpr const char* kAllReduce =
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
constexpr int kSteps = 50;
constexpr double kEarlyS = 0.030;  // rank 1 reaches each all-reduce this much before rank 0
constexpr double kMoveS = 0.010;   // then the data moves for this long

// One rank's process: per 0.2 s step a 50 ms matmul, then the all-reduce, which
// every rank leaves at the same moment; this rank enters it `early_s` before the last.
std::vector<nlohmann::json> rank_lines(std::int64_t pid, std::uint32_t device, double early_s,
                                       int steps = kSteps) {
  inject::ChunkBuilder c(0);
  auto ns = [](double s) { return static_cast<std::uint64_t>(s * 1e9); };
  for (int s = 0; s < steps; ++s) {
    const double t = 1.0 + s * 0.2;
    auto gemm = key("sm90_xmma_gemm_bf16", 264, 256);
    gemm.config.device = device;
    c.kernel(gemm, ns(t), ns(t + 0.050), 7);
    auto ar = key(kAllReduce, 24, 512);
    ar.config.device = device;
    const double end = t + 0.100 + kMoveS;
    c.kernel(ar, ns(end - kMoveS - early_s), ns(end), 9);
  }
  ProcessLines o;
  o.pid = pid;
  return testing::process_lines(c, o);
}

KernelView two_ranks() {
  Trace trace;
  testing::add_lines(trace, rank_lines(4241, 0, 0));
  testing::add_lines(trace, rank_lines(4242, 1, kEarlyS));
  auto view = analyze_kernels(trace);
  EXPECT_TRUE(view);
  return view ? *view : KernelView{};
}

TEST(KernelsCollectiveRanks, TheRankThatArrivesEarlyWaitsForTheOtherInEveryRendering) {
  const KernelView v = two_ranks();
  ASSERT_EQ(v.collective_ranks.size(), 2u);
  const double waited = kSteps * kEarlyS;  // 1.5 s
  const RankSplit& r1 = v.collective_ranks[1];
  EXPECT_EQ(r1.label, "GPU 1 (pid 4242)");
  EXPECT_NEAR(r1.waiting_s, waited, waited * 0.01);
  EXPECT_NEAR(r1.moving_s, kSteps * kMoveS, kSteps * kMoveS * 0.01);
  ASSERT_TRUE(r1.waited_for);
  EXPECT_EQ(v.collective_ranks[*r1.waited_for].label, "GPU 0 (pid 4241)");
  EXPECT_NEAR(v.collective_ranks[0].waiting_s, 0, 1e-6);

  const std::string text = render::kernels_to_text(v);
  EXPECT_NE(text.find("GPU 1 (pid 4242): 1.50 s waiting, 500.00 ms moving data; waited longest "
                      "for GPU 0 (pid 4241) (1.50 s)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rank GPU 1 (pid 4242) waited 1.50 s of its 2.00 s in collectives for GPU 0 "
                      "(pid 4241)"),
            std::string::npos)
      << text;

  const auto out = render::kernels_to_json(v);
  ASSERT_TRUE(out.contains("collective_ranks"));
  const auto& j1 = out["collective_ranks"][1];
  EXPECT_EQ(j1["rank"], "GPU 1 (pid 4242)");
  EXPECT_NEAR(j1["waiting_s"].get<double>(), waited, waited * 0.01);
  EXPECT_EQ(j1["waited_for"], "GPU 0 (pid 4241)");
  EXPECT_TRUE(out["collective_ranks"][0]["waited_for"].is_null());
  bool named = false;
  for (const auto& f : out["findings"]) {
    if (f["kind"] == "communication") {
      named = f["text"].get<std::string>().find("for GPU 0 (pid 4241)") != std::string::npos &&
              f["fix"].get<std::string>().starts_with("GPU 0 (pid 4241) arrives last");
    }
  }
  EXPECT_TRUE(named) << out["findings"].dump();

  const std::string html = render::kernels_to_html(v);
  EXPECT_NE(html.find("<h3>Collectives per rank</h3>"), std::string::npos);
  EXPECT_NE(html.find("GPU 0 (pid 4241) (1.50 s)"), std::string::npos);

  // The verdict's ranked fixes get the fix that points at the rank waited for.
  const auto evidence = cli::collective_evidence(v);
  ASSERT_TRUE(evidence);
  EXPECT_TRUE(evidence->fix.starts_with("GPU 0 (pid 4241) arrives last")) << evidence->fix;
}

TEST(KernelsCollectiveRanks, OneProcessAloneIsNotSplitAndSaysNothingNew) {
  Trace trace;
  testing::add_lines(trace, rank_lines(4241, 0, kEarlyS));
  const auto v = analyze_kernels(trace);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->collective_ranks.empty());
  EXPECT_EQ(render::kernels_to_text(*v).find("collectives per rank"), std::string::npos);
  EXPECT_FALSE(render::kernels_to_json(*v).contains("collective_ranks"));
  for (const auto& n : v->notes) EXPECT_EQ(n.find("collectives split"), std::string::npos) << n;
}

TEST(KernelsCollectiveRanks, TheLibraryKeepsTheFirstCollectivesOfAChunkAndCountsTheRest) {
  inject::ChunkBuilder c(0);
  for (std::size_t i = 0; i < kMaxChunkCollectives + 5; ++i) {
    const std::uint64_t t = 1000 + i * 100;
    c.kernel(key(kAllReduce, 24, 512), t, t + 50, 9);
    c.kernel(key("gemm", 264, 256), t + 60, t + 90, 7);  // not a collective: not kept
  }
  auto d = c.drain();
  ASSERT_EQ(d.chunk.collectives.size(), 1u);
  const auto& col = d.chunk.collectives[0];
  EXPECT_EQ(col.instances.size(), kMaxChunkCollectives);
  EXPECT_EQ(col.dropped, 5u);
  EXPECT_EQ(col.instances.front(), std::make_pair(std::int64_t{1000}, std::int64_t{1050}));
  // The next chunk starts empty.
  c.kernel(key(kAllReduce, 24, 512), 5'000'000, 5'000'050, 9);
  d = c.drain();
  ASSERT_EQ(d.chunk.collectives.size(), 1u);
  EXPECT_EQ(d.chunk.collectives[0].instances.size(), 1u);
  EXPECT_EQ(d.chunk.collectives[0].dropped, 0u);
}

TEST(KernelsCollectiveRanks, TheReaderThinsALongJobEvenlyInTimeAndAlikeOnEveryRank) {
  // 50 steps over 10 s on each rank, a reader bound of 20 instances per process
  // and device: both ranks keep the same seconds of the job, so every kept
  // instance still finds its peer, and the wait per kept instance stays exact.
  RecordGatherer gatherer(std::nullopt, kMaxReaderSpans, 20);
  for (const auto& l : rank_lines(4241, 0, 0)) gatherer.add(l);
  for (const auto& l : rank_lines(4242, 1, kEarlyS)) gatherer.add(l);
  Trace trace;
  const auto v = analyze_kernels(std::move(gatherer), trace);
  ASSERT_TRUE(v);
  ASSERT_EQ(v->collective_ranks.size(), 2u);
  const RankSplit& r1 = v->collective_ranks[1];
  EXPECT_LE(r1.matched, 20u);
  EXPECT_GE(r1.matched, 5u);  // the job's seconds spread: some from each part kept
  EXPECT_EQ(r1.unmatched, 0u);
  EXPECT_EQ(v->collective_ranks[0].matched, r1.matched);
  EXPECT_NEAR(r1.waiting_s, static_cast<double>(r1.matched) * kEarlyS, 1e-6);
  bool noted = false;
  for (const auto& n : v->notes)
    noted |= n.find("thinned out, evenly in time") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace gpulens::kernels
