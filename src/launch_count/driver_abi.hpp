// SPDX-License-Identifier: Apache-2.0
#pragma once
// The few parts of the CUDA driver's ABI that the counting library touches, declared
// here rather than taken from cuda.h, so that libgpulens_launches.so builds wherever
// gpulens builds, toolkit or not. They are fixed by the driver's C ABI: handles are
// pointers, CUresult and CUdriverProcAddressQueryResult are C enums (ints), cuuint64_t
// is 64 bits. tests/unit/launch_count/driver_abi_test.cpp holds them against cuda.h
// where the toolkit's headers are installed.
#include <cstdint>

namespace gpulens::launch_count::cu {

using Result = int;                        // CUresult
inline constexpr Result kSuccess = 0;      // CUDA_SUCCESS
inline constexpr Result kNotFound = 500;   // CUDA_ERROR_NOT_FOUND
using Function = struct CUfunc_st*;        // CUfunction (a CUkernel too, as cudart passes it)
using GraphExec = struct CUgraphExec_st*;  // CUgraphExec
using Stream = struct CUstream_st*;        // CUstream
struct LaunchConfig;                       // CUlaunchConfig, passed on untouched
using ProcStatus = int;                    // CUdriverProcAddressQueryResult
inline constexpr std::uint64_t kPerThreadStream =
    1u << 1;  // CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
// cuGetProcAddress's caller asks by CUDA version; from 12.0 the v2 ABI (with status).
inline constexpr int kGetProcV2Version = 12000;

using LaunchKernelFn = Result (*)(Function, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, Stream, void**, void**);
using LaunchKernelExFn = Result (*)(const LaunchConfig*, Function, void**, void**);
using GraphLaunchFn = Result (*)(GraphExec, Stream);
using GetProcV2Fn = Result (*)(const char*, void**, int, std::uint64_t, ProcStatus*);
using GetProcV1Fn = Result (*)(const char*, void**, int, std::uint64_t);
using GetNameFn = Result (*)(const char**, void*);  // cuFuncGetName, cuKernelGetName

}  // namespace gpulens::launch_count::cu
