// SPDX-License-Identifier: Apache-2.0
#pragma once
// Each subcommand lives in its own cmd_<name>.cpp and registers itself here.
// A command's run function returns the process exit code.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>

#include "cli/report_setup.hpp"
#include "sampler/open_source.hpp"

namespace gpulens::cli {

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;  // bad arguments, or no GPU/driver to read
// The rule: 1 when a recording could not be read, whether its header or a later
// line is at fault; 2 when the command line or a config file is wrong, or there
// is no GPU to read. Every command that reads a recording follows it.

// The exit code when open_source_or_explain() failed: a recording that cannot be
// read is kExitFailure (like a bad line later on), no GPU to read is kExitUsage.
inline int exit_for_unopened_source(const sampler::SourceOptions& options) {
  return options.replay.empty() ? kExitUsage : kExitFailure;
}

// Adds --replay/--speed/--lenient (and, for live, --interval/--gpus/--no-gpm/
// --no-procs/--procfs) to a subcommand, filling `options`.
void add_source_options(CLI::App& app, sampler::SourceOptions& options, bool offline);

// Adds what prices and judges a job (--price, --peak-tflops, --dtype, --config,
// --data-dir) to `gpulens run` and `gpulens report`, filling `settings`.
void add_report_settings_options(CLI::App& app, ReportSettings& settings);

// Opens the source and prints a helpful message on failure; nullptr when it failed.
std::unique_ptr<sources::TickSource> open_source_or_explain(const sampler::SourceOptions& options);

// The set of subcommands; main() calls each registrar in turn.
void register_stream(CLI::App& app, std::function<int()>& run);
void register_record(CLI::App& app, std::function<int()>& run);
void register_diagnose(CLI::App& app, std::function<int()>& run);
void register_run(CLI::App& app, std::function<int()>& run);
void register_report(CLI::App& app, std::function<int()>& run);
void register_top(CLI::App& app, std::function<int()>& run);
// The agent, in its own binary (gpulens-serve, serve_main.cpp).
void register_serve(CLI::App& app, std::function<int()>& run);
// In gpulens: `serve` starts gpulens-serve with the same arguments.
void register_serve_launcher(CLI::App& app, std::function<int()>& run);
// The agent binary, gpulens-serve, beside the running executable.
std::filesystem::path agent_binary_path();

inline constexpr const char* kServeDescription =
    "Run the node agent: sample every GPU, diagnose, keep history (SQLite), and serve\n"
    "Prometheus /metrics, a JSON API under /api/v1/ and a live dashboard at /.\n"
    "Listens on 127.0.0.1:9401 unless --listen says otherwise; TLS and basic auth come\n"
    "from an exporter-toolkit --web-config file. SIGHUP reloads it and --config.";

}  // namespace gpulens::cli
