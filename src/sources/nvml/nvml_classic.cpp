// SPDX-License-Identifier: Apache-2.0
// The classic per-tick readings (utilization, memory, power, temperatures, clocks,
// clock event reasons, pstate, energy, ECC): a few microseconds each.
#include <algorithm>
#include <array>

#include "sources/nvml/nvml_device.hpp"

namespace gpulens::sources::nvml_detail {
namespace {

using nvml::Return;

struct CallInfo {
  const char* function;  // for reasons users can search for
  std::array<Metric, 4> metrics;
  std::size_t metric_count;
};

constexpr std::array<CallInfo, kCallCount> kCalls{{
    {"nvmlDeviceGetUtilizationRates", {Metric::GpuUtil, Metric::MemUtil}, 2},
    {"nvmlDeviceGetMemoryInfo_v2", {Metric::MemUsedMib}, 1},
    {"nvmlDeviceGetPowerUsage", {Metric::PowerW}, 1},
    {"nvmlDeviceGetTemperature", {Metric::TempC}, 1},
    {"nvmlDeviceGetFieldValues(NVML_FI_DEV_MEMORY_TEMP)", {Metric::MemTempC}, 1},
    {"nvmlDeviceGetClockInfo(SM)", {Metric::SmClockMhz}, 1},
    {"nvmlDeviceGetClockInfo(MEM)", {Metric::MemClockMhz}, 1},
    {"nvmlDeviceGetCurrentClocksEventReasons", {Metric::ClockEventReasons}, 1},
    {"nvmlDeviceGetPerformanceState", {Metric::Pstate}, 1},
    {"nvmlDeviceGetTotalEnergyConsumption", {Metric::EnergyMj}, 1},
    {"nvmlDeviceGetTotalEccErrors(CORRECTED)", {Metric::EccCorrected}, 1},
    {"nvmlDeviceGetTotalEccErrors(UNCORRECTED)", {Metric::EccUncorrected}, 1},
    {"nvmlDeviceGetEncoderUtilization", {Metric::EncUtil}, 1},
    {"nvmlDeviceGetDecoderUtilization", {Metric::DecUtil}, 1},
    {"nvmlDeviceGetRemappedRows",
     {Metric::RemappedRowsCorrectable, Metric::RemappedRowsUncorrectable, Metric::RowRemapFailure},
     3},
    {"nvmlDeviceGetPcieReplayCounter", {Metric::PcieReplays}, 1},
    {"nvmlDeviceGetNvLinkErrorCounter",
     {Metric::NvlinkCrcFlitErrors, Metric::NvlinkCrcDataErrors, Metric::NvlinkReplayErrors,
      Metric::NvlinkRecoveryErrors},
     4},
    {"nvmlDeviceGetComputeRunningProcesses_v3", {}, 0},
    {"nvmlDeviceGetGraphicsRunningProcesses_v3", {}, 0},
    {"nvmlDeviceGetProcessUtilization", {}, 0},
}};

const CallInfo& info_of(Call c) {
  return kCalls[static_cast<std::size_t>(c)];
}

std::optional<double> field_as_double(const nvml::FieldValue& field) {
  switch (field.valueType) {
    case nvml::kValueTypeDouble:
      return field.value.dVal;
    case nvml::kValueTypeUnsignedInt:
      return field.value.uiVal;
    case nvml::kValueTypeUnsignedLong:
      return static_cast<double>(field.value.ulVal);
    case nvml::kValueTypeUnsignedLongLong:
      return static_cast<double>(field.value.ullVal);
    case nvml::kValueTypeSignedLongLong:
      return static_cast<double>(field.value.sllVal);
    case nvml::kValueTypeSignedInt:
      return field.value.siVal;
    case nvml::kValueTypeUnsignedShort:
      return field.value.usVal;
    default:
      return std::nullopt;
  }
}

void read_memory_temperature(const NvmlApi& api, DeviceSlot& slot, MetricValues& out) {
  nvml::FieldValue field{};
  field.fieldId = nvml::kFieldMemoryTemp;
  if (!accept(slot, Call::MemoryTemperature, api.deviceGetFieldValues(slot.handle, 1, &field))) {
    return;
  }
  // The call succeeds as a whole while the field itself may be unsupported.
  if (!accept(slot, Call::MemoryTemperature, field.nvmlReturn)) return;
  if (auto v = field_as_double(field); v && *v > 0) out.set(Metric::MemTempC, *v);
}

// The energy counter costs ~4.4 ms of CPU per read, so it is read every
// energy_refresh_s and power x time (trapezoids, W x s = J, x 1000 = mJ) is added in
// between. The output is a counter and never goes down, even when a fresh reading
// lands below the running estimate.
void read_energy(const NvmlApi& api, DeviceSlot& slot, double now, MetricValues& out) {
  EnergyState& e = slot.energy;
  const std::optional<double> power = out.get(Metric::PowerW);
  bool fresh = false;
  if (slot.use(Call::Energy) && (!e.have_counter || now - e.read_at >= slot.energy_refresh_s)) {
    unsigned long long mj = 0;
    if (accept(slot, Call::Energy, api.deviceGetTotalEnergyConsumption(slot.handle, &mj))) {
      e.have_counter = true;
      e.read_at = now;
      e.estimate_mj = static_cast<double>(mj);
      fresh = true;
    }
  }
  if (!e.have_counter) return;
  if (!fresh) {
    if (!power) return;  // no power this tick: the gap is folded in at the next one
    const double mean_w = e.have_power ? (*power + e.last_power_w) / 2 : *power;
    e.estimate_mj += mean_w * std::max(0.0, now - e.last_t) * 1000.0;
  }
  e.last_t = now;
  e.have_power = power.has_value();
  if (power) e.last_power_w = *power;
  e.last_out_mj = std::max(e.last_out_mj, e.estimate_mj);
  out.set(Metric::EnergyMj, e.last_out_mj);
}

// Volatile ECC counts, read every ecc_refresh_s (see NvmlOptions) and repeated in
// between. A read that fails is tried again at the next tick, not a refresh later.
void read_ecc(const NvmlApi& api, DeviceSlot& slot, double now, MetricValues& out) {
  EccState& e = slot.ecc;
  if (!e.read_at || now - *e.read_at >= slot.ecc_refresh_s) {
    const auto read = [&](Call call, int type) -> std::optional<double> {
      if (!slot.use(call)) return std::nullopt;
      unsigned long long count = 0;
      const Return r =
          api.deviceGetTotalEccErrors(slot.handle, type, nvml::kEccCounterVolatile, &count);
      if (!accept(slot, call, r)) return std::nullopt;
      return static_cast<double>(count);
    };
    e.corrected = read(Call::EccCorrected, nvml::kMemoryErrorCorrected);
    e.uncorrected = read(Call::EccUncorrected, nvml::kMemoryErrorUncorrected);
    const bool complete = (e.corrected || !slot.use(Call::EccCorrected)) &&
                          (e.uncorrected || !slot.use(Call::EccUncorrected));
    e.read_at = complete ? std::optional<double>(now) : std::nullopt;
  }
  if (e.corrected) out.set(Metric::EccCorrected, *e.corrected);
  if (e.uncorrected) out.set(Metric::EccUncorrected, *e.uncorrected);
}

}  // namespace

const char* call_function(Call c) {
  return info_of(c).function;
}

void switch_off_with_reason(DeviceSlot& slot, Call c, const std::string& reason) {
  slot.switch_off(c);
  const CallInfo& call = info_of(c);
  for (std::size_t i = 0; i < call.metric_count; ++i) {
    add_unsupported(slot.info, call.metrics[i], reason);
  }
}

bool accept(DeviceSlot& slot, Call c, Return r) {
  if (slot.ok(r)) return true;
  if (permanent(r)) {
    if (slot.probing) {
      switch_off_with_reason(slot, c, reason_for(r, info_of(c).function));
    } else {
      slot.switch_off(c);
    }
  }
  return false;
}

void read_classic(const NvmlApi& api, DeviceSlot& slot, MetricValues& out) {
  const nvml::Device dev = slot.handle;
  if (slot.use(Call::Utilization)) {
    nvml::Utilization u{};
    if (accept(slot, Call::Utilization, api.deviceGetUtilizationRates(dev, &u))) {
      out.set(Metric::GpuUtil, u.gpu);
      out.set(Metric::MemUtil, u.memory);
    }
  }
  if (slot.use(Call::Memory)) {
    nvml::Memory_v2 memory{};
    memory.version = nvml::kMemoryV2Version;
    if (accept(slot, Call::Memory, api.deviceGetMemoryInfo_v2(dev, &memory))) {
      out.set(Metric::MemUsedMib, static_cast<double>(memory.used) / (1024.0 * 1024.0));
    }
  }
  unsigned value = 0;
  if (slot.use(Call::Power) && accept(slot, Call::Power, api.deviceGetPowerUsage(dev, &value))) {
    out.set(Metric::PowerW, value / 1000.0);
  }
  if (slot.use(Call::Temperature) &&
      accept(slot, Call::Temperature,
             api.deviceGetTemperature(dev, nvml::kTemperatureGpu, &value))) {
    out.set(Metric::TempC, value);
  }
  if (slot.use(Call::MemoryTemperature)) read_memory_temperature(api, slot, out);
  if (slot.use(Call::SmClock) &&
      accept(slot, Call::SmClock, api.deviceGetClockInfo(dev, nvml::kClockSm, &value))) {
    out.set(Metric::SmClockMhz, value);
  }
  if (slot.use(Call::MemClock) &&
      accept(slot, Call::MemClock, api.deviceGetClockInfo(dev, nvml::kClockMem, &value))) {
    out.set(Metric::MemClockMhz, value);
  }
  unsigned long long bits = 0;
  if (slot.use(Call::ClockReasons) &&
      accept(slot, Call::ClockReasons, slot.clock_reasons(dev, &bits))) {
    out.set(Metric::ClockEventReasons, static_cast<double>(bits));
  }
  int pstate = 0;
  if (slot.use(Call::Pstate) &&
      accept(slot, Call::Pstate, api.deviceGetPerformanceState(dev, &pstate)) && pstate >= 0 &&
      pstate < nvml::kPstateUnknown) {
    out.set(Metric::Pstate, pstate);
  }
  read_dcgm_fields(api, slot, out);
}

void read_slow_counters(const NvmlApi& api, DeviceSlot& slot, double now, MetricValues& out) {
  read_energy(api, slot, now, out);
  read_ecc(api, slot, now, out);
  read_link_errors(api, slot, now, out);
}

void probe_classic(const NvmlApi& api, DeviceSlot& slot, double now) {
  // Each call is on when its entry point was loaded; the probing pass below switches
  // off (and explains) those the device refuses.
  const auto enable = [&](Call c, bool loaded) {
    if (loaded) {
      slot.calls.set(static_cast<std::size_t>(c));
    } else {
      switch_off_with_reason(slot, c,
                             std::string("n/a: this NVIDIA driver lacks ") + info_of(c).function);
    }
  };
  enable(Call::Utilization, api.deviceGetUtilizationRates != nullptr);
  enable(Call::Memory, api.deviceGetMemoryInfo_v2 != nullptr);
  enable(Call::Power, api.deviceGetPowerUsage != nullptr);
  enable(Call::Temperature, api.deviceGetTemperature != nullptr);
  enable(Call::MemoryTemperature, api.deviceGetFieldValues != nullptr);
  enable(Call::SmClock, api.deviceGetClockInfo != nullptr);
  enable(Call::MemClock, api.deviceGetClockInfo != nullptr);
  enable(Call::Pstate, api.deviceGetPerformanceState != nullptr);
  enable(Call::Energy, api.deviceGetTotalEnergyConsumption != nullptr);
  enable(Call::EccCorrected, api.deviceGetTotalEccErrors != nullptr);
  enable(Call::EccUncorrected, api.deviceGetTotalEccErrors != nullptr);
  // "Throttle" was renamed "event" reasons in R535; older drivers only have the former.
  slot.clock_reasons = api.deviceGetCurrentClocksEventReasons != nullptr
                           ? api.deviceGetCurrentClocksEventReasons
                           : api.deviceGetCurrentClocksThrottleReasons;
  enable(Call::ClockReasons, slot.clock_reasons != nullptr);

  // With ECC off the counters are meaningless; say so rather than "not supported".
  int current = 0;
  int pending = 0;
  if (api.deviceGetEccMode != nullptr &&
      slot.ok(api.deviceGetEccMode(slot.handle, &current, &pending)) && current == 0) {
    switch_off_with_reason(slot, Call::EccCorrected, "n/a: ECC is disabled on this GPU");
    switch_off_with_reason(slot, Call::EccUncorrected, "n/a: ECC is disabled on this GPU");
  }

  probe_dcgm_fields(api, slot);

  MetricValues scratch;
  slot.probing = true;
  read_classic(api, slot, scratch);
  read_slow_counters(api, slot, now, scratch);
  slot.probing = false;
}

}  // namespace gpulens::sources::nvml_detail
