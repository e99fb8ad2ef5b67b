// SPDX-License-Identifier: Apache-2.0
#include "launch_count/driver_lookup.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>

namespace gpulens::launch_count {

DlsymFn real_dlsym() {
  static const DlsymFn fn = [] {
    for (const char* v : {"GLIBC_2.34", "GLIBC_2.2.5"}) {
      if (void* p = dlvsym(RTLD_NEXT, "dlsym", v)) return reinterpret_cast<DlsymFn>(p);
    }
    // No glibc dlsym behind this one: nothing in the process could look anything up.
    std::abort();
  }();
  return fn;
}

const Driver& driver() {
  static const Driver d = [] {
    Driver x;
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h == nullptr) h = dlopen("libcuda.so.1", RTLD_NOW);
    if (h == nullptr) return x;
    const DlsymFn get = real_dlsym();
    auto fn = [&]<class F>(F& slot, const char* name) { slot = reinterpret_cast<F>(get(h, name)); };
    fn(x.launch_kernel, "cuLaunchKernel");
    fn(x.launch_kernel_ptsz, "cuLaunchKernel_ptsz");
    fn(x.launch_kernel_ex, "cuLaunchKernelEx");
    fn(x.launch_kernel_ex_ptsz, "cuLaunchKernelEx_ptsz");
    fn(x.graph_launch, "cuGraphLaunch");
    fn(x.graph_launch_ptsz, "cuGraphLaunch_ptsz");
    fn(x.func_name, "cuFuncGetName");
    fn(x.kernel_name, "cuKernelGetName");
    return x;
  }();
  return d;
}

}  // namespace gpulens::launch_count
