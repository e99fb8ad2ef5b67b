// SPDX-License-Identifier: Apache-2.0
// The phases. Each one: set up (outside the marks), Phase::start, run until
// the phase's seconds are up or a signal arrives, drain, Phase::end, tear down.
// Sizes and ratios are chosen to reproduce the reference recording's readings (examples/calibration-h100.trace.jsonl).
#include "kernels.hpp"
#include "phase.hpp"

#include <algorithm>
#include <cstring>

namespace gw {
namespace {

constexpr double kSpinLaunchS = 0.1;  // one spin launch; the host keeps 2 queued
constexpr int kBig = 8192;            // the calibration GEMM (~1.1 TFLOP each)

// ---- SM-occupancy ladder: pure spins on a chosen number of SMs ------------

void spin_phase(Ctx& c, const PhaseInfo& pi, int blocks, int threads, bool exclusive) {
    const std::size_t smem = exclusive ? exclusive_spin_smem(c.device) : 0;
    const int per_sm = spin_blocks_per_sm(threads, smem);
    Phase ph(c, pi.name);
    ph.start(Fields()
                 .integer("blocks", blocks)
                 .integer("threads", threads)
                 .integer("smem_bytes", static_cast<long long>(smem))
                 .integer("blocks_per_sm", per_sm)
                 .integer("sm_count", c.prop.multiProcessorCount));
    // Launches of <= 100 ms back to back, two queued, so the GPU never sits
    // between launches; `gpu_until` estimates when the queued work ends, and
    // the last launch is cut short so the work ends with the phase.
    InFlight q(c.stream, 2);
    const double deadline = ph.t0() + c.seconds;
    double gpu_until = ph.t0();
    while (!stop_requested()) {
        gpu_until = std::max(gpu_until, mono_now());
        const double left = deadline - gpu_until;
        if (left < 0.001) break;
        const double d = std::min(kSpinLaunchS, left);
        q.before_launch();
        launch_spin(blocks, threads, smem, d, c.stream);
        q.after_launch();
        gpu_until += d;
    }
    q.drain();
    const int sms = std::min(c.prop.multiProcessorCount, (blocks + per_sm - 1) / per_sm);
    ph.end(Fields().integer("launches", q.launched()).integer("sms_used", sms),
           fmt("%d x %d threads, %d block(s)/SM, ~%d of %d SMs, %lld launches", blocks, threads,
               per_sm, sms, c.prop.multiProcessorCount, q.launched()));
}

int sms(const Ctx& c) { return c.prop.multiProcessorCount; }

void p_one_sm(Ctx& c, const PhaseInfo& pi) { spin_phase(c, pi, 1, 256, false); }
void p_quarter_sm(Ctx& c, const PhaseInfo& pi) { spin_phase(c, pi, sms(c) / 4, 1024, true); }
void p_half_sm(Ctx& c, const PhaseInfo& pi) { spin_phase(c, pi, sms(c) / 2, 1024, true); }
// Two co-resident 1024-thread blocks per SM: every SM active, every warp slot
// filled (occupancy ~100 %, as in the reference).
void p_all_sm(Ctx& c, const PhaseInfo& pi) { spin_phase(c, pi, 2 * sms(c), 1024, false); }
// A hung collective's signature: a kernel "running", 8 SMs of 132 doing it.
void p_spin8(Ctx& c, const PhaseInfo& pi) { spin_phase(c, pi, 8, 256, true); }

// ---- GEMM loops ------------------------------------------------------------

Fields gemm_fields(const Gemm& g, long long count, double secs) {
    return Fields()
        .str("dtype", g.type_name())
        .integer("n", g.n())
        .integer("gemms", count)
        .num("flops", g.flops() * count)
        .num("tflops", g.flops() * count / secs / 1e12);
}

// Back-to-back GEMMs, 4 queued: the healthy compute-bound case.
void p_gemm_bf16(Ctx& c, const PhaseInfo& pi) {
    Gemm g(c, kBig, CUDA_R_16BF, 1);
    Phase ph(c, pi.name);
    ph.start(Fields().str("dtype", "bf16").integer("n", kBig));
    InFlight q(c.stream, 4);
    while (ph.running()) {
        q.before_launch();
        g.run();
        q.after_launch();
    }
    q.drain();
    const double s = ph.elapsed();
    ph.end(gemm_fields(g, q.launched(), s),
           fmt("%.1f TFLOP/s (%lld GEMMs %d^3 bf16)", g.flops() * q.launched() / s / 1e12,
               q.launched(), kBig));
}

// 2048^3 fp16 in batches of 4 then a sync: smaller kernels with host gaps.
void p_gemm_fp16_small(Ctx& c, const PhaseInfo& pi) {
    constexpr int kN = 2048, kBatch = 4;
    Gemm g(c, kN, CUDA_R_16F, 11);
    Phase ph(c, pi.name);
    ph.start(Fields().str("dtype", "fp16").integer("n", kN).integer("batch", kBatch));
    long long n = 0;
    while (ph.running()) {
        gemm_burst(c, g, kBatch);
        n += kBatch;
    }
    const double s = ph.elapsed();
    ph.end(gemm_fields(g, n, s).integer("batch", kBatch),
           fmt("%.1f TFLOP/s (%lld GEMMs %d^3 fp16, synced every %d)", g.flops() * n / s / 1e12,
               n, kN, kBatch));
}

// 50 ms of GEMMs, 50 ms of nothing: the GPU is busy half the time.
void p_duty50_gemm(Ctx& c, const PhaseInfo& pi) {
    Gemm g(c, kBig, CUDA_R_16BF, 3);
    Phase ph(c, pi.name);
    ph.start(Fields().str("dtype", "bf16").integer("n", kBig).num("on_s", 0.05).num("off_s", 0.05));
    long long n = 0, cycles = 0;
    while (ph.running()) {
        InFlight q(c.stream, 2);  // shallow queue: the burst stops near 50 ms
        const double t = mono_now();
        while (mono_now() - t < 0.05 && !stop_requested()) {
            q.before_launch();
            g.run();
            q.after_launch();
        }
        q.drain();
        n += q.launched();
        ++cycles;
        sleep_for(0.05);
    }
    const double s = ph.elapsed();
    ph.end(gemm_fields(g, n, s).integer("cycles", cycles),
           fmt("%.1f TFLOP/s averaged (%lld GEMMs in %lld on/off cycles)",
               g.flops() * n / s / 1e12, n, cycles));
}

// Host-paced loop: `spin_s` of CPU work, then `count` GEMMs and a sync. The
// GPU waits on the host most of the time, and its kernels are big.
void host_paced(Ctx& c, const PhaseInfo& pi, int size, int count, double spin_s, bool spin_first) {
    Gemm g(c, size, CUDA_R_16BF, 5);
    Phase ph(c, pi.name);
    ph.start(Fields().str("dtype", "bf16").integer("n", size).integer("gemms_per_step", count)
                 .num("cpu_s_per_step", spin_s));
    long long steps = 0;
    while (ph.running()) {
        if (spin_first) host_spin(spin_s);
        gemm_burst(c, g, count);
        if (!spin_first) host_spin(spin_s);
        ++steps;
    }
    const double s = ph.elapsed();
    ph.end(gemm_fields(g, steps * count, s).integer("steps", steps),
           fmt("%.1f TFLOP/s averaged (%lld steps: %.0f ms CPU + %d x %d^3)",
               g.flops() * steps * count / s / 1e12, steps, spin_s * 1e3, count, size));
}

// The reference reads gpu_util ~12 % here: 2 GEMMs of 8192^3 (~3 ms at the
// power-capped rate) per 20 ms of CPU. Two 4096^3 GEMMs would be ~0.4 ms
// (~2 %), too little to look like the reference.
void p_host_bound(Ctx& c, const PhaseInfo& pi) { host_paced(c, pi, kBig, 2, 0.020, true); }
// A starved input pipeline: a short GPU step (16 x 4096^3, ~4 ms), then
// 120 ms of CPU. gpu_util a few percent, kernels still large.
void p_starved(Ctx& c, const PhaseInfo& pi) { host_paced(c, pi, 4096, 16, 0.120, false); }

// Background load for overhead measurements: gemm_bf16 under another name.
void p_load(Ctx& c, const PhaseInfo& pi) { p_gemm_bf16(c, pi); }

// ---- memory traffic --------------------------------------------------------

// 1 GiB device-to-device copies: DRAM bound (each byte read once, written once).
void p_copy_d2d(Ctx& c, const PhaseInfo& pi) {
    const std::size_t bytes = 1ull << 30;
    float *src = nullptr, *dst = nullptr;
    CUDA_CHECK(cudaMalloc(&src, bytes));
    CUDA_CHECK(cudaMalloc(&dst, bytes));
    fill_random_f32(src, bytes / sizeof(float), 7, c.stream);
    Phase ph(c, pi.name);
    ph.start(Fields().integer("bytes_per_copy", static_cast<long long>(bytes)));
    InFlight q(c.stream, 4);
    while (ph.running()) {
        q.before_launch();
        CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c.stream));
        q.after_launch();
    }
    q.drain();
    const double s = ph.elapsed();
    const double gbs = static_cast<double>(bytes) * q.launched() / s / 1e9;
    ph.end(Fields().integer("copies", q.launched()).num("bytes", double(bytes) * q.launched())
               .num("copy_gbps", gbs).num("dram_gbps_read_write", 2 * gbs),
           fmt("%.0f GB/s copied (%.0f GB/s read+write, %lld x 1 GiB)", gbs, 2 * gbs,
               q.launched()));
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
}

