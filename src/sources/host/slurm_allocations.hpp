// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which Slurm job holds which GPU, from the entries the prolog writes at the
// job's start (deploy/slurm/gpulens-prolog.sh) and the epilog removes at its end:
// one file per job in a root-owned directory. Unlike the processes on a GPU, this
// sees a job that holds GPUs and runs nothing on them, the waste admins hunt
// (docs/slurm.md, "Allocation").
//
// Trust: the directory and each entry must be owned by the trusted uid (root) and
// writable by it alone, entries are read without following links, and an entry's
// name must be its job id: anyone else's file names no owner. Staleness: an entry
// written before the last boot, or whose job has no cgroup any more where Slurm
// keeps job cgroups, is ignored and counted.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sample.hpp"

namespace gpulens::sources {

struct SlurmAllocationOptions {
  std::string dir;  // the prolog's directory; empty: allocations are not read
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string boot_id_path = "/proc/sys/kernel/random/boot_id";
  std::uint32_t trusted_uid = 0;  // tests run as themselves; the agent trusts root only
  double rescan_s = 5;            // the directory is read again after this long
  // A job's cgroup appears when its first step starts, after the prolog: an entry
  // younger than this counts as live without one.
  double cgroup_grace_s = 120;
};

// What Slurm's GPU ids are matched against: one device as NVML gives it.
struct AllocationDevice {
  int index = 0;
  std::string uuid;
  std::string pci_bus_id;              // "00000000:18:00.0"; empty when unknown
  std::vector<std::string> mig_uuids;  // its MIG devices' UUIDs ("MIG-…"), where listed
};

enum class AllocationProblem {
  Untrusted,     // an entry not owned by the trusted uid, or writable by others
  NotAFile,      // a link, a FIFO, a directory where an entry should be
  Malformed,     // an entry that is not the prolog's key=value lines, or too large
  NameMismatch,  // an entry whose file name is not its job id
  StaleBoot,     // written before the node's last boot
  JobEnded,      // its job has no cgroup any more (the epilog did not run)
  UnknownGpu,    // a GPU id that no device has
  TooMany,       // entries past the most read in one scan
};
inline constexpr std::size_t kAllocationProblemCount = 8;
using AllocationProblemCounts = std::array<std::uint64_t, kAllocationProblemCount>;
std::string_view allocation_problem_id(AllocationProblem p);

// Entries read in one scan at most; a node runs a few dozen jobs at a time.
inline constexpr std::size_t kMaxAllocationEntries = 1024;
// An entry is a few hundred bytes; more is not the prolog's.
inline constexpr std::size_t kMaxAllocationEntryBytes = 4096;

struct AllocationScan {
  std::string scheduler = "slurm";  // or "kubernetes"
  // False when the directory could not be read or trusted: the jobs then come from
  // processes alone, and `fallback` says why.
  bool usable = false;
  std::string fallback;
  // The source is simply not there (no prolog directory, no kubelet socket): not
  // this kind of node, nothing to warn about; `fallback` still says it.
  bool absent = false;
  // How Slurm's GPU indices were matched: "pci_bus_id" (Slurm's order, which is
  // the PCI bus order) or "nvml_index" (the bus ids were unknown or not distinct).
  std::string index_order;
  std::map<int, std::vector<GpuAllocation>> by_gpu;  // GPU index -> jobs holding it
  std::size_t jobs = 0;                              // entries in use
  // Per problem, the entries skipped in this scan (not cumulative: the same stale
  // entry is seen again each scan).
  AllocationProblemCounts problems{};
  std::string last_problem;  // one example in words, for the health answer
  // Kubernetes: the last call's error while an earlier answer is still used, and
  // how long the last answered call took.
  std::string last_error;
  std::optional<double> call_s;
};

// Parses one entry's text (key=value lines); `name` is its file name. Pure, for tests.
struct AllocationEntry {
  std::string job, user, account, partition;
  std::vector<std::string> gpus;  // as Slurm gave them: indices, or GPU-/MIG- UUIDs
  std::optional<double> start;
  std::string boot_id;
  std::optional<std::uint32_t> uid;
};
std::optional<AllocationEntry> parse_allocation_entry(std::string_view text, std::string_view name,
                                                      AllocationProblem& problem);

// The device each of Slurm's GPU ids names; `order` is set to how indices were read.
std::optional<int> match_slurm_gpu(std::string_view id, const std::vector<AllocationDevice>& devs,
                                   std::string& order);

class SlurmAllocationReader {
 public:
  SlurmAllocationReader(SlurmAllocationOptions options, std::vector<AllocationDevice> devices);
  // The allocations as of the last scan, scanning again when rescan_s has passed.
  // Shared and immutable: the sampler's statistics and the agent's health hold the
  // same scan for 5 s of ticks without copying it each tick.
  std::shared_ptr<const AllocationScan> read(double now_s);

 private:
  AllocationScan scan(double now_s);

  SlurmAllocationOptions options_;
  std::vector<AllocationDevice> devices_;
  std::string boot_id_;
  std::optional<double> last_scan_;
  std::shared_ptr<const AllocationScan> current_;
};

// The Slurm trust rule for processes (docs/slurm.md, "Precedence"): a job the
// environment alone names (SLURM_JOB_ID, which anyone can set) counts only when
// Slurm's allocation on this node lists it and the process runs as the job's
// user; else the process is in no job, and says why. A job Slurm's allocation
// lists takes its user and account from there (Slurm's records); elsewhere the
// user is the cgroup's uid or the process's owner and the account unknown.
// `held` is null, or not usable, without a prolog.
void confirm_slurm_jobs(std::vector<ProcessSample>& procs, const AllocationScan* held);

// One line for a person when the scheduler's word is not (fully) in use: the
// owners come from processes, or an earlier answer is kept; empty when all is
// well or the source is absent. For `top` and the dashboard's status.
std::string allocation_fallback_note(const AllocationScan& scan);

// Allocation devices from a trace header (index, uuid, x_pci_bus_id).
std::vector<AllocationDevice> allocation_devices(const TraceHeader& header);

}  // namespace gpulens::sources
