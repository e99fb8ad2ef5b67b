// SPDX-License-Identifier: Apache-2.0
#include "sources/host/slurm_allocations.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <set>

#include "core/input_limits.hpp"
#include "core/regular_file.hpp"
#include "sources/host/slurm_ids.hpp"

namespace gpulens::sources {
namespace {

constexpr std::array<std::string_view, kAllocationProblemCount> kProblemIds = {
    "untrusted",  "not_a_file", "malformed",   "name_mismatch",
    "stale_boot", "job_ended",  "unknown_gpu", "too_many"};

void note(AllocationScan& scan, AllocationProblem p, std::string words) {
  ++scan.problems[static_cast<std::size_t>(p)];
  scan.last_problem = std::move(words);
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A GPU id as Slurm or a site's prolog may give it: an index (digits) or an NVML
// UUID ("GPU-…", "MIG-…": letters, digits, '-' and '/').
bool valid_gpu_id(std::string_view id) {
  if (id.empty() || id.size() > 96) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '/';
  });
}

std::string read_small_file(const std::string& path) {
  auto text = read_regular_file(path, 256);
  return text ? trim(*text) : std::string();
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Where Slurm keeps job cgroups on this node, if it does: cgroup v2's
// system.slice/slurmstepd.scope, cgroup v1's <controller>/slurm. Looked up each
// scan: slurmd may start after the agent.
struct JobCgroups {
  std::string v2;               // empty when absent
  std::vector<std::string> v1;  // each <controller>/slurm that exists
  bool known() const { return !v2.empty() || !v1.empty(); }
};

JobCgroups find_job_cgroups(const std::string& root) {
  JobCgroups out;
  if (const auto v2 = root + "/system.slice/slurmstepd.scope"; is_dir(v2)) out.v2 = v2;
  for (const char* controller : {"freezer", "memory", "cpuset", "devices"}) {
    if (const auto v1 = fmt::format("{}/{}/slurm", root, controller); is_dir(v1)) {
      out.v1.push_back(v1);
    }
  }
  return out;
}

bool job_cgroup_exists(const JobCgroups& cgroups, const AllocationEntry& e) {
  if (!cgroups.v2.empty() && is_dir(fmt::format("{}/job_{}", cgroups.v2, e.job))) return true;
  for (const auto& v1 : cgroups.v1) {
    // v1 nests jobs under their user: slurm/uid_<uid>/job_<id>.
    if (e.uid && is_dir(fmt::format("{}/uid_{}/job_{}", v1, *e.uid, e.job))) return true;
  }
  return false;
}

// The entry's bytes through a descriptor opened without following links, checked
// for owner and mode on that descriptor (not on the name, which could change).
std::optional<std::string> read_entry(int dir_fd, const std::string& name,
                                      std::uint32_t trusted_uid, AllocationScan& scan) {
  auto fd = open_regular_file_at(dir_fd, name);
  if (!fd) {
    note(scan, AllocationProblem::NotAFile, fmt::format("entry {}: {}", name, fd.error().message));
    return std::nullopt;
  }
  struct stat st {};
  std::string text;
  bool ok = ::fstat(*fd, &st) == 0;
  if (ok && (st.st_uid != trusted_uid || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)) {
    note(scan, AllocationProblem::Untrusted,
         fmt::format("entry {} is owned by uid {} with mode {:o}: only uid {}'s own entries "
                     "name owners",
                     name, st.st_uid, st.st_mode & 07777, trusted_uid));
    ok = false;
  } else if (ok && st.st_size > static_cast<off_t>(kMaxAllocationEntryBytes)) {
    note(scan, AllocationProblem::Malformed,
         fmt::format("entry {} holds {} bytes (at most {})", name, st.st_size,
                     kMaxAllocationEntryBytes));
    ok = false;
  }
  if (ok) {
    text.resize(kMaxAllocationEntryBytes + 1);
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(*fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    if (got > kMaxAllocationEntryBytes) {
      note(scan, AllocationProblem::Malformed, fmt::format("entry {} grew past its limit", name));
      ok = false;
    }
  }
  ::close(*fd);
  if (!ok) return std::nullopt;
  return text;
}

}  // namespace

std::string_view allocation_problem_id(AllocationProblem p) {
  return kProblemIds[static_cast<std::size_t>(p)];
}

std::optional<AllocationEntry> parse_allocation_entry(std::string_view text, std::string_view name,
                                                      AllocationProblem& problem) {
  problem = AllocationProblem::Malformed;
  AllocationEntry e;
  std::set<std::string, std::less<>> seen;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (line.empty() || line.front() == '#') continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = line.substr(0, eq);
    const std::string value = trim(line.substr(eq + 1));
    if (!seen.insert(std::string(key)).second) return std::nullopt;  // a key given twice
    const auto name_or_empty = [&](std::string& out) {
      if (value.empty()) return true;
      const auto v = valid_slurm_name(value);
      if (!v) return false;
      out = *v;
      return true;
    };
    if (key == "job") {
      const auto id = valid_slurm_job_id(value);
      if (!id) return std::nullopt;
      e.job = *id;
    } else if (key == "user") {
      if (!name_or_empty(e.user)) return std::nullopt;
    } else if (key == "account") {
      if (!name_or_empty(e.account)) return std::nullopt;
    } else if (key == "partition") {
      if (!name_or_empty(e.partition)) return std::nullopt;
    } else if (key == "uid") {
      std::uint32_t uid = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), uid);
      if (ec != std::errc() || end != value.data() + value.size()) return std::nullopt;
      e.uid = uid;
    } else if (key == "start") {
      double start = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), start);
      if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(start) ||
          start < 0) {
        return std::nullopt;
      }
      e.start = start;
    } else if (key == "boot_id") {
      if (value.size() > 64) return std::nullopt;
      e.boot_id = value;
    } else if (key == "gpus") {
      std::string_view list = value;
      while (!list.empty()) {
        const auto comma = list.find(',');
        const std::string id = trim(list.substr(0, comma));
        list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
        if (id.empty()) continue;
        if (!valid_gpu_id(id) || e.gpus.size() >= 64) return std::nullopt;
        e.gpus.push_back(id);
      }
    }
    // Other keys (node, gpus_from, written by later prologs) are kept out, not refused.
  }
  if (e.job.empty()) return std::nullopt;
  if (e.job != name) {
    problem = AllocationProblem::NameMismatch;
    return std::nullopt;
  }
  return e;
}

