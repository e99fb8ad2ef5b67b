// SPDX-License-Identifier: Apache-2.0
// Implementation of phase.hpp, and of Ctx.
#include "phase.hpp"

#include "kernels.hpp"

#include <cstdarg>
#include <cstdio>

namespace gw {

std::string fmt(const char* f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

// ---- Ctx -------------------------------------------------------------------

cublasHandle_t Ctx::cublas() {
    if (!blas_) {
        CUBLAS_CHECK(cublasCreate(&blas_));
        CUBLAS_CHECK(cublasSetStream(blas_, stream));
    }
    return blas_;
}

void Ctx::release() {
    if (blas_) CUBLAS_CHECK(cublasDestroy(blas_));
    blas_ = nullptr;
    if (stream) CUDA_CHECK(cudaStreamDestroy(stream));
    stream = nullptr;
}

// ---- Phase -----------------------------------------------------------------

void Phase::start(Fields f) {
    // Setup (allocation, random fill, warm-up) is done before this point and
    // synchronised, so the marked window holds only the steady state.
    CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
    Fields out;
    out.integer("gpu", ctx_.device);
    for (const auto& [k, v] : f.items()) out.raw(k, v);
    MarkWriter& m = marks();
    m.write(name_ + ":start", out);
    m.set_open_phase(name_);
    t0_ = mono_now();
}

void Phase::end(Fields f, const std::string& summary) {
    const double secs = elapsed();
    Fields out;
    out.integer("gpu", ctx_.device).num("seconds", secs);
    for (const auto& [k, v] : f.items()) out.raw(k, v);
    if (stop_requested()) out.boolean("interrupted", true);
    MarkWriter& m = marks();
    m.write(name_ + ":end", out);
    m.set_open_phase("");
    std::fprintf(stderr, "gpulens-workload: %-16s %6.2f s  %s%s\n", name_.c_str(), secs,
                 summary.c_str(), stop_requested() ? "  (interrupted)" : "");
}

// ---- InFlight --------------------------------------------------------------

InFlight::InFlight(cudaStream_t s, int depth) : s_(s), ev_(static_cast<std::size_t>(depth)) {
    for (auto& e : ev_) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
}

InFlight::~InFlight() {
    for (auto& e : ev_) cudaEventDestroy(e);  // teardown: nothing left to report to
}

void InFlight::before_launch() {
    // The slot about to be reused holds the launch issued `depth` launches ago.
    if (count_ >= static_cast<long long>(ev_.size()))
        CUDA_CHECK(cudaEventSynchronize(ev_[count_ % ev_.size()]));
}

void InFlight::after_launch() {
    CUDA_CHECK(cudaEventRecord(ev_[count_ % ev_.size()], s_));
    ++count_;
}

void InFlight::drain() { CUDA_CHECK(cudaStreamSynchronize(s_)); }

// ---- Gemm ------------------------------------------------------------------

Gemm::Gemm(Ctx& c, int n, cudaDataType_t type, unsigned long long seed)
    : ctx_(c), n_(n), type_(type) {
    const std::size_t elems = static_cast<std::size_t>(n) * n;
    const std::size_t bytes = elems * 2;  // bf16 and fp16 are both 2 bytes
    CUDA_CHECK(cudaMalloc(&a_, bytes));
    CUDA_CHECK(cudaMalloc(&b_, bytes));
    CUDA_CHECK(cudaMalloc(&c_, bytes));
    auto fill = type == CUDA_R_16BF ? fill_random_bf16 : fill_random_f16;
    fill(a_, elems, seed, c.stream);
    fill(b_, elems, seed + 1, c.stream);
    fill(c_, elems, seed + 2, c.stream);
    // Warm-up: cuBLAS picks and loads its kernel on the first call; keep that
    // out of the phase's window.
    run();
    CUDA_CHECK(cudaStreamSynchronize(c.stream));
}

Gemm::~Gemm() {
    cudaFree(a_);  // teardown after the phase; a failure here changes nothing
    cudaFree(b_);
    cudaFree(c_);
}

void Gemm::run() {
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(ctx_.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, n_, n_, n_, &alpha, a_,
                              type_, n_, b_, type_, n_, &beta, c_, type_, n_, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
}

void gemm_burst(Ctx& c, Gemm& g, int count) {
    for (int i = 0; i < count; ++i) g.run();
    CUDA_CHECK(cudaStreamSynchronize(c.stream));
}

}  // namespace gw
