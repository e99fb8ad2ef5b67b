// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a kernel's demangled name says (docs/kernels.md): its short name, and
// whether it is a collective of a communication library. Needs nothing of
// gpulens, so the injection library (src/inject) compiles it in too and marks a
// collective once per kernel name, as it first sees the name.
//
// A collective kernel (NCCL, MSCCL, NVSHMEM, an intra-node custom all-reduce)
// spends its time moving data between GPUs or spinning until a peer rank
// arrives, so its SM coverage says nothing about the kernel and advice to fill
// the SMs (more blocks, split-K, a larger batch) does not apply to it.
// Recognised by name: CUPTI gives nothing else that says a kernel communicates.
#include <optional>
#include <string>
#include <string_view>

namespace gpulens::kernels {

// "void at::native::(anonymous namespace)::softmax_kernel<float>(float*, ...)"
// -> "softmax_kernel".
std::string short_kernel_name(const std::string& demangled);

enum class CollectiveLibrary {
  Nccl,             // ncclDevKernel_*, ncclKernel_*, older ncclAllReduce...Kernel_*
  Msccl,            // mscclKernel_*
  Nvshmem,          // nvshmemi_*, nvshmemx_* (collectives launched on a stream)
  CustomAllReduce,  // vLLM / SGLang cross_device_reduce_{1,2}stage
  SymmetricMemory,  // PyTorch symmetric memory one/two-shot and multimem kernels
};

struct CollectiveKind {
  CollectiveLibrary library = CollectiveLibrary::Nccl;
  // "AllReduce", "AllGather", "ReduceScatter", "SendRecv", ... where the name
  // says it; "" where it does not (ncclDevKernel_Generic, nvshmemi_*).
  std::string operation;
};

// The kind of a collective kernel from its demangled name, as CUPTI gives it
// ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
// nullopt for any other kernel.
std::optional<CollectiveKind> classify_collective(std::string_view demangled_name);

bool is_collective(std::string_view demangled_name);

// "NCCL", "MSCCL", "NVSHMEM", "custom all-reduce", "symmetric-memory".
std::string_view collective_library_name(CollectiveLibrary library);

}  // namespace gpulens::kernels
