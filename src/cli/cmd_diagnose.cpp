// SPDX-License-Identifier: Apache-2.0
// `gpulens diagnose`: what held each GPU back, when, with evidence, alerts and
// fixes. From a recording (--replay, read as fast as possible) or live until
// Ctrl-C or --duration.
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "cli/terminal_output.hpp"
#include "diagnosis/config.hpp"
#include "render/timeline_output.hpp"

namespace gpulens::cli {
namespace {

struct DiagnoseArgs {
  sampler::SourceOptions source;
  std::string format = "text";
  std::string config_path;
  double window_s = 0;  // 0 = from the config
  double duration_s = 0;
  std::vector<int> job;  // GPUs of one job, when known
};

int run_diagnose(const DiagnoseArgs& args) {
  diagnosis::DiagnosisConfig config = diagnosis::DiagnosisConfig::defaults();
  if (!args.config_path.empty()) {
    auto loaded = diagnosis::load_diagnosis_config(args.config_path);
    if (!loaded) {
      eprint("gpulens diagnose: {}\n", loaded.error().message);
      return kExitUsage;
    }
    config = std::move(*loaded);
  }
  if (args.window_s != 0) {
    // CLI11's number checks let nan and inf through.
    auto problem = diagnosis::duration_problem(args.window_s, "--window");
    if (!(args.window_s > 0) || problem) {
      eprint("gpulens diagnose: {}\n",
             problem ? *problem : std::string("--window must be more than 0 s"));
      return kExitUsage;
    }
    config.window.length_s = args.window_s;
  }

  auto source = open_source_or_explain(args.source);
  if (!source) return exit_for_unopened_source(args.source);
  std::vector<std::vector<int>> groups;
  if (!args.job.empty()) groups.push_back(args.job);
  diagnosis::ReportBuilder builder(source->header(), config, groups);
  const bool live = source->live();
  // Live, the first Ctrl-C ends the watch and the report follows; a recording is
  // read as fast as possible, and a signal ends the command (130, 143).
  if (!live) exit_on_stop_signal();
  if (live) {
    eprint("gpulens diagnose: watching {} GPU(s){}; Ctrl-C to stop and report\n",
           source->header().devices.size(), args.duration_s > 0 ? " until --duration" : "");
  }
  std::optional<double> first_t;
  while (true) {
    auto tick = source->next();
    if (!tick) {
      eprint("gpulens diagnose: {}\n", tick.error().message);
      return kExitFailure;
    }
    if (!tick->has_value()) break;
    const Tick& t = **tick;
    if (!first_t) first_t = t.t;
    builder.add(t);
    if (live) {
      // Say what fires while it happens; the report at the end has the rest.
      for (const auto& e : builder.recent_events()) {
        eprint("[{}] {} {} on GPU {}: {}\n", std::string(diagnosis::severity_id(e.severity)),
               e.rule, std::string(diagnosis::alert_kind_id(e.kind)), e.gpu, e.message);
      }
    }
    if (args.duration_s > 0 && t.t - *first_t >= args.duration_s) break;
  }
  // The watch is over: a signal during the analysis ends the command.
  exit_on_stop_signal();
  for (const auto& w : source->warnings()) builder.note(w);
  const diagnosis::DiagnosisReport report = builder.finish();
  if (args.format == "json") {
    std::fputs(render::report_to_json(report).dump(2).c_str(), stdout);
    std::fputc('\n', stdout);
  } else {
    std::fputs(render::report_to_text(report).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace

void register_diagnose(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<DiagnoseArgs>();
  auto* cmd = app.add_subcommand(
      "diagnose",
      "Say what holds each GPU back: a timeline of states (compute_bound, memory_bound,\n"
      "host_bound, launch_bound, sm_underused, ...) with their evidence, alerts fired and\n"
      "resolved, per-phase summaries when the recording has NAME:start/NAME:end marks,\n"
      "and fixes in words. Live until Ctrl-C or --duration, or from --replay FILE.");
  add_source_options(*cmd, args->source, /*offline=*/true);
  cmd->add_option("--interval", args->source.interval_s,
                  "Live: seconds between samples (0.1 to 3600)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_option("-f,--format", args->format, "text or json (stable, see docs/diagnosis.md)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--config", args->config_path,
                  "TOML file with thresholds and alert rules (data/alerts.example.toml)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--window", args->window_s, "Seconds of samples behind each state (default 5)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--duration", args->duration_s, "Live: stop after this many seconds")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--job", args->job,
                  "GPUs of one job, comma-separated (compared for waiting_on_peer and "
                  "gpu_imbalance); default: grouped by process, else all watched GPUs")
      ->delimiter(',');
  cmd->callback([args, &run] { run = [args] { return run_diagnose(*args); }; });
}

}  // namespace gpulens::cli
