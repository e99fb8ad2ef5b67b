// SPDX-License-Identifier: Apache-2.0
// `gpulens stream`: one line per GPU per tick, the truth beside the classic number.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "cli/command.hpp"
#include "cli/completion.hpp"
#include "cli/live_diagnosis.hpp"
#include "cli/terminal_output.hpp"
#include "render/stream_format.hpp"

namespace gpulens::cli {
namespace {

struct StreamArgs {
  sampler::SourceOptions source;
  std::string format = "table";
  long count = 0;
  std::vector<std::string> metrics;
  bool utc = false;
  bool no_diagnosis = false;
};

int terminal_width() {
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    return ws.ws_col;
  }
  if (const char* columns = std::getenv("COLUMNS")) return std::atoi(columns);
  return 0;  // not a terminal: print every column
}

int run_stream(const StreamArgs& args) {
  render::StreamFormatOptions fo;
  fo.format = args.format == "csv"    ? render::StreamFormat::Csv
              : args.format == "json" ? render::StreamFormat::Json
                                      : render::StreamFormat::Table;
  fo.columns = args.metrics;
  fo.max_width = terminal_width();
  fo.utc = args.utc;
  auto source = open_source_or_explain(args.source);
  if (!source) return exit_for_unopened_source(args.source);
  auto formatter = render::StreamFormatter::create(fo, source->header());
  if (!formatter) {
    eprint("gpulens stream: {}\n", formatter.error().message);
    return kExitUsage;
  }
  LiveDiagnosis diagnosis(source->header(), !args.no_diagnosis);
  const bool tty = isatty(STDOUT_FILENO) != 0;
  const std::string header = formatter->header_text();
  std::fputs(header.c_str(), stdout);
  winsize size{};
  const int rows = tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 ? size.ws_row : 0;
  render::HeaderRepeat repeat(rows,
                              static_cast<int>(std::count(header.begin(), header.end(), '\n')));
  long ticks = 0;
  while (args.count == 0 || ticks < args.count) {
    auto tick = source->next();
    if (!tick) {
      eprint("gpulens stream: {}\n", tick.error().message);
      return kExitFailure;
    }
    if (!tick->has_value()) break;
    diagnosis.on_tick(**tick);
    if (tick->value().samples.empty()) continue;
    ++ticks;
    // Like dmon, repeat the header every screenful on a terminal (not into a
    // pipe or file, where it would break the columns for other tools).
    if (repeat.due(tick->value().samples.size()) && tty &&
        fo.format == render::StreamFormat::Table) {
      std::fputs(header.c_str(), stdout);
    }
    for (const auto& sample : tick->value().samples) {
      const auto note = diagnosis.annotation(sample.gpu);
      std::fputs(formatter->format(sample, note ? &*note : nullptr).c_str(), stdout);
    }
    std::fflush(stdout);
  }
  for (const auto& w : source->warnings()) eprint("gpulens: warning: {}\n", w);
  return kExitOk;
}

}  // namespace

void register_stream(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<StreamArgs>();
  auto* cmd = app.add_subcommand(
      "stream",
      "Print one line per GPU per tick: utilization beside SM activity, occupancy, tensor,\n"
      "DRAM, PCIe, NVLink, power, temperature, clock and throttle reason, memory, and the\n"
      "diagnosed state. Like 'nvidia-smi dmon', with the truth beside the classic number.");
  add_source_options(*cmd, args->source, /*offline=*/false);
  cmd->add_option("-f,--format", args->format, "table, csv or json (one object per GPU per tick)")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->add_option("-c,--count", args->count, "Stop after this many ticks (0 = until Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  std::vector<std::string> columns;
  for (const auto& c : render::stream_columns()) columns.push_back(c.name);
  std::string names;
  for (const auto& c : columns) names += (names.empty() ? "" : ",") + c;
  auto* metrics = cmd->add_option("-m,--metrics", args->metrics,
                                  "Table columns to show, comma-separated: " + names)
                      ->delimiter(',');
  // Completion offers the column names after the last comma, not file names.
  completion_values(metrics, std::move(columns));
  cmd->add_flag("--utc", args->utc, "Print times in UTC instead of local time");
  cmd->add_flag("--no-diagnosis", args->no_diagnosis, "Do not run the diagnosis engine");
  cmd->callback([args, &run] { run = [args] { return run_stream(*args); }; });
}

}  // namespace gpulens::cli
