// SPDX-License-Identifier: Apache-2.0
// merge_kernel_records: the record files a job left, taken into the recording line
// by line, whatever the job wrote there.
#include "cli/kernels_setup.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/input_limits.hpp"

namespace gpulens::cli {
namespace {

namespace fs = std::filesystem;

// A setup as prepare_kernels leaves it, without the injection library: the records
// directory made and held open.
KernelsSetup records_in(const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  KernelsSetup s;
  s.records_dir = dir.string();
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  s.records_dir_fd = std::shared_ptr<const int>(new int(fd), [](const int* p) {
    ::close(*p);
    delete p;
  });
  return s;
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Before: the reader stopped at the limit and took the rest of the line for the
// next one, so the tail of an over-long line was kept as a record (here of a
// process that wrote nothing).
TEST(MergeKernelRecords, AnOverLongLineIsSkippedWholeNotSplit) {
  const fs::path base =
      fs::path(::testing::TempDir()) / ("gpulens-kmerge-" + std::to_string(getpid()));
  const KernelsSetup setup = records_in(base / "kernels");
  const std::string tail = R"({"x_kernels":3,"pid":515151,"status":"ok","kernels":[]})";
  const std::string good = R"({"x_kernels":3,"pid":7,"status":"ok","kernels":[]})";
  {
    std::ofstream f(base / "kernels" / "kernels-7.json", std::ios::binary);
    f << std::string(kMaxLineBytes, 'x') << tail << '\n' << good << '\n';
  }
  const fs::path trace = base / "trace.jsonl";
  EXPECT_EQ(merge_kernel_records(setup, trace.string()), "");
  const auto lines = lines_of(trace);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], good);
  EXPECT_NE(lines[1].find("\"status\":\"unreadable\""), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("longer than 8388608 bytes (line 1)"), std::string::npos) << lines[1];
  for (const auto& line : lines) EXPECT_EQ(line.find("515151"), std::string::npos) << line;
  EXPECT_FALSE(fs::exists(base / "kernels")) << "the records directory is removed";
  fs::remove_all(base);
}

// Issue 47, 8: no total cap on what the job's record files cost `run` (1 GiB of
// junk took 230 s). The files are read up to a budget in all, and a file stops
// being read after kMaxRefusedRecordLines lines that are not records; each is said.
TEST(MergeKernelRecords, TheFilesAreReadUpToABudgetAndJunkIsNotReadToTheEnd) {
  const fs::path base =
      fs::path(::testing::TempDir()) / ("gpulens-kbudget-" + std::to_string(getpid()));
  const KernelsSetup setup = records_in(base / "kernels");
  const std::string good = R"({"x_kernels":3,"pid":7,"status":"ok","kernels":[]})";
  {
    std::ofstream junk(base / "kernels" / "kernels-1.json", std::ios::binary);
    for (int i = 0; i < 100'000; ++i) junk << "junk " << i << '\n';
    std::ofstream a(base / "kernels" / "kernels-2.json", std::ios::binary);
    for (int i = 0; i < 10; ++i) a << good << '\n';
    std::ofstream b(base / "kernels" / "kernels-3.json", std::ios::binary);
    b << good << '\n';
  }
  // The junk file costs its first 64 lines; then 5 records fit the budget.
  std::size_t junk_bytes = 0;
  for (int i = 0; i < 64; ++i) junk_bytes += fmt::format("junk {}\n", i).size();
  const std::size_t budget = junk_bytes + 5 * (good.size() + 1);
  const fs::path trace = base / "trace.jsonl";
  EXPECT_EQ(merge_kernel_records(setup, trace.string(), budget), "");
  const auto lines = lines_of(trace);
  std::size_t kept = 0;
  std::string notes;
  for (const auto& line : lines) {
    if (line == good) ++kept;
    if (line.find("unreadable") != std::string::npos) notes += line + "\n";
  }
  EXPECT_EQ(kept, 5u);
  EXPECT_NE(notes.find("kernels-1.json: not read past line 64: 64 lines were not records"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find(fmt::format("kernels-2.json: not read past line 5: the job's record "
                                   "files are read up to {} bytes and {} records in all",
                                   budget, kMaxKernelRecordLines)),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("kernels-3.json: this and 0 more record files not read"), std::string::npos)
      << notes;
  EXPECT_FALSE(fs::exists(base / "kernels")) << "every file removed, read or not";
  // Tiny records are capped by their number too (5 million cost the report minutes).
  const KernelsSetup again = records_in(base / "kernels");
  {
    std::ofstream a(base / "kernels" / "kernels-2.json", std::ios::binary);
    for (int i = 0; i < 10; ++i) a << good << '\n';
  }
  const fs::path second = base / "second.jsonl";
  EXPECT_EQ(merge_kernel_records(again, second.string(), std::size_t{1} << 20, 3), "");
  const auto taken = lines_of(second);
  ASSERT_EQ(taken.size(), 4u);
  EXPECT_EQ(taken[2], good);
  EXPECT_NE(taken[3].find("kernels-2.json: not read past line 3: the job's record files are read "
                          "up to 1 MiB and 3 records in all"),
            std::string::npos)
      << taken[3];
  fs::remove_all(base);
}

}  // namespace
}  // namespace gpulens::cli
