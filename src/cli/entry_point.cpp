// SPDX-License-Identifier: Apache-2.0
#include "cli/entry_point.hpp"

#include <exception>

#include "cli/command.hpp"
#include "cli/terminal_output.hpp"

namespace gpulens::cli {

int exit_for_parse_error(const CLI::App& app, const CLI::ParseError& e) {
  // CLI11 returns 0 for --help/--version; everything else is a usage error.
  return app.exit(e) == 0 ? kExitOk : kExitUsage;
}

int run_guarded(const std::function<int()>& run) {
  if (!run) return kExitUsage;
  try {
    return run();
  } catch (const std::exception& e) {
    eprint("gpulens: internal error: {}\n", e.what());
    return kExitFailure;
  }
}

}  // namespace gpulens::cli
