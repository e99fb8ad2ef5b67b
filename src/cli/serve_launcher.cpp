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

bool asks_for_help(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

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
  const bool help = asks_for_help(args);
  // --help still says what serve is, and exactly what is missing for the rest.
  if (help) std::printf("gpulens serve: %s\n\n", kServeDescription);
  std::fprintf(help ? stdout : stderr,
               "%s%s cannot be started: %s\n"
               "  `gpulens serve` runs the node agent, a separate binary that must sit beside\n"
               "  gpulens: %s. Its options, and this help's, are the agent's own.\n"
               "  Get it from the same build or package as gpulens:\n"
               "    cmake --build --preset release --target gpulens-serve   (a source tree)\n"
               "    apt install ./gpulens_*.deb                             (both binaries)\n"
               "  or run gpulens-serve directly if it is installed elsewhere.\n",
               help ? "" : "gpulens serve: ", path.c_str(), std::strerror(err), path.c_str());
  return help ? kExitUsage : kExitFailure;
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
