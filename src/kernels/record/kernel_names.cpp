// SPDX-License-Identifier: Apache-2.0
#include "kernels/record/kernel_names.hpp"

#include <array>
#include <utility>

namespace gpulens::kernels {
namespace {

bool upper(char c) {
  return c >= 'A' && c <= 'Z';
}

// A library's camel-case prefix: "nccl" then an upper-case letter, as every NCCL
// kernel is named (ncclDevKernel_, ncclKernel_, ncclAllReduceRingLLKernel_ of
// NCCL 2.4). A user kernel that only mentions the library (nccl_pack,
// my_nccl_like) is the user's own compute.
bool camel_prefix(std::string_view name, std::string_view prefix) {
  return name.size() > prefix.size() && name.starts_with(prefix) && upper(name[prefix.size()]);
}

// NCCL's collective names, the longer first where one starts the other.
constexpr std::array<std::string_view, 6> kNcclOperations = {
    "AllReduce", "AllGather", "ReduceScatter", "Reduce", "Broadcast", "SendRecv"};

// "ncclDevKernel_AllReduce_Sum_bf16_RING_LL" -> "AllReduce"; the older
// "ncclAllReduceRingLLKernel_sum_f32" -> "AllReduce"; "ncclDevKernel_Generic" -> "".
std::string nccl_operation(std::string_view name) {
  for (std::string_view head : {"ncclDevKernel_", "ncclKernel_", "nccl"}) {
    if (!name.starts_with(head)) continue;
    const std::string_view rest = name.substr(head.size());
    for (const auto op : kNcclOperations) {
      if (rest.starts_with(op)) return std::string(op);
    }
    return {};
  }
  return {};
}

// Kernels of PyTorch's symmetric memory (torch/csrc/distributed/c10d/symm_mem):
// peers' buffers read directly, with barriers on signal pads between them.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kSymmetricMemory = {{
    {"one_shot_all_reduce_kernel", "AllReduce"},
    {"two_shot_all_reduce_kernel", "AllReduce"},
    {"multimem_all_reduce_kernel", "AllReduce"},
    {"multimem_all_gather_kernel", "AllGather"},
}};

}  // namespace

std::string short_kernel_name(const std::string& name) {
  std::string s;
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') {
      ++depth;
    } else if (c == '>') {
      if (depth > 0) --depth;
    } else if (depth == 0) {
      s += c;
    }
  }
  for (const char* anon : {"(anonymous namespace)::", "(anonymous namespace)"}) {
    for (auto p = s.find(anon); p != std::string::npos; p = s.find(anon)) {
      s.erase(p, std::string(anon).size());
    }
  }
  if (auto p = s.find('('); p != std::string::npos) s.resize(p);
  if (auto p = s.rfind(' '); p != std::string::npos) s = s.substr(p + 1);
  if (auto p = s.rfind("::"); p != std::string::npos) s = s.substr(p + 2);
  if (s.empty()) return name.size() > 60 ? name.substr(0, 60) : name;
  return s;
}

std::optional<CollectiveKind> classify_collective(std::string_view demangled_name) {
  // The short name (no namespace, template arguments or parameters): a user's
  // kernel templated on an NCCL type (my_kernel<ncclDataType_t>) is not NCCL's.
  const std::string name = short_kernel_name(std::string(demangled_name));
  const std::string_view n = name;
  if (camel_prefix(n, "nccl")) return CollectiveKind{CollectiveLibrary::Nccl, nccl_operation(n)};
  if (camel_prefix(n, "msccl")) return CollectiveKind{CollectiveLibrary::Msccl, {}};
  if (n.starts_with("nvshmemi_") || n.starts_with("nvshmemx_")) {
    return CollectiveKind{CollectiveLibrary::Nvshmem, {}};
  }
  // vLLM's and SGLang's custom all-reduce (cross_device_reduce_1stage, _2stage
  // and their variants).
  if (n.starts_with("cross_device_reduce_")) {
    return CollectiveKind{CollectiveLibrary::CustomAllReduce, "AllReduce"};
  }
  for (const auto& [kernel, op] : kSymmetricMemory) {
    if (n == kernel) return CollectiveKind{CollectiveLibrary::SymmetricMemory, std::string(op)};
  }
  return std::nullopt;
}

bool is_collective(std::string_view demangled_name) {
  return classify_collective(demangled_name).has_value();
}

std::string_view collective_library_name(CollectiveLibrary library) {
  switch (library) {
    case CollectiveLibrary::Nccl:
      return "NCCL";
    case CollectiveLibrary::Msccl:
      return "MSCCL";
    case CollectiveLibrary::Nvshmem:
      return "NVSHMEM";
    case CollectiveLibrary::CustomAllReduce:
      return "custom all-reduce";
    case CollectiveLibrary::SymmetricMemory:
      break;
  }
  return "symmetric-memory";
}

}  // namespace gpulens::kernels
