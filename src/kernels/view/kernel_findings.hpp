// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel view in words (docs/kernels.md): the headline sentence and the
// findings, each a rule over the numbers analysis.cpp computed. Apart from the
// analysis because they only read a finished view, and the rules change on
// their own (thresholds, wording, fixes).
#include <optional>
#include <string>
#include <vector>

#include "kernels/view/collective_split.hpp"
#include "kernels/view/view.hpp"

namespace gpulens::kernels {

// "How busy the GPU was and where its idle time lies", over the first device's
// marked steps, trace windows or whole activity; "" for a view without devices.
std::string kernel_headline(const KernelView& view);

// Collectives (collectives.hpp) holding at least this share of kernel time are a
// finding of their own: communication, not compute.
inline constexpr double kCommunicationShareMin = 0.10;

// "NCCL collectives take 45 % of kernel time (`AllReduce` 45 %) ...", with the
// communication fix; nullopt below kCommunicationShareMin. Given the ranks'
// split (collective_split.hpp; `split` null: the view's collective_ranks), it
// names the rank that waited longest and the rank it waited for, and the fix
// points at that one.
std::optional<Finding> communication_finding(const KernelView& view,
                                             const std::vector<RankSplit>* split = nullptr);

// The findings, in this order: communication, kernels leaving most SMs idle
// (never a collective), the first device's idle gaps (host-bound, launch-bound)
// and synchronisations, pageable copies.
std::vector<Finding> kernel_findings(const KernelView& view,
                                     const std::vector<RankSplit>* split = nullptr);

}  // namespace gpulens::kernels
