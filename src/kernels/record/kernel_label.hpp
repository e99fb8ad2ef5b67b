// SPDX-License-Identifier: Apache-2.0
#pragma once
// A kernel's name as a Prometheus label value (docs/kernels-agent.md): short,
// valid UTF-8, one line, and never the `other` bucket's name. Kernel names come
// from the jobs themselves (any local process), so everything about them is
// bounded here: template arguments, parameters and namespaces go (so the
// instantiations of one template are one series), whitespace collapses, and the
// result is cut to kKernelLabelBytes without splitting a character. Escaping for
// the exposition format is the writer's (exposition/prom_writer.hpp).
#include <cstddef>
#include <string>
#include <string_view>

namespace gpulens::kernels {

inline constexpr std::size_t kKernelLabelBytes = 64;
// The label of the time of every kernel without a series of its own.
inline constexpr std::string_view kOtherKernelLabel = "other";

// "void at::native::(anonymous namespace)::softmax_kernel<float>(float*, int)"
// -> "softmax_kernel"; "" -> "(unnamed)"; a kernel really named "other" -> "other_".
std::string kernel_label(std::string_view demangled, std::size_t max_bytes = kKernelLabelBytes);

}  // namespace gpulens::kernels
