// `gpulens report FILE`: the verdict of `gpulens run` from a recording, offline:
// funnel, states, alerts and fixes, cost and MFU, as text, JSON or HTML.
#include <cstdio>

#include "cli/command.hpp"
#include "core/trace_reader.hpp"
#include "report/report_setup.hpp"

namespace gpulens::cli {
namespace {

struct ReportArgs {
  std::string trace;
  std::string format;  // empty: from -o's extension, else text
  std::string output = "-";
  bool lenient = false;
  ReportSettings settings;
};

int run_report(const ReportArgs& args) {
  std::optional<ReportFormat> format;
  if (!args.format.empty()) {
    format = report_format_from_name(args.format);
  } else {
    format = args.output == "-" ? ReportFormat::Text : report_format_for_path(args.output);
  }
  auto trace = read_trace(args.trace, TraceReadOptions{args.lenient});
  if (!trace) {
    std::fprintf(stderr, "gpulens report: %s%s\n", trace.error().message.c_str(),
                 args.lenient ? "" : " (--lenient skips malformed lines)");
    return kExitFailure;
  }
  const ReportTables tables = load_report_tables(args.settings.data_dir);
  for (const auto& w : tables.warnings) std::fprintf(stderr, "gpulens: warning: %s\n", w.c_str());
  auto options = make_verdict_options(args.settings, tables);
  if (!options) {
    std::fprintf(stderr, "gpulens report: %s\n", options.error().message.c_str());
    return kExitUsage;
  }
  const Verdict verdict = build_verdict(*trace, *options);
  if (auto written = write_report(render_report(verdict, *trace, *format), args.output); !written) {
    std::fprintf(stderr, "gpulens report: %s\n", written.error().message.c_str());
    return kExitFailure;
  }
  if (args.output != "-") std::fprintf(stderr, "gpulens: wrote %s\n", args.output.c_str());
  return kExitOk;
}

}  // namespace

void register_report(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand(
      "report",
      "The verdict on a recording (of `gpulens run --trace`, `gpulens record` or any gpu-trace):\n"
      "the utilization funnel, what held the GPUs back and the fixes, cost and MFU.\n"
      "Formats: text, json (docs/report.md) or one self-contained HTML page.");
  cmd->add_option("trace", args->trace, "gpu-trace file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--format", args->format, "text, json or html (default: from -o, else text)")
      ->check(CLI::IsMember({"text", "json", "html"}));
  cmd->add_option("-o,--output", args->output, "Write here instead of stdout");
  cmd->add_flag("--lenient", args->lenient, "Skip malformed lines of the recording");
  cmd->add_option("--price", args->settings.price,
                  "Price of one GPU-hour (default: data/prices.json by GPU model)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--peak-tflops", args->settings.peak_tflops,
                  "Dense peak TFLOP/s per GPU for MFU (default: data/gpu_peaks.json)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--dtype", args->settings.dtype,
                  "Data type of the peak: bf16, fp16, tf32, fp8, fp64")
      ->capture_default_str();
  cmd->add_option("--flops-per-step", args->settings.flops_per_step,
                  "Model FLOPs of one step, for step marks that carry none")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--gpus", args->settings.gpus,
                  "Only these GPU indexes (default: the job's, else all)")
      ->delimiter(',');
  cmd->add_option("--config", args->settings.config_path,
                  "Diagnosis config (TOML: thresholds, rules, price_per_gpu_hour)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--data-dir", args->settings.data_dir,
                  "Directory with gpu_peaks.json and prices.json");
  cmd->callback([args, &run] { run = [args] { return run_report(*args); }; });
}

}  // namespace gpulens::cli
