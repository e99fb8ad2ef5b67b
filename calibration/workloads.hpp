// SPDX-License-Identifier: Apache-2.0
// The phases of gpulens-workload: what each runs, and the table main() reads.
#pragma once

#include "common.hpp"

#include <string>
#include <vector>

namespace gw {

// What every phase needs: the device, one stream, a lazily made cuBLAS handle.
struct Ctx {
    int device = 0;
    cudaDeviceProp prop{};
    cudaStream_t stream = nullptr;
    double seconds = 8.0;  // length of each phase

    cublasHandle_t cublas();  // created on first use, bound to `stream`
    void release();           // destroys the handle and the stream

private:
    cublasHandle_t blas_ = nullptr;
};

struct PhaseInfo {
    const char* name;
    const char* help;
    bool in_all;  // part of the `all` calibration set
    void (*run)(Ctx&, const PhaseInfo&);
};

// All phases, in the order `all` runs them (the reference recording's order).
const std::vector<PhaseInfo>& phase_table();
const PhaseInfo* find_phase(const std::string& name);

}  // namespace gw
