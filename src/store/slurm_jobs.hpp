// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which Slurm job held which GPU when, kept in the history (table slurm_jobs), so
// that `gpulens report --slurm-job ID` can judge a job after it ended: one row
// per job, step and GPU with the first and the last tick a process of it held
// the GPU. The samples themselves stay in `samples` and `rollup_1m`.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/result.hpp"
#include "core/sample.hpp"
#include "store/sqlite_db.hpp"

namespace gpulens::store {

// The step under which a job's allocation is kept: the span in which Slurm's
// prolog entry said the job holds the GPU, whether any process of it ran there or
// not. Slurm's own steps are numbers, batch, extern, interactive or unknown (""),
// so the name cannot meet a real one.
inline constexpr std::string_view kAllocationStep = "allocation";

// One step of one job on one GPU, from the first to the last tick it was seen.
struct SlurmJobUse {
  std::string job;  // decimal id as Slurm prints it
  std::string step;
  int gpu = 0;
  std::string user;     // empty when unknown
  std::string account;  // empty when unknown
  double first_t = 0;   // Unix seconds of the first and the last tick seen
  double last_t = 0;
  bool operator==(const SlurmJobUse&) const = default;
};

// Uses collapsed by (job, step, gpu): a batch of ticks becomes one row per key,
// so the writer upserts once a second per job, not once per process per tick.
// Bounded by the jobs running, not by the ticks.
class SlurmJobUses {
 public:
  // The jobs of the processes in `samples` (those with a known Slurm job), and the
  // Slurm jobs that the samples' allocations say hold the GPU (as kAllocationStep).
  void add_samples(const std::vector<Sample>& samples);
  void add(const SlurmJobUse& use);
  void merge(const SlurmJobUses& other);
  std::vector<SlurmJobUse> rows() const;
  // Keeps the `max` uses seen last (a writer waiting on a failing disk).
  void trim(std::size_t max);
  std::size_t size() const { return uses_.size(); }
  bool empty() const { return uses_.empty(); }
  void clear() { uses_.clear(); }

 private:
  std::map<std::tuple<std::string, std::string, int>, SlurmJobUse> uses_;
};

// Upserts `uses` (in the caller's transaction): a known row's span grows to
// cover the new one; a non-empty user or account replaces the stored one. A job
// id that is not a Slurm number is skipped (the sources never pass one).
Status write_slurm_uses(Database& db, const std::vector<SlurmJobUse>& uses);

// Drops rows whose last tick is before `limit_ms` (retention).
Status expire_slurm_uses(Database& db, std::int64_t limit_ms);

// Every row of `job`, by GPU then step.
Result<std::vector<SlurmJobUse>> read_slurm_job(Database& db, std::string_view job);

// The `n` jobs seen last, newest first.
Result<std::vector<std::string>> latest_slurm_jobs(Database& db, int n);

// The rows of other jobs than `job` on `gpus` whose span meets [from, to].
Result<std::vector<SlurmJobUse>> slurm_uses_overlapping(Database& db, std::string_view job,
                                                        const std::vector<int>& gpus, double from,
                                                        double to);

}  // namespace gpulens::store
