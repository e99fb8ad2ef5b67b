// SPDX-License-Identifier: Apache-2.0
// The live NVML/GPM collector: opens NVML, probes each selected device once, then
// fills one Sample per device per tick with only the calls known to work.
#include "sources/nvml/nvml_collector.hpp"

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>

#include "sources/nvml/nvml_device.hpp"

namespace gpulens::sources {
namespace {

using nvml::Return;
using nvml_detail::DeviceSlot;

std::string init_failure(Return r, const NvmlApi& api) {
  const std::string what = std::string("nvmlInit_v2 failed: ") + nvml_error_string(r, &api) + " (" +
                           nvml_error_name(r) + ")";
  const char* fix = "run with --replay FILE to read a recorded trace instead";
  switch (r) {
    case Return::DriverNotLoaded:
      return what + ": the NVIDIA kernel driver is not loaded (nvidia-smi should work first); " +
             fix;
    case Return::NoPermission:
      return what +
             ": no access to /dev/nvidia* (in a container, run it with the NVIDIA "
             "container toolkit); " +
             fix;
    case Return::LibRmVersionMismatch:
      return what +
             ": the driver was updated but the old kernel module is still loaded; "
             "reboot or reload the nvidia modules";
    default:
      return what + "; " + fix;
  }
}

class NvmlCollector final : public GpuCollector {
 public:
  NvmlCollector(std::unique_ptr<NvmlApi> owned, const NvmlApi& api, const NvmlOptions& options)
      : owned_(std::move(owned)),
        api_(api),
        options_(options),
        clocks_(nvml_detail::resolve_clocks(options.clock)) {}

  ~NvmlCollector() override {
    xid_.close(api_);
    for (auto& slot : slots_) nvml_detail::release_gpm(api_, *slot);
    api_.shutdown();
  }

  NvmlCollector(const NvmlCollector&) = delete;
  NvmlCollector& operator=(const NvmlCollector&) = delete;

  Status open();

  std::string driver_version() const override { return driver_; }
  const std::vector<DeviceInfo>& devices() const override { return infos_; }
  void sample(std::size_t slot, Sample& out, CollectCost& cost) override;
  std::vector<DeviceEvent> poll_events() override;

 private:
  Result<std::vector<unsigned>> selected_indices();
  void open_device(unsigned index);
  void report_lost(DeviceSlot& slot);

  std::unique_ptr<NvmlApi> owned_;  // destroyed last: dlclose after nvmlShutdown
  const NvmlApi& api_;
  NvmlOptions options_;
  nvml_detail::Clocks clocks_;
  std::string driver_;
  std::vector<std::unique_ptr<DeviceSlot>> slots_;
  std::vector<DeviceInfo> infos_;
  nvml_detail::XidWatcher xid_;
  std::optional<double> xid_polled_at_;  // monotonic; none before the first poll
  std::mutex events_mutex_;              // guards lost_events_ (sample threads push, poll drains)
  std::vector<DeviceEvent> lost_events_;
};

Result<std::vector<unsigned>> NvmlCollector::selected_indices() {
  unsigned count = 0;
  const Return r = api_.deviceGetCount_v2(&count);
  if (r != Return::Success) {
    return Error{std::string("nvmlDeviceGetCount_v2 failed: ") + nvml_error_string(r, &api_)};
  }
  if (count == 0) {
    return Error{
        "NVML sees no GPU (in a container, expose GPUs with the NVIDIA container "
        "toolkit); run with --replay FILE to read a recorded trace instead"};
  }
  std::vector<unsigned> indices;
  if (options_.gpus.empty()) {
    for (unsigned i = 0; i < count; ++i) indices.push_back(i);
    return indices;
  }
  for (int gpu : options_.gpus) {
    if (gpu < 0 || static_cast<unsigned>(gpu) >= count) {
      return Error{"no GPU with index " + std::to_string(gpu) + ": NVML sees " +
                   std::to_string(count) + " GPU(s), indices 0-" + std::to_string(count - 1)};
    }
    const auto index = static_cast<unsigned>(gpu);
    if (std::find(indices.begin(), indices.end(), index) == indices.end()) {
      indices.push_back(index);
    }
  }
  return indices;
}

void NvmlCollector::open_device(unsigned index) {
  auto& slot = *slots_.emplace_back(std::make_unique<DeviceSlot>());
  slot.info.index = static_cast<int>(index);
  slot.energy_refresh_s = options_.energy_refresh_s;
  slot.ecc_refresh_s = options_.ecc_refresh_s;
  slot.link_errors_refresh_s = options_.link_errors_refresh_s;
  slot.nvlink_errors_refresh_s = options_.nvlink_errors_refresh_s;
  slot.dcgm_fields = options_.dcgm_fields;
  slot.process_util_every_s = options_.process_util_every_s;
  const Return r = api_.deviceGetHandleByIndex_v2(index, &slot.handle);
  if (r != Return::Success) {
    // Keep the device listed (indices stay meaningful) but never call it.
    slot.info.extra["x_error"] = std::string("nvmlDeviceGetHandleByIndex_v2: ") +
                                 nvml_error_string(r, &api_) + " (" + nvml_error_name(r) + ")";
    slot.dead = true;
    if (r == Return::GpuIsLost) report_lost(slot);
    return;
  }
  nvml_detail::probe_static(api_, slot);
  const double now = clocks_.monotonic_s();
  nvml_detail::probe_classic(api_, slot, now);
  if (options_.processes) nvml_detail::probe_processes(api_, slot, now, clocks_.unix_s());
  nvml_detail::setup_gpm(api_, slot, options_.gpm, now);
}

Status NvmlCollector::open() {
  char version[nvml::kDriverVersionBufferSize] = {};
  if (api_.systemGetDriverVersion != nullptr &&
      api_.systemGetDriverVersion(version, sizeof(version)) == Return::Success) {
    driver_ = version;
  }
  auto indices = selected_indices();
  if (!indices) return indices.error();
  for (unsigned index : *indices) open_device(index);
  // Every device's first GPM sample was taken by now.
  const double baselines_at = clocks_.monotonic_s();

  // GPM metrics need two samples >= 100 ms apart; taking the second now, rather than
  // on the first tick, lets open() list which metrics each device refuses and means
  // the first tick already has GPM values.
  const bool any_gpm = std::any_of(slots_.begin(), slots_.end(), [](const auto& s) {
    return !s->dead && (s->gpm_on || !s->mig.empty());
  });
  if (any_gpm) {
    const double wait = baselines_at + nvml_detail::kGpmMinInterval_s - clocks_.monotonic_s();
    if (wait > 0) clocks_.sleep_s(wait);
    const double now = clocks_.monotonic_s();
    for (auto& slot : slots_) {
      if (!slot->dead) nvml_detail::probe_gpm_metrics(api_, *slot, now);
    }
  }
  xid_.open(api_, slots_);
  for (auto& slot : slots_) {
    if (slot->lost_seen && !slot->dead.exchange(true)) report_lost(*slot);
    infos_.push_back(slot->info);
  }
  return ok_status();
}

void NvmlCollector::report_lost(DeviceSlot& slot) {
  DeviceEvent e;
  e.kind = DeviceEvent::Kind::Lost;
  e.t = clocks_.unix_s();
  e.gpu = slot.info.index;
  e.detail = "GPU " + std::to_string(slot.info.index) +
             " is lost (NVML_ERROR_GPU_IS_LOST): it fell off the bus or needs a reset; "
             "gpulens stops reading it";
  const std::lock_guard lock(events_mutex_);
  lost_events_.push_back(std::move(e));
}

void NvmlCollector::sample(std::size_t index, Sample& out, CollectCost& cost) {
  // Clear what this collector owns, so a reused Sample never carries stale values.
  for (const auto& m : all_metrics()) {
    if (m.source != MetricSource::Host) out.values.clear(m.id);
  }
  if (out.extra.is_object()) out.extra.erase("x_mig");
  if (index >= slots_.size()) return;
  DeviceSlot& slot = *slots_[index];
  if (slot.dead.load()) {
    out.procs.reset();
    return;
  }
  const double t0 = nvml_detail::thread_cpu_s();
  const double now = clocks_.monotonic_s();
  nvml_detail::read_classic(api_, slot, out.values);
  const double t_classic = nvml_detail::thread_cpu_s();
  nvml_detail::read_slow_counters(api_, slot, now, out.values);
  const double t1 = nvml_detail::thread_cpu_s();
  if (slot.gpm_on || !slot.mig.empty()) nvml_detail::read_gpm(api_, slot, now, out);
  const double t2 = nvml_detail::thread_cpu_s();
  if (options_.processes) {
    auto& procs = out.procs ? *out.procs : out.procs.emplace();
    procs.clear();
    nvml_detail::read_processes(api_, slot, now, procs);
  } else {
    out.procs.reset();
  }
  const double t3 = nvml_detail::thread_cpu_s();
  cost.classic_s += t_classic - t0;
  cost.slow_s += t1 - t_classic;
  cost.gpm_s += t2 - t1;
  cost.procs_s += t3 - t2;

  if (slot.lost_seen) {
    // Whatever was read before the loss is not trusted: the sample stays empty.
    for (const auto& m : all_metrics()) {
      if (m.source != MetricSource::Host) out.values.clear(m.id);
    }
    if (out.extra.is_object()) out.extra.erase("x_mig");
    out.procs.reset();
    if (!slot.dead.exchange(true)) report_lost(slot);
  }
}

std::vector<DeviceEvent> NvmlCollector::poll_events() {
  std::vector<DeviceEvent> events;
  // XIDs wait in the event set until read, so a fast sampler need not ask the
  // driver for them on every tick.
  if (const double now = clocks_.monotonic_s(); !xid_polled_at_ || now - *xid_polled_at_ >= 0.9) {
    xid_polled_at_ = now;
    xid_.poll(api_, slots_, clocks_.unix_s(), events);
  }
  const std::lock_guard lock(events_mutex_);
  if (!lost_events_.empty()) {
    events.insert(events.end(), std::make_move_iterator(lost_events_.begin()),
                  std::make_move_iterator(lost_events_.end()));
    lost_events_.clear();
  }
  return events;
}

}  // namespace

Result<std::unique_ptr<GpuCollector>> open_nvml_collector(const NvmlOptions& options) {
  std::unique_ptr<NvmlApi> owned;
  const NvmlApi* api = options.api;
  if (api == nullptr) {
    auto loaded = load_nvml_library();
    if (!loaded) return loaded.error();
    owned = std::make_unique<NvmlApi>(std::move(loaded).value());
    api = owned.get();
  }
  const Return r = api->init_v2();
  if (r != Return::Success) return Error{init_failure(r, *api)};
  // From here the collector owns the NVML session: its destructor calls nvmlShutdown.
  auto collector = std::make_unique<NvmlCollector>(std::move(owned), *api, options);
  if (auto status = collector->open(); !status) return status.error();
  return std::unique_ptr<GpuCollector>(std::move(collector));
}

}  // namespace gpulens::sources
