// SPDX-License-Identifier: Apache-2.0
// The fix sentences of the state table (fix_texts.cpp): the figures and names
// each one puts in, and the branches it takes on what was seen.
#include "diagnosis/fix_texts.hpp"

#include <gtest/gtest.h>

#include <string>

#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

// The four parts of a FixInput, owned together.
struct TextCase {
  StateFinding finding;
  WindowStats window;
  HardwareLimits hw = hardware_limits(testing::h100());
  FixContext ctx;
  FixInput input() const { return FixInput{finding, window, hw, ctx}; }
};

bool text_has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(FixTexts, AProcessHoldingMemoryIsNamedWhenProcessesWereSampled) {
  TextCase c;
  c.finding.facts.mem_held_mib = 2048;
  c.window.procs.top_mem_name = "jupyter";
  c.window.procs.top_mem_pid = 77;
  const auto unsampled = fix_text::process_holds_memory(c.input());
  EXPECT_TRUE(text_has(unsampled, "A process holds 2.0 GiB without running kernels")) << unsampled;
  EXPECT_EQ(unsampled.back(), '.');
  EXPECT_FALSE(text_has(unsampled, "costs"));
  c.window.procs.known = true;
  c.ctx.price_per_gpu_hour = 3;
  const auto named = fix_text::process_holds_memory(c.input());
  EXPECT_TRUE(text_has(named, "jupyter (pid 77) holds 2.0 GiB")) << named;
  EXPECT_TRUE(text_has(named, "; an idle GPU costs $3.00 per hour.")) << named;
}

TEST(FixTexts, TheJobsOwnMemoryIsToBeFreedNotEnded) {
  TextCase c;
  c.finding.facts.mem_held_mib = 10240;
  const auto text = fix_text::job_holds_memory(c.input());
  EXPECT_TRUE(text_has(text, "Your job holds 10.0 GiB")) << text;
  EXPECT_TRUE(text_has(text, "torch.cuda.empty_cache()"));
}

TEST(FixTexts, WarpsWaitNamesTheIntegerPipeOnlyWhenMeasured) {
  TextCase c;
  c.finding.facts.float_pipes = 4;
  const auto without = fix_text::warps_wait(c.input());
  EXPECT_TRUE(text_has(without, "(busiest tensor/FP pipe 4 %)")) << without;
  c.finding.facts.int_active = 12;
  const auto with = fix_text::warps_wait(c.input());
  EXPECT_TRUE(text_has(with, "(busiest tensor/FP pipe 4 %, integer pipe 12 %)")) << with;
}

TEST(FixTexts, OtherFloatOnCoresTellsHalfFromDoublePrecision) {
  TextCase c;
  c.finding.facts.tensor_active = 1;
  c.window.mean.set(Metric::Fp16Active, 40);
  c.window.mean.set(Metric::Fp64Active, 5);
  const auto half = fix_text::other_float_on_cores(c.input());
  EXPECT_TRUE(text_has(half, "the FP16 pipe works (40 %)")) << half;
  EXPECT_TRUE(text_has(half, "half-precision GEMMs"));
  c.window.mean.set(Metric::Fp64Active, 60);
  const auto dbl = fix_text::other_float_on_cores(c.input());
  EXPECT_TRUE(text_has(dbl, "the FP64 pipe works (60 %)")) << dbl;
  EXPECT_TRUE(text_has(dbl, "FP64 tensor cores"));
}

TEST(FixTexts, TensorCoreAdviceEndsWithTheKernelView) {
  TextCase c;
  c.finding.facts.tensor_active = 55;
  const auto bare = fix_text::math_on_tensor_cores(c.input());
  EXPECT_TRUE(text_has(bare, "the tensor pipes work (55 %)")) << bare;
  EXPECT_FALSE(text_has(bare, "The kernel view"));
  c.ctx.kernels = KernelEvidence{};
  KernelEvidence::Kernel k;
  k.name = "sm90_gemm";
  k.share = 0.8;
  k.dtype = "bf16";
  c.ctx.kernels->top = {k};
  const auto with_view = fix_text::math_on_tensor_cores(c.input());
  EXPECT_TRUE(text_has(with_view, " The kernel view: `sm90_gemm` 80 % (bf16).")) << with_view;
}

TEST(FixTexts, HostWaitsNameTheBusyProcess) {
  TextCase c;
  c.finding.facts.process_cpu_pct = 100;
  c.window.procs.top_cpu_name = "python";
  c.window.procs.top_cpu_pid = 1234;
  const auto full_core = fix_text::process_at_full_core(c.input());
  EXPECT_TRUE(text_has(full_core, "python (pid 1234) keeps a CPU core busy (100 %)")) << full_core;
  const auto waits = fix_text::gpu_waits_for_process(c.input());
  EXPECT_TRUE(text_has(waits, "(pid 1234), busy on the CPU (100 % of a core)")) << waits;
  c.window.procs.top_cpu_name.clear();
  c.window.procs.top_cpu_pid = 0;
  EXPECT_TRUE(text_has(fix_text::process_at_full_core(c.input()), "a process keeps a CPU core"));
}

}  // namespace
}  // namespace gpulens::diagnosis
