// SPDX-License-Identifier: Apache-2.0
#pragma once
// The incremental diagnosis engine, the same live and offline: feed it ticks,
// read each GPU's state (with evidence and confidence), take alert events.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/sample.hpp"
#include "diagnosis/alert_rules.hpp"
#include "diagnosis/alert_tracker.hpp"
#include "diagnosis/classifier.hpp"
#include "diagnosis/config.hpp"
#include "diagnosis/job_groups.hpp"
#include "diagnosis/memory_trend.hpp"
#include "diagnosis/window.hpp"

namespace gpulens::diagnosis {

struct GpuStatus {
  int gpu = 0;
  bool seen = false;       // at least one sample arrived
  bool lost = false;       // a gpu_lost mark and no sample since
  double t = 0;            // newest sample
  double state_since = 0;  // when the current state began
  StateFinding state;
  ThrottleFinding throttle;
  WindowStats window;
  std::optional<double> efficiency;  // over the window
  std::vector<int> job;              // GPUs of the same job, this one included
};

// The compact view for live front ends (`gpulens stream`): one line per GPU.
struct GpuBrief {
  int gpu = 0;
  std::string state;  // stable id
  double confidence = 0;
  bool throttled = false;
  std::string throttle_cause;
  std::vector<std::string> alerts;  // ids of firing alerts, most severe first
  std::string summary;              // one sentence
};

class DiagnosisEngine {
 public:
  // `job_groups`: GPUs known to belong to one job (`gpulens run` passes its set);
  // empty = config.job_grouping decides.
  DiagnosisEngine(const TraceHeader& header, DiagnosisConfig config,
                  std::vector<std::vector<int>> job_groups = {});
  DiagnosisEngine(DiagnosisEngine&&) noexcept;
  DiagnosisEngine& operator=(DiagnosisEngine&&) noexcept;
  ~DiagnosisEngine();

  void on_tick(const Tick& tick);

  // GPUs from the header and any that sent samples, in index order.
  std::vector<int> gpus() const;
  // An unseen GPU reads as state unknown.
  const GpuStatus& status(int gpu) const;
  const HardwareLimits& limits(int gpu) const;
  GpuBrief brief(int gpu) const;
  std::string summary(int gpu) const;
  // Fixes for the current state and throttling, led by those of the critical
  // alerts firing on the GPU (a hang's fix comes before any tuning advice).
  std::vector<std::string> fixes(int gpu) const;

  // Firing and resolved events since the last call.
  std::vector<AlertEvent> take_events();
  std::vector<ActiveAlert> firing() const;
  std::vector<ActiveAlert> firing(int gpu) const;

  const DiagnosisConfig& config() const { return config_; }
  const std::vector<std::vector<int>>& job_groups() const { return groups_; }
  const FixContext& fix_context() const { return fix_; }

 private:
  struct Slot;
  Slot& slot(int gpu);
  const Slot* find(int gpu) const;
  void handle_mark(const Mark& mark);
  void add_sample(const Sample& sample);
  void regroup();
  void judge(Slot& s, double t);

  DiagnosisConfig config_;
  std::vector<std::vector<int>> explicit_groups_;
  std::vector<std::vector<int>> groups_;
  bool groups_dirty_ = true;
  FixContext fix_;
  MemoryTrendSettings memory_settings_;
  std::vector<std::unique_ptr<AlertRule>> rules_;
  AlertTracker tracker_;
  std::map<int, std::unique_ptr<Slot>> slots_;
  std::vector<DeviceInfo> devices_;
};

}  // namespace gpulens::diagnosis
