// SPDX-License-Identifier: Apache-2.0
#include "sources/host/host_collector.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <system_error>
#include <utility>

#include "sources/host/cgroup_parse.hpp"

namespace gpulens::sources {
namespace {

// The initial PID namespace has had this fixed inode since Linux 3.8 (PROC_PID_INIT_INO).
constexpr std::uint64_t kInitPidNsInode = 0xEFFFFFFCu;
// A PID read less than this long ago is served from the cache: a process on several
// GPUs is enriched once per GPU in the same tick, and a delta shorter than a clock
// tick would be noise.
constexpr double kSameTickS = 0.01;
// Processes come and go; entries for PIDs not seen for this long are dropped.
constexpr double kForgetAfterS = 60;
constexpr double kKibPerMib = 1024;
constexpr double kBytesPerMib = 1024.0 * 1024.0;
constexpr std::size_t kMaxPasswdBuffer = 1 << 20;

std::optional<double> busy_pct(const CpuTimes& before, const CpuTimes& after) {
  // iowait can go backwards on NO_HZ kernels as its time moves to idle; the sum stays
  // monotonic, and saturating at 0 keeps any other glitch from giving a negative share.
  const std::uint64_t busy = after.busy > before.busy ? after.busy - before.busy : 0;
  const std::uint64_t idle = after.idle > before.idle ? after.idle - before.idle : 0;
  if (busy + idle == 0) return std::nullopt;
  return 100.0 * static_cast<double>(busy) / static_cast<double>(busy + idle);
}

bool same_cores(const std::vector<CpuTimes>& a, const std::vector<CpuTimes>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const CpuTimes& x, const CpuTimes& y) { return x.cpu == y.cpu; });
}

void add_error(std::string& errors, std::string_view what) {
  if (!errors.empty()) errors += "; ";
  errors += what;
}

std::string describe(const char* path, int err) {
  return std::string(path) + ": " + std::error_code(err, std::generic_category()).message();
}

}  // namespace

HostCollector::HostCollector(HostOptions options) : options_(std::move(options)) {
  if (const long ticks = sysconf(_SC_CLK_TCK); ticks > 0) clock_ticks_per_s_ = ticks;
  if (const long page = sysconf(_SC_PAGESIZE); page > 0) page_size_ = page;
  foreign_pid_ns_ = detect_foreign_pid_namespace();
}

HostSnapshot HostCollector::sample(HostReadings what) {
  HostSnapshot out;
  if (const int err = stat_file_.read(path_of("stat"), buf_)) {
    add_error(out.error, describe(path_.c_str(), err));
  } else if (auto stat = parse_proc_stat(buf_.view()); !stat) {
    add_error(out.error, stat.error().message);
  } else {
    if (!stat->cores.empty()) out.cpu_count = static_cast<int>(stat->cores.size());
    if (have_prev_stat_) {
      out.cpu_pct = busy_pct(prev_stat_.all, stat->all);
      // A core going on- or offline shifts positions: skip per-core figures that tick.
      if (same_cores(prev_stat_.cores, stat->cores)) {
        out.per_core_pct.reserve(stat->cores.size());
        for (std::size_t i = 0; i < stat->cores.size(); ++i) {
          // A core whose counters did not move did no work we could see.
          out.per_core_pct.push_back(busy_pct(prev_stat_.cores[i], stat->cores[i]).value_or(0));
        }
      }
    }
    prev_stat_ = std::move(*stat);
    have_prev_stat_ = true;
  }
  if (what == HostReadings::CpuOnly) return out;

  if (const int err = buf_.read(path_of("meminfo"))) {
    add_error(out.error, describe(path_.c_str(), err));
  } else if (auto mem = parse_meminfo(buf_.view()); !mem) {
    add_error(out.error, mem.error().message);
  } else {
    out.mem_total_mib = static_cast<double>(mem->total_kib) / kKibPerMib;
    if (mem->available_kib)
      out.mem_available_mib = static_cast<double>(*mem->available_kib) / kKibPerMib;
  }
  return out;
}

