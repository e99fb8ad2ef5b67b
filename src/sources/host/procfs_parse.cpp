// SPDX-License-Identifier: Apache-2.0
#include "sources/host/procfs_parse.hpp"

#include <array>
#include <string>

#include "sources/host/text_scan.hpp"

namespace gpulens::sources {
namespace {

using text_scan::next_line;
using text_scan::next_token;
using text_scan::to_unsigned;

Error fail(std::string_view file, std::string_view what) {
  std::string message(file);
  message += ": ";
  message += what;
  return Error{std::move(message)};
}

// Columns of a cpu line, in kernel order; guest and guest_nice are skipped because the
// kernel already counts them in user and nice.
enum CpuColumn { kUser, kNice, kSystem, kIdle, kIowait, kIrq, kSoftirq, kSteal, kColumns };
// Linux 2.4 had only user, nice, system, idle; later columns read as 0 when missing.
constexpr std::size_t kMinCpuColumns = 4;

Result<CpuTimes> parse_cpu_line(std::string_view name, std::string_view rest) {
  CpuTimes out;
  if (name.size() > 3) {
    const auto core = to_unsigned<unsigned>(name.substr(3));
    if (!core || *core > 1u << 20) return fail("stat", "bad cpu line name");
    out.cpu = static_cast<int>(*core);
  }
  std::array<std::uint64_t, kColumns> col{};
  std::size_t n = 0;
  for (auto token = next_token(rest); !token.empty() && n < kColumns;
       token = next_token(rest), ++n) {
    const auto v = to_unsigned(token);
    if (!v) return fail("stat", "non-numeric field on a cpu line");
    col[n] = *v;
  }
  if (n < kMinCpuColumns) return fail("stat", "too few fields on a cpu line");
  out.busy = col[kUser] + col[kNice] + col[kSystem] + col[kIrq] + col[kSoftirq] + col[kSteal];
  out.idle = col[kIdle] + col[kIowait];
  return out;
}

}  // namespace

Result<ProcStat> parse_proc_stat(std::string_view text) {
  ProcStat out;
  bool have_all = false;
  bool in_cpu_block = false;
  bool block_ended = false;
  for (std::string_view rest = text; !rest.empty();) {
    const bool complete = rest.find('\n') != std::string_view::npos;
    auto line = next_line(rest);
    const auto name = next_token(line);
    if (name.substr(0, 3) != "cpu") {
      // The cpu lines come first; stopping here skips the long "intr" line. Only a
      // whole line ends the block: "c" may be the start of a cut-off "cpu7" line.
      block_ended = in_cpu_block && complete;
      if (in_cpu_block) break;
      continue;
    }
    in_cpu_block = true;
    auto cpu = parse_cpu_line(name, line);
    if (!cpu) return cpu.error();
    if (cpu->cpu < 0) {
      if (have_all) return fail("stat", "two aggregate cpu lines");
      out.all = *cpu;
      have_all = true;
    } else {
      out.cores.push_back(*cpu);
    }
  }
  if (!have_all) return fail("stat", "no aggregate cpu line");
  // The kernel always writes "intr" and more after the cpu lines; without them the
  // text was cut short and the last cpu line (or whole cores) may be missing.
  if (!block_ended) return fail("stat", "truncated after the cpu lines");
  return out;
}

Result<MemInfo> parse_meminfo(std::string_view text) {
  MemInfo out;
  bool have_total = false;
  for (std::string_view rest = text; !rest.empty() && !(have_total && out.available_kib);) {
    auto line = next_line(rest);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const auto key = line.substr(0, colon);
    if (key != "MemTotal" && key != "MemAvailable") continue;
    line.remove_prefix(colon + 1);
    const auto value = to_unsigned(next_token(line));
    const auto unit = next_token(line);
    // Requiring the unit also catches a number cut short by a truncated read.
    if (!value || unit != "kB") return fail("meminfo", "bad value");
    if (key == "MemTotal") {
      out.total_kib = *value;
      have_total = true;
    } else {
      out.available_kib = *value;
    }
  }
  if (!have_total) return fail("meminfo", "no MemTotal");
  return out;
}

Result<PidStat> parse_pid_stat(std::string_view text) {
  PidStat out;
  const auto open = text.find('(');
  const auto close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return fail("pid stat", "no command name in parentheses");
  }
  auto head = text.substr(0, open);
  const auto pid = to_unsigned<std::uint32_t>(next_token(head));
  if (!pid || !next_token(head).empty()) return fail("pid stat", "bad pid");
  out.pid = *pid;
  out.comm.assign(text.substr(open + 1, close - open - 1));

  // Fields after the comm, counted from 0 = state (field 3 in proc(5)). rsslim, the
  // field after rss, must be there too, so that a truncated rss is not taken for a value.
  constexpr std::size_t kState = 0, kPpid = 1, kUtime = 11, kStime = 12, kStart = 19, kRss = 21,
                        kRssLim = 22;
  std::array<std::string_view, kRssLim + 1> field{};
  auto rest = text.substr(close + 1);
  for (auto& f : field) {
    f = next_token(rest);
    if (f.empty()) return fail("pid stat", "too few fields");
  }
  if (field[kState].size() != 1) return fail("pid stat", "bad state");
  out.state = field[kState][0];
  const auto ppid = to_unsigned<std::uint32_t>(field[kPpid]);
  const auto utime = to_unsigned(field[kUtime]);
  const auto stime = to_unsigned(field[kStime]);
  const auto start = to_unsigned(field[kStart]);
  const auto rss = to_unsigned(field[kRss]);
  if (!ppid || !utime || !stime || !start || !rss) return fail("pid stat", "non-numeric field");
  out.ppid = *ppid;
  out.utime_ticks = *utime;
  out.stime_ticks = *stime;
  out.start_ticks = *start;
  out.rss_pages = *rss;
  return out;
}

Result<PidStatus> parse_pid_status(std::string_view text) {
  PidStatus out;
  bool have_uid = false;
  for (std::string_view rest = text; !rest.empty();) {
    auto line = next_line(rest);
    const auto key = next_token(line);
    if (key == "Uid:") {
      // Real, effective, saved and filesystem uid: all four, or the line was cut.
      const auto uid = to_unsigned<std::uint32_t>(next_token(line));
      for (int i = 0; i < 3; ++i) {
        if (!to_unsigned<std::uint32_t>(next_token(line)))
          return fail("pid status", "bad Uid line");
      }
      if (!uid) return fail("pid status", "bad Uid line");
      out.uid = *uid;
      have_uid = true;
    } else if (key == "NSpid:") {
      for (auto token = next_token(line); !token.empty(); token = next_token(line)) {
        if (!to_unsigned<std::uint32_t>(token)) return fail("pid status", "bad NSpid line");
        ++out.nspid_depth;
      }
    }
  }
  if (!have_uid) return fail("pid status", "no Uid line");
  return out;
}

std::string parse_cmdline(std::string_view raw) {
  while (!raw.empty() && raw.back() == '\0') raw.remove_suffix(1);
  std::string out(raw);
  for (auto& c : out) {
    if (c == '\0') c = ' ';
  }
  return out;
}

std::optional<std::uint64_t> parse_ns_inode(std::string_view link) {
  const auto open = link.find(":[");
  if (open == std::string_view::npos || link.empty() || link.back() != ']') return std::nullopt;
  return to_unsigned(link.substr(open + 2, link.size() - open - 3));
}

}  // namespace gpulens::sources
