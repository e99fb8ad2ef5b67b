// SPDX-License-Identifier: Apache-2.0
#include "store/slurm_job_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/duration.hpp"

namespace gpulens::store {
namespace {

// The schema that first kept Slurm jobs (store/schema.cpp, migration 2).
constexpr std::int64_t kSlurmJobsSchema = 2;
// Other jobs on the same GPUs named in the notes; more are counted.
constexpr std::size_t kSharedNamed = 5;

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += fmt::format("{}{}", out.empty() ? "" : ", ", i);
  return out;
}

std::string gpu_words(const std::vector<int>& gpus) {
  std::string list;
  for (int g : gpus) list += fmt::format("{}{}", list.empty() ? "" : ", ", g);
  return fmt::format("GPU{} {}", gpus.size() == 1 ? "" : "s", list);
}

Error unknown_job(Database& db, const std::string& path, std::string_view job) {
  auto latest = latest_slurm_jobs(db, kJobsListed);
  if (!latest) return latest.error();
  if (latest->empty()) {
    return Error{fmt::format(
        "no Slurm job {} in the history at {} (it has seen no Slurm job: the agent records a "
        "job when a process of it holds a GPU while the agent runs)",
        job, path)};
  }
  return Error{fmt::format(
      "no Slurm job {} in the history at {} (jobs seen, newest first: {}); the agent records a "
      "job when a process of it holds a GPU while the agent runs, and keeps it as long as the "
      "1-minute rollups",
      job, path, join(*latest))};
}

// The job's rows into the trace's job fields: GPUs, steps, span, the names last seen.
void describe_job(SlurmJobTrace& out) {
  std::set<int> gpus;
  std::set<std::string> steps;
  double names_t = -1;
  out.first_t = out.uses.front().first_t;
  out.last_t = out.uses.front().last_t;
  for (const auto& u : out.uses) {
    gpus.insert(u.gpu);
    if (u.step == kAllocationStep) {
      out.allocated = true;
    } else {
      steps.insert(u.step);
    }
    out.first_t = std::min(out.first_t, u.first_t);
    out.last_t = std::max(out.last_t, u.last_t);
    if (u.last_t >= names_t) {
      names_t = u.last_t;
      if (!u.user.empty()) out.user = u.user;
      if (!u.account.empty()) out.account = u.account;
    }
  }
  out.gpus.assign(gpus.begin(), gpus.end());
  out.steps.assign(steps.begin(), steps.end());
}

// The samples within the job's allocation on each GPU carry it, so that the
// verdict's allocated stage is the scheduler's word (from the prolog to the
// epilog), not the memory in use, which is all the history keeps of processes.
void mark_allocation(SlurmJobTrace& out) {
  if (!out.allocated) return;
  GpuAllocation held;
  held.scheduler = "slurm";
  held.job = out.job;
  held.user = out.user;
  held.account = out.account;
  // A minute rollup's sample is dated at its minute's end: a span inside it counts.
  const double slack = out.history.source == "raw" ? 0.001 : 60.0;
  for (auto& s : out.history.trace.samples) {
    for (const auto& u : out.uses) {
      if (u.step != kAllocationStep || u.gpu != s.gpu || s.t < u.first_t - 0.001 ||
          s.t > u.last_t + slack) {
        continue;
      }
      s.allocations = std::vector<GpuAllocation>{held};
      break;
    }
  }
}

Status read_job(OpenedHistory& h, const std::string& path, std::string_view job,
                std::size_t max_raw, SlurmJobTrace& out, HistoryTraceRequest& rq) {
  if (h.version < kSlurmJobsSchema) {
    return Error{fmt::format(
        "the history at {} keeps no Slurm jobs: an older gpulens wrote it (history schema {}, "
        "before Slurm jobs were kept); an upgraded agent (`gpulens serve`) records the jobs "
        "from its start on",
        path, h.version)};
  }
  auto uses = read_slurm_job(h.db, job);
  if (!uses) return uses.error();
  if (uses->empty()) return unknown_job(h.db, path, job);
  out.job = std::string(job);
  out.uses = std::move(*uses);
  describe_job(out);

  rq.path = path;
  rq.from = out.first_t;
  // The last tick is inclusive: the range ends just after it.
  rq.to = out.last_t + 0.001;
  rq.gpus = out.gpus;
  rq.max_raw_samples = max_raw;
  rq.whole_last_minute = true;
  auto read = read_history_samples(h, rq);
  if (!read) return read.error();
  out.history = std::move(*read);
  auto shared = slurm_uses_overlapping(h.db, job, out.gpus, out.first_t, out.last_t);
  if (!shared) return shared.error();
  out.shared = std::move(*shared);
  return ok_status();
}

}  // namespace

Result<SlurmJobTrace> load_slurm_job_trace(const std::string& path, std::string_view job,
                                           std::size_t max_raw_samples) {
  auto opened = open_history_file(path);
  if (!opened) return opened.error();
  SlurmJobTrace out;
  HistoryTraceRequest rq;
  // One read transaction: the job's rows and its samples are one snapshot.
  if (auto s = opened->db.exec("BEGIN"); !s) return s.error();
  const Status read = read_job(*opened, path, job, max_raw_samples, out, rq);
  (void)opened->db.exec("COMMIT");
  if (!read) return read.error();

  const std::string span =
      fmt::format("from {} to {}", format_utc_time(out.first_t), format_utc_time(out.last_t));
  if (out.history.trace.samples.empty()) {
    const std::string held = describe_history_held(out.history.held);
    return Error{fmt::format(
        "Slurm job {} held {} {}, but the history at {} no longer holds samples of that time "
        "(it holds {}): retention or the size bound dropped them (gpulens serve "
        "--history-raw, --history-rollup, --history-max-size)",
        job, gpu_words(out.gpus), span, path, held.empty() ? "no samples" : held)};
  }
  if (auto s = finish_history_trace(out.history, rq); !s) return s.error();
  mark_allocation(out);
  auto& warnings = out.history.trace.warnings;
  warnings.insert(warnings.begin(),
                  out.allocated
                      ? fmt::format("Slurm job {}: {} {}, as its prolog's allocation and its "
                                    "processes named them",
                                    job, gpu_words(out.gpus), span)
                      : fmt::format("Slurm job {}: {} {}, as its processes were seen on them; "
                                    "the time before its first GPU process is not in it",
                                    job, gpu_words(out.gpus), span));
  // A GPU shared with other jobs (Slurm's shard or MPS gres, or OverSubscribe):
  // its readings are not this job's alone. A few are named, the rest counted.
  for (std::size_t i = 0; i < out.shared.size(); ++i) {
    if (i == kSharedNamed) {
      warnings.push_back(fmt::format("and {} more uses of its GPUs by other Slurm jobs",
                                     out.shared.size() - kSharedNamed));
      break;
    }
    const auto& other = out.shared[i];
    if (other.step == kAllocationStep) {
      warnings.push_back(fmt::format(
          "GPU {} was also held by Slurm job {} from {} to {}: the readings are the GPU's, "
          "shared by both jobs",
          other.gpu, other.job, format_utc_time(other.first_t), format_utc_time(other.last_t)));
      continue;
    }
    warnings.push_back(fmt::format(
        "GPU {} also ran Slurm job {} (step {}) from {} to {}: the readings are the GPU's, "
        "shared by both jobs",
        other.gpu, other.job, other.step, format_utc_time(other.first_t),
        format_utc_time(other.last_t)));
  }
  return out;
}

}  // namespace gpulens::store
