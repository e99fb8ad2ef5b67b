// SPDX-License-Identifier: Apache-2.0
// Processes on a device: compute and graphics lists (v3, 24-byte entries) merged by
// PID, with each one's SM share from nvmlDeviceGetProcessUtilization.
#include <algorithm>

#include "sources/nvml/nvml_device.hpp"

namespace gpulens::sources::nvml_detail {
namespace {

using nvml::Return;
using ListFn = Return (*)(nvml::Device, unsigned*, nvml::ProcessInfo_v3*);

constexpr std::size_t kInitialCapacity = 64;

// NVML_VALUE_NOT_AVAILABLE is ~0; anything past 2^56 bytes (64 PiB) is no real
// allocation either, so treat that whole range as "not available".
constexpr unsigned long long kImplausibleBytes = 1ULL << 56;

// Fills `buffer` (grown only when the driver asks for more) and returns the count.
std::optional<unsigned> list_processes(ListFn fn, DeviceSlot& slot, Call call,
                                       std::vector<nvml::ProcessInfo_v3>& buffer) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto count = static_cast<unsigned>(buffer.size());
    const Return r = fn(slot.handle, &count, buffer.data());
    if (r == Return::InsufficientSize) {
      buffer.resize(std::max<std::size_t>(count + 16, buffer.size() * 2));
      continue;
    }
    if (!slot.ok(r)) {
      if (permanent(r)) slot.switch_off(call);
      return std::nullopt;
    }
    return std::min<unsigned>(count, static_cast<unsigned>(buffer.size()));
  }
  return std::nullopt;
}

ProcessSample* find_pid(std::vector<ProcessSample>& procs, unsigned pid) {
  for (auto& p : procs) {
    if (p.pid == pid) return &p;
  }
  return nullptr;
}

void merge_list(ListFn fn, DeviceSlot& slot, Call call, std::vector<ProcessSample>& out) {
  const auto count = list_processes(fn, slot, call, slot.proc_buffer);
  if (!count) return;
  for (unsigned i = 0; i < *count; ++i) {
    const nvml::ProcessInfo_v3& info = slot.proc_buffer[i];
    std::optional<double> used;
    if (info.usedGpuMemory < kImplausibleBytes) {
      used = static_cast<double>(info.usedGpuMemory) / (1024.0 * 1024.0);
    }
    if (ProcessSample* existing = find_pid(out, info.pid)) {
      // A process in both lists holds one allocation; the larger reading wins rather
      // than counting it twice.
      if (used && (!existing->used_mib || *used > *existing->used_mib)) existing->used_mib = used;
      continue;
    }
    ProcessSample& p = out.emplace_back();
    p.pid = info.pid;
    p.used_mib = used;
  }
}

// SM share per PID since the last call (the driver keeps a short history of samples;
// passing the newest timestamp seen returns only newer ones): max over the interval.
// The answer replaces util_by_pid; PIDs without a newer sample drop out of it.
void refresh_utilization(const NvmlApi& api, DeviceSlot& slot) {
  auto& buffer = slot.util_buffer;
  unsigned count = 0;
  Return r = Return::Unknown;
  for (int attempt = 0; attempt < 2; ++attempt) {
    count = static_cast<unsigned>(buffer.size());
    r = api.deviceGetProcessUtilization(slot.handle, buffer.data(), &count, slot.util_last_seen_us);
    if (r != Return::InsufficientSize) break;
    buffer.resize(std::max<std::size_t>(count + 16, buffer.size() * 2));
  }
  slot.util_by_pid.clear();
  if (r == Return::NotFound) return;  // no samples newer than the last seen
  if (!slot.ok(r)) {
    if (permanent(r)) slot.switch_off(Call::ProcessUtilization);
    return;
  }
  count = std::min<unsigned>(count, static_cast<unsigned>(buffer.size()));
  for (unsigned i = 0; i < count; ++i) {
    const nvml::ProcessUtilizationSample& s = buffer[i];
    slot.util_last_seen_us = std::max(slot.util_last_seen_us, s.timeStamp);
    const double sm = s.smUtil;
    auto it = std::find_if(slot.util_by_pid.begin(), slot.util_by_pid.end(),
                           [&](const auto& e) { return e.first == s.pid; });
    if (it == slot.util_by_pid.end()) {
      slot.util_by_pid.emplace_back(s.pid, sm);
    } else {
      it->second = std::max(it->second, sm);
    }
  }
}

void apply_utilization(const DeviceSlot& slot, std::vector<ProcessSample>& out) {
  for (const auto& [pid, sm] : slot.util_by_pid) {
    if (ProcessSample* p = find_pid(out, pid)) p->sm_util = sm;
  }
}

}  // namespace

void read_processes(const NvmlApi& api, DeviceSlot& slot, double now,
                    std::vector<ProcessSample>& out) {
  if (slot.use(Call::ComputeProcesses)) {
    merge_list(api.deviceGetComputeRunningProcesses_v3, slot, Call::ComputeProcesses, out);
  }
  if (slot.use(Call::GraphicsProcesses)) {
    merge_list(api.deviceGetGraphicsRunningProcesses_v3, slot, Call::GraphicsProcesses, out);
  }
  if (!slot.use(Call::ProcessUtilization) || out.empty()) return;
  if (!slot.util_read_at || now - *slot.util_read_at >= slot.process_util_every_s) {
    refresh_utilization(api, slot);
    slot.util_read_at = now;
  }
  apply_utilization(slot, out);
}

void probe_processes(const NvmlApi& api, DeviceSlot& slot, double now, double unix_now) {
  slot.proc_buffer.resize(kInitialCapacity);
  slot.util_buffer.resize(kInitialCapacity);
  // Start the utilization history at open, so the first tick does not report samples
  // from before gpulens started.
  slot.util_last_seen_us = static_cast<unsigned long long>(unix_now * 1e6);
  const auto enable = [&](Call c, bool loaded) {
    if (loaded) slot.calls.set(static_cast<std::size_t>(c));
  };
  enable(Call::ComputeProcesses, api.deviceGetComputeRunningProcesses_v3 != nullptr);
  enable(Call::GraphicsProcesses, api.deviceGetGraphicsRunningProcesses_v3 != nullptr);
  enable(Call::ProcessUtilization, api.deviceGetProcessUtilization != nullptr);

  std::vector<ProcessSample> scratch;
  read_processes(api, slot, now, scratch);
  // read_processes skips the utilization call when no process runs; probe it anyway so
  // that an unsupported call (MIG mode) is found now, not on the first busy tick.
  if (!slot.util_read_at && slot.use(Call::ProcessUtilization)) refresh_utilization(api, slot);
  // The first tick reads utilization afresh rather than reusing what open saw.
  slot.util_read_at.reset();

  std::string why;
  if (!slot.use(Call::ComputeProcesses)) {
    why = "n/a: nvmlDeviceGetComputeRunningProcesses_v3 unavailable";
  } else if (!slot.use(Call::ProcessUtilization)) {
    why =
        "n/a: per-process SM share unavailable (nvmlDeviceGetProcessUtilization; not "
        "supported under MIG)";
  }
  if (!why.empty()) slot.info.extra["x_processes"] = why;
}

}  // namespace gpulens::sources::nvml_detail
