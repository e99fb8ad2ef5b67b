// SPDX-License-Identifier: Apache-2.0
// The kernel section of the text report: why there is no view, the kernel table
// with collectives marked and long names cut to one line, copies from pageable
// memory, each device when there are several, the fixes and the notes; every
// name made safe for a terminal.
#include <gtest/gtest.h>

#include <string>

#include "kernels/view/view.hpp"
#include "render/kernels_output.hpp"

namespace gpulens::render {
namespace {

kernels::KernelView text_view() {
  kernels::KernelView v;
  v.available = true;
  v.headline = "The GPU was idle 40% of the run.";
  v.launches = 1234;
  v.kernel_s = 2;
  v.kernel_names = 2;
  v.syncs = 17;
  kernels::KernelRow gemm;
  gemm.name = "void gemm_kernel<float>(float*)";
  gemm.short_name = "gemm_kernel";
  gemm.count = 1000;
  gemm.share = 0.75;
  gemm.coverage_known = true;
  gemm.sms_used = 9;
  gemm.sms = 132;
  kernels::KernelRow nccl;
  nccl.short_name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
  nccl.share = 0.25;
  nccl.collective = true;
  v.top = {gemm, nccl};
  kernels::CopyRow copy;
  copy.kind = "HtoD";
  copy.src = "pageable";
  copy.dst = "device";
  copy.count = 3;
  copy.bytes = 4'500'000;
  copy.pageable = true;
  v.copies = {copy};
  for (std::uint32_t d : {0u, 1u}) {
    kernels::DeviceView dv;
    dv.device = d;
    dv.name = "NVIDIA H100 80GB HBM3";
    dv.activity.window_s = 10;
    dv.activity.busy_s = 6;
    dv.activity.idle_share = 0.4;
    v.devices.push_back(dv);
  }
  v.findings.push_back({"launch_bound", "tiny kernels back to back", "fuse them"});
  v.notes.push_back("process 7 wrote no end");
  return v;
}

TEST(KernelsText, AViewSaysItsTableCopiesDevicesFixesAndNotes) {
  const std::string t = kernels_to_text(text_view());
  EXPECT_EQ(t.rfind("Where the GPU time went (gpulens run --kernels)\n", 0), 0u) << t;
  for (const char* part : {
           "  The GPU was idle 40% of the run.\n",
           "1234 kernel launches",
           "2 kernels by name",
           "  device 0 NVIDIA H100 80GB HBM3\n",
           "  device 1 NVIDIA H100 80GB HBM3\n",
           "9/132",
           "ncclDevKernel_AllReduce_Sum_bf16_RING_LL  (communication)\n",
           "    HtoD pageable -> device: 3x, 4.5 MB",
           "(pageable host memory)",
           "  synchronisations: 17 (",
           "  fixes from the kernel view:\n  - tiny kernels back to back: fuse them\n",
           "  note: process 7 wrote no end\n",
       }) {
    EXPECT_NE(t.find(part), std::string::npos) << part << "\n" << t;
  }
  // gemm is not a collective; a row whose coverage is unknown says "?".
  EXPECT_EQ(t.find("gemm_kernel  (communication)"), std::string::npos);
  EXPECT_NE(t.find(" ? "), std::string::npos) << t;
  // One device: no per-device heading.
  kernels::KernelView one = text_view();
  one.devices.pop_back();
  EXPECT_EQ(kernels_to_text(one).find("  device 0"), std::string::npos);
}

TEST(KernelsText, NoViewSaysWhyAndNothingElse) {
  kernels::KernelView v;
  v.notes = {"the job loaded no CUDA", "second reason"};
  EXPECT_EQ(kernels_to_text(v),
            "Where the GPU time went (gpulens run --kernels)\n  no kernel view\n"
            "  the job loaded no CUDA\n  second reason\n");
}

TEST(KernelsText, NamesAreCutToOneLineAndMadeSafe) {
  kernels::KernelView v = text_view();
  v.top[0].short_name = std::string(100, 'k');
  v.top[1].short_name = "evil\x1b[2J\nname";
  v.notes = {"a note\x1b]0;title\x07"};
  const std::string t = kernels_to_text(v);
  EXPECT_NE(t.find(std::string(57, 'k') + "...\n"), std::string::npos) << t;
  EXPECT_EQ(t.find(std::string(58, 'k')), std::string::npos);
  EXPECT_EQ(t.find('\x1b'), std::string::npos) << t;
  EXPECT_EQ(t.find('\x07'), std::string::npos) << t;
  EXPECT_NE(t.find("evil"), std::string::npos);
  EXPECT_EQ(t.find("\nname"), std::string::npos) << t;  // the row stays one line
}

}  // namespace
}  // namespace gpulens::render
