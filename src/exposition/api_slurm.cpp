// SPDX-License-Identifier: Apache-2.0
// GET /api/v1/slurm/job?id=ID: this node's part of one Slurm job, read from the
// agent's history as a gpu-trace (JSON lines), for `gpulens report --slurm-job ID
// --part FILE...` to judge a job of several nodes as one (docs/slurm.md, "A job
// over several nodes"). The header carries x_slurm_job: the node, the job's names,
// steps, GPUs and span, and where the samples came from.
#include <fmt/format.h>

#include "core/json_format.hpp"
#include "core/trace_reader.hpp"
#include "exposition/answer_slot.hpp"
#include "exposition/api_json.hpp"
#include "exposition/routes.hpp"
#include "sources/host/slurm_ids.hpp"
#include "store/slurm_job_trace.hpp"

namespace gpulens::exposition {
namespace {

// A part is read from the history and written whole before it is sent: one at a
// time, and at most this many raw samples (about 300 bytes each as JSON); a longer
// job's earlier time comes as 1-minute rollups, which the part's notes say. A day
// of 8 GPUs at 1 s is 691,200 raw samples (about 200 MB); bounded so, its part is
// about 15 MB of raw samples and 11,520 minutes.
constexpr std::size_t kPartMaxRawSamples = 50'000;
std::atomic<int> g_parts_in_flight{0};

void send_slurm_error(http::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(
      Json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
          "\n",
      "application/json");
}

std::string job_part_text(const store::SlurmJobTrace& job, const std::string& node) {
  TraceHeader header = job.history.trace.header;
  if (!node.empty()) header.host = node;
  Json part;
  part["node"] = header.host;
  part["job"] = job.job;
  part["user"] = job.user;
  part["account"] = job.account;
  part["steps"] = job.steps;
  part["gpus"] = job.gpus;
  part["from"] = job.first_t;
  part["to"] = job.last_t;
  part["allocated"] = job.allocated;
  part["samples"] = job.history.source;
  part["notes"] = job.history.trace.warnings;
  header.extra["x_slurm_job"] = std::move(part);
  std::string out =
      header_to_json(header).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out += '\n';
  for (const auto& s : job.history.trace.samples) {
    append_sample_json(out, s);
    out += '\n';
  }
  return out;
}

void answer_slurm_job(const RouteSite& site, const http::Request& req, http::Response& res) {
  if (site.history == nullptr) {
    return send_slurm_error(res, 503, "history is disabled (--no-history)");
  }
  const auto id = sources::valid_slurm_job_id(req.param("id"));
  if (!id) {
    return send_slurm_error(
        res, 400, "id must be a Slurm job id (1 to 10 digits, as squeue and sacct print it)");
  }
  const AnswerSlot slot(&g_parts_in_flight, 1);
  if (slot.busy()) {
    send_slurm_error(res, 429, "another node's part is being built; retry");
    res.set_header("Retry-After", "1");
    return;
  }
  auto job = store::load_slurm_job_trace(site.history->path(), *id, kPartMaxRawSamples);
  if (!job) {
    // The job unknown here (it held no GPU of this node) is the common case of a
    // job over several nodes asked of each: 404, with the history's own words.
    const bool unknown = job.error().message.starts_with("no Slurm job ");
    return send_slurm_error(res, unknown ? 404 : 503, job.error().message);
  }
  res.status = 200;
  res.set_header("Cache-Control", "no-store");
  res.set_content(job_part_text(*job, site.context->snapshot()->hostname), "application/x-ndjson");
}

}  // namespace

void register_slurm_routes(const RouteSite& site) {
  site.get("/api/v1/slurm/job", [site](const http::Request& req, http::Response& res) {
    answer_slurm_job(site, req, res);
  });
}

}  // namespace gpulens::exposition
