// SPDX-License-Identifier: Apache-2.0
#pragma once
// Finds and opens the job's libcupti at run time. The injection library links no
// CUPTI: the copy it uses must be the one the job's CUDA stack brings (two CUPTI
// copies in one process fight over the driver's single profiling interface).
#include <string>
#include <vector>

namespace gpulens::inject {

struct CuptiLibrary {
  void* handle = nullptr;
  std::string path;                   // where it was found
  std::vector<std::string> searched;  // every place tried, for the report when none was found
  bool job_loaded = false;            // the job had this copy loaded before we looked
};

// In order: a libcupti already loaded in the process (the job's own, e.g. PyTorch's
// kineto); $GPULENS_CUPTI when the user set it (then that file only); the
// nvidia-cuda-cupti wheel beside a loaded libtorch/libcudart (site-packages/nvidia/
// cuda_cupti/lib, nvidia/cu13/lib, ...); the dynamic loader's own search
// (LD_LIBRARY_PATH, ld.so.cache) by soname; the toolkit copy `gpulens run` found
// ($GPULENS_TOOLKIT_CUPTI); the CUDA toolkit under $CUDA_HOME and /usr/local/cuda.
CuptiLibrary open_cupti();

// Whether the job carries a CUPTI client of its own that may start an activity
// session later: it had libcupti loaded before we opened it (`lib.job_loaded`), or
// PyTorch's CUDA library (kineto, torch.profiler) or kineto itself is loaded.
bool job_may_profile(const CuptiLibrary& lib);

}  // namespace gpulens::inject
