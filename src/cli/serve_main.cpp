// SPDX-License-Identifier: Apache-2.0
// gpulens-serve: the node agent, started by `gpulens serve` (serve_launcher.cpp) or
// directly by a service manager. It parses its arguments as the `serve` subcommand,
// so that help and errors read "gpulens serve" either way.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.hpp"
#include "cli/completion.hpp"
#include "cli/entry_point.hpp"
#include "cli/signals.hpp"

int main(int argc, char** argv) {
  using namespace gpulens::cli;
  block_stop_signals();  // before any thread starts, so every thread inherits the mask
  CLI::App app{"gpulens serve: the gpulens node agent."};
  app.name("gpulens");
  app.require_subcommand(1);
  std::function<int()> run;
  register_serve(app, run);
  if (argc == 2 && std::string_view(argv[1]) == "--completion-spec") {
    // For `gpulens completion`: the agent's options, which only this binary declares.
    const auto* serve = app.get_subcommand("serve");
    std::fputs(options_to_spec(describe_command(*serve).options).c_str(), stdout);
    return kExitOk;
  }

  // As if run as `gpulens serve ARGS...`.
  std::string program = "gpulens";
  std::string command = "serve";
  std::vector<char*> args = {program.data(), command.data()};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    return exit_for_parse_error(app, e);
  }
  return run_guarded(run);
}