// 256 MiB pinned host-to-device copies: PCIe bound, no SM working.
void p_h2d_pcie(Ctx& c, const PhaseInfo& pi) {
    const std::size_t bytes = 256ull << 20;
    void* host = nullptr;
    void* dev = nullptr;
    CUDA_CHECK(cudaMallocHost(&host, bytes));  // pinned: DMA at full link speed
    CUDA_CHECK(cudaMalloc(&dev, bytes));
    std::memset(host, 0x5a, bytes);  // touch every page; not zeros
    Phase ph(c, pi.name);
    ph.start(Fields().integer("bytes_per_copy", static_cast<long long>(bytes)));
    InFlight q(c.stream, 4);
    while (ph.running()) {
        q.before_launch();
        CUDA_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, c.stream));
        q.after_launch();
    }
    q.drain();
    const double s = ph.elapsed();
    const double total = static_cast<double>(bytes) * q.launched();
    ph.end(Fields().integer("copies", q.launched()).num("bytes", total)
               .num("gbps", total / s / 1e9).num("mibs", total / s / kMiB),
           fmt("%.1f GB/s = %.0f MiB/s host->device (%lld x 256 MiB)", total / s / 1e9,
               total / s / kMiB, q.launched()));
    CUDA_CHECK(cudaFree(dev));
    CUDA_CHECK(cudaFreeHost(host));
}

