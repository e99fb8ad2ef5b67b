// SPDX-License-Identifier: Apache-2.0
#include "launch_count/record_writer.hpp"

#include <cxxabi.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "kernels/record/agent_socket.hpp"

namespace gpulens::launch_count {
namespace {

struct Settings {
  std::string dir;      // empty: no record files
  std::string agent;    // the node agent's socket; empty: none
  double every_s = 10;  // 0: at exit only
};

const Settings& settings() {
  static const Settings s = [] {
    Settings x;
    if (const char* d = std::getenv("GPULENS_LAUNCHES_DIR"); d != nullptr) x.dir = d;
    // A setting that names no socket sends nothing; the job's stderr is not ours to
    // write to, and the agent's absence is what its operator sees.
    std::string why;
    x.agent = kernels::agent_socket_from_env("GPULENS_LAUNCHES_AGENT",
                                             std::getenv("GPULENS_LAUNCHES_AGENT"), why);
    if (const char* e = std::getenv("GPULENS_LAUNCHES_EVERY_S"); e != nullptr && *e != '\0') {
      char* end = nullptr;
      const double v = std::strtod(e, &end);
      if (end != e && *end == '\0' && v >= 0 && v <= 86400) x.every_s = v;
    }
    return x;
  }();
  return s;
}

std::int64_t unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::atomic<std::int64_t> g_first_ns{0};

// Held while a record is taken and written; never destroyed (used at exit).
std::mutex& write_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::uint64_t g_last_written = UINT64_MAX;  // launches in the last file (under the mutex)
// Demangled names, kept across writes (under the mutex).
std::unordered_map<std::string, std::string>& demangled() {
  static auto* m = new std::unordered_map<std::string, std::string>;
  return *m;
}

const std::string& demangle(const std::string& raw) {
  auto [it, fresh] = demangled().try_emplace(raw);
  if (fresh) {
    int status = 0;
    char* d = abi::__cxa_demangle(raw.c_str(), nullptr, nullptr, &status);
    it->second = (status == 0 && d != nullptr) ? d : raw;
    std::free(d);
    if (it->second.size() > kernels::launch_record::max_name_bytes) {
      it->second.resize(kernels::launch_record::max_name_bytes);
    }
  }
  return it->second;
}

std::string comm() {
  char buf[64] = {};
  const int fd = ::open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  std::string s(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The datagram to the node agent; never destroyed (used at exit), under the mutex.
void send_to_agent(const kernels::LaunchRecord& r) {
  static auto* sender = new kernels::DatagramSender(settings().agent);
  sender->send(kernels::launch_datagram_of(r));  // an absent or full agent: dropped
}

// Takes the counts, replaces the process's file with them and sends them to the
// agent. Nothing is said on failure: the job's stderr is the job's, and gpulens
// says a record is missing.
void write_record(bool final) {
  std::lock_guard lock(write_mutex());
  const Totals t = totals();
  const std::uint64_t n = t.kernel_launches + t.graph_launches;
  if (!final && n == g_last_written) return;
  const auto pid = static_cast<std::uint32_t>(::getpid());
  const std::int64_t first = g_first_ns.load();
  const kernels::LaunchRecord record = make_record(t, pid, comm(), first, unix_ns(), final);
  if (!settings().agent.empty()) send_to_agent(record);
  if (settings().dir.empty()) {
    g_last_written = n;
    return;
  }
  const std::string line = kernels::launch_record_line(record) + "\n";
  const std::string base =
      settings().dir + "/launches-" + std::to_string(pid) + "-" + std::to_string(first);
  const std::string tmp = base + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  const bool ok = write_all(fd, line);
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), (base + ".json").c_str()) != 0) {
    ::unlink(tmp.c_str());
    return;
  }
  g_last_written = n;
}

// The first write a second after the process's first launch, then 2, 4 and 8 s
// apart, then every_s: a short process that ends without its exit handlers (os._exit)
// still leaves most of its counts, and a long one is written every_s.
void* writer_loop(void*) {
  const double every = settings().every_s;
  if (every <= 0) return nullptr;  // at exit only
  double wait = std::min(1.0, every);
  for (;;) {
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    write_record(false);
    wait = std::min(wait * 2, every);
  }
  return nullptr;
}

void before_fork() {
  write_mutex().lock();
  counts_before_fork();
}
void after_fork_in_parent() {
  counts_after_fork_in_parent();
  write_mutex().unlock();
}
// The writer thread is not the child's: the child starts one at its first launch,
// with its own file.
void after_fork_in_child() {
  counts_after_fork_in_child();
  g_last_written = UINT64_MAX;
  g_first_ns.store(0);
  g_writer_started.store(false);
  write_mutex().unlock();
}

__attribute__((constructor)) void set_up() {
  if (counting_on()) pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

__attribute__((destructor)) void at_exit() {
  if (g_writer_started.load()) write_record(true);
}

}  // namespace

std::atomic<int> g_counting{-1};
std::atomic<bool> g_writer_started{false};

int read_counting_setting() {
  const int on = settings().dir.empty() && settings().agent.empty() ? 0 : 1;
  g_counting.store(on, std::memory_order_relaxed);
  return on;
}

void start_writer() {
  bool expected = false;
  if (!g_writer_started.compare_exchange_strong(expected, true)) return;
  g_first_ns.store(unix_ns());
  if (settings().every_s <= 0) return;
  // The job's signals are the job's: the thread blocks them all, so that a handler
  // the job installed never runs on it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t thread;
  if (pthread_create(&thread, nullptr, writer_loop, nullptr) == 0) {
    pthread_setname_np(thread, "gpulens-launch");  // as top -H and py-spy show it
    pthread_detach(thread);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

kernels::LaunchRecord make_record(const Totals& t, std::uint32_t pid, const std::string& comm,
                                  std::int64_t first_ns, std::int64_t now_ns, bool final) {
  kernels::LaunchRecord r;
  r.pid = pid;
  r.comm = comm;
  r.first_ns = first_ns;
  r.written_ns = std::max(now_ns, first_ns);
  r.final = final;
  r.kernel_launches = t.kernel_launches;
  r.graph_launches = t.graph_launches;
  r.graphs = t.graphs;
  // Two mangled names may demangle alike (a cut name, two modules' copies): summed.
  std::unordered_map<std::string, std::uint64_t> by_name;
  for (const auto& [raw, n] : t.kernels) by_name[demangle(raw)] += n;
  r.kernels.reserve(by_name.size());
  for (auto& [name, n] : by_name) r.kernels.push_back({name, n});
  std::sort(r.kernels.begin(), r.kernels.end(), [](const auto& a, const auto& b) {
    return a.launches != b.launches ? a.launches > b.launches : a.name < b.name;
  });
  if (r.kernels.size() > kernels::launch_record::max_kernels) {
    r.kernels.resize(kernels::launch_record::max_kernels);
  }
  std::uint64_t listed = 0;
  for (const auto& k : r.kernels) listed += k.launches;
  r.unlisted_launches = r.kernel_launches - listed;
  return r;
}

}  // namespace gpulens::launch_count
