// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shell completion for gpulens, generated from the CLI11 command tree itself
// (`gpulens completion bash|zsh|fish`), so the scripts cannot drift from the
// options the code declares. The install ships the generated scripts.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace gpulens::cli {

struct CompletionOption {
  std::vector<std::string> names;  // "--replay", "-o"
  bool takes_value = false;        // else a flag
  std::string description;         // first line of the option's help
};

struct CompletionCommand {
  std::string name;
  std::string description;  // first line
  std::vector<CompletionOption> options;
  std::vector<CompletionCommand> subcommands;
};

// The visible options and subcommands of `app` (hidden ones, in group "", are left out).
CompletionCommand describe_command(const CLI::App& app);

// The agent's options cross the process boundary as lines of
// "NAME[,NAME...]\t0|1\tDESCRIPTION" (gpulens-serve --completion-spec).
std::string options_to_spec(const std::vector<CompletionOption>& options);
std::vector<CompletionOption> options_from_spec(const std::string& spec);

// The completion script of `gpulens` (and `gpulens-serve`, whose options are
// those of the `serve` subcommand) for "bash", "zsh" or "fish"; empty for another shell.
std::string completion_script(const CompletionCommand& gpulens, const std::string& shell);

// `gpulens completion SHELL` (hidden): prints completion_script of this app, the
// serve subcommand's options read from gpulens-serve beside the binary.
void register_completion(CLI::App& app, std::function<int()>& run);

}  // namespace gpulens::cli
