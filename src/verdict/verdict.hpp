// SPDX-License-Identifier: Apache-2.0
#pragma once
// The verdict on one job (or one recording): how long it held which GPUs, how
// much of that time the GPUs worked (the funnel), what held them back (states,
// alerts and the fixes that matter most, from the diagnosis engine), what it
// cost and the MFU. A pure function of a trace; `gpulens run` and `gpulens
// report` print it as text, JSON or HTML.
#include <optional>
#include <string>
#include <vector>

#include "core/job_marks.hpp"
#include "diagnosis/timeline.hpp"
#include "verdict/cost.hpp"
#include "verdict/evidence_gaps.hpp"
#include "verdict/gpu_models.hpp"
#include "verdict/headline.hpp"
#include "verdict/mfu.hpp"
#include "verdict/outcome.hpp"
#include "verdict/ranked_fixes.hpp"
#include "verdict/steady_state.hpp"
#include "verdict/usage.hpp"

namespace gpulens::verdict {

struct VerdictOptions {
  std::optional<double> price_per_gpu_hour;  // --price, or the config's; else prices.json
  std::string price_source;                  // how the price above was given
  std::string currency = "USD";
  std::optional<double> peak_tflops;  // --peak-tflops, per GPU
  std::string dtype = "bf16";
  std::optional<double> flops_per_step;  // for step marks that carry no "flops"
  std::vector<int> gpus;                 // empty: the job's GPUs, else all in the trace
  diagnosis::DiagnosisConfig diagnosis = diagnosis::DiagnosisConfig::defaults();
  const GpuModelTable* models = nullptr;  // nullptr: no peak table
  const PriceTable* prices = nullptr;     // nullptr: no price table
  std::size_t max_fixes = 3;
  // Start-up and tear-down of a job or a recording are reported apart; a range
  // of the agent's history has none (its first idle minutes are idle GPUs).
  bool edges_apart = true;
  // From the kernel view of `gpulens run --kernels`, where the recording has one.
  std::optional<CollectiveEvidence> collectives;
  // From the launch counts of `gpulens run`, where the recording has them.
  std::optional<LaunchEvidence> launches;
  bool kernel_view = false;  // the recording has a kernel view (evidence gaps point at it)
};

// At least this long and this share of a GPU's steady state waiting on a peer
// is an imbalance worth a headline (shorter waits are a collective's tail).
inline constexpr double kImbalanceMinS = 2.0;
inline constexpr double kImbalanceMinShare = 0.05;

struct StateShare {
  diagnosis::GpuState state = diagnosis::GpuState::Unknown;
  double share = 0;  // of the time the GPUs were diagnosed
  double gpu_hours = 0;
};

// One GPU of a multi-GPU job that waited on another in the steady state.
struct Imbalance {
  int gpu = 0;
  std::optional<int> peer;  // the busy GPU it waited for, where the diagnosis named it
  double waiting_s = 0;
  double share = 0;                      // of the GPU's steady state
  std::optional<double> sm_active;       // the GPU's SM activity over the steady state
  std::optional<double> peer_sm_active;  // ... and its peer's
};

struct MfuSummary {
  PeakBasis peak;
  std::optional<ModelWork> work;         // what the job reported
  std::optional<double> model;           // work's FLOP/s over the peak
  std::optional<double> model_over_job;  // every reported FLOP over the job's duration
  std::optional<double> estimate;        // tensor activity over the same span as `model`
  std::optional<double> estimate_job;    // ... over the whole job
  bool estimate_clock_corrected = false;
};

struct PhaseGpu {
  int gpu = 0;
  diagnosis::GpuState state = diagnosis::GpuState::Unknown;
  double state_share = 0;
  std::vector<std::string> flags;
  MetricValues means;
  std::string summary;
  std::vector<std::string> fixes;
};

struct PhaseRow {
  std::string name;
  double start = 0;
  double end = 0;
  std::vector<PhaseGpu> gpus;
  std::optional<ModelWork> work;
  std::optional<double> mfu;
  std::optional<double> estimate;
};

struct Verdict {
  JobRecord job;
  bool measured = false;     // at least one GPU sample
  std::string not_measured;  // why not, in words
  std::string host;
  std::vector<DeviceInfo> devices;  // the GPUs the verdict is about
  std::string gpus_basis;
  std::optional<double> start;
  std::optional<double> end;
  double duration_s = 0;
  double gpu_hours = 0;
  std::optional<double> energy_kwh;
  std::string energy_basis;
  std::vector<GpuUsage> usage;  // per GPU
  GpuUsage total;
  Funnel funnel;
  JobOutcome outcome;
  SteadyState steady;
  GpuUsage steady_usage;                // all GPUs, between the first and last work
  std::vector<GpuUsage> steady_by_gpu;  // per GPU, over the same span
  std::vector<Imbalance> imbalance;
  std::vector<HeadlineItem> headline;  // the first is the headline
  // Shares of the diagnosed time, the steady state's states and the start-up
  // and tear-down (edges) apart: they add up to one.
  std::vector<StateShare> states;  // steady state, most time first
  double edges_share = 0;          // start-up and tear-down
  double startup_share = 0;
  double teardown_share = 0;
  double throttled_share = 0;
  std::vector<diagnosis::AlertRecord> alerts;
  std::vector<RankedFix> ranked_fixes;
  std::vector<std::string> fixes;  // the few that matter most: ranked_fixes' texts
  Cost cost;
  MfuSummary mfu;
  std::vector<PhaseRow> phases;
  diagnosis::DiagnosisReport diagnosis;
  std::vector<std::string> notes;
  // Where the states and fixes rest on thin evidence, and what would settle it.
  std::vector<EvidenceGap> evidence_gaps;
};

Verdict build_verdict(const Trace& trace, const VerdictOptions& options);

}  // namespace gpulens::verdict
