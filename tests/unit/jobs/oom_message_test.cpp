// SPDX-License-Identifier: Apache-2.0
// The out-of-memory messages of CUDA and its frameworks, as jobs print them:
// recognised with their figures, kept bounded and terminal-safe, across chunk
// boundaries, and not confused with the host's out of memory or with noise.
#include "jobs/oom_message.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpulens::jobs {
namespace {

constexpr double kGiB = 1024;

StderrScan scan_of(std::string_view text) {
  OomScanner s;
  s.feed(text);
  return s.found();
}

TEST(OomMessage, PyTorchTwoGivesWhatItAskedForAndWhatWasFree) {
  const auto s = recognise_oom_line(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total "
      "capacity of 139.81 GiB of which 3.19 GiB is free. Including non-PyTorch memory, this "
      "process has 136.60 GiB memory in use. Of the allocated memory 130.21 GiB is allocated by "
      "PyTorch, and 2.35 GiB is reserved by PyTorch but unallocated.");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->oom_source, "pytorch");
  EXPECT_TRUE(s->oom_message.starts_with("torch.OutOfMemoryError: CUDA out of memory."));
  ASSERT_TRUE(s->oom_tried_mib && s->oom_free_mib && s->oom_capacity_mib);
  EXPECT_DOUBLE_EQ(*s->oom_tried_mib, 4 * kGiB);
  EXPECT_NEAR(*s->oom_free_mib, 3.19 * kGiB, 0.01);
  EXPECT_NEAR(*s->oom_capacity_mib, 139.81 * kGiB, 0.01);
}

TEST(OomMessage, OlderPyTorchAndItsFigures) {
  const auto s = recognise_oom_line(
      "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total "
      "capacity; 14.56 GiB already allocated; 3.06 MiB free; 14.60 GiB reserved in total by "
      "PyTorch)");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->oom_source, "pytorch");
  ASSERT_TRUE(s->oom_tried_mib && s->oom_free_mib && s->oom_capacity_mib);
  EXPECT_DOUBLE_EQ(*s->oom_tried_mib, 20);
  EXPECT_DOUBLE_EQ(*s->oom_free_mib, 3.06);
  EXPECT_NEAR(*s->oom_capacity_mib, 15.78 * kGiB, 0.01);
  EXPECT_TRUE(recognise_oom_line("RuntimeError: CUDA out of memory."));
  EXPECT_EQ(recognise_oom_line("torch.cuda.OutOfMemoryError: CUDA out of memory.")->oom_source,
            "pytorch");
}

