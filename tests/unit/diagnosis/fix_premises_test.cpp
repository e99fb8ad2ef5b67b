// SPDX-License-Identifier: Apache-2.0
// Each fix earns its place from evidence (issue 46, docs/diagnosis.md "Fixes
// earned by evidence"): precision advice only where FP32 math runs on CUDA
// cores, never on integer or floating tensor cores; memory-bound advice that
// says when DRAM is at its practical peak and which bytes the evidence leaves
// open; pinning advice only below the rate pinned copies reach; and, with the
// kernel view of `gpulens run --kernels`, the kernels, types and
// synchronisations a fix rests on. Synthetic windows from each case's physics.
#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

#include "diagnosis/classifier.hpp"
#include "diagnosis/engine.hpp"
#include "diagnosis/fixes.hpp"
#include "diagnosis/window.hpp"
#include "diagnosis_support.hpp"
#include "verdict/ranked_fixes.hpp"

namespace gpulens::diagnosis {
namespace {

using testing::h100;
using testing::proc;
using EvValues = std::initializer_list<std::pair<Metric, double>>;

constexpr double kEvMibPerGbs = 1e9 / 1048576.0;

bool says(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

// A 5 s window of identical samples at 10 Hz on an H100.
WindowStats ev_window(EvValues values,
                      std::optional<std::vector<ProcessSample>> procs = std::nullopt) {
  SampleWindow w(WindowSettings{}, hardware_limits(h100()));
  for (int i = 0; i < 50; ++i) {
    Sample s;
    s.t = 1000 + 0.1 * i;
    for (const auto& [m, v] : values) s.values.set(m, v);
    s.procs = procs;
    w.push(s);
  }
  return w.stats();
}

struct Judged {
  StateFinding finding;
  std::vector<std::string> fixes;
};

Judged judge(EvValues values, std::optional<std::vector<ProcessSample>> procs = std::nullopt,
             std::optional<KernelEvidence> kernels = std::nullopt) {
  const auto w = ev_window(values, std::move(procs));
  Judged j;
  j.finding = classify_state(w, hardware_limits(h100()), Thresholds{}, {}, 5.0);
  FixContext ctx;
  ctx.kernels = std::move(kernels);
  j.fixes = fixes_for_state(j.finding, w, hardware_limits(h100()), ctx);
  return j;
}

void expect_no_precision_advice(const std::vector<std::string>& fixes) {
  for (const auto& x : fixes) {
    EXPECT_FALSE(says(x, "autocast")) << x;
    EXPECT_FALSE(says(x, "allow_tf32")) << x;
    EXPECT_FALSE(says(x, "mixed precision")) << x;
  }
}

// --- precision -----------------------------------------------------------------

TEST(PrecisionEvidence, AnInt8GemmRunsOnIntegerTensorCores) {
  // IMMA busy while the floating tensor pipes idle: TENSOR_ACTIVE reading low
  // must not turn into "use bf16/fp16 autocast or TF32".
  const auto j = judge({{Metric::GpuUtil, 100},
                        {Metric::SmActive, 95},
                        {Metric::TensorActive, 12},
                        {Metric::HmmaActive, 0.0},
                        {Metric::ImmaActive, 45},
                        {Metric::Fp32Active, 8}});
  ASSERT_EQ(j.finding.state, GpuState::ComputeBound);
  EXPECT_TRUE(says(j.fixes[0], "integer tensor cores")) << j.fixes[0];
  EXPECT_TRUE(says(j.fixes[0], "IMMA 45 %")) << j.fixes[0];
  expect_no_precision_advice(j.fixes);
  // The verdict drops precision advice where the tensor pipes are busy: this
  // fix is not that advice, and must survive it.
  EXPECT_FALSE(verdict::advises_precision(j.fixes[0])) << j.fixes[0];
}

TEST(PrecisionEvidence, FloatingTensorPipesBusyAreTensorCoresAlready) {
  // HMMA (bf16, fp16 and, measured on an H100, TF32) busy: the job does it.
  const auto j = judge({{Metric::GpuUtil, 100},
                        {Metric::SmActive, 95},
                        {Metric::TensorActive, 15},
                        {Metric::HmmaActive, 30},
                        {Metric::ImmaActive, 0.0},
                        {Metric::Fp32Active, 10}});
  ASSERT_EQ(j.finding.state, GpuState::ComputeBound);
  EXPECT_TRUE(says(j.fixes[0], "already runs on tensor cores")) << j.fixes[0];
  expect_no_precision_advice(j.fixes);
}

TEST(PrecisionEvidence, OnlyFp32MathOnCudaCoresEarnsIt) {
  const auto fp32 = judge({{Metric::GpuUtil, 100},
                           {Metric::SmActive, 96},
                           {Metric::TensorActive, 0.0},
                           {Metric::HmmaActive, 0.0},
                           {Metric::ImmaActive, 0.0},
                           {Metric::Fp32Active, 77}});
  ASSERT_EQ(fp32.finding.state, GpuState::ComputeBound);
  EXPECT_TRUE(says(fp32.fixes[0], "allow_tf32")) << fp32.fixes[0];
  // FP64 math: nothing for autocast or TF32 to narrow.
  const auto fp64 = judge({{Metric::GpuUtil, 100},
                           {Metric::SmActive, 96},
                           {Metric::TensorActive, 0.0},
                           {Metric::Fp32Active, 3},
                           {Metric::Fp64Active, 60}});
  ASSERT_EQ(fp64.finding.state, GpuState::ComputeBound);
  EXPECT_TRUE(says(fp64.fixes[0], "FP64 pipe works (60 %)")) << fp64.fixes[0];
  expect_no_precision_advice(fp64.fixes);
}

TEST(PrecisionEvidence, TheKernelViewNamesTheKernelsBehindTheAdvice) {
  KernelEvidence k;
  k.top = {{"ampere_sgemm_128x64_nn", 0.8, "fp32", false}};
  const auto j = judge({{Metric::GpuUtil, 100},
                        {Metric::SmActive, 96},
                        {Metric::TensorActive, 0.0},
                        {Metric::Fp32Active, 77}},
                       std::nullopt, k);
  EXPECT_TRUE(says(j.fixes[0], "The kernel view: `ampere_sgemm_128x64_nn` 80 % (fp32)."))
      << j.fixes[0];
}

// --- memory-bound ----------------------------------------------------------------

TEST(MemoryEvidence, AtThePracticalPeakOnlyFewerBytesHelp) {
  // A naive fp32 layer norm: DRAM at 97 % of its practical peak, FP32 math.
  const auto j = judge({{Metric::GpuUtil, 98},
                        {Metric::SmActive, 97},
                        {Metric::TensorActive, 0.2},
                        {Metric::HmmaActive, 0.2},
                        {Metric::Fp32Active, 8.9},
                        {Metric::Fp16Active, 0.0},
                        {Metric::DramActive, 87}});
  ASSERT_EQ(j.finding.state, GpuState::MemoryBound);
  EXPECT_TRUE(says(j.fixes[0], "DRAM already runs at its practical peak")) << j.fixes[0];
  EXPECT_TRUE(says(j.fixes[0], "only fewer bytes help")) << j.fixes[0];
  EXPECT_TRUE(says(j.fixes[0], "likely fp32: bf16")) << j.fixes[0];
  // Fusion is left open in "if" words without a kernel view.
  EXPECT_TRUE(says(j.fixes[0], "If each step runs several element-wise kernels")) << j.fixes[0];
}

TEST(MemoryEvidence, HalfWidthDataIsNotToldToHalveItsBytes) {
  const auto j = judge({{Metric::GpuUtil, 99},
                        {Metric::SmActive, 97},
                        {Metric::TensorActive, 0.5},
                        {Metric::Fp16Active, 20},
                        {Metric::Fp32Active, 1},
                        {Metric::DramActive, 80}});
  ASSERT_EQ(j.finding.state, GpuState::MemoryBound);
  EXPECT_TRUE(says(j.fixes[0], "DRAM runs at 89 % of its practical peak")) << j.fixes[0];
  EXPECT_TRUE(says(j.fixes[0], "already 16-bit or narrower")) << j.fixes[0];
  for (const auto& x : j.fixes) EXPECT_FALSE(says(x, "halves")) << x;
}

TEST(MemoryEvidence, NoPipeAtWorkLeavesPrecisionInIfWords) {
  // One fused fp32 axpy: the FP32 pipe nearly idle, DRAM near its peak.
  const auto j = judge({{Metric::GpuUtil, 100},
                        {Metric::SmActive, 99},
                        {Metric::TensorActive, 1.3},
                        {Metric::Fp32Active, 0.6},
                        {Metric::IntActive, 42},
                        {Metric::DramActive, 75}});
  ASSERT_EQ(j.finding.state, GpuState::MemoryBound);
  EXPECT_TRUE(says(j.fixes[0], "If the tensors are fp32, bf16")) << j.fixes[0];
  EXPECT_FALSE(says(j.fixes[0], "tensor core")) << j.fixes[0];
}

TEST(MemoryEvidence, TheKernelViewSaysWhichKernelsToFuseAndTheirType) {
  KernelEvidence k;
  k.top = {{"vectorized_elementwise_kernel", 0.5, "fp32", true},
           {"reduce_kernel", 0.3, "fp32", true}};
  k.elementwise_kernels = 2;
  k.elementwise_per_step = 5;
  const auto j = judge({{Metric::GpuUtil, 99},
                        {Metric::SmActive, 97},
                        {Metric::TensorActive, 1.4},
                        {Metric::Fp32Active, 5},
                        {Metric::DramActive, 80}},
                       std::nullopt, k);
  ASSERT_EQ(j.finding.state, GpuState::MemoryBound);
  EXPECT_TRUE(says(j.fixes[0], "The data is fp32 (the kernels: `vectorized_elementwise_kernel`"))
      << j.fixes[0];
  EXPECT_TRUE(says(j.fixes[0], "5 per step: `vectorized_elementwise_kernel`, `reduce_kernel`"))
      << j.fixes[0];
  // One kernel already fused and bf16: neither lever.
  KernelEvidence one;
  one.top = {{"fused_stream_kernel", 0.95, "bf16", false}};
  const auto fused = judge({{Metric::GpuUtil, 99},
                            {Metric::SmActive, 97},
                            {Metric::TensorActive, 0.5},
                            {Metric::Fp32Active, 6},
                            {Metric::DramActive, 80}},
                           std::nullopt, one);
  EXPECT_TRUE(says(fused.fixes[0], "already 16-bit or narrower")) << fused.fixes[0];
  EXPECT_TRUE(says(fused.fixes[0], "no chain of element-wise kernels")) << fused.fixes[0];
}

// --- copies --------------------------------------------------------------------

TEST(CopyEvidence, CopiesAtThePinnedRateGetNoPinningAdvice) {
  // 256 MiB pinned copies queued back to back: 55 GB/s of Gen5 x16's 63.
  const std::vector<ProcessSample> procs{proc(7, "python3", 3000.0, 100.0)};
  const auto j = judge(
      {{Metric::GpuUtil, 100}, {Metric::SmActive, 0.0}, {Metric::PcieRxMibs, 55 * kEvMibPerGbs}},
      procs);
  ASSERT_EQ(j.finding.state, GpuState::PcieBound);
  EXPECT_TRUE(says(j.fixes[0], "pinning is done")) << j.fixes[0];
  for (const auto& x : j.fixes) EXPECT_FALSE(says(x, "pin_memory")) << x;
  // Above half the pinned rate but under the saturated line, a busy process is
  // not the pageable signature: pageable copies never come near it.
  const auto half = judge(
      {{Metric::GpuUtil, 100}, {Metric::SmActive, 0.0}, {Metric::PcieRxMibs, 30 * kEvMibPerGbs}},
      procs);
  ASSERT_EQ(half.finding.state, GpuState::PcieBound);
  for (const auto& x : half.fixes) EXPECT_FALSE(says(x, "pageable host memory")) << x;
}

TEST(CopyEvidence, BelowThePinnedRatePinningIsAdvisedInIfWords) {
  const auto j = judge(
      {{Metric::GpuUtil, 30}, {Metric::SmActive, 0.0}, {Metric::PcieRxMibs, 6 * kEvMibPerGbs}});
  ASSERT_EQ(j.finding.state, GpuState::PcieBound);
  bool advised = false;
  for (const auto& x : j.fixes) advised = advised || says(x, "if the host buffers are pageable");
  EXPECT_TRUE(advised);
}

TEST(CopyEvidence, TheKernelViewTellsSmallPinnedCopiesFromPageableOnes) {
  // 64 KiB pinned copies at 8.5 GB/s with python at a full core: the counters
  // read the pageable signature; the kernel view says the memory was pinned.
  const std::vector<ProcessSample> procs{proc(7, "python3", 3000.0, 100.0)};
  KernelEvidence pinned;
  pinned.pinned_copies = true;
  const EvValues small{
      {Metric::GpuUtil, 49}, {Metric::SmActive, 0.0}, {Metric::PcieRxMibs, 8.5 * kEvMibPerGbs}};
  const auto j = judge(small, procs, pinned);
  ASSERT_EQ(j.finding.state, GpuState::PcieBound);
  EXPECT_TRUE(says(j.fixes[0], "come from pinned memory")) << j.fixes[0];
  for (const auto& x : j.fixes) EXPECT_FALSE(says(x, "pin_memory")) << x;
  KernelEvidence pageable;
  pageable.pageable_copies = true;
  EXPECT_TRUE(says(judge(small, procs, pageable).fixes[0], "pageable host memory"));
}

// --- host waits ----------------------------------------------------------------

KernelEvidence syncs_per_step(double n) {
  KernelEvidence k;
  k.syncs_per_step = n;
  k.sync_s_per_step = n * 0.4e-3;
  return k;
}

TEST(HostEvidence, TheKernelViewsSynchronisationsNameTheCause) {
  // .item() after every layer: 8 synchronisations per step.
  const std::vector<ProcessSample> procs{proc(7, "python3", 4000.0, 100.0)};
  const EvValues counters{{Metric::GpuUtil, 54}, {Metric::SmActive, 38}};
  const auto j = judge(counters, procs, syncs_per_step(8));
  ASSERT_EQ(j.finding.state, GpuState::HostBound);
  EXPECT_TRUE(says(j.fixes[0], "8.0 CUDA synchronisations per step, the host blocked 3.2 ms"))
      << j.fixes[0];
  EXPECT_TRUE(says(j.fixes[0], ".item()")) << j.fixes[0];
  EXPECT_FALSE(says(j.fixes[0], "Two causes")) << j.fixes[0];
  // Few synchronisations: the process does the work itself.
  const auto work = judge(counters, procs, syncs_per_step(1));
  EXPECT_TRUE(says(work.fixes[0], "does the work itself")) << work.fixes[0];
  EXPECT_FALSE(says(work.fixes[0], ".item()")) << work.fixes[0];
}

TEST(HostEvidence, ALaunchBoundLoopWithSynchronisationsIsToldSo) {
  const std::vector<ProcessSample> procs{proc(7, "python3", 2000.0, 100.0)};
  const EvValues counters{{Metric::GpuUtil, 29}, {Metric::SmActive, 0.5}};
  const auto sync = judge(counters, procs, syncs_per_step(2000));
  ASSERT_EQ(sync.finding.state, GpuState::LaunchBound);
  EXPECT_TRUE(says(sync.fixes[0], "it synchronises after them")) << sync.fixes[0];
  const auto launches = judge(counters, procs, syncs_per_step(0));
  EXPECT_TRUE(says(launches.fixes[0], "each launch costs the host more")) << launches.fixes[0];
  EXPECT_FALSE(says(launches.fixes[0], "synchronize()")) << launches.fixes[0];
}

TEST(HostEvidence, ASynchronisationEveryFewLaunchesIsALoopThatWaitsHoweverShortEachWait) {
  // .item() after every op, no step marks (the H200 corpus' item_every_op under
  // --kernels): 89929 synchronisations in the windows, one per three launches,
  // each short enough that the host blocked only 6 % of the traced time.
  const std::vector<ProcessSample> procs{proc(7, "python3", 2000.0, 100.0)};
  const EvValues counters{{Metric::GpuUtil, 28}, {Metric::SmActive, 6.0}};
  KernelEvidence k;
  k.syncs = 89929;
  k.sync_share = 0.06;
  k.syncs_per_launch = 1.0 / 3.0;
  const auto sync = judge(counters, procs, k);
  ASSERT_FALSE(sync.fixes.empty());
  EXPECT_TRUE(says(sync.fixes[0], "one per 3.0 kernel launches")) << sync.fixes[0];
  EXPECT_FALSE(says(sync.fixes[0], "few synchronisations")) << sync.fixes[0];
  // A training loop's handful per hundreds of launches stays "few".
  k.syncs = 300;
  k.syncs_per_launch = 0.01;
  const auto few = judge(counters, procs, k);
  ASSERT_FALSE(few.fixes.empty());
  EXPECT_FALSE(says(few.fixes[0], "synchronises after")) << few.fixes[0];
}

TEST(HostEvidence, TheEngineHandsTheKernelViewToTheFixes) {
  TraceHeader h;
  h.devices.push_back(h100());
  DiagnosisConfig config = DiagnosisConfig::defaults();
  const DiagnosisEngine without(h, config);
  EXPECT_FALSE(without.fix_context().kernels);
  config.kernels = syncs_per_step(8);
  const DiagnosisEngine with(h, config);
  ASSERT_TRUE(with.fix_context().kernels);
  EXPECT_EQ(with.fix_context().kernels->syncs_per_step, 8.0);
}

}  // namespace
}  // namespace gpulens::diagnosis
