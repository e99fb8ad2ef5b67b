// SPDX-License-Identifier: Apache-2.0
// The procfs parsers on the committed fixtures, on hand-written variants, and on
// malformed and truncated input (an error, never garbage).
#include "sources/host/procfs_parse.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sources/host/cgroup_parse.hpp"

namespace gpulens::sources {
namespace {

std::string fixture(const std::string& rel) {
  std::ifstream in(std::string(GPULENS_FIXTURES) + "/proc/" + rel, std::ios::binary);
  EXPECT_TRUE(in.good()) << rel;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kStatTail = "intr 1 2 3\nctxt 4\n";

TEST(ProcfsParseStat, FixtureTotalsAndCores) {
  const auto stat = parse_proc_stat(fixture("t0/stat"));
  ASSERT_TRUE(stat.ok()) << stat.error().message;
  EXPECT_EQ(stat->all.cpu, -1);
  EXPECT_EQ(stat->all.busy, 10000u + 500 + 3000 + 200 + 100 + 50);
  EXPECT_EQ(stat->all.idle, 80000u + 1000);
  ASSERT_EQ(stat->cores.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(stat->cores[static_cast<std::size_t>(i)].cpu, i);
  EXPECT_EQ(stat->cores[0].busy, 3000u + 100 + 1000 + 50 + 30 + 20);
  EXPECT_EQ(stat->cores[0].idle, 19000u + 300);
}

TEST(ProcfsParseStat, GuestTimeIsNotCountedTwice) {
  // guest and guest_nice are already part of user and nice.
  const auto stat = parse_proc_stat("cpu  10 20 30 40 50 60 70 80 900 1000\n" + kStatTail);
  ASSERT_TRUE(stat.ok());
  EXPECT_EQ(stat->all.busy, 10u + 20 + 30 + 60 + 70 + 80);
  EXPECT_EQ(stat->all.idle, 40u + 50);
}

TEST(ProcfsParseStat, OldKernelWithFourColumns) {
  const auto stat = parse_proc_stat("cpu 1 2 3 4\ncpu0 1 2 3 4\n" + kStatTail);
  ASSERT_TRUE(stat.ok());
  EXPECT_EQ(stat->all.busy, 6u);
  EXPECT_EQ(stat->all.idle, 4u);
}

TEST(ProcfsParseStat, OfflineCoresLeaveGapsInNumbering) {
  const auto stat = parse_proc_stat("cpu 2 0 0 2\ncpu0 1 0 0 1\ncpu2 1 0 0 1\n" + kStatTail);
  ASSERT_TRUE(stat.ok());
  ASSERT_EQ(stat->cores.size(), 2u);
  EXPECT_EQ(stat->cores[1].cpu, 2);
}

TEST(ProcfsParseStat, MalformedInputIsAnError) {
  for (const std::string& bad : std::vector<std::string>{
           "",
           "\n\n",
           "intr 1 2\n",
           "cpu0 1 2 3 4\n" + kStatTail,               // no aggregate line
           "cpu 1 2 3\n" + kStatTail,                  // too few columns
           "cpu 1 2 x 4\n" + kStatTail,                // not a number
           "cpu 1 2 -3 4\n" + kStatTail,               // negative
           "cpu 1 2 3 4\ncpuX 1 2 3 4\n" + kStatTail,  // bad core name
           "cpu 1 2 3 4\ncpu 1 2 3 4\n" + kStatTail,   // two aggregates
           "cpu 1 2 3 4\ncpu0 1 2 3 4\n",              // cut short after the cpu lines
           "cpu 99999999999999999999999 2 3 4\n" + kStatTail,
           std::string("cpu 1 2\0 3 4\n", 13) + kStatTail,
       }) {
    EXPECT_FALSE(parse_proc_stat(bad).ok()) << bad;
  }
}

TEST(ProcfsParseMeminfo, Fixture) {
  const auto mem = parse_meminfo(fixture("t0/meminfo"));
  ASSERT_TRUE(mem.ok()) << mem.error().message;
  EXPECT_EQ(mem->total_kib, 16384000u);
  ASSERT_TRUE(mem->available_kib.has_value());
  EXPECT_EQ(*mem->available_kib, 8192000u);
}

TEST(ProcfsParseMeminfo, AvailableMissingOnOldKernels) {
  const auto mem = parse_meminfo("MemTotal: 1024 kB\nMemFree: 512 kB\n");
  ASSERT_TRUE(mem.ok());
  EXPECT_EQ(mem->total_kib, 1024u);
  EXPECT_FALSE(mem->available_kib.has_value());
}

TEST(ProcfsParseMeminfo, MalformedInputIsAnError) {
  for (const std::string& bad : std::vector<std::string>{
           "",
           "MemFree: 512 kB\n",
           "MemTotal: abc kB\n",
           "MemTotal: 1024 MB\n",
           "MemTotal: 1024\n",  // no unit: a read cut inside the number
           "MemTotal: 1024 kB\nMemAvailable: -5 kB\n",
           "MemTotal:\n",
       }) {
    EXPECT_FALSE(parse_meminfo(bad).ok()) << bad;
  }
}

TEST(ProcfsParsePidStat, Fixture) {
  const auto st = parse_pid_stat(fixture("t0/1001/stat"));
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(st->pid, 1001u);
  EXPECT_EQ(st->comm, "python3");
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->ppid, 900u);
  EXPECT_EQ(st->utime_ticks, 5000u);
  EXPECT_EQ(st->stime_ticks, 1000u);
  EXPECT_EQ(st->start_ticks, 123456u);
  EXPECT_EQ(st->rss_pages, 25600u);
}

TEST(ProcfsParsePidStat, CommWithSpacesAndParentheses) {
  const auto st = parse_pid_stat(fixture("t0/1002/stat"));
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(st->comm, "tricky) (name");
  EXPECT_EQ(st->ppid, 1u);
  EXPECT_EQ(st->utime_ticks, 100u);
}

TEST(ProcfsParsePidStat, CommThatLooksLikeFields) {
  const std::string fields =
      " R 7 7 7 0 -1 0 0 0 0 0 11 22 0 0 20 0 1 0 33 1000 44 1844674407370955161";
  const auto st = parse_pid_stat("42 (a) R 1 2 3 4\n)" + fields);
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(st->comm, "a) R 1 2 3 4\n");
  EXPECT_EQ(st->state, 'R');
  EXPECT_EQ(st->ppid, 7u);
  EXPECT_EQ(st->utime_ticks, 11u);
  EXPECT_EQ(st->stime_ticks, 22u);
  EXPECT_EQ(st->start_ticks, 33u);
  EXPECT_EQ(st->rss_pages, 44u);
  const auto empty_comm = parse_pid_stat("42 ()" + fields);
  ASSERT_TRUE(empty_comm.ok());
  EXPECT_EQ(empty_comm->comm, "");
}

TEST(ProcfsParsePidStat, MalformedInputIsAnError) {
  const std::string fields = " S 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 7 100 8 99";
  ASSERT_TRUE(parse_pid_stat("9 (ok)" + fields).ok());
  for (const std::string& bad : std::vector<std::string>{
           std::string(),
           "9 ok" + fields,                                           // no parentheses
           "9 )ok(" + fields,                                         // reversed
           "x (ok)" + fields,                                         // pid not a number
           "9 9 (ok)" + fields,                                       // two pids
           "9 (ok) S 1 1 1 0 -1 0 0 0 0 0 5 6",                       // too few fields
           "9 (ok) S 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 7 100 8",  // no rsslim
           "9 (ok) SS 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 7 100 8 99",
           "9 (ok) S -1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 7 100 8 99",
           "9 (ok) S 1 1 1 0 -1 0 0 0 0 0 5x 6 0 0 20 0 1 0 7 100 8 99",
           "9 (ok) S 4294967296 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 7 100 8 99",
       }) {
    EXPECT_FALSE(parse_pid_stat(bad).ok()) << bad;
  }
}

TEST(ProcfsParsePidStatus, Fixture) {
  const auto st = parse_pid_status(fixture("t0/1002/status"));
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(st->uid, 3999999999u);
  EXPECT_EQ(st->nspid_depth, 1u);
}

TEST(ProcfsParsePidStatus, RealUidAndNestedNamespace) {
  const auto st = parse_pid_status("Name:\tx\nUid:\t1000\t0\t0\t0\nNSpid:\t4707\t12\t1\n");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->uid, 1000u);  // real, not effective
  EXPECT_EQ(st->nspid_depth, 3u);
  const auto old_kernel = parse_pid_status("Uid:\t5\t5\t5\t5\n");
  ASSERT_TRUE(old_kernel.ok());
  EXPECT_EQ(old_kernel->nspid_depth, 0u);
}

TEST(ProcfsParsePidStatus, MalformedInputIsAnError) {
  for (const std::string& bad : std::vector<std::string>{
           "",
           "Name:\tx\n",
           "Uid:\tx\t0\t0\t0\n",
           "Uid:\t10\n",  // cut short
           "Uid:\t-1\t0\t0\t0\n",
           "Uid:\t1\t1\t1\t1\nNSpid:\t12\tx\n",
       }) {
    EXPECT_FALSE(parse_pid_status(bad).ok()) << bad;
  }
}

TEST(ProcfsParseCmdline, NulSeparatedArgumentsJoinedBySpaces) {
  EXPECT_EQ(parse_cmdline(fixture("t0/1001/cmdline")), "python3 train.py --batch-size 32");
  EXPECT_EQ(parse_cmdline(std::string("a\0\0b\0", 5)), "a  b");  // an empty argument
  EXPECT_EQ(parse_cmdline(""), "");                              // kernel thread, zombie
  EXPECT_EQ(parse_cmdline(std::string("\0\0", 2)), "");
  // setproctitle() overwrites argv in place and pads with NULs.
  EXPECT_EQ(parse_cmdline(std::string("nginx: worker process\0\0\0\0", 25)),
            "nginx: worker process");
}

TEST(ProcfsParseNsInode, Link) {
  EXPECT_EQ(parse_ns_inode("pid:[4026531836]"), 4026531836u);
  EXPECT_FALSE(parse_ns_inode("").has_value());
  EXPECT_FALSE(parse_ns_inode("pid:[]").has_value());
  EXPECT_FALSE(parse_ns_inode("pid:[12").has_value());
  EXPECT_FALSE(parse_ns_inode("pid:[x1]").has_value());
}

// A read cut short anywhere must give an error or the values of the whole file, never
// something in between.
TEST(ProcfsParseTruncated, EveryPrefixIsAnErrorOrTheRealValue) {
  for (const char* file : {"t0/1001/stat", "t0/1002/stat", "t1/1003/stat"}) {
    const auto text = fixture(file);
    const auto whole = parse_pid_stat(text);
    ASSERT_TRUE(whole.ok());
    for (std::size_t n = 0; n < text.size(); ++n) {
      const auto part = parse_pid_stat(std::string_view(text).substr(0, n));
      if (!part.ok()) continue;
      EXPECT_EQ(part->comm, whole->comm) << file << " cut at " << n;
      EXPECT_EQ(part->utime_ticks, whole->utime_ticks) << file << " cut at " << n;
      EXPECT_EQ(part->stime_ticks, whole->stime_ticks) << file << " cut at " << n;
      EXPECT_EQ(part->start_ticks, whole->start_ticks) << file << " cut at " << n;
      EXPECT_EQ(part->rss_pages, whole->rss_pages) << file << " cut at " << n;
    }
  }
  for (const char* file : {"t0/stat", "t1/stat"}) {
    const auto text = fixture(file);
    const auto whole = parse_proc_stat(text);
    ASSERT_TRUE(whole.ok());
    for (std::size_t n = 0; n < text.size(); ++n) {
      const auto part = parse_proc_stat(std::string_view(text).substr(0, n));
      if (!part.ok()) continue;
      EXPECT_EQ(part->all.busy, whole->all.busy) << file << " cut at " << n;
      EXPECT_EQ(part->all.idle, whole->all.idle) << file << " cut at " << n;
      EXPECT_EQ(part->cores.size(), whole->cores.size()) << file << " cut at " << n;
    }
  }
  const auto meminfo = fixture("t0/meminfo");
  const auto whole_mem = parse_meminfo(meminfo);
  for (std::size_t n = 0; n < meminfo.size(); ++n) {
    const auto part = parse_meminfo(std::string_view(meminfo).substr(0, n));
    if (!part.ok()) continue;
    EXPECT_EQ(part->total_kib, whole_mem->total_kib) << "cut at " << n;
    if (part->available_kib) {
      EXPECT_EQ(part->available_kib, whole_mem->available_kib) << "cut at " << n;
    }
  }
  const auto status = fixture("t0/1001/status");
  for (std::size_t n = 0; n < status.size(); ++n) {
    const auto part = parse_pid_status(std::string_view(status).substr(0, n));
    if (part.ok()) {
      EXPECT_EQ(part->uid, 0u) << "cut at " << n;
    }
  }
}

// Corrupted files (flipped bytes, NULs, cut lines) must never crash a parser.
TEST(ProcfsParseFuzz, CorruptedFixturesNeverCrash) {
  std::mt19937 rng(20240601);
  const std::vector<std::string> files = {fixture("t0/stat"),         fixture("t0/meminfo"),
                                          fixture("t0/1002/stat"),    fixture("t0/1001/status"),
                                          fixture("t0/1001/cmdline"), fixture("t0/1003/cgroup")};
  const std::string alphabet = std::string("0123456789 ()\n:/-_.abcdefxyzkB") + '\0';
  std::size_t parsed = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string text = files[static_cast<std::size_t>(round) % files.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      text[rng() % text.size()] = alphabet[rng() % alphabet.size()];
    }
    parsed += parse_proc_stat(text).ok() + parse_meminfo(text).ok() + parse_pid_stat(text).ok() +
              parse_pid_status(text).ok() + parse_pid_cgroup(text).ok();
    (void)parse_cmdline(text);
    (void)parse_ns_inode(text);
  }
  EXPECT_GT(parsed, 0u);  // some edits are harmless; the point is reaching here
}

}  // namespace
}  // namespace gpulens::sources
