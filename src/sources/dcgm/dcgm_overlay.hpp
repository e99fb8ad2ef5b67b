// SPDX-License-Identifier: Apache-2.0
#pragma once
// DCGM as a second source of the profiling counters: a GpuCollector around the NVML
// one that, on the GPUs whose GPM is absent (before Hopper, or denied), fills the
// same metrics (dcgm_fields.hpp) from a DCGM host engine's latest values. A sample
// with a reading from DCGM carries "x_prof_source": "dcgm" (docs/trace-format.md).
#include <memory>

#include "sources/dcgm/dcgm_profiler.hpp"
#include "sources/gpu_collector.hpp"

namespace gpulens::sources {

// `inner` itself when options.mode is Off or every GPU has GPM. Otherwise loads
// libdcgm (or takes options.api) and tries a first session; neither failing is an
// error: the devices' reasons and profiler_status() say why, and the session is
// retried with backoff on a thread of its own.
std::unique_ptr<GpuCollector> with_dcgm(std::unique_ptr<GpuCollector> inner,
                                        const DcgmOptions& options);

// The per-sample key and value that say a sample's profiling readings came from DCGM.
inline constexpr const char* kProfSourceKey = "x_prof_source";
inline constexpr const char* kProfSourceDcgm = "dcgm";

}  // namespace gpulens::sources
