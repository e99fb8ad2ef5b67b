// SPDX-License-Identifier: Apache-2.0
// The kernel view's words on collectives: an NCCL kernel on few SMs gets no
// SM-filling advice, collectives holding 10 % of kernel time or more are a
// communication finding (naming the rank waited for, given the ranks' split),
// and the view's text, JSON and HTML mark their rows as communication.
#include "kernels/view/kernel_findings.hpp"

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

constexpr const char* kAllReduceKernel =
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

using testing::key;

// 100 steps of a GEMM on every SM then a collective on 24 blocks (NCCL's
// channels), `collective_ms` and `gemm_ms` long.
KernelView ddp_view(const std::string& collective, double collective_ms, double gemm_ms) {
  inject::ChunkBuilder c(1000);
  std::uint64_t t = 1000;
  const auto gemm_ns = static_cast<std::uint64_t>(gemm_ms * 1e6);
  const auto coll_ns = static_cast<std::uint64_t>(collective_ms * 1e6);
  for (int s = 0; s < 100; ++s) {
    c.kernel(key("sm90_xmma_gemm_bf16bf16_bf16f32", 1056, 128), t, t + gemm_ns, 7);
    t += gemm_ns;
    c.kernel(key(collective, 24, 640), t, t + coll_ns, 8);
    t += coll_ns;
  }
  testing::ProcessLines o;
  o.base_ns = 1000;
  Trace trace;
  testing::add_lines(trace, testing::process_lines(c, o));
  auto v = analyze_kernels(trace);
  EXPECT_TRUE(v && v->available);
  return v.value_or(KernelView{});
}

const Finding* finding(const std::vector<Finding>& findings, const std::string& kind) {
  for (const auto& f : findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

TEST(KernelsFindings, AnNcclKernelOnFewSmsIsCommunicationNotASmFillingFix) {
  const KernelView v = ddp_view(kAllReduceKernel, 4.5, 5.5);
  ASSERT_EQ(v.top.size(), 2u);
  const KernelRow& nccl = v.top[1];
  EXPECT_TRUE(nccl.collective);
  EXPECT_FALSE(v.top[0].collective);
  EXPECT_EQ(nccl.sms_used, 24u);  // few SMs: the rule would fire on a compute kernel
  EXPECT_EQ(finding(v.findings, "low_sm_coverage"), nullptr);
  const Finding* comm = finding(v.findings, "communication");
  ASSERT_NE(comm, nullptr);
  EXPECT_NE(comm->text.find("NCCL collectives take 45 % of kernel time (`AllReduce` 45 %)"),
            std::string::npos)
      << comm->text;
  EXPECT_NE(comm->fix.find("bucket_cap_mb"), std::string::npos);
  EXPECT_NE(comm->fix.find("no_sync"), std::string::npos);
  EXPECT_NE(comm->fix.find("slowest rank"), std::string::npos);
  for (const auto& f : v.findings) {
    EXPECT_EQ(f.fix.find("split-K"), std::string::npos) << f.fix;
    EXPECT_EQ(f.fix.find("more parallel work"), std::string::npos) << f.fix;
  }
}

TEST(KernelsFindings, TheSameKernelShapeUnderAUserNameStillGetsTheSmFix) {
  const KernelView v = ddp_view("my_nccl_like(float*, int)", 4.5, 5.5);
  EXPECT_FALSE(v.top[1].collective);
  EXPECT_NE(finding(v.findings, "low_sm_coverage"), nullptr);
  EXPECT_EQ(finding(v.findings, "communication"), nullptr);
}

TEST(KernelsFindings, ACollectiveAtTheTopIsCalledCommunicationInTheHeadline) {
  const KernelView v = ddp_view(kAllReduceKernel, 6, 4);
  EXPECT_NE(v.headline.find("`ncclDevKernel_AllReduce_Sum_bf16_RING_LL` holds 60 % of kernel "
                            "time: communication (NCCL collective), not compute."),
            std::string::npos)
      << v.headline;
}

TEST(KernelsFindings, CollectivesUnderTenPercentAreNoFinding) {
  const KernelView v = ddp_view(kAllReduceKernel, 0.5, 9.5);
  EXPECT_EQ(finding(v.findings, "communication"), nullptr);
  EXPECT_EQ(finding(v.findings, "low_sm_coverage"), nullptr);
  EXPECT_EQ(v.headline.find("communication"), std::string::npos);
}

TEST(KernelsFindings, GivenTheRanksSplitTheFindingNamesTheRankWaitedFor) {
  const KernelView v = ddp_view(kAllReduceKernel, 4.5, 5.5);
  std::vector<RankSplit> split(2);
  split[0].label = "GPU 0 (pid 4241)";
  split[0].moving_s = 0.1;
  split[1].label = "GPU 1 (pid 4242)";
  split[1].waiting_s = 0.3;
  split[1].moving_s = 0.1;
  split[1].waited_for = 0;
  split[1].waited_for_s = 0.3;
  const auto comm = communication_finding(v, &split);
  ASSERT_TRUE(comm);
  EXPECT_NE(comm->text.find("rank GPU 1 (pid 4242) waited 300.00 ms of its 400.00 ms in "
                            "collectives for GPU 0 (pid 4241)"),
            std::string::npos)
      << comm->text;
  EXPECT_TRUE(comm->fix.starts_with("GPU 0 (pid 4241) arrives last"));
  // The same through kernel_findings.
  const auto all = kernel_findings(v, &split);
  ASSERT_NE(finding(all, "communication"), nullptr);
  EXPECT_EQ(finding(all, "communication")->text, comm->text);
  // The view's own split when none is given (the verdict's CollectiveEvidence
  // reads the finding that way); a wait spread over several ranks says "most of it".
  KernelView with = v;
  with.collective_ranks = split;
  with.collective_ranks[1].waiting_s = 0.5;
  with.collective_ranks[1].moving_s = 0;
  const auto own = communication_finding(with);
  ASSERT_TRUE(own);
  EXPECT_NE(
      own->text.find("waited 500.00 ms of its 500.00 ms in collectives, most of it, for GPU 0"),
      std::string::npos)
      << own->text;
  EXPECT_TRUE(own->fix.starts_with("GPU 0 (pid 4241) arrives last"));
}

TEST(KernelsFindings, TheViewMarksCollectiveRowsInTextJsonAndHtml) {
  const KernelView v = ddp_view(kAllReduceKernel, 4.5, 5.5);
  const std::string text = render::kernels_to_text(v);
  EXPECT_NE(text.find("ncclDevKernel_AllReduce_Sum_bf16_RING_LL  (communication)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("sm90_xmma_gemm_bf16bf16_bf16f32  (communication)"), std::string::npos);
  const auto j = render::kernels_to_json(v);
  EXPECT_EQ(j["top"][0]["collective"], false);
  EXPECT_EQ(j["top"][1]["collective"], true);
  EXPECT_NE(render::kernels_to_html(v).find("</code> (communication)"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::kernels
