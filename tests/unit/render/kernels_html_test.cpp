// SPDX-License-Identifier: Apache-2.0
// The kernel section of the HTML report: one card with the kernel table, a gap
// chart per device and strips of the median steps; every name escaped; put into
// the page before its script.
#include <gtest/gtest.h>

#include <string>

#include "kernels/view/view.hpp"
#include "render/kernels_output.hpp"

namespace gpulens::render {
namespace {

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

kernels::KernelView html_view() {
  kernels::KernelView v;
  v.available = true;
  v.launches = 1234;
  v.kernel_names = 2;
  kernels::KernelRow gemm;
  gemm.name = "void gemm<a&b>(float*)";
  gemm.short_name = "gemm<a&b>";
  gemm.blocks = 9;
  gemm.threads = 256;
  kernels::KernelRow nccl;
  nccl.short_name = "ncclDevKernel_AllGather";
  nccl.collective = true;
  v.top = {gemm, nccl};
  kernels::DeviceView d;
  d.device = 1;
  d.activity.window_s = 10;
  d.activity.idle_share = 0.4;
  d.activity.gaps.count = {100, 0, 0, 2, 1};
  d.activity.gaps.seconds = {0.001, 0, 0, 0.01, 3.989};
  kernels::DeviceView::Strip strip;
  strip.length_s = 0.5;
  strip.busy = {{0, 0.1}, {0.2, 0.45}};
  d.strips = {strip, strip};
  v.devices = {d};
  kernels::CopyRow copy;
  copy.kind = "HtoD";
  copy.src = "pageable";
  copy.dst = "device";
  copy.pageable = true;
  v.copies = {copy};
  v.findings.push_back({"host_bound", "gaps <inside> steps", "prefetch"});
  v.notes.push_back("note <1>");
  return v;
}

TEST(KernelsHtml, ASectionWithTableChartsAndStrips) {
  const std::string h = kernels_to_html(html_view());
  EXPECT_EQ(h.rfind("<section class=\"card\" id=\"kernels\"><h2>Where the GPU time went</h2>", 0),
            0u);
  EXPECT_EQ(h.substr(h.size() - 10), "</section>");
  for (const char* part : {
           "<p>1234 kernel launches",
           "<h3>GPU 1 idle 40",
           "aria-label=\"idle gaps by length\"",
           "<title>1-10 ms: 2 gaps, ",
           "&gt; 10 ms</text>",
           "in 2 steps of median length",
           "aria-label=\"GPU busy in representative steps\"",
           "<td title=\"void gemm&lt;a&amp;b&gt;(float*)\"><code>gemm&lt;a&amp;b&gt;</code></td>",
           "<code>ncclDevKernel_AllGather</code> (communication)",
           "<td>9 × 256</td>",
           "<h3>Copies</h3>",
           "pageable → device <b>(pageable)</b>",
           "<ol class=\"fixes\"><li><b>gaps &lt;inside&gt; steps</b>: prefetch</li></ol>",
           "<li>note &lt;1&gt;</li>",
       }) {
    EXPECT_NE(h.find(part), std::string::npos) << part << "\n" << h;
  }
  // Five gap bars; two busy rectangles in each of the two strips.
  EXPECT_EQ(occurrences(h, "fill=\"#c0392b\""), 5u);
  EXPECT_EQ(occurrences(h, "fill=\"#2e86c1\""), 4u);
  EXPECT_EQ(h.find("<h3>NVTX ranges</h3>"), std::string::npos);  // none recorded
}

TEST(KernelsHtml, NoViewSaysWhyEscaped) {
  kernels::KernelView v;
  v.notes = {"no <cuda>"};
  EXPECT_EQ(kernels_to_html(v),
            "<section class=\"card\" id=\"kernels\"><h2>Where the GPU time went</h2>"
            "<p>No kernel view.</p><ul class=\"note\"><li>no &lt;cuda&gt;</li></ul></section>");
}

TEST(KernelsHtml, TheSectionGoesBeforeThePagesLastScript) {
  kernels::KernelView v;
  const std::string section = kernels_to_html(v);
  EXPECT_EQ(insert_kernels_html("<body><script>a</script><p/><script>b</script></body>", v),
            "<body><script>a</script><p/>" + section + "<script>b</script></body>");
  EXPECT_EQ(insert_kernels_html("<body></body>", v), "<body></body>" + section);
}

}  // namespace
}  // namespace gpulens::render
