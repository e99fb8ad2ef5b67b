// SPDX-License-Identifier: Apache-2.0
// GPM: what the SMs, tensor pipes, DRAM, PCIe and NVLink really did between two
// samples. One nvmlGpmMetricsGet per device (or MIG GPU instance) per tick.
#include <algorithm>
#include <cmath>
#include <utility>

#include "sources/nvml/nvml_device.hpp"

namespace gpulens::sources::nvml_detail {
namespace {

using nvml::Return;

struct GpmWanted {
  unsigned id;
  Metric metric;
};

constexpr std::array kWanted{
    GpmWanted{nvml::kGpmGraphicsUtil, Metric::GraphicsActive},
    GpmWanted{nvml::kGpmSmUtil, Metric::SmActive},
    GpmWanted{nvml::kGpmSmOccupancy, Metric::SmOccupancy},
    GpmWanted{nvml::kGpmAnyTensorUtil, Metric::TensorActive},
    GpmWanted{nvml::kGpmDfmaTensorUtil, Metric::DfmaActive},
    GpmWanted{nvml::kGpmHmmaTensorUtil, Metric::HmmaActive},
    GpmWanted{nvml::kGpmImmaTensorUtil, Metric::ImmaActive},
    GpmWanted{nvml::kGpmDramBwUtil, Metric::DramActive},
    GpmWanted{nvml::kGpmFp64Util, Metric::Fp64Active},
    GpmWanted{nvml::kGpmFp32Util, Metric::Fp32Active},
    GpmWanted{nvml::kGpmFp16Util, Metric::Fp16Active},
    GpmWanted{nvml::kGpmIntegerUtil, Metric::IntActive},
    GpmWanted{nvml::kGpmPcieTxPerSec, Metric::PcieTxMibs},
    GpmWanted{nvml::kGpmPcieRxPerSec, Metric::PcieRxMibs},
    GpmWanted{nvml::kGpmNvlinkTotalRxPerSec, Metric::NvlinkRxMibs},
    GpmWanted{nvml::kGpmNvlinkTotalTxPerSec, Metric::NvlinkTxMibs},
};
static_assert(kWanted.size() <= GpmStream::kMaxMetrics);
static_assert(kWanted.size() <= nvml::kGpmMetricsRequestLimit);

constexpr const char* kNoPermission = "n/a: no permission (GPM returned NVML_ERROR_NO_PERMISSION)";

void explain_all(DeviceInfo& info, const std::string& reason) {
  for (const auto& w : kWanted) add_unsupported(info, w.metric, reason);
}

std::string gpm_reason(Return r) {
  if (r == Return::NoPermission) return kNoPermission;
  if (r == Return::NotSupported) return "n/a: not supported by this GPU";
  return std::string("n/a: GPM failed with ") + nvml_error_name(r);
}

bool init_stream(const NvmlApi& api, GpmStream& s, long gpu_instance) {
  s.gpu_instance = gpu_instance;
  if (api.gpmSampleAlloc(&s.prev) != Return::Success ||
      api.gpmSampleAlloc(&s.cur) != Return::Success) {
    return false;
  }
  s.request = std::make_unique<nvml::GpmMetricsGet>();
  s.count = 0;
  for (const auto& w : kWanted) {
    s.ids[s.count] = w.id;
    s.keys[s.count] = w.metric;
    ++s.count;
  }
  return true;
}

void free_stream(const NvmlApi& api, GpmStream& s) {
  if (s.prev != nullptr) api.gpmSampleFree(s.prev);
  if (s.cur != nullptr) api.gpmSampleFree(s.cur);
  s.prev = s.cur = nullptr;
  s.request.reset();
  s.count = 0;
  s.have_prev = false;
}

Return take_sample(const NvmlApi& api, nvml::Device dev, const GpmStream& s, nvml::GpmSample into) {
  if (s.gpu_instance < 0) return api.gpmSampleGet(dev, into);
  return api.gpmMigSampleGet(dev, static_cast<unsigned>(s.gpu_instance), into);
}

// The signature of an interval the driver had no data for: SM activity and
// every other metric that answered read exactly 0 while DRAM bandwidth did not
// answer (core/gpm_interval.hpp judges recorded samples the same way). "Did not
// answer" includes a success with a value that is not a number: the H200s'
// driver (580.159.04, 4 GPUs) reports DRAM that way, and the trace, which keeps
// only finite values, then shows it absent like an error.
bool empty_interval(const GpmStream& s) {
  bool sm_zero = false;
  bool dram_missing = false;
  for (unsigned i = 0; i < s.count; ++i) {
    const nvml::GpmMetric& m = s.request->metrics[i];
    const bool ok = m.nvmlReturn == Return::Success;
    if (s.keys[i] == Metric::DramActive) {
      dram_missing = !ok || !std::isfinite(m.value);
      continue;
    }
    if (!ok) continue;
    if (m.value != 0.0) return false;
    if (s.keys[i] == Metric::SmActive) sm_zero = true;
  }
  return sm_zero && dram_missing;
}

// Takes a newer sample and computes every requested metric since the older one.
// nullopt: nothing computed this time (first sample, or under 100 ms, less scheduling
// jitter, since the last one: a shorter interval would read garbage).
std::optional<Return> step(const NvmlApi& api, DeviceSlot& slot, GpmStream& s, double now) {
  if (!s.have_prev) {
    const Return r = take_sample(api, slot.handle, s, s.prev);
    if (!slot.ok(r)) return r;
    s.have_prev = true;
    s.prev_t = now;
    return std::nullopt;
  }
  if (now - s.prev_t < kGpmMinInterval_s - kGpmJitterTolerance_s) return std::nullopt;
  const Return r = take_sample(api, slot.handle, s, s.cur);
  if (!slot.ok(r)) return r;
  nvml::GpmMetricsGet& request = *s.request;
  request.version = nvml::kGpmMetricsGetVersion;
  request.numMetrics = s.count;
  request.sample1 = s.prev;
  request.sample2 = s.cur;
  for (unsigned i = 0; i < s.count; ++i) {
    request.metrics[i].metricId = s.ids[i];
    request.metrics[i].nvmlReturn = Return::Unknown;
  }
  const Return got = api.gpmMetricsGet(&request);
  // About one interval in a thousand comes back empty: keep the older baseline
  // so that the next interval spans this one, instead of emitting zeros.
  if (got == Return::Success && empty_interval(s) && now - s.prev_t <= kGpmMaxEmptySpan_s) {
    ++s.empty_intervals;
    return std::nullopt;
  }
  // The newer sample becomes the baseline whether or not the computation worked.
  std::swap(s.prev, s.cur);
  s.prev_t = now;
  slot.ok(got);
  return got;
}

// Drops metrics the device refuses for good, so later requests only ask for the rest.
void prune(GpmStream& s, DeviceInfo* explain) {
  unsigned kept = 0;
  for (unsigned i = 0; i < s.count; ++i) {
    const Return r = s.request->metrics[i].nvmlReturn;
    if (permanent(r)) {
      if (explain != nullptr) add_unsupported(*explain, s.keys[i], gpm_reason(r));
      continue;
    }
    s.ids[kept] = s.ids[i];
    s.keys[kept] = s.keys[i];
    ++kept;
  }
  s.count = kept;
}

template <typename Visit>
void for_each_value(const GpmStream& s, Visit&& visit) {
  for (unsigned i = 0; i < s.count; ++i) {
    const nvml::GpmMetric& m = s.request->metrics[i];
    if (m.nvmlReturn == Return::Success && std::isfinite(m.value)) visit(s.keys[i], m.value);
  }
}

void setup_mig(const NvmlApi& api, DeviceSlot& slot, double now) {
  unsigned max_devices = 0;
  if (!api.has_mig_gpm() || !slot.ok(api.deviceGetMaxMigDeviceCount(slot.handle, &max_devices))) {
    return;
  }
  for (unsigned i = 0; i < max_devices; ++i) {
    nvml::Device mig = nullptr;
    unsigned gpu_instance = 0;
    if (!slot.ok(api.deviceGetMigDeviceHandleByIndex(slot.handle, i, &mig)) ||
        !slot.ok(api.deviceGetGpuInstanceId(mig, &gpu_instance))) {
      continue;
    }
    // Several compute instances share one GPU instance; GPM reads per GPU instance.
    const bool seen = std::any_of(slot.mig.begin(), slot.mig.end(), [&](const GpmStream& s) {
      return s.gpu_instance == static_cast<long>(gpu_instance);
    });
    if (seen) continue;
    GpmStream& s = slot.mig.emplace_back();
    bool usable = init_stream(api, s, static_cast<long>(gpu_instance));
    if (usable) {
      const auto first = step(api, slot, s, now);
      usable = !(first && permanent(*first));
    }
    if (!usable) {
      free_stream(api, s);
      slot.mig.pop_back();
    }
  }
}

}  // namespace

bool setup_gpm(const NvmlApi& api, DeviceSlot& slot, bool wanted, double now) {
  DeviceInfo& info = slot.info;
  if (!wanted) {
    explain_all(info, "n/a: GPM switched off (--no-gpm)");
    return false;
  }
  if (!api.has_gpm()) {
    explain_all(info, "n/a: this NVIDIA driver has no GPM API (needs R520 or newer)");
    return false;
  }
  const bool new_enough = hopper_or_newer(slot.arch);
  const bool known_old = !new_enough && slot.arch != nvml::kArchUnknown;
  nvml::GpmSupport support{nvml::kGpmSupportVersion, 0};
  const Return r = api.gpmQueryDeviceSupport(slot.handle, &support);
  if (!slot.ok(r) || support.isSupportedDevice == 0) {
    if (r == Return::NoPermission) {
      explain_all(info, kNoPermission);
    } else if (known_old) {
      explain_all(info, "n/a: GPM needs Hopper or newer");
    } else {
      explain_all(info,
                  r == Return::Success ? "n/a: GPM not supported by this GPU" : gpm_reason(r));
    }
    return false;
  }
  if (info.mig_enabled.value_or(false)) setup_mig(api, slot, now);

  slot.gpm_on = init_stream(api, slot.gpm, -1);
  if (!slot.gpm_on) {
    explain_all(info, "n/a: nvmlGpmSampleAlloc failed");
  } else if (auto first = step(api, slot, slot.gpm, now); first && permanent(*first)) {
    explain_all(info, info.mig_enabled.value_or(false)
                          ? "n/a: in MIG mode GPM is read per GPU instance (see x_mig)"
                          : gpm_reason(*first));
    free_stream(api, slot.gpm);
    slot.gpm_on = false;
  }
  return slot.gpm_on || !slot.mig.empty();
}

void probe_gpm_metrics(const NvmlApi& api, DeviceSlot& slot, double now) {
  if (slot.gpm_on) {
    const auto r = step(api, slot, slot.gpm, now);
    if (r && *r == Return::Success) {
      prune(slot.gpm, &slot.info);
    } else if (r && permanent(*r)) {
      explain_all(slot.info, gpm_reason(*r));
      slot.gpm.count = 0;
    }
    if (slot.gpm.count == 0) {
      free_stream(api, slot.gpm);
      slot.gpm_on = false;
    }
  }
  for (auto& s : slot.mig) {
    if (const auto r = step(api, slot, s, now); r && *r == Return::Success) prune(s, nullptr);
  }
}

void read_gpm(const NvmlApi& api, DeviceSlot& slot, double now, Sample& out) {
  if (slot.gpm_on) {
    const auto r = step(api, slot, slot.gpm, now);
    if (r && *r == Return::Success) {
      for_each_value(slot.gpm, [&](Metric m, double v) { out.values.set(m, v); });
    } else if (r && permanent(*r)) {
      free_stream(api, slot.gpm);  // e.g. permission revoked: stop asking
      slot.gpm_on = false;
    }
  }
  if (slot.mig.empty()) return;
  // Only MIG devices pay for building this JSON each tick.
  nlohmann::json instances = nlohmann::json::array();
  for (auto& s : slot.mig) {
    const auto r = step(api, slot, s, now);
    if (!r || *r != Return::Success) continue;
    nlohmann::json entry = {{"gpu_instance", s.gpu_instance}};
    for_each_value(s, [&](Metric m, double v) { entry[std::string(metric_info(m).key)] = v; });
    instances.push_back(std::move(entry));
  }
  if (!instances.empty()) out.extra["x_mig"] = std::move(instances);
}

void release_gpm(const NvmlApi& api, DeviceSlot& slot) {
  free_stream(api, slot.gpm);
  for (auto& s : slot.mig) free_stream(api, s);
  slot.mig.clear();
  slot.gpm_on = false;
}

}  // namespace gpulens::sources::nvml_detail
