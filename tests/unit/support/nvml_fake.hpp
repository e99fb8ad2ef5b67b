// SPDX-License-Identifier: Apache-2.0
#pragma once
// A fake NVML in the spirit of DCGM's injection library: GPUs described as data, every
// entry point of the loader table implemented against them, every call counted, and
// a clock the test moves by hand. One FakeNvml is active at a time (NVML's C API has
// no user pointer, so the entry points find it through `active`).
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sources/nvml/nvml_api.hpp"
#include "sources/nvml/nvml_collector.hpp"

namespace gpulens::testing {

using sources::nvml::Return;
inline constexpr Return kOk = Return::Success;

struct FakeGpmMetric {
  Return ret = Return::Success;
  double value = 0;
};

struct FakeGpu {
  std::string name = "NVIDIA H100 80GB HBM3";
  std::string uuid = "GPU-fake-0";
  unsigned arch = sources::nvml::kArchHopper;
  int cc_major = 9, cc_minor = 0;
  unsigned cuda_cores = 16896;
  Return attributes_ret = Return::NotSupported;  // as on whole (non-MIG) GPUs
  unsigned attributes_sm = 0;
  unsigned long long mem_total = 85520809984ULL, mem_used = 1ULL << 30;
  unsigned util_gpu = 97, util_mem = 40;
  Return power_ret = Return::Success;
  unsigned power_mw = 500000, power_limit_mw = 700000;
  unsigned temp = 60;
  Return mem_temp_field_ret = Return::Success;  // the field's own nvmlReturn
  unsigned mem_temp = 70;
  unsigned sm_clock = 1755, mem_clock = 2619, max_sm = 1980, max_mem = 2619;
  unsigned long long reasons = 0x4;
  int pstate = 0;
  unsigned long long energy_mj = 1000000;
  int ecc_mode = 1;
  unsigned long long ecc_corrected = 3, ecc_uncorrected = 0;
  Return ecc_ret = Return::Success;  // after the ECC-mode check
  bool mig = false;
  std::vector<unsigned> mig_instances;  // GPU instance ids when mig
  unsigned nvlinks_active = 0;          // links 0..n-1 exist; NOT_SUPPORTED when 0
  std::set<unsigned> nvlinks_down;      // of those, the links NVLink state calls inactive
  // nvmlDeviceGetEncoderUtilization / DecoderUtilization
  unsigned enc_util = 12, dec_util = 34;
  Return codec_ret = Return::Success;
  // nvmlDeviceGetRemappedRows
  unsigned remapped_correctable = 2, remapped_uncorrectable = 1, remap_failed = 0;
  Return remapped_ret = Return::Success;
  // nvmlDeviceGetPcieReplayCounter
  unsigned pcie_replays = 5;
  Return pcie_replay_ret = Return::Success;
  // nvmlDeviceGetNvLinkErrorCounter: the same count on every link, by counter id
  // (nvmlNvLinkErrorCounter_t 0..3); a counter listed in nvlink_counter_ret answers that.
  std::array<unsigned long long, 4> nvlink_errors{{7, 1, 3, 2}};
  std::map<unsigned, Return> nvlink_counter_ret;
  bool gpm_supported = true;
  Return gpm_query_ret = Return::Success;
  Return gpm_sample_ret = Return::Success;
  std::map<unsigned, FakeGpmMetric> gpm;  // by metric id; absent ids: NOT_SUPPORTED
  std::vector<sources::nvml::ProcessInfo_v3> compute, graphics;
  Return proc_util_ret = Return::Success;
  std::vector<sources::nvml::ProcessUtilizationSample> util_samples;
  bool lost = false;
};

// The handle NVML would give for a MIG device.
struct FakeMigDevice {
  FakeGpu* parent;
  unsigned gpu_instance;
};

struct FakeGpmSample {
  FakeGpu* gpu = nullptr;
  double t = -1;
  long gpu_instance = -1;
};

class FakeNvml {
 public:
  FakeNvml() { active = this; }
  ~FakeNvml() { active = nullptr; }
  FakeNvml(const FakeNvml&) = delete;
  FakeNvml& operator=(const FakeNvml&) = delete;

  inline static FakeNvml* active = nullptr;

  std::deque<FakeGpu> gpus;  // deque: handles (addresses) stay valid as GPUs are added
  std::deque<FakeMigDevice> mig_devices;
  std::set<std::string> hidden;  // symbols the lookup pretends not to find
  Return init_ret = Return::Success;
  double mono = 1000.0;
  double wall = 1.8e9;
  std::map<std::string, int> calls;  // "function#gpu" (or "function") -> count
  std::deque<sources::nvml::EventData> events;
  int live_gpm_samples = 0;
  double min_gpm_interval = 1e9;  // shortest sample1 -> sample2 span computed
  int shutdowns = 0;

