// SPDX-License-Identifier: Apache-2.0
// A libnvidia-ml.so.1 for machines with no GPU, loaded by the real gpulens binaries
// through LD_LIBRARY_PATH (tests/e2e/slurm_cluster.sh): GPUs whose processes are
// whatever a file lists at the moment of each call, so that a process started by a
// real scheduler shows up on a "GPU" as soon as it writes its own PID there.
//
//   GPULENS_FAKE_NVML_GPUS   how many GPUs (1 to 8, default 2)
//   GPULENS_FAKE_NVML_PROCS  a file of lines "GPU PID BYTES" (absent: no processes)
//
// A GPU with a process reads 95 % busy with its processes' memory in use; one
// without reads idle. Only the required entry points and a few optional ones are
// exported: gpulens treats every other one as missing, as on an old driver.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sources/nvml/nvml_types.hpp"

namespace nvml = gpulens::sources::nvml;
using nvml::Return;

namespace {

constexpr unsigned kMaxGpus = 8;
constexpr unsigned long long kTotalBytes = 85520809984ULL;  // an H100 80GB HBM3

struct FakeDevice {
  unsigned index;
};
FakeDevice devices[kMaxGpus];

unsigned gpu_count() {
  const char* text = std::getenv("GPULENS_FAKE_NVML_GPUS");
  if (text == nullptr || *text == '\0') return 2;
  const long n = std::strtol(text, nullptr, 10);
  return n < 1 ? 1U : n > static_cast<long>(kMaxGpus) ? kMaxGpus : static_cast<unsigned>(n);
}

FakeDevice* device(nvml::Device handle) {
  auto* d = reinterpret_cast<FakeDevice*>(handle);
  if (d < devices || d >= devices + gpu_count()) return nullptr;
  return d;
}

// The processes the file lists on GPU `index` now; a malformed line is skipped.
std::vector<nvml::ProcessInfo_v3> processes_on(unsigned index) {
  std::vector<nvml::ProcessInfo_v3> out;
  const char* path = std::getenv("GPULENS_FAKE_NVML_PROCS");
  if (path == nullptr) return out;
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return out;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned gpu = 0, pid = 0;
    unsigned long long bytes = 0;
    if (std::sscanf(line, "%u %u %llu", &gpu, &pid, &bytes) != 3 || gpu != index) continue;
    out.push_back(nvml::ProcessInfo_v3{pid, bytes, 0xffffffffU, 0xffffffffU});
  }
  std::fclose(f);
  return out;
}

unsigned long long used_bytes(unsigned index) {
  unsigned long long used = 512ULL << 20;  // the driver's own reservation
  for (const auto& p : processes_on(index)) used += p.usedGpuMemory;
  return used < kTotalBytes ? used : kTotalBytes;
}

Return copy_string(const char* text, char* out, unsigned length) {
  if (out == nullptr) return Return::InvalidArgument;
  if (std::strlen(text) + 1 > length) return Return::InsufficientSize;
  std::memcpy(out, text, std::strlen(text) + 1);
  return Return::Success;
}

}  // namespace

#define FAKE_NVML extern "C" __attribute__((visibility("default")))

FAKE_NVML Return nvmlInit_v2() {
  for (unsigned i = 0; i < kMaxGpus; ++i) devices[i].index = i;
  return Return::Success;
}

FAKE_NVML Return nvmlShutdown() {
  return Return::Success;
}

FAKE_NVML const char* nvmlErrorString(Return r) {
  return r == Return::Success ? "Success" : "fake NVML error";
}

FAKE_NVML Return nvmlSystemGetDriverVersion(char* out, unsigned length) {
  return copy_string("550.54.15", out, length);
}

FAKE_NVML Return nvmlDeviceGetCount_v2(unsigned* count) {
  if (count == nullptr) return Return::InvalidArgument;
  *count = gpu_count();
  return Return::Success;
}

FAKE_NVML Return nvmlDeviceGetHandleByIndex_v2(unsigned index, nvml::Device* handle) {
  if (handle == nullptr || index >= gpu_count()) return Return::InvalidArgument;
  *handle = reinterpret_cast<nvml::Device>(&devices[index]);
  return Return::Success;
}

FAKE_NVML Return nvmlDeviceGetIndex(nvml::Device handle, unsigned* index) {
  const FakeDevice* d = device(handle);
  if (d == nullptr || index == nullptr) return Return::InvalidArgument;
  *index = d->index;
  return Return::Success;
}

FAKE_NVML Return nvmlDeviceGetName(nvml::Device handle, char* out, unsigned length) {
  if (device(handle) == nullptr) return Return::InvalidArgument;
  return copy_string("NVIDIA H100 80GB HBM3", out, length);
}

