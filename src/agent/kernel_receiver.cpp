// SPDX-License-Identifier: Apache-2.0
#include "agent/kernel_receiver.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <nlohmann/json.hpp>
#include <variant>

#include "agent/log.hpp"
#include "core/clock.hpp"
#include "core/text_safety.hpp"
#include "kernels/record/launch_record_read.hpp"
#include "kernels/record/summary_datagram.hpp"
#include "sources/host/file_buffer.hpp"
#include "sources/host/procfs_parse.hpp"

namespace gpulens::agent {
namespace {

// A pid that left the GPUs is still taken this long: its last window's summary
// comes at its exit, after the sampler may have seen it gone.
constexpr double kHolderMemoryS = 120;
// Datagrams read per wake-up before the stop flag is looked at again.
constexpr int kDrainBatch = 256;

// How far a window may lie from the agent's clock: the job and the agent read
// the same host clock, and a summary is sent as its window closes. One dated
// 2199 would otherwise stop every other process's traced time on its GPU
// (kernel_series.cpp counts the union of windows, and nothing ends after 2199).
constexpr double kWindowFutureS = 300;
constexpr double kWindowPastS = 3600;

std::string error_text(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

// Plain read(2), not an ifstream: a sender's last datagram comes as it exits, and a
// read of the stat of a process being reaped fails (ESRCH), which libstdc++'s filebuf
// throws as std::ios_failure through an istreambuf_iterator, whatever the stream's
// exception mask. That killed the agent (seen in tests/e2e/slurm_cluster.sh).
std::optional<std::uint64_t> proc_start_ticks(std::uint32_t pid) {
  sources::FileBuffer buffer;
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  if (buffer.read(path.c_str(), 4096) != 0) return std::nullopt;
  const auto stat = sources::parse_pid_stat(buffer.view());
  if (!stat || stat->pid != pid) return std::nullopt;
  return stat->start_ticks;
}

// The window's times near the agent's clock (Unix seconds `now`).
bool near_clock(const kernels::WindowSummary& s, double now) {
  const double start = static_cast<double>(s.start_unix_ns) / kNsPerS;
  const double end = static_cast<double>(s.end_unix_ns) / kNsPerS;
  return start >= now - kWindowPastS && end <= now + kWindowFutureS;
}

// A device listed twice is a sender's lie (the library sums per device): its
// windows would be stored once per listing.
bool devices_unique(const kernels::WindowSummary& s) {
  for (std::size_t i = 0; i < s.devices.size(); ++i) {
    for (std::size_t j = i + 1; j < s.devices.size(); ++j) {
      if (s.devices[i].device == s.devices[j].device) return false;
    }
  }
  return true;
}

// A launch-count record leads with its version key ({"x_launches": ...), as
// launch_record_line writes it; a summary never does.
bool is_launch_record(std::string_view bytes) {
  const std::string_view key = kernels::launch_record::version_key;
  return bytes.size() > key.size() + 3 && bytes.substr(0, 2) == "{\"" &&
         bytes.substr(2, key.size()) == key && bytes[2 + key.size()] == '"';
}

}  // namespace

std::string_view refusal_id(Refusal r) {
  switch (r) {
    case Refusal::None:
      return "accepted";
    case Refusal::Oversized:
      return "oversized";
    case Refusal::NoCredentials:
      return "no_credentials";
    case Refusal::RateLimited:
      return "rate_limited";
    case Refusal::Malformed:
      return "malformed";
    case Refusal::NotOnGpu:
      return "not_on_gpu";
  }
  return "unknown";
}

std::vector<int> gpus_of_pid(const LiveSnapshot& snap, std::uint32_t pid) {
  std::vector<int> gpus;
  for (const auto& g : snap.gpus) {
    if (!g.sample || !g.sample->procs) continue;
    for (const auto& p : *g.sample->procs) {
      if (p.pid == pid) {
        gpus.push_back(g.sample->gpu);
        break;
      }
    }
  }
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

SummaryIntake::SummaryIntake(KernelStore& store, RateLimit limit, KernelSeries* series,
                             store::StoreWriter* history)
    : store_(store),
      limit_(limit),
      series_(series),
      history_(history),
      start_time_(proc_start_ticks),
      unix_clock_(unix_now),
      launches_(series, static_cast<std::int64_t>(unix_now() * kNsPerS)) {}

IntakeCounters SummaryIntake::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

Refusal SummaryIntake::count(Refusal r) {
  std::lock_guard lock(mutex_);
  switch (r) {
    case Refusal::None:
      ++counters_.accepted;
      break;
    case Refusal::Oversized:
      ++counters_.oversized;
      break;
    case Refusal::NoCredentials:
      ++counters_.no_credentials;
      break;
    case Refusal::RateLimited:
      ++counters_.rate_limited;
      break;
    case Refusal::Malformed:
      ++counters_.malformed;
      break;
    case Refusal::NotOnGpu:
      ++counters_.not_on_gpu;
      break;
  }
  return r;
}

// A token bucket per pid on a GPU (take() checks that first); the map is
// bounded, its idle (full) buckets forgotten.
bool SummaryIntake::allow(std::int32_t pid, double now_s) {
  auto it = buckets_.find(pid);
  if (it == buckets_.end()) {
    if (buckets_.size() >= limit_.max_pids) {
      const double full_after = limit_.burst * limit_.every_s;
      // Idle (full) buckets, and those of pids no longer on a GPU, go first.
      std::erase_if(buckets_, [&](const auto& b) {
        return now_s - b.second.at_s >= full_after ||
               !holders_.contains(static_cast<std::uint32_t>(b.first));
      });
      if (buckets_.size() >= limit_.max_pids) return false;
    }
    it = buckets_.emplace(pid, Bucket{limit_.burst, now_s}).first;
  }
  Bucket& b = it->second;
  b.tokens = std::min(limit_.burst, b.tokens + (now_s - b.at_s) / limit_.every_s);
  b.at_s = now_s;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

// The pids on GPUs in this snapshot (once per snapshot), and those gone a while forgotten.
void SummaryIntake::learn(const LiveSnapshot& snap, double now_s) {
  if (snap.seq == learned_seq_) return;
  learned_seq_ = snap.seq;
  for (const auto& g : snap.gpus) {
    if (!g.sample || !g.sample->procs) continue;
    for (const auto& p : *g.sample->procs) {
      Holder& h = holders_[p.pid];
      if (h.seen_s != now_s) {  // first sight in this snapshot
        h.gpus.clear();
        h.kube.clear();
      }
      h.seen_s = now_s;
      h.name = p.name;
      h.uid = p.uid;
      h.start_ticks = p.start_ticks;
      if (auto ref = kube_of_process(snap, p)) h.kube[g.sample->gpu] = std::move(*ref);
      if (std::find(h.gpus.begin(), h.gpus.end(), g.sample->gpu) == h.gpus.end()) {
        h.gpus.push_back(g.sample->gpu);
      }
    }
  }
  std::erase_if(holders_, [&](const auto& h) { return now_s - h.second.seen_s > kHolderMemoryS; });
  for (auto& [pid, h] : holders_) std::sort(h.gpus.begin(), h.gpus.end());
}

// The sender is the user the sampler saw holding the GPUs under this pid.
bool SummaryIntake::same_uid(const Holder& h, const PeerCredentials& peer) const {
  return !h.uid || *h.uid == peer.uid;
}

// The sender is the process the sampler saw, not a later one given its pid: the
// same start time. A sender already gone (its last summary comes at its exit)
// is judged by its uid alone.
bool SummaryIntake::same_process(const Holder& h, std::uint32_t pid) const {
  if (!h.start_ticks) return true;
  const auto started = start_time_(pid);
  return !started || *started == *h.start_ticks;
}

Refusal SummaryIntake::take(std::string_view bytes, bool truncated,
                            const std::optional<PeerCredentials>& peer, const LiveSnapshot& snap,
                            double now_s) {
  {
    std::lock_guard lock(mutex_);
    ++counters_.received;
  }
  // Cheapest checks first, so that a flood costs the agent little.
  if (truncated || bytes.size() > kernels::kMaxSummaryBytes) return count(Refusal::Oversized);
  if (!peer || peer->pid <= 0) return count(Refusal::NoCredentials);
  // Trust before budget: only a process the sampler sees on a GPU, as the same
  // user, gets a rate bucket, so senders without a GPU cannot fill the table
  // and have a real job's summaries refused as rate-limited.
  learn(snap, now_s);
  const auto pid = static_cast<std::uint32_t>(peer->pid);
  const auto holder = holders_.find(pid);
  if (holder == holders_.end() || holder->second.gpus.empty() || !same_uid(holder->second, *peer)) {
    return count(Refusal::NotOnGpu);
  }
  if (!allow(peer->pid, now_s)) return count(Refusal::RateLimited);
  // After the budget: this reads /proc.
  if (!same_process(holder->second, pid)) return count(Refusal::NotOnGpu);
  if (is_launch_record(bytes)) {
    return take_launches(bytes, pid, holder->second, now_s);
  }
  std::string why;
  auto summary = kernels::decode_summary(bytes, why);
  if (summary && !devices_unique(*summary)) {
    why = "a device listed twice";
    summary.reset();
  }
  if (summary && !near_clock(*summary, unix_clock_())) {
    why = "a window far from the agent's clock";
    summary.reset();
  }
  if (!summary) {
    log_debug("kernel summary from pid {} refused: {}", peer->pid, why);
    return count(Refusal::Malformed);
  }
  const std::vector<int>& gpus = holder->second.gpus;
  // The process's CUDA ordinal d is its d-th GPU in the agent's order (true when
  // CUDA_VISIBLE_DEVICES lists them ascending, as Kubernetes and Slurm do); one
  // device on one GPU is that GPU whatever its ordinal.
  std::uint64_t unmapped = 0;
  for (auto& d : summary->devices) {
    int gpu = -1;
    if (gpus.size() == 1 && summary->devices.size() == 1) {
      gpu = gpus.front();
    } else if (d.device < gpus.size()) {
      gpu = gpus[d.device];
    }
    if (gpu < 0) {
      ++unmapped;
      continue;
    }
    KernelWindow w;
    static_cast<kernels::WindowHeader&>(w) = *summary;
    static_cast<kernels::DeviceWork&>(w) = std::move(d);
    w.gpu = gpu;
    w.pid = pid;
    w.uid = peer->uid;
    w.process = terminal_safe(holder->second.name);
    if (const auto k = holder->second.kube.find(gpu); k != holder->second.kube.end()) {
      w.kube = {k->second.namespace_name, k->second.pod, k->second.container};
    }
    for (auto& k : w.top) {
      k.name = kernels::cut_name(terminal_safe(k.name), kernels::kMaxSummaryNameBytes);
    }
    if (series_ != nullptr) series_->add(w, now_s);
    // Queued, never written here: a full queue drops it (counted by the writer).
    if (history_ != nullptr) (void)history_->push_kernel_window(w);
    store_.add(std::move(w));
  }
  {
    std::lock_guard lock(mutex_);
    counters_.unmapped_devices += unmapped;
    counters_.sender_dropped =
        kernels::saturating_add(counters_.sender_dropped, summary->summaries_dropped);
  }
  return count(Refusal::None);
}

Refusal SummaryIntake::take_launches(std::string_view bytes, std::uint32_t pid, const Holder& h,
                                     double now_s) {
  const auto json = nlohmann::json::parse(bytes, nullptr, false);
  auto read = json.is_discarded()
                  ? std::variant<kernels::LaunchRecord, std::string>(std::string("not JSON"))
                  : kernels::read_launch_record(json);
  if (const auto* why = std::get_if<std::string>(&read)) {
    log_debug("launch counts from pid {} refused: {}", pid, *why);
    return count(Refusal::Malformed);
  }
  // Names go no further than the ledger's labels, which kernel_label makes safe and short.
  const auto& record = std::get<kernels::LaunchRecord>(read);
  // Processes gone from the GPUs (or their pid given to another) are forgotten now
  // and then, and at once when the ledger is full.
  const auto gone = [this](std::uint32_t p, std::uint64_t start) {
    const auto held = holders_.find(p);
    return held == holders_.end() ||
           (held->second.start_ticks && *held->second.start_ticks != start);
  };
  if (now_s - launches_swept_s_ >= kHolderMemoryS ||
      launches_.processes() >= kLaunchLedgerProcesses) {
    launches_.forget_if(gone);
    launches_swept_s_ = now_s;
  }
  const LaunchSender who{pid, h.start_ticks.value_or(0), h.gpus, h.kube};
  switch (launches_.take(who, record, now_s)) {
    case LaunchTake::Taken:
      break;
    case LaunchTake::WentBack:
      log_debug("launch counts from pid {} refused: lower than its last", pid);
      return count(Refusal::Malformed);
    case LaunchTake::Full:
      return count(Refusal::RateLimited);  // a bound of the agent's, as the rate is
  }
  {
    std::lock_guard lock(mutex_);
    ++counters_.launch_records;
  }
  return count(Refusal::None);
}

KernelReceiver::KernelReceiver(ReceiverOptions options, KernelStore& store,
                               std::function<SnapshotPtr()> snapshot, KernelSeries* series,
                               store::StoreWriter* history)
    : options_(std::move(options)),
      intake_(store, options_.limit, series, history),
      snapshot_(std::move(snapshot)) {}

Result<std::unique_ptr<KernelReceiver>> KernelReceiver::start(ReceiverOptions options,
                                                              KernelStore& store,
                                                              std::function<SnapshotPtr()> snapshot,
                                                              KernelSeries* series,
                                                              store::StoreWriter* history) {
  std::unique_ptr<KernelReceiver> r(
      new KernelReceiver(std::move(options), store, std::move(snapshot), series, history));
  const std::string& path = r->options_.path;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.front() != '/' || path.size() >= sizeof addr.sun_path) {
    return Error{"--kernels-socket '" + path + "' is not an absolute path of at most " +
                 std::to_string(sizeof addr.sun_path - 1) + " bytes"};
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    // A socket left by an agent that died is ours to replace; anything else is not.
    if (!S_ISSOCK(st.st_mode)) {
      return Error{"--kernels-socket " + path + " exists and is not a socket"};
    }
    if (unlink(path.c_str()) != 0) return Error{error_text("cannot replace " + path, errno)};
  }
  r->fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (r->fd_ < 0) return Error{error_text("kernel summaries socket", errno)};
  const int on = 1;
  if (setsockopt(r->fd_, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) {
    return Error{error_text("SO_PASSCRED", errno)};
  }
  if (bind(r->fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    return Error{error_text("cannot bind " + path, errno)};
  }
  if (chmod(path.c_str(), r->options_.mode) != 0 || lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    unlink(path.c_str());
    return Error{error_text("cannot set the permissions of " + path, err)};
  }
  r->inode_ = st.st_ino;
  r->wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (r->wake_fd_ < 0) {
    unlink(path.c_str());
    return Error{error_text("eventfd", errno)};
  }
  KernelReceiver* self = r.get();
  r->thread_ = std::thread([self] { self->loop(); });
  return r;
}

KernelReceiver::~KernelReceiver() {
  stop();
  if (fd_ >= 0) close(fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

void KernelReceiver::stop() {
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = write(wake_fd_, &one, sizeof one);
  thread_.join();
  // Only our socket: another agent may have taken the path since.
  struct stat st {};
  if (lstat(options_.path.c_str(), &st) == 0 && st.st_ino == inode_) unlink(options_.path.c_str());
}

void KernelReceiver::loop() {
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      log_error("kernel summaries: poll: {}; no more are received", std::strerror(errno));
      return;
    }
    if ((fds[1].revents & POLLIN) != 0) return;
    if ((fds[0].revents & POLLIN) != 0) drain();
  }
}

void KernelReceiver::drain() {
  // One byte more than a summary may hold, so that a longer one shows as truncated.
  std::string buffer(kernels::kMaxSummaryBytes + 1, '\0');
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  for (int i = 0; i < kDrainBatch; ++i) {
    iovec iov{buffer.data(), buffer.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(fd_, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN: drained
    }
    std::optional<PeerCredentials> peer;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
          c->cmsg_len >= CMSG_LEN(sizeof(ucred))) {
        ucred cred{};
        std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
        peer = PeerCredentials{cred.pid, cred.uid, cred.gid};
      } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        // Descriptors nobody asked for: closed, never used.
        const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t k = 0; k < count; ++k) {
          int fd = -1;
          std::memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof fd);
          if (fd >= 0) close(fd);
        }
      }
    }
    const bool truncated = (msg.msg_flags & MSG_TRUNC) != 0;
    const auto snap = snapshot_();
    intake_.take(std::string_view(buffer.data(), static_cast<std::size_t>(n)), truncated, peer,
                 *snap, monotonic_now());
  }
}

}  // namespace gpulens::agent
