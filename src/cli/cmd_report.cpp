// SPDX-License-Identifier: Apache-2.0
// `gpulens report FILE`: the verdict of `gpulens run` from a recording, offline:
// funnel, states, alerts and fixes, cost and MFU, as text, JSON or HTML.
// `gpulens report --from T [--to T]` gives the same verdict on a time range of
// the agent's history (`gpulens serve`'s SQLite file) instead of a recording,
// and `gpulens report --slurm-job ID` on one Slurm job's GPUs and span there.
#include <chrono>
#include <cstdio>

#include "cli/command.hpp"
#include "cli/kernel_evidence.hpp"
#include "cli/report_setup.hpp"
#include "cli/signals.hpp"
#include "cli/slurm_job_parts.hpp"
#include "cli/slurm_job_report.hpp"
#include "cli/terminal_output.hpp"
#include "core/clock.hpp"
#include "core/duration.hpp"
#include "core/trace_reader.hpp"
#include "render/verdict_output.hpp"
#include "store/history_trace.hpp"

namespace gpulens::cli {
namespace {

struct ReportArgs {
  std::string trace;
  std::string from;                // with --from: the agent's history instead of a recording
  std::string to;                  // empty: now
  std::string db;                  // empty: where `gpulens serve` writes by default
  std::string slurm_job;           // with --slurm-job: that job's GPUs and span of the history
  std::vector<std::string> parts;  // with --slurm-job: the nodes' parts instead of a history
  std::string format;              // empty: from -o's extension, else text
  std::string output = "-";
  bool lenient = false;
  ReportSettings settings;
};

// Where a history report's samples came from, for the title, the text's first
// lines and the JSON.
struct HistorySource {
  std::string db;
  double from = 0;
  double to = 0;
  store::HistoryTrace loaded;
};

// The history's samples as a trace; prints why not and returns the exit code.
std::optional<int> load_history(const ReportArgs& args, HistorySource& src, Trace& trace) {
  const double now = unix_now();
  auto from = parse_time(args.from, now);
  auto to = parse_time(args.to.empty() ? "now" : args.to, now);
  for (const auto* t : {&from, &to}) {
    if (!*t) {
      eprint("gpulens report: {} {}\n", t == &from ? "--from" : "--to", t->error().message);
      return kExitUsage;
    }
  }
  if (*from >= *to) {
    eprint("gpulens report: --from ({}) must be before --to ({})\n", format_utc_time(*from),
           format_utc_time(*to));
    return kExitUsage;
  }
  src.db = args.db.empty() ? store::default_history_path() : args.db;
  src.from = *from;
  src.to = *to;
  store::HistoryTraceRequest request;
  request.path = src.db;
  request.from = *from;
  request.to = *to;
  request.gpus = args.settings.gpus;
  auto loaded = store::load_history_trace(request);
  if (!loaded) {
    eprint("gpulens report: {}\n", loaded.error().message);
    return kExitFailure;
  }
  trace = std::move(loaded->trace);
  src.loaded = std::move(*loaded);
  return std::nullopt;
}

std::string render_history(const verdict::Verdict& v, const Trace& trace, ReportFormat format,
                           const HistorySource& src) {
  const std::string range = format_utc_time(src.from) + " to " + format_utc_time(src.to);
  if (format == ReportFormat::Html) {
    render::HtmlOptions o;
    o.title = "history of " + (v.host.empty() ? src.db : v.host) + ", " + range;
    return render::verdict_to_html(v, trace, o);
  }
  if (format == ReportFormat::Json) {
    auto j = render::verdict_to_json(v);
    const auto& l = src.loaded;
    j["source"] = {{"kind", "history"},
                   {"db", src.db},
                   {"from", src.from},
                   {"to", src.to},
                   {"samples", l.source},
                   {"raw_from", l.raw_from ? nlohmann::ordered_json(*l.raw_from) : nullptr}};
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  // The text's headline names a recording; this one is a range of the history.
  std::string text = render::verdict_to_text(v);
  if (text.starts_with("gpulens: recording")) text.replace(9, 9, "history");
  const auto eol = text.find('\n');
  if (eol != std::string::npos) {
    text.insert(eol + 1, "  source   " + src.db + ", " + range + "\n");
  }
  return text;
}

// The verdict on one Slurm job from the history; its own usage errors first.
int run_slurm_job_report(const ReportArgs& args, ReportFormat format) {
  if (!args.trace.empty() || !args.from.empty() || !args.to.empty() ||
      !args.settings.gpus.empty()) {
    eprint(
        "gpulens report: --slurm-job takes the job's GPUs and time from the history: leave out "
        "the recording, --from, --to and --gpus\n");
    return kExitUsage;
  }
  auto id = parse_slurm_job_arg(args.slurm_job);
  if (!id) {
    eprint("gpulens report: {}\n", id.error().message);
    return kExitUsage;
  }
  if (!args.parts.empty() && !args.db.empty()) {
    eprint("gpulens report: --part takes the job from its nodes' parts: leave out --history\n");
    return kExitUsage;
  }
  const std::string db = !args.parts.empty() ? fmt::format("{} node part{}", args.parts.size(),
                                                           args.parts.size() == 1 ? "" : "s")
                         : args.db.empty()   ? store::default_history_path()
                                             : args.db;
  auto job = args.parts.empty() ? store::load_slurm_job_trace(db, *id)
                                : load_slurm_job_parts(args.parts, *id);
  if (!job) {
    eprint("gpulens report: {}\n", job.error().message);
    return kExitFailure;
  }
  const ReportTables tables = load_report_tables(args.settings.data_dir);
  for (const auto& w : tables.warnings) eprint("gpulens: warning: {}\n", w);
  auto options = make_verdict_options(args.settings, tables);
  if (!options) {
    eprint("gpulens report: {}\n", options.error().message);
    return kExitUsage;
  }
  // A job has a start-up and a tear-down, reported apart as for `gpulens run`.
  options->edges_apart = true;
  const Trace& trace = job->history.trace;
  const verdict::Verdict verdict = verdict::build_verdict(trace, *options);
  const std::string text = render_slurm_job(verdict, trace, format, *job, db);
  if (auto written = write_report(text, args.output); !written) {
    eprint("gpulens report: {}\n", written.error().message);
    return kExitFailure;
  }
  if (args.output != "-") eprint("gpulens: wrote {}\n", args.output);
  return kExitOk;
}

int run_report(const ReportArgs& args) {
  exit_on_stop_signal();
  std::optional<ReportFormat> format;
  if (!args.format.empty()) {
    format = report_format_from_name(args.format);
  } else {
    format = args.output == "-" ? ReportFormat::Text : report_format_for_path(args.output);
  }
  if (!args.slurm_job.empty()) return run_slurm_job_report(args, *format);
  const bool history = !args.from.empty();
  if (history == !args.trace.empty()) {
    eprint("gpulens report: {}\n",
           history ? "give a recording or --from, not both"
                   : "give a recording (gpulens report FILE), a range of the agent's "
                     "history (--from -2h [--to now] [--history FILE]) or a Slurm job in it "
                     "(--slurm-job ID)");
    return kExitUsage;
  }
  if (!history && (!args.to.empty() || !args.db.empty())) {
    eprint(
        "gpulens report: --to and --history read the agent's history: add --from or --slurm-job\n");
    return kExitUsage;
  }
  Trace trace;
  std::optional<kernels::KernelView> kernel_view;  // "Where the GPU time went"
  std::optional<kernels::LaunchCounts> launches;   // "Kernel launches"
  HistorySource src;
  if (history) {
    if (auto failed = load_history(args, src, trace)) return *failed;
  } else {
    auto read = read_recording(args.trace, TraceReadOptions{args.lenient});
    if (!read) {
      eprint("gpulens report: {}{}\n", read.error().message,
             args.lenient ? "" : " (--lenient skips malformed lines)");
      return kExitFailure;
    }
    trace = std::move(read->trace);
    kernel_view = std::move(read->kernels);
    launches = std::move(read->launches);
  }
  const ReportTables tables = load_report_tables(args.settings.data_dir);
  for (const auto& w : tables.warnings) eprint("gpulens: warning: {}\n", w);
  auto options = make_verdict_options(args.settings, tables);
  if (!options) {
    eprint("gpulens report: {}\n", options.error().message);
    return kExitUsage;
  }
  options->edges_apart = !history;
  // A recording of `run --kernels`: its collectives, kernels and synchronisations inform
  // the verdict's fixes.
  if (kernel_view) apply_kernel_view(*options, *kernel_view);
  if (launches) options->launches = launch_evidence(*launches);
  const verdict::Verdict verdict = verdict::build_verdict(trace, *options);
  const std::string text = history ? render_history(verdict, trace, *format, src)
                                   : render_report(verdict, trace, kernel_view, launches, *format);
  if (auto written = write_report(text, args.output); !written) {
    eprint("gpulens report: {}\n", written.error().message);
    return kExitFailure;
  }
  if (args.output != "-") eprint("gpulens: wrote {}\n", args.output);
  return kExitOk;
}

}  // namespace

void register_report(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand(
      "report",
      "The verdict on a recording (of `gpulens run --trace`, `gpulens record` or any gpu-trace),\n"
      "or with --from on a time range of the agent's history (`gpulens serve`),\n"
      "or with --slurm-job on one Slurm job's GPUs and time in that history:\n"
      "the utilization funnel, what held the GPUs back and the fixes, cost and MFU.\n"
      "Formats: text, json (docs/report.md) or one self-contained HTML page.\n"
      "Times: RFC 3339 (2026-11-21T10:00:00Z, ...+01:00; no offset: local time), Unix\n"
      "seconds, now, or before now: -2h, -30m, -7d.");
  cmd->add_option("trace", args->trace, "gpu-trace file (or --from or --slurm-job for the history)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--from", args->from,
                  "Judge the agent's history from this time instead of a recording");
  cmd->add_option("--to", args->to, "End of the history range (default: now)");
  cmd->add_option("--slurm-job", args->slurm_job,
                  "Judge this Slurm job (its id as squeue prints it) from the agent's history: "
                  "the GPUs its prolog's allocation and its processes held, and when");
  cmd->add_option("--part", args->parts,
                  "With --slurm-job, a job over several nodes: one node's part as its agent serves "
                  "it (GET /api/v1/slurm/job?id=ID), once per node; judged as one job instead of "
                  "a history")
      ->check(CLI::ExistingFile);
  // --history is the name `gpulens serve` gives the same file; --db stays for
  // the scripts that already use it.
  cmd->add_option("--history,--db", args->db,
                  "The agent's history file, as `gpulens serve --history` names it (default: "
                  "where `gpulens serve` writes it: " +
                      store::default_history_path() + ")");
  cmd->add_option("--format", args->format, "text, json or html (default: from -o, else text)")
      ->check(CLI::IsMember({"text", "json", "html"}));
  cmd->add_option("-o,--output", args->output, "Write here instead of stdout");
  cmd->add_flag("--lenient", args->lenient, "Skip malformed lines of the recording");
  add_report_settings_options(*cmd, args->settings);
  cmd->add_option("--flops-per-step", args->settings.flops_per_step,
                  "Model FLOPs of one step, for step marks that carry none")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--gpus", args->settings.gpus,
                  "Only these GPU indexes (default: the job's, else all; with --from, read "
                  "only these)")
      ->delimiter(',');
  cmd->callback([args, &run] { run = [args] { return run_report(*args); }; });
}

}  // namespace gpulens::cli
