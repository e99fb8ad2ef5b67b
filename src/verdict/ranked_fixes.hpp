// SPDX-License-Identifier: Apache-2.0
#pragma once
// The few fixes that matter most for a whole job, in the order of the verdict's
// headline: how the job died (out of memory), a hang, critical alerts, an
// imbalance between the job's GPUs, then what its steady state asks for.
// Start-up and tear-down are not findings (a job importing PyTorch is not an
// idle GPU to release), and advice the job already follows is left out.
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "diagnosis/timeline.hpp"
#include "verdict/outcome.hpp"
#include "verdict/steady_state.hpp"

namespace gpulens::verdict {

// Tensor pipes busy at least this share of the steady state (%): the job's math
// already runs on tensor cores, so mixed precision or TF32 is not advice for it.
inline constexpr double kSteadyTensorBusyPct = 20.0;

// What a fix is about, in the headline's order (lower first).
enum class FixTier { OutOfMemory, Hang, Critical, Imbalance, Steady };

struct RankedFix {
  std::string text;   // with the GPUs named when the job has several ("GPU 1: ...")
  std::string about;  // "out_of_memory", "alert:stalled", "state:idle"
  FixTier tier = FixTier::Steady;
  std::vector<int> gpus;  // the GPUs the finding was seen on
};

// What the kernel view of `gpulens run --kernels` says of the job's collectives
// (NCCL and the like, docs/kernels.md), handed in by the command that has both:
// the verdict does not read kernel records itself.
struct CollectiveEvidence {
  double share = 0;  // of the job's kernel time, in collective kernels
  std::string fix;   // the kernel view's communication fix
};

// What the launch counts of `gpulens run` say (docs/kernels.md, "Launch counts"),
// handed in by the command that read them: the kernels the job launched most and how
// many launches a second each GPU was fed. Counts, not time: they name where launch
// overhead comes from, so they go with the fixes of a launch-bound GPU.
struct LaunchEvidence {
  std::vector<std::pair<std::string, double>> top;  // kernel (short name), share of launches
  std::map<int, double> per_second;                 // by GPU; absent: no sample saw its processes
};

// The kernels a launch-bound fix names: at most this many, each at least this share.
inline constexpr std::size_t kLaunchEvidenceKernels = 3;
inline constexpr double kLaunchEvidenceMinShare = 0.05;

// Collectives holding at least this share of kernel time make a GPU's low SM
// activity their spinning channels, not kernels too small for the GPU: the
// state's SM-filling fixes give way to the communication fix.
inline constexpr double kCollectiveMajority = 0.5;

struct FixInputs {
  double end = 0;  // closes alerts still firing
  std::size_t count = 3;
  const SteadyState* steady = nullptr;  // nullptr: every run counts
  const JobOutcome* outcome = nullptr;
  std::size_t job_gpus = 1;                         // > 1: fixes name their GPUs
  std::optional<double> steady_tensor_pct;          // tensor activity over the steady state
  const CollectiveEvidence* collectives = nullptr;  // nullptr: no kernel view
  const LaunchEvidence* launches = nullptr;         // nullptr: no launch counts
};

std::string_view fix_tier_id(FixTier tier);  // "out_of_memory", "hang", ...

// Within a tier, fixes are ranked by the GPU-seconds of the findings behind
// them (a healthy compute_bound run counts for less than a bottleneck; a
// critical alert for more than a warning).
std::vector<RankedFix> rank_fixes(const diagnosis::DiagnosisReport& report, const FixInputs& in);

// The fix of a job that died out of memory, before any alert's.
std::string out_of_memory_fix(const JobOutcome& outcome);

// The sentence a launch-bound GPU's first fix ends with: the most launched kernels
// and the GPUs' launch rates; empty when the counts name no kernel.
std::string launch_evidence_text(const LaunchEvidence& e, const std::vector<int>& gpus);

// The fix advises lower precision (mixed precision, bf16/fp16, TF32).
bool advises_precision(const std::string& fix);

}  // namespace gpulens::verdict
