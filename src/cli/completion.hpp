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
  // The words the value is one of (CLI::IsMember, or completion_values); empty:
  // a file name. value_list: the value is several of them, comma-separated.
  std::vector<std::string> values = {};
  bool value_list = false;
};

struct CompletionCommand {
  std::string name;
  std::string description;  // first line
  std::vector<CompletionOption> options;
  std::vector<CompletionCommand> subcommands;
};

// The words an option's value is made of, for an option whose check cannot say
// them (a comma-separated list checked later): completion offers them after the
// last comma. An option checked with CLI::IsMember needs nothing: its set is read.
void completion_values(const CLI::Option* option, std::vector<std::string> words);

// The visible options and subcommands of `app` (hidden ones, in group "", are left out).
CompletionCommand describe_command(const CLI::App& app);

// The agent's options cross the process boundary as lines of
// "NAME[,NAME...]\t0|1\tDESCRIPTION\tVALUE VALUE...\t0|1(list)"
// (gpulens-serve --completion-spec).
std::string options_to_spec(const std::vector<CompletionOption>& options);
std::vector<CompletionOption> options_from_spec(const std::string& spec);

// The completion script of `gpulens` (and `gpulens-serve`, whose options are
// those of the `serve` subcommand) for "bash", "zsh" or "fish"; empty for another shell.
std::string completion_script(const CompletionCommand& gpulens, const std::string& shell);

// `gpulens completion SHELL` (hidden): prints completion_script of this app, the
// serve subcommand's options read from gpulens-serve beside the binary.
void register_completion(CLI::App& app, std::function<int()>& run);

}  // namespace gpulens::cli
