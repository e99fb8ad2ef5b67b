// SPDX-License-Identifier: Apache-2.0
// Device kernels: the clock spin, random fills and the element-wise add.
#include "common.hpp"
#include "kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

namespace gw {
namespace {

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The spin: inner loop on clock64 (a register read, no memory traffic), and
// every ~2000 cycles a look at %globaltimer for the wall-time deadline. The
// deadline is in nanoseconds rather than cycles because the SM clock moves
// (power capping, boost), and a launch must last what the host planned so the
// phase ends on time. __launch_bounds__(1024, 2) keeps registers low enough
// for two 1024-thread blocks per SM (all_sm fills every warp slot that way).
__global__ void __launch_bounds__(1024, 2)
    spin_kernel(unsigned long long duration_ns, int* never_written) {
    const unsigned long long start = global_ns();
    unsigned long long rounds = 0;
    for (;;) {
        const long long c0 = clock64();
        while (clock64() - c0 < 2000) {
        }
        ++rounds;
        if (global_ns() - start >= duration_ns) break;
    }
    // Never true; makes the loop's result observable so it is not removed.
    if (rounds == 0) *never_written = 1;
}

__device__ __forceinline__ float hash_uniform(std::size_t i, std::uint64_t seed) {
    // splitmix64 of (index, seed): independent values, reproducible per seed.
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(i) + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;  // [-1, 1)
}

template <typename T>
__global__ void fill_kernel(T* p, std::size_t n, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        float v = hash_uniform(i, seed);
        if constexpr (std::is_same_v<T, __nv_bfloat16>) p[i] = __float2bfloat16(v);
        else if constexpr (std::is_same_v<T, __half>) p[i] = __float2half(v);
        else p[i] = v;
    }
}

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

template <typename T>
void fill(T* p, std::size_t n, std::uint64_t seed, cudaStream_t s) {
    // A grid-stride loop over a fixed grid: any size, one launch.
    fill_kernel<T><<<1024, 256, 0, s>>>(p, n, seed);
    CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_spin(int blocks, int threads, std::size_t smem, double seconds, cudaStream_t s) {
    const auto ns = static_cast<unsigned long long>(seconds * 1e9);
    spin_kernel<<<blocks, threads, smem, s>>>(ns, nullptr);
    CUDA_CHECK_LAUNCH();
}

int spin_blocks_per_sm(int threads, std::size_t smem) {
    int n = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, spin_kernel, threads, smem));
    return n;
}

std::size_t exclusive_spin_smem(int device) {
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    // Two 1024-thread blocks fit one SM by threads and registers (2048 threads
    // per SM on Hopper). Asking each block for more than half the SM's shared
    // memory leaves room for only one, so N blocks land on N distinct SMs.
    std::size_t want = p.sharedMemPerMultiprocessor / 2 + 4096;
    if (want > p.sharedMemPerBlockOptin) want = p.sharedMemPerBlockOptin;
    CUDA_CHECK(cudaFuncSetAttribute(spin_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(want)));
    // Ask for the largest shared-memory carveout, so the driver does not pick a
    // smaller L1/shared split in which even one block would not fit.
    CUDA_CHECK(cudaFuncSetAttribute(spin_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared));
    for (int threads : {256, 1024}) {
        int n = spin_blocks_per_sm(threads, want);
        if (n != 1)
            fatal("cannot make spin blocks exclusive per SM: " + std::to_string(n) +
                  " blocks of " + std::to_string(threads) + " threads with " +
                  std::to_string(want) + " B shared memory fit one SM");
    }
    return want;
}

void fill_random_bf16(void* p, std::size_t n, std::uint64_t seed, cudaStream_t s) {
    fill(static_cast<__nv_bfloat16*>(p), n, seed, s);
}
void fill_random_f16(void* p, std::size_t n, std::uint64_t seed, cudaStream_t s) {
    fill(static_cast<__half*>(p), n, seed, s);
}
void fill_random_f32(float* p, std::size_t n, std::uint64_t seed, cudaStream_t s) {
    fill(p, n, seed, s);
}

void launch_add(const float* a, const float* b, float* c, int n, cudaStream_t s) {
    add_kernel<<<(n + 255) / 256, 256, 0, s>>>(a, b, c, n);
    CUDA_CHECK_LAUNCH();
}

}  // namespace gw
