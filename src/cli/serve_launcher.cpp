// SPDX-License-Identifier: Apache-2.0
// `gpulens serve` hands over to the agent binary, gpulens-serve, installed beside
// gpulens. The agent's network stack (the HTTP layer, OpenSSL, crypt) lives only there,
// so the commands that run beside people's jobs (record, stream, run) do not map and
// initialise it: about 5 MiB less resident memory for every one of them.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "cli/command.hpp"

namespace gpulens::cli {
namespace {

constexpr const char* kAgentBinary = "gpulens-serve";

int exec_agent(const std::vector<std::string>& args) {
  const std::filesystem::path path = agent_binary_path();
  std::vector<char*> argv;
  std::string name = kAgentBinary;
  argv.push_back(name.data());
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(path.c_str(), argv.data());
  const int err = errno;
  std::fprintf(stderr,
               "gpulens serve: cannot start the agent %s: %s\n"
               "  The agent is a separate binary, %s, that is built and installed beside\n"
               "  gpulens (cmake --build ... builds both; copy both when you install).\n",
               path.c_str(), std::strerror(err), kAgentBinary);
  return kExitFailure;
}

}  // namespace

// The symlink is resolved so that a `gpulens` linked into /usr/local/bin still
// finds its sibling.
std::filesystem::path agent_binary_path() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return kAgentBinary;
  return self.parent_path() / kAgentBinary;
}

void register_serve_launcher(CLI::App& app, std::function<int()>& run) {
  auto* cmd = app.add_subcommand(
      "serve", std::string(kServeDescription) + "\nRun 'gpulens serve --help' for its options.");
  // Every argument, --help included, belongs to the agent.
  cmd->set_help_flag();
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->callback([cmd, &run] {
    auto args = std::make_shared<std::vector<std::string>>(cmd->remaining());
    run = [args] { return exec_agent(*args); };
  });
}

}  // namespace gpulens::cli
