// SPDX-License-Identifier: Apache-2.0
#pragma once
// The agent's end of the jobs' kernel summaries (docs/kernels-agent.md): a unix
// datagram socket that any process allowed by its permissions may write to.
// What a datagram says about who sent it is never believed: the sender's pid and
// uid come from the kernel (SO_PASSCRED), so a process can speak only for itself,
// and only a pid the agent sees on a GPU is stored. Everything refused is counted
// by reason; the socket thread never stops serving for a bad datagram.
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "agent/kernel_history.hpp"
#include "agent/kernel_series.hpp"
#include "agent/kernel_store.hpp"
#include "agent/launch_ledger.hpp"
#include "agent/snapshot.hpp"
#include "core/result.hpp"
#include "store/store_writer.hpp"

namespace gpulens::agent {

struct PeerCredentials {
  std::int32_t pid = 0;
  std::uint32_t uid = 0, gid = 0;
};

// Why a datagram was not stored; None: stored.
enum class Refusal { None, Oversized, NoCredentials, RateLimited, Malformed, NotOnGpu };
std::string_view refusal_id(Refusal r);  // "oversized", ...

struct IntakeCounters {
  std::uint64_t received = 0, accepted = 0;
  std::uint64_t oversized = 0, no_credentials = 0, rate_limited = 0, malformed = 0, not_on_gpu = 0;
  // Devices of accepted summaries that matched none of the process's GPUs.
  std::uint64_t unmapped_devices = 0;
  // Launch-count records among those accepted (launch_ledger.hpp).
  std::uint64_t launch_records = 0;
  // Summaries the senders said they had dropped (agent absent or full), summed.
  std::uint64_t sender_dropped = 0;
  std::uint64_t refused() const {
    return oversized + no_credentials + rate_limited + malformed + not_on_gpu;
  }
};

// Per pid: `burst` summaries at once, then one per `every_s` seconds. A process
// traced whole sends one every 2 s, in windows one per window (20 s).
struct RateLimit {
  double burst = 5;
  double every_s = 1;
  std::size_t max_pids = 4096;  // senders remembered; past it new ones are refused
};

// The checks and the store, without the socket (tested on their own).
class SummaryIntake {
 public:
  // `series`, when given, also counts each stored window (the /metrics series);
  // `history`, when given, is queued each stored window for the SQLite history.
  explicit SummaryIntake(KernelStore& store, RateLimit limit = {}, KernelSeries* series = nullptr,
                         store::StoreWriter* history = nullptr);

  // One datagram of `bytes` (`truncated`: it was longer than the buffer that
  // took it), from `peer` per the kernel (nullopt: no credentials came), seen at
  // monotonic time `now_s`; `snap` says which pids hold which GPUs.
  // A launch-count record ({"x_launches": ...}, launch_ledger.hpp) comes the same way
  // and passes the same checks.
  Refusal take(std::string_view bytes, bool truncated, const std::optional<PeerCredentials>& peer,
               const LiveSnapshot& snap, double now_s);
  IntakeCounters counters() const;

  // The sender's start time (clock ticks since boot) by pid; nullopt when it is
  // gone. By default /proc/PID/stat; tests give their own.
  using StartTimeReader = std::function<std::optional<std::uint64_t>(std::uint32_t pid)>;
  void set_start_time_reader(StartTimeReader reader) { start_time_ = std::move(reader); }
  // The agent's wall clock (Unix seconds) that windows are checked against; by
  // default unix_now(). Tests give their own.
  void set_clock(std::function<double()> unix_clock) { unix_clock_ = std::move(unix_clock); }

 private:
  struct Bucket {
    double tokens = 0, at_s = 0;
  };
  struct Holder {  // a pid the agent saw on GPUs, remembered a while after it leaves
    std::vector<int> gpus;
    std::map<int, sources::KubeRef> kube;  // its pod per GPU, where known
    std::string name;
    // Who the sampler saw holding the GPUs under this pid; nullopt: not known
    // (a replayed recording, another pid namespace).
    std::optional<std::uint32_t> uid;
    std::optional<std::uint64_t> start_ticks;
    double seen_s = 0;
  };
  bool allow(std::int32_t pid, double now_s);
  void learn(const LiveSnapshot& snap, double now_s);
  bool same_uid(const Holder& h, const PeerCredentials& peer) const;
  bool same_process(const Holder& h, std::uint32_t pid) const;
  Refusal count(Refusal r);
  Refusal take_launches(std::string_view bytes, std::uint32_t pid, const Holder& h, double now_s);

  KernelStore& store_;
  RateLimit limit_;
  KernelSeries* series_;
  store::StoreWriter* history_;
  std::map<std::int32_t, Bucket> buckets_;
  std::map<std::uint32_t, Holder> holders_;
  std::uint64_t learned_seq_ = UINT64_MAX;
  StartTimeReader start_time_;
  std::function<double()> unix_clock_;
  LaunchLedger launches_;
  double launches_swept_s_ = 0;
  mutable std::mutex mutex_;  // counters_, read by HTTP threads
  IntakeCounters counters_;
};

struct ReceiverOptions {
  std::string path;    // the socket; its directory must exist
  mode_t mode = 0666;  // who may connect: see docs/kernels-agent.md
  RateLimit limit;
};

class KernelReceiver {
 public:
  // Binds the socket (a stale socket at the path is replaced; any other file is
  // an error) and starts the thread.
  static Result<std::unique_ptr<KernelReceiver>> start(ReceiverOptions options, KernelStore& store,
                                                       std::function<SnapshotPtr()> snapshot,
                                                       KernelSeries* series = nullptr,
                                                       store::StoreWriter* history = nullptr);
  ~KernelReceiver();
  KernelReceiver(const KernelReceiver&) = delete;
  KernelReceiver& operator=(const KernelReceiver&) = delete;

  // Stops the thread and removes the socket; called by the destructor too.
  void stop();
  IntakeCounters counters() const { return intake_.counters(); }
  const std::string& path() const { return options_.path; }

 private:
  KernelReceiver(ReceiverOptions options, KernelStore& store, std::function<SnapshotPtr()> snapshot,
                 KernelSeries* series, store::StoreWriter* history);
  void loop();
  void drain();

  ReceiverOptions options_;
  SummaryIntake intake_;
  std::function<SnapshotPtr()> snapshot_;
  int fd_ = -1;
  int wake_fd_ = -1;  // eventfd: stop()
  ino_t inode_ = 0;   // the socket we bound, so stop() removes only ours
  std::thread thread_;
};

// What /api/v1/health and the self-metrics say about the summaries.
struct KernelIntakeStatus {
  std::string socket;
  IntakeCounters counters;
  std::size_t stored = 0, windows_per_gpu = 0, bytes = 0;
  KernelHistoryCounts history;  // enabled false: no history file, memory only
};

// The GPUs (agent indexes, ascending) whose newest sample lists `pid`.
std::vector<int> gpus_of_pid(const LiveSnapshot& snap, std::uint32_t pid);

}  // namespace gpulens::agent
