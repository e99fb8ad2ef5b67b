// SPDX-License-Identifier: Apache-2.0
#pragma once
// "Where the GPU time went": the kernel records of `gpulens run --kernels`
// (docs/kernels.md) turned into the report's numbers, the driver of the view's
// pipeline (view.hpp names the steps). Pure: a recording in, a view out; tested
// on synthetic records and on recordings from an H100.
#include <cstddef>
#include <optional>
#include <string>

#include "core/trace_reader.hpp"
#include "kernels/view/view.hpp"

namespace gpulens::kernels {

struct AnalysisOptions {
  std::size_t top = 15;
  std::size_t strips = 3;
};

// "Traced in 6 windows of 2 s, one every 20 s: ..." for a sampled view, else "".
std::string sampling_sentence(const Sampling& s);

// nullopt when the recording has no kernel records (not made with --kernels).
std::optional<KernelView> analyze_kernels(const Trace& trace, const AnalysisOptions& options = {});

// The same, from records summed as the recording was read (record_gatherer.hpp,
// read_trace's kernel-record sink): `trace` gives the marks and the header.
class RecordGatherer;
std::optional<KernelView> analyze_kernels(RecordGatherer&& gatherer, const Trace& trace,
                                          const AnalysisOptions& options = {});

}  // namespace gpulens::kernels