TEST(OomMessage, CudaAndItsLibrariesSayItInTheirOwnWords) {
  for (const char* line :
       {"RuntimeError: CUDA error: out of memory",
        "terminate called after throwing an instance of 'std::runtime_error' what(): "
        "cudaErrorMemoryAllocation",
        "numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in "
        "CUDA_ERROR_OUT_OF_MEMORY",
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED"}) {
    const auto s = recognise_oom_line(line);
    ASSERT_TRUE(s) << line;
    EXPECT_EQ(s->oom_source, "cuda") << line;
    EXPECT_FALSE(s->oom_tried_mib) << line;
  }
}

TEST(OomMessage, JaxTensorFlowAndCuPy) {
  const auto jax = recognise_oom_line(
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
      "allocate 17179869184 bytes.");
  ASSERT_TRUE(jax);
  EXPECT_EQ(jax->oom_source, "jax");
  EXPECT_DOUBLE_EQ(*jax->oom_tried_mib, 16 * kGiB);
  const auto tf = recognise_oom_line(
      "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
      "tensor with shape[8192,8192,64] and type float on /job:localhost/replica:0/task:0/"
      "device:GPU:0 by allocator GPU_0_bfc");
  ASSERT_TRUE(tf);
  EXPECT_EQ(tf->oom_source, "tensorflow");
  EXPECT_TRUE(recognise_oom_line("  OOM when allocating tensor with shape[1]"));
  const auto cupy = recognise_oom_line(
      "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 4,294,967,296 bytes "
      "(allocated so far: 0 bytes).");
  ASSERT_TRUE(cupy);
  EXPECT_EQ(cupy->oom_source, "cupy");
  EXPECT_DOUBLE_EQ(*cupy->oom_tried_mib, 4 * kGiB);
}

TEST(OomMessage, TheHostsOutOfMemoryAndOrdinaryLinesAreNotOnes) {
  for (const char* line : {"java.lang.OutOfMemoryError: Java heap space",
                           "MemoryError: Unable to allocate 4.00 GiB for an array", "Killed",
                           "step 100 loss 2.31 mem 136.6 GiB",
                           "CUDA: mémoire insuffisante pour allouer 4,00 Gio", ""}) {
    EXPECT_FALSE(recognise_oom_line(line)) << line;
  }
}

TEST(OomMessage, AMessageSplitAcrossChunksIsSeenWhole) {
  const std::string text =
      "Traceback (most recent call last):\n  File \"train.py\", line 9\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total "
      "capacity of 139.81 GiB of which 3.19 GiB is free.\nexiting\n";
  for (std::size_t chunk : {1u, 3u, 7u, 64u}) {
    OomScanner s;
    for (std::size_t i = 0; i < text.size(); i += chunk) s.feed(text.substr(i, chunk));
    const auto found = s.found();
    EXPECT_EQ(found.oom_source, "pytorch") << chunk;
    ASSERT_TRUE(found.oom_tried_mib) << chunk;
    EXPECT_DOUBLE_EQ(*found.oom_tried_mib, 4 * kGiB);
  }
}

TEST(OomMessage, TheLastLineNeedsNoNewlineAndCarriageReturnsEndLines) {
  EXPECT_EQ(scan_of("RuntimeError: CUDA error: out of memory").oom_source, "cuda");
  const auto s = scan_of("epoch 1: 45%|####      |\repoch 1: 46%\rCUDA error: out of memory\r\n");
  EXPECT_EQ(s.oom_message, "CUDA error: out of memory");
  EXPECT_TRUE(scan_of("nothing to see\nhere\n").oom_message.empty());
}

TEST(OomMessage, AMessageWithFiguresIsPreferredToAnEarlierOneWithout) {
  const auto s = scan_of(
      "CUDA error: out of memory\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
      "capacity of 79.10 GiB of which 1.00 GiB is free.\n"
      "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED\n");
  EXPECT_EQ(s.oom_source, "pytorch");
  EXPECT_DOUBLE_EQ(*s.oom_tried_mib, 2 * kGiB);
}

TEST(OomMessage, BinaryAndEscapesAreMadeSafeAndTheLineBounded) {
  std::string line = "\x1b]0;pwned\x07";
  line += std::string("\0\xff\xfe", 3);
  line += "CUDA error: out of memory \x1b[2J";
  line += std::string(5000, 'x');
  const auto s = scan_of(line + "\n");
  ASSERT_FALSE(s.oom_message.empty());
  EXPECT_EQ(s.oom_message.find('\x1b'), std::string::npos);
  EXPECT_EQ(s.oom_message.find('\0'), std::string::npos);
  EXPECT_EQ(s.oom_message.find('\xff'), std::string::npos);
  EXPECT_LE(s.oom_message.size(), kOomMessageMax + 3);
  EXPECT_NE(s.oom_message.find("CUDA error: out of memory"), std::string::npos);
}

TEST(OomMessage, AnEndlessLineCostsABoundedStateAndAMessageAfterItIsFound) {
  OomScanner s;
  const std::string chunk(1 << 16, 'a');
  for (int i = 0; i < 256; ++i) s.feed(chunk);  // 16 MiB without a newline
  s.feed(std::string(1 << 16, '\0'));
  EXPECT_TRUE(s.found().oom_message.empty());
  s.feed("\nRESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.50GiB\n");
  const auto found = s.found();
  EXPECT_EQ(found.oom_source, "jax");
  ASSERT_TRUE(found.oom_tried_mib);
  EXPECT_DOUBLE_EQ(*found.oom_tried_mib, 1.5 * kGiB);
}

TEST(OomMessage, FiguresThatAreNotNumbersAreLeftOut) {
  const auto s = recognise_oom_line(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate lots. GPU 0 has a total "
      "capacity of .5 GiB of which 1e999 GiB is free.");
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->oom_tried_mib);
  EXPECT_FALSE(s->oom_capacity_mib);
  EXPECT_FALSE(s->oom_free_mib);
}

}  // namespace
}  // namespace gpulens::jobs
