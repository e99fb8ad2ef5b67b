// SPDX-License-Identifier: Apache-2.0
// `gpulens completion bash|zsh|fish` (hidden): the shell completion scripts that
// the install ships, generated from this program's command tree. The agent's
// options live only in gpulens-serve, so they are asked of it (--completion-spec).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/completion.hpp"
#include "cli/terminal_output.hpp"

namespace gpulens::cli {
namespace {

// The agent's options, from the gpulens-serve beside this binary; nullopt when it
// cannot be run, so that a script never ships without them.
std::optional<std::vector<CompletionOption>> agent_options() {
  const std::string command = "'" + agent_binary_path().string() + "' --completion-spec";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return std::nullopt;
  std::string spec;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe.get())) > 0;) {
    spec.append(buffer, n);
  }
  if (pclose(pipe.release()) != 0 || spec.empty()) return std::nullopt;
  return options_from_spec(spec);
}

}  // namespace

void register_completion(CLI::App& app, std::function<int()>& run) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("completion", "Print the shell completion script");
  cmd->group("");  // hidden: packagers run it, users get the installed scripts
  cmd->add_option("shell", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->callback([&app, shell, &run] {
    run = [&app, shell] {
      CompletionCommand tree = describe_command(app);
      auto serve_options = agent_options();
      if (!serve_options) {
        eprint("gpulens completion: cannot read the options of {}\n", agent_binary_path().string());
        return kExitFailure;
      }
      for (auto& sub : tree.subcommands) {
        if (sub.name == "serve") sub.options = std::move(*serve_options);
      }
      const std::string script = completion_script(tree, *shell);
      std::fwrite(script.data(), 1, script.size(), stdout);
      return kExitOk;
    };
  });
}

}  // namespace gpulens::cli
