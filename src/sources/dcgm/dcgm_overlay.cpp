// SPDX-License-Identifier: Apache-2.0
#include "sources/dcgm/dcgm_overlay.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sources/dcgm/dcgm_fields.hpp"

namespace gpulens::sources {
namespace {

// A GPU reads from DCGM when the NVML collector found no SM activity on it (GPM
// absent or refused), it answered NVML at open, and it is not split by MIG: DCGM
// profiles MIG instances as entities of their own, which gpulens does not map yet.
bool lacks_gpm_for_dcgm(const DeviceInfo& info) {
  return info.unsupported_reason(Metric::SmActive) != nullptr && !info.extra.contains("x_error") &&
         info.mig_enabled != true;
}

class DcgmOverlay final : public GpuCollector {
 public:
  DcgmOverlay(std::unique_ptr<GpuCollector> inner, std::unique_ptr<DcgmApi> owned_api,
              std::vector<bool> targets)
      : inner_(std::move(inner)),
        owned_api_(std::move(owned_api)),
        targets_(std::move(targets)),
        infos_(inner_->devices()) {}

  ~DcgmOverlay() override { profiler_.reset(); }  // its thread ends before the library goes
  DcgmOverlay(const DcgmOverlay&) = delete;
  DcgmOverlay& operator=(const DcgmOverlay&) = delete;

  void start(const DcgmApi& api, const DcgmOptions& options) {
    std::vector<DcgmTarget> targets;
    for (std::size_t i = 0; i < infos_.size(); ++i) {
      if (targets_[i]) targets.push_back({infos_[i].index, infos_[i].uuid});
    }
    profiler_ = std::make_unique<DcgmProfiler>(api, std::move(targets), options);
    explain(profiler_->status());
    profiler_->start();
  }

  // libdcgm did not load: the devices say so, and nothing is retried.
  void unavailable(const DcgmOptions& options, const std::string& why) {
    ProfilerStatus s;
    s.source = "dcgm";
    s.state = "unavailable";
    s.detail = why;
    s.address = options.mode == DcgmOptions::Mode::Embedded ? "embedded" : options.address;
    for (std::size_t i = 0; i < infos_.size(); ++i) {
      if (targets_[i]) s.gpus.push_back(infos_[i].index);
    }
    // The devices' reasons are read by people: a node without DCGM, the common
    // case of `auto`, gets one short clause; health keeps dlopen's own words.
    ProfilerStatus said = s;
    if (options.mode == DcgmOptions::Mode::Auto) {
      said.detail = "not installed (no libdcgm.so.4 or libdcgm.so.3 to load)";
    }
    explain(said);
    unloaded_ = std::move(s);
  }

  std::string driver_version() const override { return inner_->driver_version(); }
  const std::vector<DeviceInfo>& devices() const override { return infos_; }
  std::vector<DeviceEvent> poll_events() override { return inner_->poll_events(); }

  void sample(std::size_t slot, Sample& out, CollectCost& cost) override {
    inner_->sample(slot, out, cost);
    if (out.extra.is_object()) out.extra.erase(kProfSourceKey);
    if (slot >= targets_.size() || !targets_[slot] || profiler_ == nullptr) return;
    // A GPU that NVML lost reads nothing, DCGM's cache included.
    if (out.values.empty()) return;
    const MetricValues dcgm = profiler_->latest(infos_[slot].index);
    bool any = false;
    for (const auto& m : dcgm::kFieldMappings) {
      const auto v = dcgm.get(m.metric);
      if (!v || out.values.has(m.metric)) continue;
      out.values.set(m.metric, *v);
      any = true;
    }
    if (any) {
      if (!out.extra.is_object()) out.extra = nlohmann::json::object();
      out.extra[kProfSourceKey] = kProfSourceDcgm;
    }
  }

  std::optional<ProfilerStatus> profiler_status() const override {
    if (profiler_ != nullptr) return profiler_->status();
    return unloaded_;
  }

 private:
  // The header says, per GPU, what DCGM gives and why it gives nothing else: a
  // metric DCGM watches is no longer "unsupported"; one it does not keeps GPM's
  // reason with DCGM's added.
  void explain(const ProfilerStatus& status) {
    for (std::size_t i = 0; i < infos_.size(); ++i) {
      if (!targets_[i]) continue;
      DeviceInfo& info = infos_[i];
      const std::vector<Metric> watched =
          profiler_ != nullptr ? profiler_->watched(info.index) : std::vector<Metric>{};
      std::string said = status.detail;
      for (const auto& note : status.notes) {
        if (!said.empty()) said += "; ";
        said += note;
      }
      const std::string why = said.empty() ? "DCGM does not read it" : said;
      for (const auto& m : dcgm::kFieldMappings) {
        auto& list = info.unsupported;
        const auto it = std::find_if(list.begin(), list.end(),
                                     [&](const Unsupported& u) { return u.metric == m.metric; });
        if (std::find(watched.begin(), watched.end(), m.metric) != watched.end()) {
          if (it != list.end()) list.erase(it);
        } else if (it != list.end()) {
          it->reason += "; DCGM: " + why;
        }
      }
      if (!watched.empty()) info.extra[kProfSourceKey] = kProfSourceDcgm;
      info.extra["x_dcgm"] = status.state + (said.empty() ? "" : ": " + said);
    }
  }

  std::unique_ptr<GpuCollector> inner_;
  std::unique_ptr<DcgmApi> owned_api_;  // outlives profiler_ (dlclose last)
  std::vector<bool> targets_;           // by slot
  std::vector<DeviceInfo> infos_;
  std::unique_ptr<DcgmProfiler> profiler_;
  std::optional<ProfilerStatus> unloaded_;
};

}  // namespace

std::unique_ptr<GpuCollector> with_dcgm(std::unique_ptr<GpuCollector> inner,
                                        const DcgmOptions& options) {
  if (options.mode == DcgmOptions::Mode::Off || inner == nullptr) return inner;
  std::vector<bool> targets;
  for (const auto& info : inner->devices()) targets.push_back(lacks_gpm_for_dcgm(info));
  if (std::none_of(targets.begin(), targets.end(), [](bool t) { return t; })) return inner;

  std::unique_ptr<DcgmApi> owned;
  const DcgmApi* api = options.api;
  std::optional<std::string> load_failure;
  if (api == nullptr) {
    auto loaded = load_dcgm_library();
    if (loaded) {
      owned = std::make_unique<DcgmApi>(std::move(loaded).value());
      api = owned.get();
    } else {
      load_failure = loaded.error().message;
    }
  }
  auto overlay = std::make_unique<DcgmOverlay>(std::move(inner), std::move(owned), targets);
  if (load_failure) {
    overlay->unavailable(options, *load_failure);
  } else {
    overlay->start(*api, options);
  }
  return overlay;
}

}  // namespace gpulens::sources
