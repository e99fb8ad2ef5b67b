// SPDX-License-Identifier: Apache-2.0
// `gpulens record`: write a gpu-trace v1 recording of live GPUs (or of a replay).
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "cli/command.hpp"
#include "cli/record_progress.hpp"
#include "cli/terminal_output.hpp"
#include "core/clock.hpp"
#include "core/text_units.hpp"
#include "core/trace_writer.hpp"

namespace gpulens::cli {
namespace {

struct RecordArgs {
  sampler::SourceOptions source;
  std::string output;
  double duration_s = 0;
  long count = 0;
  std::string stats_path;
  bool quiet = false;
};

double peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// CPU seconds of each thread of this process since it started, by thread name: tells
// the sampler's threads from those the NVIDIA libraries start.
nlohmann::json threads_cpu_json() {
  nlohmann::json out = nlohmann::json::object();
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(entry.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const auto open = line.find('(');
    const auto close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string field;
    double utime = 0;
    double stime = 0;
    // Fields 3.. after the name; utime and stime are fields 14 and 15.
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::strtod(field.c_str(), nullptr);
      if (i == 15) stime = std::strtod(field.c_str(), nullptr);
    }
    const std::string name =
        line.substr(open + 1, close - open - 1) + " " + entry.path().filename().string();
    out[name] = (utime + stime) / hz;
  }
  return out;
}

// The sampler's own cost, per GPU per tick: what the overhead harness reads.
nlohmann::json stats_json(const sources::SamplerStats& s, std::size_t gpus, double cpu_s,
                          double write_s, double wall_s) {
  const double per = s.ticks > 0 && gpus > 0 ? 1000.0 / static_cast<double>(s.ticks * gpus) : 0;
  nlohmann::json j;
  j["ticks"] = s.ticks;
  j["gpus"] = gpus;
  j["timeouts"] = s.timeouts;
  j["missed_ticks"] = s.missed_ticks;
  j["wall_s"] = wall_s;
  j["per_gpu_tick_ms"] = {{"classic_nvml", s.cost.classic_s * per},
                          {"slow_counters", s.cost.slow_s * per},
                          {"gpm", s.cost.gpm_s * per},
                          {"processes", s.cost.procs_s * per},
                          {"procfs", s.cost.procfs_s * per},
                          {"host", s.host_s * per},
                          {"events", s.events_s * per},
                          {"sampler_total", (s.cost.total_s() + s.host_s + s.events_s) * per},
                          {"write", write_s * per},
                          {"process_total", cpu_s * per}};
  j["process_cpu_s"] = cpu_s;
  j["peak_rss_mib"] = peak_rss_mib();
  j["threads_cpu_s"] = threads_cpu_json();
  // Where GPUs without GPM got their profiling counters (docs/dcgm.md).
  if (s.profiler) {
    j["profiler"] = {{"source", s.profiler->source},
                     {"state", s.profiler->state},
                     {"detail", s.profiler->detail},
                     {"gpus", s.profiler->gpus},
                     {"notes", s.profiler->notes},
                     {"sessions", s.profiler->sessions},
                     {"lost", s.profiler->lost},
                     {"blank_values", s.profiler->blank_values},
                     {"stale_values", s.profiler->stale_values}};
  }
  return j;
}

int run_record(const RecordArgs& args) {
  auto source = open_source_or_explain(args.source);
  if (!source) return exit_for_unopened_source(args.source);
  auto writer = TraceWriter::open(args.output, source->header());
  if (!writer) {
    eprint("gpulens record: {}\n", writer.error().message);
    return kExitFailure;
  }
  const bool to_stdout = args.output == "-";
  if (!args.quiet && !to_stdout) {
    eprint("gpulens: recording {} GPU(s) every {:.3g} s to {} (Ctrl-C to stop)\n",
           source->header().devices.size(),
           source->live() ? args.source.interval_s : source->header().interval_s.value_or(0),
           args.output);
  }
  // Progress in place on a terminal only; a log or a pipe gets the two lines above
  // and below, never a line rewritten with carriage returns.
  const bool progress = !args.quiet && !to_stdout && ::isatty(STDERR_FILENO) != 0;
  std::optional<std::chrono::steady_clock::time_point> shown;
  const double cpu0 = process_cpu_seconds();
  std::optional<double> first_t;
  long ticks = 0;
  double write_s = 0;  // CPU time spent formatting and writing the trace
  std::size_t samples = 0;
  const auto wall0 = std::chrono::steady_clock::now();
  int status = kExitOk;
  while (args.count == 0 || ticks < args.count) {
    auto tick = source->next();
    if (!tick) {
      eprint("gpulens record: {}\n", tick.error().message);
      status = kExitFailure;
      break;
    }
    if (!tick->has_value()) break;
    const double write0 = thread_cpu_seconds();
    const auto written = writer->write(**tick);
    write_s += thread_cpu_seconds() - write0;
    if (!written) {
      eprint("gpulens record: {}\n", written.error().message);
      status = kExitFailure;
      break;
    }
    samples += tick->value().samples.size();
    if (!tick->value().samples.empty()) ++ticks;
    if (!first_t) first_t = tick->value().t;
    if (progress) {
      const auto now = std::chrono::steady_clock::now();
      if (!shown || now - *shown >= std::chrono::seconds(1)) {
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(args.output, ec);
        show_progress_line(
            record_progress_line(samples, source->header().devices.size(), ec ? 0 : bytes,
                                 std::chrono::duration<double>(now - wall0).count()));
        shown = now;
      }
    }
    if (args.duration_s > 0 && tick->value().t - *first_t >= args.duration_s) break;
  }
  if (shown) clear_progress_line();
  // Marks written after the last tick still belong in the recording.
  writer->close();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (!args.quiet && !to_stdout) {
    eprint("gpulens: wrote {} samples ({} ticks, {}) to {}\n", samples, ticks,
           duration_text(wall_s), args.output);
  }
  for (const auto& w : source->warnings()) eprint("gpulens: warning: {}\n", w);
  if (!args.stats_path.empty()) {
    const auto stats = source->stats();
    if (!stats) {
      eprint("gpulens record: --stats needs live GPUs, not --replay\n");
      return kExitUsage;
    }
    const auto j = stats_json(*stats, source->header().devices.size(), process_cpu_seconds() - cpu0,
                              write_s, wall_s);
    std::ofstream(args.stats_path) << j.dump(2) << "\n";
    if (!args.quiet) eprint("gpulens: sampler cost: {}\n", j["per_gpu_tick_ms"].dump());
  }
  return status;
}

}  // namespace

void register_record(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<RecordArgs>();
  auto* cmd = app.add_subcommand(
      "record",
      "Record every NVML and GPM metric, processes and host CPU to a gpu-trace v1 file\n"
      "(JSON lines), which every gpulens command can --replay. Marks that a workload appends\n"
      "to the --marks file (JSON lines like {\"mark\": \"train:start\"}) are merged in.");
  cmd->add_option("-o,--output", args->output, "Trace file to write ('-' for stdout)")->required();
  add_source_options(*cmd, args->source, /*offline=*/false);
  cmd->add_option("--duration", args->duration_s, "Stop after this many seconds (0 = until Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-c,--count", args->count, "Stop after this many ticks (0 = no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--marks", args->source.marks_path,
                  "JSON-lines file a workload appends marks to; merged into the trace");
  cmd->add_option("--stats", args->stats_path,
                  "Write the sampler's own CPU cost per GPU per tick and peak RSS as JSON here");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress messages");
  cmd->callback([args, &run] {
    // A replayed recording is copied as fast as possible unless --speed says otherwise.
    run = [args] { return run_record(*args); };
  });
}

}  // namespace gpulens::cli