void HostCollector::enrich(std::vector<ProcessSample>& procs, double now_s) {
  unresolved_.clear();
  for (auto& p : procs) {
    const ProcCache* entry = foreign_pid_ns_ ? nullptr : refresh(p.pid, now_s);
    if (entry == nullptr) {
      if (std::find(unresolved_.begin(), unresolved_.end(), p.pid) == unresolved_.end()) {
        unresolved_.push_back(p.pid);
      }
      continue;
    }
    p.name = entry->name;
    p.user = entry->user;
    p.uid = entry->uid;
    p.start_ticks = entry->start_ticks;
    p.cpu_pct = entry->cpu_pct;
    p.rss_mib = entry->rss_mib;
    p.container = entry->container;
    p.pod = entry->pod;
    p.slurm = entry->slurm;
    p.ppid = entry->ppid;
    if (options_.with_cmdline) p.cmdline = entry->cmdline;
  }
  std::erase_if(procs_,
                [now_s](const auto& kv) { return now_s - kv.second.seen_s > kForgetAfterS; });
}

HostCollector::ProcCache* HostCollector::refresh(std::uint32_t pid, double now_s) {
  auto it = procs_.find(pid);
  if (it != procs_.end() && std::abs(now_s - it->second.seen_s) < kSameTickS) return &it->second;

  auto stat = buf_.read(pid_path(pid, "stat")) == 0 ? parse_pid_stat(buf_.view())
                                                    : Result<PidStat>(Error{});
  if (!stat || stat->pid != pid) {
    // Gone, or not ours to see: a later process with this PID starts afresh.
    if (it != procs_.end()) procs_.erase(it);
    return nullptr;
  }
  const std::uint64_t cpu_ticks = stat->utime_ticks + stat->stime_ticks;
  if (it == procs_.end() || it->second.start_ticks != stat->start_ticks) {
    // First sight, or the PID now belongs to a new process: nothing cached applies.
    it = procs_.insert_or_assign(pid, ProcCache{}).first;
    it->second.start_ticks = stat->start_ticks;
    it->second.name = std::move(stat->comm);
    load_identity(pid, it->second);
  } else {
    ProcCache& entry = it->second;
    const double dt = now_s - entry.seen_s;
    entry.cpu_pct.reset();
    if (dt > 0 && cpu_ticks >= entry.cpu_ticks) {
      const auto used_s = static_cast<double>(cpu_ticks - entry.cpu_ticks) /
                          static_cast<double>(clock_ticks_per_s_);
      entry.cpu_pct = 100.0 * used_s / dt;
    }
    if (entry.name != stat->comm) {
      // Renamed by exec() or prctl(); after an exec the command line changed as well.
      entry.name = std::move(stat->comm);
      if (options_.with_cmdline && buf_.read(pid_path(pid, "cmdline")) == 0) {
        entry.cmdline = parse_cmdline(buf_.view());
      }
    }
  }
  ProcCache& entry = it->second;
  entry.cpu_ticks = cpu_ticks;
  entry.seen_s = now_s;
  entry.ppid = stat->ppid;
  entry.rss_mib =
      static_cast<double>(stat->rss_pages) * static_cast<double>(page_size_) / kBytesPerMib;
  return &entry;
}

void HostCollector::load_identity(std::uint32_t pid, ProcCache& entry) {
  // Each file is optional: a process may exit between reads, or a hardened procfs may
  // hide some of them; whatever could be read is kept.
  if (buf_.read(pid_path(pid, "status")) == 0) {
    if (const auto status = parse_pid_status(buf_.view())) {
      entry.uid = status->uid;
      entry.user = user_name(status->uid);
    }
  }
  SlurmCgroup slurm_cgroup;
  if (buf_.read(pid_path(pid, "cgroup")) == 0) {
    if (auto cgroup = parse_pid_cgroup(buf_.view())) {
      entry.container = std::move(cgroup->container);
      entry.pod = std::move(cgroup->pod);
      slurm_cgroup = std::move(cgroup->slurm);
    }
  }
  load_slurm(pid, slurm_cgroup, entry);
  if (options_.with_cmdline && buf_.read(pid_path(pid, "cmdline")) == 0) {
    entry.cmdline = parse_cmdline(buf_.view());
  }
}

