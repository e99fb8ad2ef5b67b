// SPDX-License-Identifier: Apache-2.0
// XID errors through one NVML event set for all devices, polled without blocking.
#include <array>
#include <string>
#include <string_view>

#include "core/xid.hpp"
#include "sources/nvml/nvml_device.hpp"

namespace gpulens::sources::nvml_detail {
namespace {

using nvml::Return;

// At most this many events per poll, so a storm cannot stall the sampler thread.
constexpr int kMaxEventsPerPoll = 64;

}  // namespace

void XidWatcher::open(const NvmlApi& api, std::vector<std::unique_ptr<DeviceSlot>>& slots) {
  if (!api.has_events() || api.eventSetCreate(&set_) != Return::Success) {
    set_ = nullptr;
    for (auto& slot : slots) slot->info.extra["x_xid_events"] = "n/a: no NVML event API";
    return;
  }
  int registered = 0;
  for (auto& slot : slots) {
    if (slot->dead.load()) continue;
    const Return r = api.deviceRegisterEvents(slot->handle, nvml::kEventTypeXidCriticalError, set_);
    if (r == Return::Success) {
      ++registered;
    } else {
      // NOT_SUPPORTED on some boards and in some containers: tolerated, but said.
      slot->info.extra["x_xid_events"] = reason_for(r, "nvmlDeviceRegisterEvents");
    }
  }
  if (registered == 0) close(api);
}

void XidWatcher::poll(const NvmlApi& api, const std::vector<std::unique_ptr<DeviceSlot>>& slots,
                      double unix_now, std::vector<DeviceEvent>& out) {
  if (set_ == nullptr) return;
  for (int i = 0; i < kMaxEventsPerPoll; ++i) {
    nvml::EventData data{};
    const Return r = api.eventSetWait_v2(set_, &data, 0);
    if (r != Return::Success) return;  // TIMEOUT: nothing pending
    if ((data.eventType & nvml::kEventTypeXidCriticalError) == 0) continue;
    const DeviceSlot* from = nullptr;
    for (const auto& slot : slots) {
      if (slot->handle == data.device) from = slot.get();
    }
    if (from == nullptr) continue;
    DeviceEvent& e = out.emplace_back();
    e.kind = DeviceEvent::Kind::Xid;
    e.t = unix_now;
    e.gpu = from->info.index;
    e.xid = static_cast<std::int64_t>(data.eventData);
    const std::string_view meaning = xid_meaning(e.xid);
    e.detail = "XID " + std::to_string(e.xid) + ": " +
               std::string(meaning.empty() ? "see NVIDIA's XID catalog" : meaning);
  }
}

void XidWatcher::close(const NvmlApi& api) {
  if (set_ != nullptr) api.eventSetFree(set_);
  set_ = nullptr;
}

}  // namespace gpulens::sources::nvml_detail
