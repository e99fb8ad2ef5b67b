// SPDX-License-Identifier: Apache-2.0
#pragma once
// Clauses that name the evidence a fix rests on: which precision and fusion the
// counters leave open, and what the kernel view of `gpulens run --kernels` saw
// (kernels and their types, synchronisations). Each is "" when its evidence is
// missing, so a fix reads the same without a kernel view as before one existed.
#include <string>

#include "diagnosis/state_table.hpp"

namespace gpulens::diagnosis::fix_words {

// " The kernel view: `softmax_kernel` 45 % (fp32), `elementwise_kernel` 30 % (fp32)."
std::string kernels_clause(const FixInput& in);
// A memory-bound GPU's precision lever, by the data's width (fix_premises.hpp).
std::string precision_clause(const FixInput& in);
// A memory-bound GPU's fusion lever: named element-wise kernels, or "if" words.
std::string fusion_clause(const FixInput& in);
// "8.0 CUDA synchronisations per step, the host blocked 3.2 ms per step in them".
std::string sync_figures(const FixInput& in);
// "55 GB/s", what large pinned copies reach on this link; "" when unknown.
std::string pinned_rate(const FixInput& in);

}  // namespace gpulens::diagnosis::fix_words