// ---- launch overhead and idleness ------------------------------------------

// 1000 launches of a 1024-element add, then a sync: kernel time is all launch
// overhead, with almost no SM working.
void p_tiny_kernels(Ctx& c, const PhaseInfo& pi) {
    constexpr int kN = 1024, kLaunches = 1000;
    float* buf = nullptr;
    CUDA_CHECK(cudaMalloc(&buf, 3 * kN * sizeof(float)));
    fill_random_f32(buf, 3 * kN, 9, c.stream);
    Phase ph(c, pi.name);
    ph.start(Fields().integer("elements", kN).integer("launches_per_sync", kLaunches));
    long long n = 0;
    while (ph.running()) {
        for (int i = 0; i < kLaunches; ++i) launch_add(buf, buf + kN, buf + 2 * kN, kN, c.stream);
        CUDA_CHECK(cudaDeviceSynchronize());
        n += kLaunches;
    }
    const double s = ph.elapsed();
    ph.end(Fields().integer("launches", n).num("launches_per_s", n / s),
           fmt("%.0f launches/s (%lld kernels of %d floats)", n / s, n, kN));
    CUDA_CHECK(cudaFree(buf));
}

void p_idle(Ctx& c, const PhaseInfo& pi) {
    Phase ph(c, pi.name);
    ph.start();
    sleep_for(c.seconds);
    ph.end(Fields(), "no GPU work");
}

// ---- device memory held ----------------------------------------------------

// Most we take: 60 % of the card, and always 2 GiB less than is free now.
std::size_t memory_cap(std::size_t want) {
    std::size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const std::size_t margin = 2ull << 30;
    std::size_t cap = static_cast<std::size_t>(0.6 * static_cast<double>(total_b));
    cap = std::min(cap, free_b > margin ? free_b - margin : 0);
    return std::min(want, cap);
}

