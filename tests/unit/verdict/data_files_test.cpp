// SPDX-License-Identifier: Apache-2.0
// The report's data tables: built into the binary from data/, overridden per file
// by --data-dir, then $GPULENS_DATA_DIR, then /etc/gpulens; and an installed or
// copied binary prices and scores a recording from any directory.
#include "verdict/data_files.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "cli/report_setup.hpp"
#include "cli_support.hpp"

namespace gpulens::verdict {
namespace {

namespace fs = std::filesystem;
using testing::read_file;

const std::string kDataFilesDir = std::string(GPULENS_SOURCE_DIR) + "/data";

class DataDirs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("gpulens_data_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (const char* d : {"cli", "env", "etc"}) fs::create_directories(root_ / d);
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string dir(const char* name) const { return (root_ / name).string(); }
  void write(const char* d, const char* file, const std::string& text) const {
    std::ofstream(root_ / d / file) << text;
  }
  std::vector<std::string> dirs() const {
    return data_search_dirs(dir("cli"), dir("env").c_str(), dir("etc"));
  }
  fs::path root_;
};

std::string prices(double h100) {
  return R"({"currency": "EUR", "prices": {"H100 SXM": )" + std::to_string(h100) + "}}";
}

TEST(DataFiles, BuiltInCopiesAreTheFilesOfData) {
  for (const char* name : {"gpu_peaks.json", "prices.json"}) {
    const auto builtin = builtin_data_file(name);
    ASSERT_TRUE(builtin) << name;
    EXPECT_EQ(std::string(*builtin), read_file(kDataFilesDir + "/" + name)) << name;
  }
  EXPECT_FALSE(builtin_data_file("alerts.example.toml"));
}

TEST(DataFiles, SearchOrderIsCliThenEnvironmentThenSystem) {
  EXPECT_EQ(data_search_dirs("a", "b", "c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(data_search_dirs("", "b", "c"), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(data_search_dirs("a", nullptr, "c"), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(data_search_dirs("a", "", "c"), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(data_search_dirs("", nullptr), (std::vector<std::string>{kSystemDataDir}));
}

TEST_F(DataDirs, WithNoFilesTheBuiltInTablesAreUsed) {
  const cli::ReportTables t = cli::load_report_tables(dirs());
  EXPECT_TRUE(t.warnings.empty());
  ASSERT_TRUE(t.models && t.prices);
  EXPECT_EQ(t.models->origin(), "data/gpu_peaks.json");
  EXPECT_EQ(t.prices->origin(), "data/prices.json");
  ASSERT_NE(t.models->find("NVIDIA H100 80GB HBM3"), nullptr);
  EXPECT_TRUE(t.prices->price("H100 SXM"));
}

TEST_F(DataDirs, EachFileComesFromTheFirstDirectoryThatHasIt) {
  write("etc", "prices.json", prices(3));
  write("env", "prices.json", prices(2));
  write("cli", "prices.json", prices(1));
  auto t = cli::load_report_tables(dirs());
  EXPECT_EQ(*t.prices->price("H100 SXM"), 1);
  EXPECT_EQ(t.prices->origin(), fs::canonical(dir("cli") + "/prices.json").string());
  // gpu_peaks.json is in none of them: the built-in one, independently.
  EXPECT_EQ(t.models->origin(), "data/gpu_peaks.json");

  fs::remove(dir("cli") + "/prices.json");
  t = cli::load_report_tables(dirs());
  EXPECT_EQ(*t.prices->price("H100 SXM"), 2);
  fs::remove(dir("env") + "/prices.json");
  t = cli::load_report_tables(dirs());
  EXPECT_EQ(*t.prices->price("H100 SXM"), 3);
  EXPECT_EQ(t.prices->currency(), "EUR");
  fs::remove(dir("etc") + "/prices.json");
  t = cli::load_report_tables(dirs());
  EXPECT_EQ(t.prices->origin(), "data/prices.json");
  EXPECT_EQ(t.prices->currency(), "USD");
}

TEST_F(DataDirs, ABrokenFileIsReportedAndTheBuiltInTableUsed) {
  write("cli", "gpu_peaks.json", "{not json");
  write("env", "gpu_peaks.json", read_file(kDataFilesDir + "/gpu_peaks.json"));
  const cli::ReportTables t = cli::load_report_tables(dirs());
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("not a JSON object; using the built-in gpu_peaks.json"),
            std::string::npos)
      << t.warnings[0];
  // Not the next directory: a broken override is a mistake to see, not to work around.
  ASSERT_TRUE(t.models);
  EXPECT_EQ(t.models->origin(), "data/gpu_peaks.json");
}

TEST_F(DataDirs, DataDirOptionBeatsTheEnvironment) {
  write("cli", "prices.json", prices(1));
  write("env", "prices.json", prices(2));
  ::setenv("GPULENS_DATA_DIR", dir("env").c_str(), 1);
  const auto from_env = cli::load_report_tables(std::string{});
  const auto from_cli = cli::load_report_tables(dir("cli"));
  const auto missing = cli::load_report_tables(dir("none"));
  ::unsetenv("GPULENS_DATA_DIR");
  EXPECT_EQ(*from_env.prices->price("H100 SXM"), 2);
  EXPECT_EQ(*from_cli.prices->price("H100 SXM"), 1);
  // A --data-dir that does not exist is said, and the rest of the order still holds.
  ASSERT_FALSE(missing.warnings.empty());
  EXPECT_NE(missing.warnings[0].find("is not a directory"), std::string::npos);
  EXPECT_EQ(*missing.prices->price("H100 SXM"), 2);
}

// The binary alone, run where no data/ is near: the report still has price and MFU.
TEST_F(DataDirs, ReportFromAnotherDirectoryHasPriceAndMfu) {
  const std::string recording =
      std::string(GPULENS_SOURCE_DIR) + "/examples/calibration-h100.trace.jsonl";
  const std::string cmd = "cd '" + root_.string() + "' && env -u GPULENS_DATA_DIR '" +
                          GPULENS_BINARY + "' report '" + recording + "' 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << out;
  EXPECT_EQ(out.find("not found"), std::string::npos) << out;
  EXPECT_NE(out.find("Cost at $2.99 per GPU-hour (data/prices.json: H100 SXM)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("MFU (bf16 dense peak 989.4 TFLOP/s"), std::string::npos) << out;
}

}  // namespace
}  // namespace gpulens::verdict
