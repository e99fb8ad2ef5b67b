// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal to the NVML collector: the state kept per device and the parts that the
// collector's files share (probe, classic readings, GPM, processes, events).
// One device is sampled by one thread at a time, so this state needs no locks; only
// `dead` is also read by the event-polling thread.
#include <array>
#include <atomic>
#include <bitset>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/sample.hpp"
#include "sources/gpu_collector.hpp"
#include "sources/nvml/nvml_api.hpp"
#include "sources/nvml/nvml_collector.hpp"

namespace gpulens::sources::nvml_detail {

// Per-tick NVML calls a device may support. Each is tried once at open (the probe);
// one that answers NOT_SUPPORTED, NO_PERMISSION or FUNCTION_NOT_FOUND is switched off
// and never made again, at open or later.
enum class Call : std::uint8_t {
  Utilization,
  Memory,
  Power,
  Temperature,
  MemoryTemperature,
  SmClock,
  MemClock,
  ClockReasons,
  Pstate,
  Energy,
  EccCorrected,
  EccUncorrected,
  EncoderUtilization,  // nvml_dcgm_fields.cpp from here to NvlinkErrors
  DecoderUtilization,
  RemappedRows,
  PcieReplays,
  NvlinkErrors,
  ComputeProcesses,
  GraphicsProcesses,
  ProcessUtilization,
  Count
};
inline constexpr std::size_t kCallCount = static_cast<std::size_t>(Call::Count);

// Two GPM samples of one device or one MIG GPU instance, and the one metrics request
// that turns them into every metric at once (nvmlGpmMetricsGet costs ~1.1 ms however
// many metrics it computes).
struct GpmStream {
  static constexpr std::size_t kMaxMetrics = 16;
  long gpu_instance = -1;          // MIG GPU instance id; -1 for the whole device
  nvml::GpmSample prev = nullptr;  // older sample, taken at prev_t
  nvml::GpmSample cur = nullptr;   // scratch for the newer one; swapped after use
  double prev_t = 0;
  bool have_prev = false;
  std::unique_ptr<nvml::GpmMetricsGet> request;
  std::array<unsigned, kMaxMetrics> ids{};
  std::array<Metric, kMaxMetrics> keys{};
  unsigned count = 0;
  std::uint64_t empty_intervals = 0;  // intervals the driver had no GPM data for
};

struct EnergyState {
  bool have_counter = false;
  double read_at = 0;      // monotonic time of the last counter read
  double estimate_mj = 0;  // counter at read_at + power integrated since
  double last_t = 0;       // time of the last power reading folded in
  double last_power_w = 0;
  bool have_power = false;
  double last_out_mj = 0;  // output never decreases (it is a counter)
};

struct EccState {
  std::optional<double> read_at;  // monotonic time of the last complete read
  std::optional<double> corrected, uncorrected;
};

// The PCIe replay counter, read every link_errors_refresh_s, and the NVLink error
// counters, read in passes of one link a tick, a pass begun every
// nvlink_errors_refresh_s (NvmlOptions); the last values are repeated in between.
struct LinkErrorState {
  static constexpr std::size_t kNvlinkCounters = 4;  // nvmlNvLinkErrorCounter_t 0..3
  std::optional<double> read_at;                     // PCIe replays' last read (monotonic)
  std::optional<double> pcie_replays;
  std::optional<double> pass_begun_at;  // monotonic time the last NVLink pass began
  // Index into nvlink the running pass reads next; nvlink.size() once it has ended,
  // so a pass runs while a pass has begun and this is below the link count.
  std::size_t next_link = 0;
  bool pass_done = false;  // every link read once: the sums can be published
  // Per active link (DeviceSlot::nvlinks_active), per counter: the last value read.
  std::vector<std::array<std::optional<double>, kNvlinkCounters>> nvlink;
  std::bitset<kNvlinkCounters> nvlink_on;  // counters the device answers
};

struct DeviceSlot {
  nvml::Device handle = nullptr;
  DeviceInfo info;
  unsigned arch = nvml::kArchUnknown;  // nvmlDeviceArchitecture_t
  std::atomic<bool> dead{false};       // lost or never usable: make no more calls
  bool lost_seen = false;              // a call this tick returned GPU_IS_LOST
  bool probing = false;                // the first pass at open records reasons
  std::bitset<kCallCount> calls;       // calls still worth making
  nvml::Return (*clock_reasons)(nvml::Device, unsigned long long*) = nullptr;

  double energy_refresh_s = 300;
  double process_util_every_s = 5;
  double ecc_refresh_s = 10;
  double link_errors_refresh_s = 30;
  double nvlink_errors_refresh_s = 300;
  bool dcgm_fields = true;  // NvmlOptions::dcgm_fields
  EnergyState energy;
  EccState ecc;
  LinkErrorState link_errors;
  std::vector<unsigned> nvlinks_active;  // link numbers NVLink state said active at open

  bool gpm_on = false;
  GpmStream gpm;
  std::vector<GpmStream> mig;  // one per MIG GPU instance

  std::vector<nvml::ProcessInfo_v3> proc_buffer;
  std::vector<nvml::ProcessUtilizationSample> util_buffer;
  unsigned long long util_last_seen_us = 0;
  // SM share per PID from the last nvmlDeviceGetProcessUtilization call, reused until
  // the next one (process_util_every_s later).
  std::vector<std::pair<unsigned, double>> util_by_pid;
  std::optional<double> util_read_at;  // none: read at the next tick

