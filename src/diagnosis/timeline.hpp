// SPDX-License-Identifier: Apache-2.0
#pragma once
// The offline (and end-of-run) diagnosis: a timeline of merged runs per GPU,
// alerts fired and resolved, and per-phase summaries from NAME:start/NAME:end
// marks. Built tick by tick, so a live `gpulens diagnose` uses the same code.
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/trace_reader.hpp"
#include "diagnosis/engine.hpp"

namespace gpulens::diagnosis {

// Seconds spent in each state.
struct StateShares {
  std::array<double, kGpuStateCount> seconds{};
  void add(GpuState s, double dt) { seconds[state_index(s)] += dt; }
  double total() const;
  double share(GpuState s) const;
  GpuState majority() const;  // Unknown when empty
};

struct TimelineRun {
  int gpu = 0;
  double start = 0;
  double end = 0;
  GpuState state = GpuState::Unknown;
  double confidence = 0;       // mean over the run
  double throttled_share = 0;  // of the run's time
  std::string throttle_cause;
  std::string summary;
  std::vector<Evidence> evidence;  // from the run's last window
  std::vector<std::string> cannot_tell;
  std::vector<std::string> fixes;
};

struct PhaseSummary {
  std::string name;
  int gpu = 0;
  double start = 0;
  double end = 0;
  GpuState state = GpuState::Unknown;  // the majority state
  StateShares shares;
  double throttled_share = 0;
  std::string throttle_cause;
  std::vector<std::string> flags;  // "throttled" when throttled most of the phase
  MetricValues means;
  std::optional<double> efficiency;
  std::string summary;
  std::vector<std::string> fixes;
  nlohmann::json fields = nlohmann::json::object();  // the end (else start) mark's fields
};

struct GpuSummary {
  int gpu = 0;
  std::string name;
  GpuState state = GpuState::Unknown;
  StateShares shares;
  double throttled_share = 0;
  MetricValues means;
  std::optional<double> efficiency;
  HardwareLimits limits;
};

struct AlertRecord {
  std::string rule;
  int gpu = 0;
  Severity severity = Severity::Warning;
  double since = 0;
  double fired_at = 0;
  std::optional<double> resolved_at;
  std::string message;
  int count = 1;
  std::vector<Evidence> evidence;
  std::vector<std::string> fixes;
};

struct DiagnosisReport {
  std::string host;
  std::optional<double> start;
  std::optional<double> end;
  double window_s = 0;
  std::vector<GpuSummary> gpus;
  std::vector<TimelineRun> timeline;  // by GPU, then time
  std::vector<PhaseSummary> phases;   // by start, then GPU
  std::vector<AlertRecord> alerts;    // by firing time
  std::vector<std::string> notes;     // reader warnings and the like
};

class ReportBuilder {
 public:
  ReportBuilder(const TraceHeader& header, DiagnosisConfig config,
                std::vector<std::vector<int>> job_groups = {});
  ReportBuilder(ReportBuilder&&) noexcept;
  ReportBuilder& operator=(ReportBuilder&&) noexcept;
  ~ReportBuilder();

  void add(const Tick& tick);
  // Alert events (firing, resolved) that the last add() produced, for live output.
  const std::vector<AlertEvent>& recent_events() const;
  void note(std::string text);
  DiagnosisEngine& engine();
  // Closes open runs and phases at the last sample; call once.
  DiagnosisReport finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

DiagnosisReport diagnose_trace(const Trace& trace, const DiagnosisConfig& config,
                               std::vector<std::vector<int>> job_groups = {});

// A trace's samples and marks as ticks, grouped as a replay source groups them
// (core/tick_grouper.hpp).
std::vector<Tick> ticks_from_trace(const Trace& trace);

// Its printed forms are render's: render/timeline_output.hpp.

}  // namespace gpulens::diagnosis
