// SPDX-License-Identifier: Apache-2.0
// `gpulens serve` execs gpulens-serve from beside gpulens. Where it is missing,
// --help still says what serve is and names the missing binary and its path.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace {

struct Ran {
  int code = -1;
  std::string out;
};

Ran run(const std::string& cmd) {
  Ran r;
  FILE* pipe = popen((cmd + " 2>&1 </dev/null").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

TEST(ServeLauncher, HelpWithoutTheAgentBinaryNamesWhatIsMissing) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("gpulens-alone-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path alone = dir / "gpulens";
  fs::copy_file(GPULENS_BINARY, alone, fs::copy_options::overwrite_existing);

  // fmt, not "'" + string: GCC 12 at -O3 warns falsely on those (-Wrestrict).
  const auto help = run(fmt::format("'{}' serve --help", alone.string()));
  EXPECT_EQ(help.code, 2) << help.out;
  EXPECT_NE(help.out.find("the node agent"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find((dir / "gpulens-serve").string() + " cannot be started"),
            std::string::npos)
      << help.out;
  EXPECT_NE(help.out.find("--target gpulens-serve"), std::string::npos) << help.out;

  const auto plain = run(fmt::format("'{}' serve --listen 127.0.0.1:0", alone.string()));
  EXPECT_EQ(plain.code, 1) << plain.out;
  EXPECT_NE(plain.out.find("gpulens serve: "), std::string::npos) << plain.out;
  fs::remove_all(dir);
}

// Both ways to the agent say its version and exit 0, as `gpulens --version` does.
TEST(ServeLauncher, VersionFromTheAgentAndThroughTheLauncher) {
  const std::string agent =
      (std::filesystem::path(GPULENS_BINARY).parent_path() / "gpulens-serve").string();
  const std::string expected = std::string("gpulens-serve ") + GPULENS_VERSION + "\n";
  const auto direct = run(fmt::format("'{}' --version", agent));
  EXPECT_EQ(direct.code, 0) << direct.out;
  EXPECT_EQ(direct.out, expected);
  const auto launched = run(fmt::format("'{}' serve --version", GPULENS_BINARY));
  EXPECT_EQ(launched.code, 0) << launched.out;
  EXPECT_EQ(launched.out, expected);
}

}  // namespace
