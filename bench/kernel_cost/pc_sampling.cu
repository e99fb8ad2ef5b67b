// SPDX-License-Identifier: Apache-2.0
// Issue 51's question for PC sampling: does it cost a kernel launch anything, and
// does it tell which kernels held the GPU? One process per mode (PC sampling is
// set up once per context), so bench/kernel_cost/pcs_run.sh alternates processes.
//
//   pc_sampling MODE THREADS SLOTS SLOT_MS [PERIOD]
//     MODE n: CUPTI never loaded; p: PC sampling on (continuous mode, a drain thread
//     calling cuptiPCSamplingGetData every 200 ms); s: PC sampling enabled with
//     start/stop control but stopped while launches are timed; d: PC sampling on for
//     a second of launches, then disabled (cuptiPCSamplingDisable) before the timed
//     slots, to see whether disabling gives the launch its cost back.
//     PERIOD: log2 of the sampling period in SM cycles (5-31; default 20, 1M cycles).
//
// Launch cost: launch_loop.cuh's empty-kernel launches; one JSON line per slot.
//
// Attribution (modes p and s): then four spinning kernels of known length and width
// run one after another (sampling started in mode s), each group timed with events;
// one JSON line gives each kernel's samples beside its share of the time and of the
// SM-time (time x SMs it held), the two things samples could stand for.
#include <cupti.h>
#include <cupti_pcsampling.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "launch_loop.cuh"