  bool use(Call c) const { return calls.test(static_cast<std::size_t>(c)); }
  void switch_off(Call c) { calls.reset(static_cast<std::size_t>(c)); }
  // Notes GPU_IS_LOST; true when the result can be used.
  bool ok(nvml::Return r) {
    if (r == nvml::Return::GpuIsLost) lost_seen = true;
    return r == nvml::Return::Success;
  }
};

// Clocks with the real ones filled in where the options left them empty.
struct Clocks {
  std::function<double()> monotonic_s;
  std::function<double()> unix_s;
  std::function<void(double)> sleep_s;
};
Clocks resolve_clocks(const NvmlClock& clock);

// CPU time of the calling thread, the unit of CollectCost.
double thread_cpu_s();

// Whether an error means "this will never work here" (as opposed to a hiccup).
inline bool permanent(nvml::Return r) {
  return r == nvml::Return::NotSupported || r == nvml::Return::NoPermission ||
         r == nvml::Return::FunctionNotFound;
}
// The Unsupported reason for a permanent error of `call` (an NVML function name).
std::string reason_for(nvml::Return r, const char* call);
void add_unsupported(DeviceInfo& info, Metric m, const std::string& reason);

// nvml_device_probe.cpp: static facts (name, SM count, limits, links, MIG mode).
void probe_static(const NvmlApi& api, DeviceSlot& slot);
std::string architecture_name(unsigned arch);
bool hopper_or_newer(unsigned arch);
// FP32 cores per SM for a compute capability; 0 when unknown.
int fp32_cores_per_sm(int major, int minor);

// nvml_classic.cpp: per-tick classic readings. With slot.probing set, also records why
// calls are switched off.
void probe_classic(const NvmlApi& api, DeviceSlot& slot, double now);
void read_classic(const NvmlApi& api, DeviceSlot& slot, MetricValues& out);
// The counters read every few seconds or minutes (energy, ECC, PCIe replays, NVLink
// errors), repeated or integrated in between; after read_classic, whose power reading
// the energy integral uses. Timed apart from the per-tick calls (CollectCost::slow_s).
void read_slow_counters(const NvmlApi& api, DeviceSlot& slot, double now, MetricValues& out);
// The NVML function behind a call, for reasons users can search for.
const char* call_function(Call c);
// Switches a call off and gives each of its metrics `reason`.
void switch_off_with_reason(DeviceSlot& slot, Call c, const std::string& reason);
// True when the reading can be used. A permanent failure switches the call off for
// good; while probing it also says why.
bool accept(DeviceSlot& slot, Call c, nvml::Return r);

// nvml_dcgm_fields.cpp: dcgm-exporter's default fields that the classic set lacks
// (encoder/decoder utilization, remapped rows, PCIe replays, NVLink errors).
// probe_dcgm_fields turns their calls on or explains why not, before the probing
// read; read_dcgm_fields (every tick: codec, remapped rows) is called by read_classic,
// read_link_errors (PCIe replays, NVLink errors) by read_slow_counters.
void probe_dcgm_fields(const NvmlApi& api, DeviceSlot& slot);
void read_dcgm_fields(const NvmlApi& api, DeviceSlot& slot, MetricValues& out);
void read_link_errors(const NvmlApi& api, DeviceSlot& slot, double now, MetricValues& out);

// nvml_gpm.cpp
// Decides whether GPM runs on this device and takes the baseline sample; returns
// whether a metrics probe should follow once 100 ms have passed.
bool setup_gpm(const NvmlApi& api, DeviceSlot& slot, bool wanted, double now);
// The first metrics request: metrics the device rejects are dropped (and explained).
void probe_gpm_metrics(const NvmlApi& api, DeviceSlot& slot, double now);
void read_gpm(const NvmlApi& api, DeviceSlot& slot, double now, Sample& out);
void release_gpm(const NvmlApi& api, DeviceSlot& slot);
// The driver refreshes GPM counters at 10 Hz, so two samples must be ~100 ms apart.
// A sampler ticking every 100 ms calls a few ms early or late; without the tolerance a
// strict 100 ms dropped every other GPM reading at 10 Hz on the H100.
inline constexpr double kGpmMinInterval_s = 0.1;
inline constexpr double kGpmJitterTolerance_s = 0.005;
// An empty GPM interval (every metric 0, DRAM missing: core/gpm_interval.hpp)
// keeps the older baseline so that the next interval covers it, for up to this
// long; past it the zeros are emitted (and the diagnosis drops them).
inline constexpr double kGpmMaxEmptySpan_s = 2.0;

// nvml_processes.cpp
// Measured on an H100 under load, nvmlDeviceGetProcessUtilization costs ~2 ms of CPU,
// more than all GPM, and the driver adds a per-process sample only every ~200 ms; so
// it is called at most every slot.process_util_every_s and its answer reused between.
void probe_processes(const NvmlApi& api, DeviceSlot& slot, double now, double unix_now);
void read_processes(const NvmlApi& api, DeviceSlot& slot, double now,
                    std::vector<ProcessSample>& out);

// nvml_events.cpp: XID events for all devices through one event set.
class XidWatcher {
 public:
  void open(const NvmlApi& api, std::vector<std::unique_ptr<DeviceSlot>>& slots);
  void poll(const NvmlApi& api, const std::vector<std::unique_ptr<DeviceSlot>>& slots,
            double unix_now, std::vector<DeviceEvent>& out);
  void close(const NvmlApi& api);

 private:
  nvml::EventSet set_ = nullptr;
};

}  // namespace gpulens::sources::nvml_detail