void HostCollector::load_slurm(std::uint32_t pid, const SlurmCgroup& cgroup, ProcCache& entry) {
  SlurmEvidence evidence;
  evidence.cgroup = cgroup;
  // Read with the cap +1 so that an environment of exactly the cap is not "truncated".
  evidence.environ_errno = buf_.read(pid_path(pid, "environ"), kMaxEnvironBytes + 1);
  if (evidence.environ_errno == 0) {
    auto raw = buf_.view();
    evidence.environ_truncated = raw.size() > kMaxEnvironBytes;
    if (evidence.environ_truncated) raw = raw.substr(0, kMaxEnvironBytes);
    evidence.environ = parse_slurm_environ(raw, evidence.environ_truncated);
  }
  const std::string cgroup_user = cgroup.uid ? user_name(*cgroup.uid) : std::string();
  auto found = attribute_slurm(evidence, cgroup_user, entry.user);
  for (std::size_t i = 0; i < kSlurmProblemCount; ++i) {
    if (found.problems[i]) ++slurm_problems_[i];
  }
  entry.slurm = std::move(found.job);
}

const std::string& HostCollector::user_name(std::uint32_t uid) {
  auto [it, inserted] = user_names_.try_emplace(uid);
  if (!inserted) return it->second;
  if (pw_buf_.empty()) {
    const long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
    pw_buf_.resize(hint > 0 ? static_cast<std::size_t>(hint) : 16384);
  }
  passwd pw{};
  passwd* found = nullptr;
  int rc = 0;
  while ((rc = getpwuid_r(uid, &pw, pw_buf_.data(), pw_buf_.size(), &found)) == ERANGE &&
         pw_buf_.size() < kMaxPasswdBuffer) {
    pw_buf_.resize(pw_buf_.size() * 2);
  }
  // A uid with no passwd entry (common for container users) is shown as its number.
  if (rc == 0 && found != nullptr && found->pw_name != nullptr && found->pw_name[0] != '\0') {
    it->second = found->pw_name;
  } else {
    it->second = std::to_string(uid);
  }
  return it->second;
}

const char* HostCollector::path_of(std::string_view file) {
  path_.assign(options_.procfs_root);
  path_ += '/';
  path_ += file;
  return path_.c_str();
}

const char* HostCollector::pid_path(std::uint32_t pid, std::string_view file) {
  std::array<char, 16> digits{};
  const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), pid).ptr;
  path_.assign(options_.procfs_root);
  path_ += '/';
  path_.append(digits.data(), end);
  path_ += '/';
  path_ += file;
  return path_.c_str();
}

bool HostCollector::detect_foreign_pid_namespace() {
  std::array<char, 64> link{};
  const auto n = ::readlink(path_of("self/ns/pid"), link.data(), link.size());
  if (n <= 0) return false;  // fixture trees and kernels before 3.8 have no such link
  const auto inode = parse_ns_inode({link.data(), static_cast<std::size_t>(n)});
  if (!inode || *inode == kInitPidNsInode) return false;
  // We are in a nested namespace. A procfs mounted from an ancestor (the host's /proc
  // bind-mounted in) lists this process under several NSpid numbers and holds host
  // PIDs; our own namespace's procfs lists one. Kernels without NSpid: assume host.
  if (buf_.read(path_of("self/status")) != 0) return false;
  const auto status = parse_pid_status(buf_.view());
  return status && status->nspid_depth == 1;
}

}  // namespace gpulens::sources