std::optional<int> match_slurm_gpu(std::string_view id, const std::vector<AllocationDevice>& devs,
                                   std::string& order) {
  if (id.starts_with("GPU-") || id.starts_with("MIG-")) {
    const std::string want = lower(std::string(id));
    for (const auto& d : devs) {
      if (!d.uuid.empty() && lower(d.uuid) == want) return d.index;
    }
    return std::nullopt;
  }
  std::size_t slurm_index = 0;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), slurm_index);
  if (ec != std::errc() || end != id.data() + id.size()) return std::nullopt;
  // Slurm numbers a node's GPUs in PCI bus order (AutoDetect=nvml sorts them so,
  // and /dev/nvidiaN, which gres.conf lists, follows the bus too); CUDA's default
  // order (fastest first) and so CUDA_VISIBLE_DEVICES' numbers may differ.
  std::vector<const AllocationDevice*> sorted;
  std::set<std::string> bus_ids;
  for (const auto& d : devs) {
    sorted.push_back(&d);
    if (!d.pci_bus_id.empty()) bus_ids.insert(lower(d.pci_bus_id));
  }
  if (bus_ids.size() == devs.size()) {
    order = "pci_bus_id";
    std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
      return lower(a->pci_bus_id) < lower(b->pci_bus_id);
    });
  } else {
    order = "nvml_index";
    std::sort(sorted.begin(), sorted.end(),
              [](const auto* a, const auto* b) { return a->index < b->index; });
  }
  if (slurm_index >= sorted.size()) return std::nullopt;
  return sorted[slurm_index]->index;
}

void confirm_slurm_jobs(std::vector<ProcessSample>& procs, const AllocationScan* held) {
  const bool usable = held != nullptr && held->usable;
  const auto find = [&](const std::string& job) -> const GpuAllocation* {
    if (!usable) return nullptr;
    for (const auto& [gpu, jobs] : held->by_gpu) {
      for (const auto& a : jobs) {
        if (a.job == job) return &a;
      }
    }
    return nullptr;
  };
  for (auto& p : procs) {
    if (!p.slurm || p.slurm->job.empty()) continue;
    SlurmJob& s = *p.slurm;
    const GpuAllocation* a = find(s.job);
    // The environment's claim holds where the job is allocated here and the
    // process runs as the job's user: another user cannot charge their work to it.
    const bool owner_ok = a != nullptr && (a->user.empty() || a->user == p.user);
    if (a != nullptr && (s.from != "environ" || owner_ok)) {
      if (!a->user.empty()) s.user = a->user;
      s.account = a->account;
      continue;
    }
    if (s.from == "environ") {
      s.unknown = a == nullptr ? fmt::format(
                                     "SLURM_JOB_ID={} in its environment, confirmed neither by "
                                     "Slurm's cgroup nor by the prolog's allocation on this node",
                                     s.job)
                               : fmt::format(
                                     "SLURM_JOB_ID={} in its environment, but the process runs as "
                                     "{}, not as the job's user",
                                     s.job, p.user.empty() ? "an unknown user" : p.user);
      s.job.clear();
      s.step.clear();
      s.array_job.clear();
      s.array_task.clear();
      s.account.clear();
    }
  }
}

std::string allocation_fallback_note(const AllocationScan& scan) {
  const bool kube = scan.scheduler == "kubernetes";
  if (!scan.usable && !scan.absent && !scan.fallback.empty()) {
    return fmt::format("{} from processes: {}", kube ? "pods" : "Slurm jobs", scan.fallback);
  }
  if (scan.usable && !scan.last_error.empty()) {
    return fmt::format("{} as last answered: {}", kube ? "pods" : "Slurm jobs", scan.last_error);
  }
  return {};
}

