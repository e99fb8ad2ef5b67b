// SPDX-License-Identifier: Apache-2.0
// gpulens: what your NVIDIA GPUs are really doing.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string_view>

#include "cli/command.hpp"
#include "cli/completion.hpp"
#include "cli/entry_point.hpp"
#include "cli/generations.hpp"
#include "cli/install_paths.hpp"
#include "cli/signals.hpp"
#include "cli/unknown_command.hpp"

int main(int argc, char** argv) {
  using namespace gpulens::cli;
  block_stop_signals();  // before any thread starts, so every thread inherits the mask
  // Named here, so that "Usage:" says gpulens and not the path it was started by.
  CLI::App app{
      "gpulens: what your NVIDIA GPUs are really doing.\n"
      "Reads NVML and the GPM activity counters (SM activity, occupancy, tensor pipes,\n"
      "DRAM, PCIe, NVLink) beside the classic utilization, and says what holds the GPU back.\n"
      "Every command accepts --replay FILE to work from a recording instead of live GPUs.",
      "gpulens"};
  app.set_version_flag("--version", "gpulens " GPULENS_VERSION);
  app.require_subcommand(0, 1);
  // The example beside this binary: the installed copy, or examples/ of the source
  // tree a build directory came from (install_paths.hpp).
  app.footer(
      fmt::format("Plain 'gpulens' on a terminal starts 'gpulens top'.\n"
                  "Try it without a GPU, on the recording that comes with gpulens:\n"
                  "  gpulens top --replay {0} --speed 10\n"
                  "  gpulens report {0}\n"
                  "Run 'gpulens COMMAND --help' for the options of a command.\n\n{1}",
                  example_recording(), generation_limits_help()));

  std::function<int()> run;
  register_top(app, run);
  register_stream(app, run);
  register_record(app, run);
  register_diagnose(app, run);
  register_run(app, run);
  register_report(app, run);
  register_serve_launcher(app, run);
  register_completion(app, run);

  // An unknown command is a usage error even with --help after it (CLI11 would
  // answer `gpulens frobnicate --help` with the main help and exit 0).
  if (argc > 1 && argv[1][0] != '-') {
    // `gpulens help` and `gpulens help stream`, as git and docker answer them.
    if (std::string_view(argv[1]) == "help") {
      const bool named = argc > 2 && !unknown_command(app, argv[2]);
      // CLI11 prefixes a subcommand's usage line with what it is given: the program.
      const std::string text =
          named ? app.get_subcommand(argv[2])->help(app.get_name()) : app.help();
      std::fputs(text.c_str(), stdout);
      return kExitOk;
    }
    if (auto unknown = unknown_command(app, argv[1])) {
      std::fputs(unknown->c_str(), stderr);
      return kExitUsage;
    }
  }

  // Plain `gpulens` on a terminal is the full-screen view; on a pipe, the help.
  const bool bare = argc == 1;
  try {
    if (bare && isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0) {
      app.parse(std::vector<std::string>{"top"});
    } else {
      app.parse(argc, argv);
    }
  } catch (const CLI::ParseError& e) {
    return exit_for_parse_error(app, e);
  }
  if (!run && bare) {
    // Help for the reader, a usage exit code for the script that forgot a command.
    std::fputs(app.help().c_str(), stdout);
    return kExitUsage;
  }
  return run_guarded(run);
}