// An idle process holding memory: allocated and written, then no kernels.
void p_hold_memory(Ctx& c, const PhaseInfo& pi) {
    const std::size_t bytes = memory_cap(40ull << 30) & ~((1ull << 20) - 1);
    if (bytes == 0) fatal("hold_memory: not enough free device memory");
    void* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, bytes));
    CUDA_CHECK(cudaMemsetAsync(p, 0x5a, bytes, c.stream));
    Phase ph(c, pi.name);
    ph.start(Fields().num("held_mib", static_cast<double>(bytes) / kMiB));
    sleep_for(c.seconds);
    ph.end(Fields().num("held_mib", static_cast<double>(bytes) / kMiB),
           fmt("holding %.1f GiB, no kernels", static_cast<double>(bytes) / kGiB));
    CUDA_CHECK(cudaFree(p));
}

// Memory rising by 256 MiB a second (a leak) while small GEMMs run.
void p_mem_growth(Ctx& c, const PhaseInfo& pi) {
    const std::size_t chunk = 256ull << 20;
    const std::size_t cap = memory_cap(~std::size_t{0});
    Gemm g(c, 2048, CUDA_R_16BF, 13);
    std::vector<void*> held;
    Phase ph(c, pi.name);
    ph.start(Fields().num("growth_mib_per_s", chunk / kMiB).num("cap_mib", cap / kMiB));
    double next = ph.t0();
    while (ph.running()) {
        if (mono_now() >= next && (held.size() + 1) * chunk <= cap) {
            void* p = nullptr;
            CUDA_CHECK(cudaMalloc(&p, chunk));
            CUDA_CHECK(cudaMemsetAsync(p, 0x5a, chunk, c.stream));  // really use it
            held.push_back(p);
            next += 1.0;
        }
        gemm_burst(c, g, 16);  // ~0.5 ms of work per ~11 ms: a light, steady job
        sleep_for(0.01);
    }
    const double mib = static_cast<double>(held.size() * chunk) / kMiB;
    ph.end(Fields().integer("chunks", static_cast<long long>(held.size())).num("held_mib", mib),
           fmt("grew to %.0f MiB in %zu steps of 256 MiB", mib, held.size()));
    for (void* p : held) CUDA_CHECK(cudaFree(p));  // free everything, after the mark
}

const std::vector<PhaseInfo> kPhases = {
    {"idle", "nothing runs for S seconds (context open, no kernels)", true, p_idle},
    {"one_sm", "1 block x 256 threads spinning: 1 SM of all busy", true, p_one_sm},
    {"quarter_sm", "SMs/4 blocks x 1024 threads spinning, one block per SM", true, p_quarter_sm},
    {"half_sm", "SMs/2 blocks x 1024 threads spinning, one block per SM", true, p_half_sm},
    {"all_sm", "2 x SMs blocks x 1024 threads spinning, two per SM (every warp slot)", true,
     p_all_sm},
    {"gemm_bf16", "8192^3 bf16 cuBLAS GEMMs back to back (FP32 accumulate)", true, p_gemm_bf16},
    {"copy_d2d", "1 GiB device-to-device copies back to back", true, p_copy_d2d},
    {"duty50_gemm", "50 ms of 8192^3 bf16 GEMMs, 50 ms sleep, repeated", true, p_duty50_gemm},
    {"tiny_kernels", "1000 launches of an add on 1024 floats, then a sync, repeated", true,
     p_tiny_kernels},
    {"h2d_pcie", "256 MiB pinned host-to-device copies back to back", true, p_h2d_pcie},
    {"host_bound", "20 ms CPU spin, then 2 x 8192^3 bf16 GEMMs, repeated", true, p_host_bound},
    {"spin8", "8 blocks spinning on 8 SMs (a hung collective's look)", false, p_spin8},
    {"mem_growth", "+256 MiB held every second (cap 60% of the card) with small GEMMs", false,
     p_mem_growth},
    {"hold_memory", "40 GiB allocated and written (cap 60%), then no kernels", false,
     p_hold_memory},
    {"gemm_fp16_small", "2048^3 fp16 GEMMs in batches of 4, synced after each batch", false,
     p_gemm_fp16_small},
    {"starved", "16 x 4096^3 bf16 GEMMs, then 120 ms CPU spin, repeated", false, p_starved},
    {"load", "gemm_bf16 under the name 'load' (background load)", false, p_load},
};

}  // namespace

const std::vector<PhaseInfo>& phase_table() { return kPhases; }

const PhaseInfo* find_phase(const std::string& name) {
    for (const auto& p : kPhases)
        if (name == p.name) return &p;
    return nullptr;
}

}  // namespace gw
