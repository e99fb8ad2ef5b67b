// SPDX-License-Identifier: Apache-2.0
#pragma once
// Pure parsers for the procfs files the host source reads: text in, struct out, an
// Error on malformed input. No I/O here, so every format quirk is tested on strings.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace gpulens::sources {

// One cpu line of /proc/stat in jiffies, folded into busy and idle.
struct CpuTimes {
  int cpu = -1;            // core number; -1 for the aggregate "cpu" line
  std::uint64_t busy = 0;  // user+nice+system+irq+softirq+steal
  std::uint64_t idle = 0;  // idle+iowait
  std::uint64_t total() const { return busy + idle; }
};

struct ProcStat {
  CpuTimes all;
  std::vector<CpuTimes> cores;  // online cores in file order; numbers may have gaps
};

struct MemInfo {
  std::uint64_t total_kib = 0;
  std::optional<std::uint64_t> available_kib;  // absent before Linux 3.14
};

// The fields of /proc/PID/stat that the host source uses.
struct PidStat {
  std::uint32_t pid = 0;
  std::string comm;  // may hold spaces and ')'
  char state = '?';
  std::uint32_t ppid = 0;
  std::uint64_t utime_ticks = 0;
  std::uint64_t stime_ticks = 0;
  std::uint64_t start_ticks = 0;  // since boot: a reused PID has another value
  std::uint64_t rss_pages = 0;
};

struct PidStatus {
  std::uint32_t uid = 0;        // real uid
  std::size_t nspid_depth = 0;  // entries on the NSpid line; 0 when the kernel has none
};

// /proc/stat: the aggregate and per-core cpu lines (the rest of the file is skipped).
Result<ProcStat> parse_proc_stat(std::string_view text);
// /proc/meminfo: MemTotal (required) and MemAvailable.
Result<MemInfo> parse_meminfo(std::string_view text);
// /proc/PID/stat. comm is taken up to the LAST ')' since it may contain ") ".
Result<PidStat> parse_pid_stat(std::string_view text);
// /proc/PID/status: the real uid and the NSpid depth.
Result<PidStatus> parse_pid_status(std::string_view text);
// /proc/PID/cmdline: NUL-separated arguments joined by spaces (empty for kernel threads).
std::string parse_cmdline(std::string_view raw);
// The inode of a namespace link's target ("pid:[4026531836]").
std::optional<std::uint64_t> parse_ns_inode(std::string_view link);

}  // namespace gpulens::sources
