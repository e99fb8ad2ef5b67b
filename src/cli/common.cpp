// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <cstdio>

#include "cli/command.hpp"
#include "cli/install_paths.hpp"
#include "cli/signals.hpp"
#include "cli/terminal_output.hpp"
#include "sources/dcgm/dcgm_profiler.hpp"

namespace gpulens::cli {

void add_source_options(CLI::App& app, sampler::SourceOptions& options, bool offline) {
  app.add_option("--replay", options.replay, "Read a gpu-trace recording instead of live GPUs")
      ->check(CLI::ExistingFile);
  // Offline commands read a recording as fast as possible; live views pace it.
  options.speed = offline ? 0.0 : 1.0;
  app.add_option("--speed", options.speed,
                 "Replay pacing: 1 = real time, X = X times faster, 0 = as fast as possible")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--lenient", options.lenient,
               "Replay: skip malformed lines of the recording and count them");
  app.add_option("--gpus", options.gpus, "Only these GPU indexes (comma-separated)")
      ->delimiter(',');
  if (offline) return;
  app.add_option("--interval", options.interval_s,
                 "Seconds between samples (0.1 to 3600; GPM needs 0.1 s or more)")
      ->check(CLI::Range(0.1, 3600.0));
  // Callbacks, not CLI11's negated flags ("!--no-gpm"), whose help reads "--no-gpm{false}".
  app.add_flag_callback(
      "--no-gpm", [&options] { options.gpm = false; }, "Do not read the GPM activity counters");
  app.add_flag_callback(
      "--no-procs", [&options] { options.processes = false; }, "Do not list processes on each GPU");
  app.add_option("--proc-util-every", options.process_util_every_s,
                 "Seconds between reads of each process's SM share (the driver call costs "
                 "~2 ms of CPU)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_flag("--cmdline", options.cmdline,
               "Include process command lines (they may hold secrets)");
  app.add_option("--procfs", options.procfs, "Root of the proc filesystem")->capture_default_str();
  app.add_option("--slurm-allocations", options.slurm_allocations,
                 "Where Slurm's prolog (gpulens-prolog.sh) notes which job holds which GPU, "
                 "read when it exists and is root's ('' for none; docs/slurm.md)")
      ->capture_default_str();
  app.add_option("--pod-resources", options.pod_resources,
                 "The kubelet's pod-resources socket: which pod holds which GPU, asked every "
                 "few seconds on a thread of its own ('' for none; docs/kubernetes.md)")
      ->capture_default_str();
  app.add_option("--pod-resources-every", options.pod_resources_every_s,
                 "Seconds between calls to the kubelet's pod-resources API")
      ->check(CLI::Range(0.5, 300.0))
      ->capture_default_str();
  app.add_option("--dcgm", options.dcgm,
                 "Where GPUs without GPM (before Hopper) get SM, tensor, DRAM and pipe activity: "
                 "auto (a DCGM host engine on localhost:5555 when one runs), off, embedded, or "
                 "HOST[:PORT] (docs/dcgm.md)")
      ->check([](const std::string& text) {
        auto parsed = sources::parse_dcgm_option(text);
        return parsed ? std::string() : parsed.error().message;
      })
      ->capture_default_str();
}

void add_report_settings_options(CLI::App& app, ReportSettings& settings) {
  app.add_option("--price", settings.price,
                 "Price of one GPU-hour (default: data/prices.json by GPU model)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--peak-tflops", settings.peak_tflops,
                 "Dense peak TFLOP/s per GPU for MFU (default: data/gpu_peaks.json)")
      ->check(CLI::PositiveNumber);
  app.add_option("--dtype", settings.dtype, "Data type of the peak: bf16, fp16, tf32, fp8, fp64")
      ->capture_default_str();
  app.add_option("--config", settings.config_path,
                 "Diagnosis config (TOML: thresholds, rules, price_per_gpu_hour)")
      ->check(CLI::ExistingFile);
  app.add_option("--data-dir", settings.data_dir, "Directory with gpu_peaks.json and prices.json");
}

std::unique_ptr<sources::TickSource> open_source_or_explain(const sampler::SourceOptions& options) {
  auto source = sampler::open_tick_source(options);
  if (!source) {
    if (options.replay.empty()) {
      eprint(
          "gpulens: cannot read live GPUs: {}\n"
          "  gpulens reads NVIDIA GPUs through the driver's NVML library "
          "(libnvidia-ml.so.1).\n"
          "  Install the NVIDIA driver (or run where it is mounted, e.g. a container "
          "started with --gpus all),\n"
          "  or try gpulens on a bundled recording:\n"
          "    gpulens stream --replay {}\n",
          source.error().message, example_recording());
    } else {
      eprint("gpulens: {}\n", source.error().message);
    }
    return nullptr;
  }
  sources::TickSource* raw = source->get();
  on_stop_signal([raw] { raw->stop(); });
  return std::move(*source);
}

}  // namespace gpulens::cli
