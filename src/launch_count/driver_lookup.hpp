// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the counting library finds what it stands in front of: glibc's own dlsym
// (this library defines dlsym, interpose.cpp) and the driver's functions, looked up
// in libcuda.so.1 itself so that they can never be this library's own.
#include "launch_count/driver_abi.hpp"

namespace gpulens::launch_count {

using DlsymFn = void* (*)(void*, const char*) noexcept;

// glibc's dlsym, by version (2.34 moved it from libdl into libc).
DlsymFn real_dlsym();

struct Driver {
  cu::LaunchKernelFn launch_kernel = nullptr;  // for the entry points a PLT reaches
  cu::LaunchKernelFn launch_kernel_ptsz = nullptr;
  cu::LaunchKernelExFn launch_kernel_ex = nullptr;
  cu::LaunchKernelExFn launch_kernel_ex_ptsz = nullptr;
  cu::GraphLaunchFn graph_launch = nullptr;
  cu::GraphLaunchFn graph_launch_ptsz = nullptr;
  cu::GetNameFn func_name = nullptr;    // cuFuncGetName
  cu::GetNameFn kernel_name = nullptr;  // cuKernelGetName (cudart 12+ launches CUkernels)
};

// libcuda.so.1's functions, looked up once; all null in a process that cannot load it.
const Driver& driver();

}  // namespace gpulens::launch_count
