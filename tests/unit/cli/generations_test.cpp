// SPDX-License-Identifier: Apache-2.0
// Each generation's limits in one place (issue 44): `gpulens --help` and
// docs/generations.md name the same five generations, and each says which side
// of the GPM line it is on.
#include "cli/generations.hpp"

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_support.hpp"

namespace gpulens {
namespace {

constexpr std::array kGenerations = {"Volta", "Ampere", "Ada", "Hopper", "Blackwell"};

std::string docs_page() {
  std::ifstream in(std::filesystem::path(GPULENS_SOURCE_DIR) / "docs/generations.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The table row of a generation in docs/generations.md.
std::string docs_row(const std::string& page, const std::string& generation) {
  const auto at = page.find("\n| " + generation + " |");
  if (at == std::string::npos) return {};
  return page.substr(at + 1, page.find('\n', at + 1) - at - 1);
}

TEST(Generations, HelpAndDocsNameEveryGenerationAndItsGpmLine) {
  const std::string help = cli::generation_limits_help();
  const std::string page = docs_page();
  for (const std::string g : kGenerations) {
    EXPECT_NE(help.find(g), std::string::npos) << g << " missing from --help:\n" << help;
    const std::string row = docs_row(page, g);
    ASSERT_FALSE(row.empty()) << g << " has no row in docs/generations.md";
    const bool gpm = g == "Hopper" || g == "Blackwell";
    EXPECT_NE(row.find(gpm ? "| yes | yes |" : "| yes | no |"), std::string::npos) << row;
  }
  // What it cannot tell without GPM is said in both.
  for (const char* limit : {"busy", "tensor", "DRAM", "PCIe", "NVLink", "hang"}) {
    EXPECT_NE(help.find(limit), std::string::npos) << limit;
    EXPECT_NE(page.find(limit), std::string::npos) << limit;
  }
  // And that DCGM, where a host engine runs, stands in for GPM.
  EXPECT_NE(help.find("DCGM"), std::string::npos) << help;
  EXPECT_NE(page.find("](dcgm.md)"), std::string::npos);
}

TEST(Generations, TheBinaryHelpEndsWithThem) {
  const auto r = testing::run_gpulens("--help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(cli::generation_limits_help()), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpulens
