// SPDX-License-Identifier: Apache-2.0
#include "cli/slurm_job_report.hpp"

#include <fmt/format.h>

#include "core/duration.hpp"
#include "core/json_number.hpp"
#include "core/text_safety.hpp"
#include "render/verdict_output.hpp"
#include "sources/host/slurm_ids.hpp"

namespace gpulens::cli {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += fmt::format("{}{}", out.empty() ? "" : ", ", i);
  return out;
}

std::string samples_words(const store::HistoryTrace& h) {
  if (h.source == "raw") return "raw samples";
  if (h.raw_from) {
    return fmt::format("1-minute rollups, raw samples from {}", format_utc_time(*h.raw_from));
  }
  return "1-minute rollups: raw samples were no longer kept";
}

// "job 123, user alice, account physics, steps 0, batch"; names from the file,
// made safe for a terminal (the agent checked them, the file may be altered).
std::string slurm_line(const store::SlurmJobTrace& job) {
  std::string out = "job " + job.job;
  if (!job.user.empty()) out += ", user " + terminal_safe(job.user);
  if (!job.account.empty()) out += ", account " + terminal_safe(job.account);
  if (job.steps.empty()) {
    out += ", no process of it seen on a GPU";
  } else {
    out += fmt::format(", step{} {}", job.steps.size() == 1 ? "" : "s",
                       terminal_safe(join(job.steps)));
  }
  if (job.allocated) out += ", GPUs from its prolog's allocation";
  return out;
}

nlohmann::ordered_json use_json(const store::SlurmJobUse& u, bool with_job) {
  nlohmann::ordered_json j;
  if (with_job) j["job"] = u.job;
  j["step"] = u.step;
  j["gpu"] = u.gpu;
  j["first"] = json_number(u.first_t, decimals::kTime);
  j["last"] = json_number(u.last_t, decimals::kTime);
  return j;
}

nlohmann::ordered_json source_json(const store::SlurmJobTrace& job, const std::string& db) {
  const auto& h = job.history;
  nlohmann::ordered_json uses = nlohmann::ordered_json::array();
  for (const auto& u : job.uses) uses.push_back(use_json(u, false));
  nlohmann::ordered_json shared = nlohmann::ordered_json::array();
  for (const auto& u : job.shared) shared.push_back(use_json(u, true));
  return {{"kind", "slurm_job"},
          {"db", db},
          {"from", json_number(job.first_t, decimals::kTime)},
          {"to", json_number(job.last_t, decimals::kTime)},
          {"samples", h.source},
          {"raw_from", json_number(h.raw_from, decimals::kTime)},
          {"slurm",
           {{"job", job.job},
            {"user", job.user},
            {"account", job.account},
            {"steps", job.steps},
            {"allocated", job.allocated},
            {"gpus", job.gpus},
            {"uses", std::move(uses)},
            {"shared", std::move(shared)},
            {"nodes", job.node_parts}}}};
}

// What a refused id echoes of itself: at most 40 bytes (an id is at most 10
// digits, `123_45.6` a few more), then how long it was. A 100,000-digit
// argument was echoed whole.
std::string quoted_arg(std::string_view text) {
  constexpr std::size_t kShown = 40;
  if (text.size() <= kShown) return terminal_safe(text);
  return fmt::format("{}... ({} bytes)", terminal_safe(text.substr(0, kShown)), text.size());
}

}  // namespace

Result<std::string> parse_slurm_job_arg(std::string_view text) {
  if (auto id = sources::valid_slurm_job_id(text)) return *id;
  std::string hint;
  const auto cut = text.find_first_of("_.");
  if (cut != std::string_view::npos && cut > 0 &&
      sources::valid_slurm_job_id(text.substr(0, cut))) {
    hint = text[cut] == '_'
               ? fmt::format(
                     "; an array task has a job id of its own: `sacct -X -n -o JobIDRaw "
                     "-j {}` prints it",
                     quoted_arg(text))
               : fmt::format("; give the job, not one of its steps: {}", text.substr(0, cut));
  }
  return Error{fmt::format(
      "--slurm-job '{}' is not a Slurm job id (1 to 10 digits, 1 to 4294967293, as squeue and "
      "sacct print it){}",
      quoted_arg(text), hint)};
}

std::string render_slurm_job(const verdict::Verdict& v, const Trace& trace, ReportFormat format,
                             const store::SlurmJobTrace& job, const std::string& db) {
  const std::string range = format_utc_time(job.first_t) + " to " + format_utc_time(job.last_t);
  if (format == ReportFormat::Html) {
    render::HtmlOptions o;
    o.title = fmt::format("Slurm job {} on {}, {}", job.job, v.host.empty() ? db : v.host, range);
    return render::verdict_to_html(v, trace, o);
  }
  if (format == ReportFormat::Json) {
    auto j = render::verdict_to_json(v);
    j["source"] = source_json(job, db);
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  // The text's headline names a recording; this one is a Slurm job.
  std::string text = render::verdict_to_text(v);
  const std::string name = "Slurm job " + job.job;
  if (text.starts_with("gpulens: recording of ")) {
    text.replace(9, 13, name + " on ");
  } else if (text.starts_with("gpulens: recording")) {
    text.replace(9, 9, name);
  }
  const auto eol = text.find('\n');
  if (eol != std::string::npos) {
    std::string nodes;
    for (const auto& n : job.node_parts) nodes += (nodes.empty() ? "" : "; ") + n;
    text.insert(eol + 1,
                fmt::format("  slurm    {}\n{}  source   {}, {} ({})\n", slurm_line(job),
                            nodes.empty() ? "" : "  nodes    " + terminal_safe(nodes) + "\n",
                            terminal_safe(db), range, samples_words(job.history)));
  }
  return text;
}

}  // namespace gpulens::cli
