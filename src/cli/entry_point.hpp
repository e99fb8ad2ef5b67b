// SPDX-License-Identifier: Apache-2.0
#pragma once
// What both binaries' main() do once their commands are registered: turn a
// refused command line into an exit code, and run the chosen command with a last
// line of defence. gpulens (main.cpp) and gpulens-serve (serve_main.cpp) share
// them so that the two answer errors alike.
#include <CLI/CLI.hpp>
#include <functional>

namespace gpulens::cli {

// CLI11 refused the command line (or answered --help/--version): prints its
// message and returns kExitOk for help and version, kExitUsage for the rest.
int exit_for_parse_error(const CLI::App& app, const CLI::ParseError& e);

// Runs the command the parse chose; kExitUsage when it chose none. A command
// that throws (a reader that throws on input it should have refused) gives a
// message and kExitFailure, never an abort (134) and a core file.
int run_guarded(const std::function<int()>& run);

}  // namespace gpulens::cli
