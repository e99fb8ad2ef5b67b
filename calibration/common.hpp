// SPDX-License-Identifier: Apache-2.0
// Shared helpers for gpulens-workload: error checks, clocks, stop flag,
// interruptible sleeps and host spins.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <string>

namespace gw {

// Set by the SIGINT/SIGTERM handler. Every loop polls it between launches so a
// phase finishes its current launch, writes its :end mark and returns.
extern volatile std::sig_atomic_t g_stop;
inline bool stop_requested() { return g_stop != 0; }

// Prints the message, closes the open phase's marks with an "error" field (so a
// recording never holds a phase without an end) and exits with status 1.
[[noreturn]] void fatal(const std::string& msg);

std::string cuda_msg(cudaError_t e, const char* call, const char* file, int line);
std::string cublas_msg(cublasStatus_t s, const char* call, const char* file, int line);

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t gw_err_ = (call);                                           \
        if (gw_err_ != cudaSuccess)                                             \
            ::gw::fatal(::gw::cuda_msg(gw_err_, #call, __FILE__, __LINE__));    \
    } while (0)

// Kernel launches report configuration errors through cudaGetLastError only.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CUBLAS_CHECK(call)                                                      \
    do {                                                                        \
        cublasStatus_t gw_st_ = (call);                                         \
        if (gw_st_ != CUBLAS_STATUS_SUCCESS)                                    \
            ::gw::fatal(::gw::cublas_msg(gw_st_, #call, __FILE__, __LINE__));   \
    } while (0)

// Unix time (CLOCK_REALTIME), what marks carry so they line up with samples.
double unix_now();
// Monotonic seconds, for measuring durations (immune to NTP steps).
double mono_now();

// Sleeps `seconds`, in short slices so a signal ends it within ~10 ms.
void sleep_for(double seconds);
// Burns one CPU core for `seconds` (a stand-in for a data loader or Python
// overhead: the GPU waits on the host while the host is busy, not asleep).
void host_spin(double seconds);

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace gw