FAKE_NVML Return nvmlDeviceGetUUID(nvml::Device handle, char* out, unsigned length) {
  const FakeDevice* d = device(handle);
  if (d == nullptr) return Return::InvalidArgument;
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "GPU-fa4e0000-0000-0000-0000-00000000000%u", d->index);
  return copy_string(uuid, out, length);
}

FAKE_NVML Return nvmlDeviceGetUtilizationRates(nvml::Device handle, nvml::Utilization* out) {
  const FakeDevice* d = device(handle);
  if (d == nullptr || out == nullptr) return Return::InvalidArgument;
  const bool busy = !processes_on(d->index).empty();
  out->gpu = busy ? 95 : 0;
  out->memory = busy ? 40 : 0;
  return Return::Success;
}

FAKE_NVML Return nvmlDeviceGetMemoryInfo_v2(nvml::Device handle, nvml::Memory_v2* out) {
  const FakeDevice* d = device(handle);
  if (d == nullptr || out == nullptr) return Return::InvalidArgument;
  if (out->version != nvml::kMemoryV2Version) return Return::ArgumentVersionMismatch;
  out->total = kTotalBytes;
  out->reserved = 512ULL << 20;
  out->used = used_bytes(d->index);
  out->free = kTotalBytes - out->used;
  return Return::Success;
}

FAKE_NVML Return nvmlDeviceGetPowerUsage(nvml::Device handle, unsigned* milliwatts) {
  const FakeDevice* d = device(handle);
  if (d == nullptr || milliwatts == nullptr) return Return::InvalidArgument;
  *milliwatts = processes_on(d->index).empty() ? 70000 : 550000;
  return Return::Success;
}

FAKE_NVML Return nvmlDeviceGetEnforcedPowerLimit(nvml::Device handle, unsigned* milliwatts) {
  if (device(handle) == nullptr || milliwatts == nullptr) return Return::InvalidArgument;
  *milliwatts = 700000;
  return Return::Success;
}

FAKE_NVML Return nvmlDeviceGetTemperature(nvml::Device handle, int /*sensor*/, unsigned* celsius) {
  if (device(handle) == nullptr || celsius == nullptr) return Return::InvalidArgument;
  *celsius = 55;
  return Return::Success;
}

// dcgm-exporter's default fields: an idle video engine, no remapped rows, no PCIe
// replays (no NVLink state is exported: NVLink errors read "n/a" as on a PCIe board).
FAKE_NVML Return nvmlDeviceGetEncoderUtilization(nvml::Device handle, unsigned* utilization,
                                                 unsigned* period_us) {
  if (device(handle) == nullptr || utilization == nullptr || period_us == nullptr) {
    return Return::InvalidArgument;
  }
  *utilization = 0;
  *period_us = 167000;
  return Return::Success;
}

FAKE_NVML Return nvmlDeviceGetDecoderUtilization(nvml::Device handle, unsigned* utilization,
                                                 unsigned* period_us) {
  return nvmlDeviceGetEncoderUtilization(handle, utilization, period_us);
}

FAKE_NVML Return nvmlDeviceGetRemappedRows(nvml::Device handle, unsigned* correctable,
                                           unsigned* uncorrectable, unsigned* pending,
                                           unsigned* failed) {
  if (device(handle) == nullptr || correctable == nullptr || uncorrectable == nullptr ||
      pending == nullptr || failed == nullptr) {
    return Return::InvalidArgument;
  }
  *correctable = *uncorrectable = *pending = *failed = 0;
  return Return::Success;
}

FAKE_NVML Return nvmlDeviceGetPcieReplayCounter(nvml::Device handle, unsigned* value) {
  if (device(handle) == nullptr || value == nullptr) return Return::InvalidArgument;
  *value = 0;
  return Return::Success;
}

// NVML's two-call protocol: a count too small for the list gets InsufficientSize
// and the count needed.
FAKE_NVML Return nvmlDeviceGetComputeRunningProcesses_v3(nvml::Device handle, unsigned* count,
                                                         nvml::ProcessInfo_v3* out) {
  const FakeDevice* d = device(handle);
  if (d == nullptr || count == nullptr) return Return::InvalidArgument;
  const auto list = processes_on(d->index);
  const bool fits = *count >= list.size();
  *count = static_cast<unsigned>(list.size());
  if (!fits) return Return::InsufficientSize;
  if (!list.empty() && out == nullptr) return Return::InvalidArgument;
  for (std::size_t i = 0; i < list.size(); ++i) out[i] = list[i];
  return Return::Success;
}
