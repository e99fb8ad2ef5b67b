// SPDX-License-Identifier: Apache-2.0
// Device kernels of gpulens-workload, behind plain host functions so the phase
// code (workloads.cu) needs no launch syntax of its own.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gw {

// Spins every thread of `blocks` x `threads` for `seconds` of wall time
// (measured on the GPU's own timer), touching no memory: SMs read active, DRAM
// reads 0. `smem` bytes of dynamic shared memory are reserved per block, only
// to control how many blocks fit on one SM.
void launch_spin(int blocks, int threads, std::size_t smem, double seconds, cudaStream_t s);

// Bytes of dynamic shared memory that make a spin block exclusive on its SM
// (one block per SM whatever its thread count), after raising the kernel's
// shared-memory limit. Fails loudly if the device cannot be made to do so.
std::size_t exclusive_spin_smem(int device);

// How many spin blocks of this shape the occupancy calculator fits on one SM.
int spin_blocks_per_sm(int threads, std::size_t smem);

// Fills a buffer with uniform random values in [-1, 1) from a counter-based
// hash: never zeros (zeros can run faster than real data on tensor cores).
void fill_random_bf16(void* p, std::size_t n, std::uint64_t seed, cudaStream_t s);
void fill_random_f16(void* p, std::size_t n, std::uint64_t seed, cudaStream_t s);
void fill_random_f32(float* p, std::size_t n, std::uint64_t seed, cudaStream_t s);

// c[i] = a[i] + b[i]: the tiny kernel of the launch-bound phase.
void launch_add(const float* a, const float* b, float* c, int n, cudaStream_t s);

}  // namespace gw
