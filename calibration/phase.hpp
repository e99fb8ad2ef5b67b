// SPDX-License-Identifier: Apache-2.0
// Building blocks shared by the phases: the mark bracket, a bounded queue of
// launches, and a cuBLAS GEMM on random data.
#pragma once

#include "marks.hpp"
#include "workloads.hpp"

#include <string>
#include <vector>

namespace gw {

// One phase's bracket: writes NAME:start, times the phase on the monotonic
// clock, writes NAME:end with the figures, prints the progress line.
class Phase {
public:
    Phase(Ctx& c, std::string name) : ctx_(c), name_(std::move(name)) {}
    void start(Fields f = {});
    // True while the phase should keep launching work.
    bool running() const { return !stop_requested() && elapsed() < ctx_.seconds; }
    double elapsed() const { return mono_now() - t0_; }
    double t0() const { return t0_; }
    // `summary` is the human line for stderr, e.g. "712.3 TFLOP/s".
    void end(Fields f, const std::string& summary);

private:
    Ctx& ctx_;
    std::string name_;
    double t0_ = 0;
};

// Keeps at most `depth` launches queued on a stream. Enough queued work that
// the GPU never idles between launches, little enough that a phase (or a
// signal) ends within a few launches of its deadline.
class InFlight {
public:
    InFlight(cudaStream_t s, int depth);
    ~InFlight();
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    void before_launch();  // waits until a slot is free
    void after_launch();   // marks the launch just issued
    void drain();          // waits for everything queued
    long long launched() const { return count_; }

private:
    cudaStream_t s_;
    std::vector<cudaEvent_t> ev_;
    long long count_ = 0;
};

// Square n x n x n GEMM, C = A * B, inputs random in [-1, 1), FP32
// accumulation (CUBLAS_COMPUTE_32F), output in the input type. `type` is
// CUDA_R_16BF or CUDA_R_16F.
class Gemm {
public:
    Gemm(Ctx& c, int n, cudaDataType_t type, unsigned long long seed);
    ~Gemm();
    Gemm(const Gemm&) = delete;
    Gemm& operator=(const Gemm&) = delete;
    void run();  // enqueues one GEMM on the context's stream
    double flops() const { return 2.0 * n_ * n_ * static_cast<double>(n_); }
    int n() const { return n_; }
    const char* type_name() const { return type_ == CUDA_R_16BF ? "bf16" : "fp16"; }

private:
    Ctx& ctx_;
    int n_;
    cudaDataType_t type_;
    void* a_ = nullptr;
    void* b_ = nullptr;
    void* c_ = nullptr;
};

// Runs `g` `count` times, then waits for it: one step of a host-paced loop.
void gemm_burst(Ctx& c, Gemm& g, int count);

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));

}  // namespace gw