  int count(const std::string& function, int gpu) const {
    auto it = calls.find(function + "#" + std::to_string(gpu));
    return it == calls.end() ? 0 : it->second;
  }
  int count(const std::string& function) const {
    auto it = calls.find(function);
    return it == calls.end() ? 0 : it->second;
  }
  sources::nvml::Device handle(std::size_t i) {
    return reinterpret_cast<sources::nvml::Device>(&gpus[i]);
  }

  sources::NvmlSymbolLookup lookup() {
    return [this](const char* symbol) -> void* {
      if (hidden.count(symbol) != 0) return nullptr;
      const auto& table = functions();
      auto it = table.find(symbol);
      return it == table.end() ? nullptr : it->second;
    };
  }
  sources::NvmlClock clock() {
    return {[this] { return mono; }, [this] { return wall; },
            [this](double s) {
              mono += s;
              wall += s;
            }};
  }
  void advance(double s) {
    mono += s;
    wall += s;
  }

  // Every entry point the fake implements, keyed by its symbol (nvml_fake.cpp).
  static const std::map<std::string, void*>& functions();
};

// Two GPUs: an H100 with GPM (the FakeGpu defaults) and an A100 without; the collector
// opens against the fake with the fake's clock.
class NvmlCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeGpu& h100 = fake.gpus.emplace_back();  // the defaults describe an H100 SXM
    h100.gpm = {{1, {kOk, 91}},   {2, {kOk, 88.5}}, {3, {kOk, 40}},  {4, {kOk, 21}},
                {5, {kOk, 70}},   {6, {kOk, 0}},    {7, {kOk, 65}},  {9, {Return::Unknown, 0}},
                {10, {kOk, 45}},  {11, {kOk, 0.5}}, {12, {kOk, 12}}, {13, {kOk, 3}},
                {20, {kOk, 100}}, {21, {kOk, 250}}};  // 60/61 (NVLink): NOT_SUPPORTED
    FakeGpu& a100 = fake.gpus.emplace_back();
    a100.name = "NVIDIA A100-SXM4-80GB";
    a100.uuid = "GPU-fake-1";
    a100.arch = sources::nvml::kArchAmpere;
    a100.cc_major = 8;
    a100.cuda_cores = 6912;
    a100.gpm_supported = false;
    a100.mem_temp_field_ret = Return::NotSupported;
    a100.ecc_mode = 0;
    a100.nvlinks_active = 12;
    api = std::move(sources::load_nvml_api(fake.lookup())).value();
  }

  std::unique_ptr<sources::GpuCollector> open(sources::NvmlOptions options = {}) {
    options.api = &api;
    options.clock = fake.clock();
    auto collector = sources::open_nvml_collector(options);
    EXPECT_TRUE(collector.ok()) << collector.error().message;
    return collector.ok() ? std::move(collector).value() : nullptr;
  }

  Sample tick(sources::GpuCollector& c, std::size_t slot, double advance_s = 0) {
    fake.advance(advance_s);
    Sample s;
    c.sample(slot, s, cost);
    return s;
  }

  FakeNvml fake;
  sources::NvmlApi api;
  sources::CollectCost cost;
};

// Helpers for the fake's entry points (nvml_fake.cpp, nvml_fake_gpm.cpp).
namespace fake_detail {

using Dev = sources::nvml::Device;

inline FakeNvml& fake() {
  return *FakeNvml::active;
}
inline FakeGpu* gpu_of(Dev d) {
  return reinterpret_cast<FakeGpu*>(d);
}

inline int index_of(const FakeGpu* g) {
  for (std::size_t i = 0; i < fake().gpus.size(); ++i) {
    if (&fake().gpus[i] == g) return static_cast<int>(i);
  }
  return -1;
}

// Counts the call and answers GPU_IS_LOST for a lost GPU, as the driver does.
inline Return enter(const char* function, Dev d) {
  FakeGpu* g = gpu_of(d);
  ++fake().calls[std::string(function) + "#" + std::to_string(index_of(g))];
  return g->lost ? Return::GpuIsLost : Return::Success;
}
inline void enter(const char* function) {
  ++fake().calls[function];
}

#define FAKE_ENTER(function, device) \
  if (const Return lost = enter(function, device); lost != Return::Success) return lost

inline Return copy_string(const std::string& s, char* out, unsigned size) {
  if (s.size() + 1 > size) return Return::InsufficientSize;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return Return::Success;
}

template <auto Member, typename F>
void put(std::map<std::string, void*>& table, const char* symbol, F f) {
  using Fn = std::remove_reference_t<decltype(std::declval<sources::NvmlApi&>().*Member)>;
  Fn fn = f;  // checks the fake's signature against the loader's
  table[symbol] = reinterpret_cast<void*>(fn);
}

void add_events_and_mig(std::map<std::string, void*>& table);
void add_gpm(std::map<std::string, void*>& table);

}  // namespace fake_detail

}  // namespace gpulens::testing