namespace {

using launch_loop::empty_kernel;

__device__ void spin_for(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}
__global__ void spin_wide_long(long long c) { spin_for(c); }
__global__ void spin_wide_short(long long c) { spin_for(c); }
__global__ void spin_one_block(long long c) { spin_for(c); }
__global__ void spin_half_gpu(long long c) { spin_for(c); }

using launch_loop::Clock;

#define CUPTI_OK(x)                                                           \
  do {                                                                        \
    CUptiResult r_ = (x);                                                     \
    if (r_ != CUPTI_SUCCESS) {                                                \
      const char* s_ = nullptr;                                               \
      cuptiGetResultString(r_, &s_);                                          \
      std::printf("{\"error\": \"%s: %s\"}\n", #x, s_ ? s_ : "?");            \
      std::exit(3);                                                           \
    }                                                                         \
  } while (0)

// The PC sampling state of one context: the user buffer CUPTI fills, and what was
// read from it so far, by function.
struct Sampling {
  CUcontext ctx = nullptr;
  size_t stall_reasons = 0;
  CUpti_PCSamplingData data{};
  std::map<std::string, unsigned long long> samples;
  unsigned long long total = 0, dropped = 0, non_user = 0;
  int buffer_full = 0;

  void configure(int period, bool start_stop) {
    CUpti_PCSamplingEnableParams en{CUpti_PCSamplingEnableParamsSize, nullptr, ctx};
    CUPTI_OK(cuptiPCSamplingEnable(&en));
    CUpti_PCSamplingGetNumStallReasonsParams n{};
    n.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
    n.ctx = ctx;
    n.numStallReasons = &stall_reasons;
    CUPTI_OK(cuptiPCSamplingGetNumStallReasons(&n));
    const size_t pcs = 4096;
    data.size = sizeof(CUpti_PCSamplingData);
    data.collectNumPcs = pcs;
    data.pPcData = static_cast<CUpti_PCSamplingPCData*>(calloc(pcs, sizeof(CUpti_PCSamplingPCData)));
    for (size_t i = 0; i < pcs; ++i) {
      data.pPcData[i].stallReason = static_cast<CUpti_PCSamplingStallReason*>(
          calloc(stall_reasons, sizeof(CUpti_PCSamplingStallReason)));
    }
    std::vector<CUpti_PCSamplingConfigurationInfo> info(4);
    info[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    info[0].attributeData.samplingDataBufferData.samplingDataBuffer = &data;
    info[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    info[1].attributeData.collectionModeData.collectionMode =
        CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    info[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    info[2].attributeData.samplingPeriodData.samplingPeriod = static_cast<uint32_t>(period);
    info[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    info[3].attributeData.enableStartStopControlData.enableStartStopControl = start_stop ? 1 : 0;
    CUpti_PCSamplingConfigurationInfoParams p{};
    p.size = CUpti_PCSamplingConfigurationInfoParamsSize;
    p.ctx = ctx;
    p.numAttributes = info.size();
    p.pPCSamplingConfigurationInfo = info.data();
    CUPTI_OK(cuptiPCSamplingSetConfigurationAttribute(&p));
  }

  // Reads what CUPTI holds now into `samples`; returns false once it has nothing more.
  bool drain() {
    data.totalNumPcs = 0;
    CUpti_PCSamplingGetDataParams g{};
    g.size = CUpti_PCSamplingGetDataParamsSize;
    g.ctx = ctx;
    g.pcSamplingData = &data;
    const CUptiResult r = cuptiPCSamplingGetData(&g);
    if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY) return false;
    if (r == CUPTI_ERROR_OUT_OF_MEMORY || data.hardwareBufferFull) ++buffer_full;
    total += data.totalSamples;
    dropped += data.droppedSamples;
    non_user += data.nonUsrKernelsTotalSamples;
    for (size_t i = 0; i < data.totalNumPcs; ++i) {
      const CUpti_PCSamplingPCData& pc = data.pPcData[i];
      unsigned long long n = 0;
      for (size_t k = 0; k < pc.stallReasonCount; ++k) n += pc.stallReason[k].samples;
      samples[pc.functionName ? pc.functionName : "?"] += n;
    }
    return data.remainingNumPcs > 0;
  }
  void drain_all() {
    while (drain()) {
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: pc_sampling n|p|s|d THREADS SLOTS SLOT_MS [PERIOD]\n");
    return 2;
  }
  const char mode = argv[1][0];
  const int threads = std::atoi(argv[2]);
  const int slots = std::atoi(argv[3]);
  const int slot_ms = std::atoi(argv[4]);
  const int period = argc > 5 ? std::atoi(argv[5]) : 20;
  CU_OK(cudaFree(nullptr));
  Sampling pcs;
  cuCtxGetCurrent(&pcs.ctx);
  std::atomic<bool> draining{false};
  std::thread drainer;
  if (mode == 'p' || mode == 's') {
    pcs.configure(period, mode == 's');
    if (mode == 'p') {
      draining = true;
      drainer = std::thread([&] {
        while (draining.load()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          pcs.drain();
        }
      });
    }
  }
  if (mode == 'd') {
    pcs.configure(period, false);
    const auto end = Clock::now() + std::chrono::seconds(1);
    while (Clock::now() < end) {
      for (int i = 0; i < 128; ++i) empty_kernel<<<1, 1>>>();
      CU_OK(cudaDeviceSynchronize());
    }
    pcs.drain_all();
    CUpti_PCSamplingDisableParams d{CUpti_PCSamplingDisableParamsSize, nullptr, pcs.ctx};
    CUPTI_OK(cuptiPCSamplingDisable(&d));
    unsigned long long n = 0;
    for (const auto& [name, k] : pcs.samples) n += k;
    std::printf("{\"mode\": \"d\", \"samples_before_disable\": %llu}\n", n);
  }
  launch_loop::Launcher l(threads);
  for (int slot = 0; slot < slots + 1; ++slot) {  // the first slot warms up, unreported
    const double us = l.slot(slot_ms);
    if (slot > 0) {
      std::printf("{\"mode\": \"%c\", \"threads\": %d, \"slot\": %d, \"us_per_launch\": %.4f}\n", mode, threads,
                  slot, us);
    }
  }
  l.stop();
  if (mode == 'n' || mode == 'd') return 0;
  if (mode == 'p') {
    draining = false;
    drainer.join();
  }

  // Attribution: known kernels, one after another on one stream.
  pcs.drain_all();
  pcs.samples.clear();
  pcs.total = pcs.dropped = pcs.non_user = 0;
  if (mode == 's') {
    CUpti_PCSamplingStartParams st{CUpti_PCSamplingStartParamsSize, nullptr, pcs.ctx};
    CUPTI_OK(cuptiPCSamplingStart(&st));
  }
  int sms = 0, khz = 0;
  CU_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CU_OK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  const auto cycles = [&](double us) { return static_cast<long long>(us * khz / 1000.0); };
  struct Group {
    const char* name;
    void (*kernel)(long long);
    int blocks;
    double us;
    int launches;
    float ms = 0;
  };
  std::vector<Group> groups = {{"spin_wide_long", spin_wide_long, sms, 4000, 100},
                               {"spin_wide_short", spin_wide_short, sms, 200, 1000},
                               {"spin_one_block", spin_one_block, 1, 2000, 100},
                               {"spin_half_gpu", spin_half_gpu, sms / 2, 1000, 100}};
  cudaEvent_t a, b;
  CU_OK(cudaEventCreate(&a));
  CU_OK(cudaEventCreate(&b));
  for (auto& g : groups) {
    CU_OK(cudaEventRecord(a));
    for (int i = 0; i < g.launches; ++i) g.kernel<<<g.blocks, 128>>>(cycles(g.us));
    CU_OK(cudaEventRecord(b));
    CU_OK(cudaEventSynchronize(b));
    CU_OK(cudaEventElapsedTime(&g.ms, a, b));
  }
  if (mode == 's') {
    CUpti_PCSamplingStopParams sp{CUpti_PCSamplingStopParamsSize, nullptr, pcs.ctx};
    CUPTI_OK(cuptiPCSamplingStop(&sp));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // CUPTI's workers decode
  pcs.drain_all();
  double time_total = 0, smtime_total = 0;
  unsigned long long sample_total = 0;
  for (const auto& g : groups) {
    time_total += g.ms;
    smtime_total += g.ms * std::min(g.blocks, sms);
  }
  for (const auto& [name, n] : pcs.samples) sample_total += n;
  std::printf("{\"mode\": \"%c\", \"period\": %d, \"sms\": %d, \"total_samples\": %llu, "
              "\"dropped\": %llu, \"non_user\": %llu, \"buffer_full\": %d, \"kernels\": [",
              mode, period, sms, pcs.total, pcs.dropped, pcs.non_user, pcs.buffer_full);
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& g = groups[i];
    unsigned long long n = 0;
    for (const auto& [name, k] : pcs.samples) {
      if (name.find(g.name) != std::string::npos) n += k;
    }
    std::printf("%s{\"name\": \"%s\", \"ms\": %.2f, \"time_share\": %.4f, \"smtime_share\": %.4f, "
                "\"samples\": %llu, \"sample_share\": %.4f}",
                i ? ", " : "", g.name, g.ms, g.ms / time_total,
                g.ms * std::min(g.blocks, sms) / smtime_total, n,
                sample_total ? static_cast<double>(n) / sample_total : 0.0);
  }
  std::printf("], \"other_functions\": %zu}\n", pcs.samples.size());
  CUpti_PCSamplingDisableParams d{CUpti_PCSamplingDisableParamsSize, nullptr, pcs.ctx};
  cuptiPCSamplingDisable(&d);
  return 0;
}
