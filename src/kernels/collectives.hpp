// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which kernels are collectives (docs/kernels.md): a communication library's
// kernel (NCCL, MSCCL, NVSHMEM, an intra-node custom all-reduce) spends its time
// moving data between GPUs or spinning until a peer rank arrives, so its SM
// coverage says nothing about the kernel and advice to fill the SMs (more
// blocks, split-K, a larger batch) does not apply to it. Recognised by name:
// CUPTI gives nothing else that says a kernel communicates.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/analysis.hpp"

namespace gpulens::kernels {

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

// Sets KernelRow::collective on each row from its name.
void mark_collectives(std::vector<KernelRow>& rows);

// The share of kernel time in the collective rows (marked above) of `rows`.
double collective_share(const std::vector<KernelRow>& rows);

}  // namespace gpulens::kernels