std::vector<AllocationDevice> allocation_devices(const TraceHeader& header) {
  std::vector<AllocationDevice> out;
  for (const auto& d : header.devices) {
    AllocationDevice a{d.index, d.uuid, {}, {}};
    if (const auto it = d.extra.find("x_pci_bus_id"); it != d.extra.end() && it->is_string()) {
      a.pci_bus_id = it->get<std::string>();
    }
    if (const auto it = d.extra.find("x_mig_uuids"); it != d.extra.end() && it->is_array()) {
      for (const auto& u : *it) {
        if (u.is_string()) a.mig_uuids.push_back(u.get<std::string>());
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

SlurmAllocationReader::SlurmAllocationReader(SlurmAllocationOptions options,
                                             std::vector<AllocationDevice> devices)
    : options_(std::move(options)),
      devices_(std::move(devices)),
      boot_id_(read_small_file(options_.boot_id_path)) {}

std::shared_ptr<const AllocationScan> SlurmAllocationReader::read(double now_s) {
  if (!last_scan_ || now_s - *last_scan_ >= options_.rescan_s || now_s < *last_scan_) {
    current_ = std::make_shared<const AllocationScan>(scan(now_s));
    last_scan_ = now_s;
  }
  return current_;
}

AllocationScan SlurmAllocationReader::scan(double now_s) {
  AllocationScan out;
  const std::string& dir = options_.dir;
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) {
    out.absent = errno == ENOENT;
    out.fallback = errno == ENOENT
                       ? fmt::format(
                             "{} does not exist: no prolog has run here "
                             "(deploy/slurm/gpulens-prolog.sh)",
                             dir)
                       : fmt::format("{} cannot be read: {}", dir, std::strerror(errno));
    return out;
  }
  struct stat st {};
  if (::fstat(dir_fd, &st) != 0 || st.st_uid != options_.trusted_uid ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    out.fallback = fmt::format(
        "{} is owned by uid {} with mode {:o}: only a directory of uid {} that no one else can "
        "write names owners",
        dir, st.st_uid, st.st_mode & 07777, options_.trusted_uid);
    ::close(dir_fd);
    return out;
  }
  DIR* d = ::fdopendir(dir_fd);
  if (d == nullptr) {
    out.fallback = fmt::format("{} cannot be listed: {}", dir, std::strerror(errno));
    ::close(dir_fd);
    return out;
  }
  out.usable = true;
  const JobCgroups cgroups = find_job_cgroups(options_.cgroup_root);
  std::size_t entries = 0;
  while (const dirent* ent = ::readdir(d)) {
    const std::string name = ent->d_name;
    // The prolog writes <job> and renames it from .<job>.tmp: dot files are its own.
    if (name.empty() || name.front() == '.') continue;
    if (++entries > kMaxAllocationEntries) {
      note(out, AllocationProblem::TooMany,
           fmt::format("more than {} entries in {}: the rest were not read", kMaxAllocationEntries,
                       dir));
      break;
    }
    const auto text = read_entry(dirfd(d), name, options_.trusted_uid, out);
    if (!text) continue;
    AllocationProblem problem{};
    const auto entry = parse_allocation_entry(*text, name, problem);
    if (!entry) {
      note(out, problem,
           problem == AllocationProblem::NameMismatch
               ? fmt::format("entry {} names another job", name)
               : fmt::format("entry {} is not the prolog's key=value lines", name));
      continue;
    }
    if (!boot_id_.empty() && !entry->boot_id.empty() && entry->boot_id != boot_id_) {
      note(out, AllocationProblem::StaleBoot,
           fmt::format("entry {} was written before the last boot", name));
      continue;
    }
    const bool young = entry->start && now_s - *entry->start < options_.cgroup_grace_s;
    if (cgroups.known() && !young && !job_cgroup_exists(cgroups, *entry)) {
      note(out, AllocationProblem::JobEnded,
           fmt::format("job {} has no cgroup any more: it ended and its epilog did not remove "
                       "its entry",
                       entry->job));
      continue;
    }
    bool any = false;
    for (const auto& id : entry->gpus) {
      std::string order;
      const auto gpu = match_slurm_gpu(id, devices_, order);
      if (!order.empty()) out.index_order = order;
      if (!gpu) {
        note(out, AllocationProblem::UnknownGpu,
             fmt::format("job {} holds GPU '{}', which no device here is", entry->job, id));
        continue;
      }
      auto& held = out.by_gpu[*gpu];
      const bool listed = std::any_of(held.begin(), held.end(),
                                      [&](const GpuAllocation& a) { return a.job == entry->job; });
      if (listed || held.size() >= kMaxAllocationsPerSample) continue;
      GpuAllocation a;
      a.scheduler = "slurm";
      a.job = entry->job;
      a.user = entry->user;
      a.account = entry->account;
      a.partition = entry->partition;
      a.since = entry->start;
      held.push_back(std::move(a));
      any = true;
    }
    if (any) ++out.jobs;
  }
  ::closedir(d);
  return out;
}

}  // namespace gpulens::sources
