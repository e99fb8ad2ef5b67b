// SPDX-License-Identifier: Apache-2.0
#pragma once
// The "Where the GPU time went" section of a `gpulens run --kernels` report, in
// the report's three forms (docs/kernels.md). Kept apart from the verdict's
// renderers: render_report() appends it when the recording has kernel records.
#include <nlohmann/json.hpp>
#include <string>

#include "kernels/view/view.hpp"

namespace gpulens::render {

std::string kernels_to_text(const kernels::KernelView& v);
inline constexpr int kKernelsJsonVersion = 1;
nlohmann::ordered_json kernels_to_json(const kernels::KernelView& v);
// One <section class="card">, with a kernel table, the gap histogram and a
// timeline strip of a few representative steps.
std::string kernels_to_html(const kernels::KernelView& v);
// The page with the section put before its closing script.
std::string insert_kernels_html(std::string page, const kernels::KernelView& v);

}  // namespace gpulens::render
