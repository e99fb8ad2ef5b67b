// SPDX-License-Identifier: Apache-2.0
// The agent's end of the jobs' kernel summaries: garbage, oversized datagrams,
// floods and claims to be another process are refused and counted; the socket
// keeps serving.
#include "agent/kernel_receiver.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/clock.hpp"
#include "inject/agent_link.hpp"
#include "kernels/record/launch_record.hpp"

namespace gpulens::agent {
namespace {

// Now, on the agent's clock: windows far from it are refused.
const std::int64_t kReceiverBase = static_cast<std::int64_t>(unix_now()) * 1'000'000'000;

ProcessSample proc(std::uint32_t pid, const char* name) {
  ProcessSample p;
  p.pid = pid;
  p.name = name;
  return p;
}

// Two GPUs: pid 100 on GPU 0, pid 200 on GPUs 0 and 1, `extra` on GPU 1.
LiveSnapshot snapshot(std::uint32_t extra = 0, std::uint64_t seq = 1) {
  LiveSnapshot snap;
  snap.seq = seq;
  for (int i = 0; i < 2; ++i) {
    GpuLive g;
    Sample s;
    s.gpu = i;
    std::vector<ProcessSample> procs;
    if (i == 0) procs.push_back(proc(100, "train"));
    procs.push_back(proc(200, "serve"));
    if (i == 1 && extra != 0) procs.push_back(proc(extra, "me"));
    s.procs = procs;
    g.sample = s;
    snap.gpus.push_back(g);
  }
  return snap;
}

std::string summary(std::vector<std::uint32_t> devices, std::string name = "gemm") {
  kernels::WindowSummary s;
  s.start_unix_ns = kReceiverBase;
  s.end_unix_ns = kReceiverBase + 2'000'000'000;
  for (auto d : devices) {
    kernels::DeviceWork dev;
    dev.device = d;
    dev.busy_ns = 1'000'000'000;
    dev.idle_ns = 1'000'000'000;
    dev.top.push_back(kernels::KernelTime{name, 3, 900'000'000});
    s.devices.push_back(dev);
  }
  return kernels::encode_summary(s);
}

PeerCredentials peer(std::int32_t pid) {
  return PeerCredentials{pid, 1000, 1000};
}

TEST(SummaryIntake, StoresAProcessesWindowOnItsGpu) {
  KernelStore store;
  SummaryIntake in(store);
  const LiveSnapshot snap = snapshot();
  EXPECT_EQ(in.take(summary({0}), false, peer(100), snap, 0), Refusal::None);
  const auto r = store.query({0, 2e9, {}, {}, 100});
  ASSERT_EQ(r.windows.size(), 1u);
  EXPECT_EQ(r.windows[0].gpu, 0);
  EXPECT_EQ(r.windows[0].pid, 100u);
  EXPECT_EQ(r.windows[0].uid, 1000u);
  EXPECT_EQ(r.windows[0].process, "train");
  EXPECT_EQ(r.windows[0].top.at(0).name, "gemm");
  // A process on two GPUs: its CUDA ordinals are its GPUs in order.
  EXPECT_EQ(in.take(summary({0, 1}), false, peer(200), snap, 0), Refusal::None);
  EXPECT_EQ(store.query({0, 2e9, {1}, {200}, 100}).windows.size(), 1u);
  EXPECT_EQ(store.query({0, 2e9, {0}, {200}, 100}).windows.size(), 1u);
  // An ordinal past its GPUs is counted, not stored.
  EXPECT_EQ(in.take(summary({5}), false, peer(200), snap, 0), Refusal::None);
  const IntakeCounters c = in.counters();
  EXPECT_EQ(c.received, 3u);
  EXPECT_EQ(c.accepted, 3u);
  EXPECT_EQ(c.unmapped_devices, 1u);
  EXPECT_EQ(store.size(), 3u);
}

TEST(SummaryIntake, RefusesAndCountsBadInput) {
  KernelStore store;
  SummaryIntake in(store);
  const LiveSnapshot snap = snapshot();
  EXPECT_EQ(in.take("\x1b]0;owned\x07 not json", false, peer(100), snap, 0), Refusal::Malformed);
  EXPECT_EQ(in.take(std::string(kernels::kMaxSummaryBytes + 1, '{'), false, peer(100), snap, 0),
            Refusal::Oversized);
  EXPECT_EQ(in.take(summary({0}), true, peer(100), snap, 0), Refusal::Oversized);
  EXPECT_EQ(in.take(summary({0}), false, std::nullopt, snap, 0), Refusal::NoCredentials);
  EXPECT_EQ(in.take(summary({0}), false, peer(999), snap, 0), Refusal::NotOnGpu);
  const IntakeCounters c = in.counters();
  EXPECT_EQ(c.received, 5u);
  EXPECT_EQ(c.accepted, 0u);
  EXPECT_EQ(c.malformed, 1u);
  EXPECT_EQ(c.oversized, 2u);
  EXPECT_EQ(c.no_credentials, 1u);
  EXPECT_EQ(c.not_on_gpu, 1u);
  EXPECT_EQ(c.refused(), 5u);
  EXPECT_EQ(store.size(), 0u);
}

TEST(SummaryIntake, AFloodIsRateLimitedPerProcessAndOthersStillGetThrough) {
  KernelStore store;
  SummaryIntake in(store, RateLimit{3, 1, 4096});
  const LiveSnapshot snap = snapshot();
  int accepted = 0;
  for (int i = 0; i < 1000; ++i) {
    accepted += in.take(summary({0}), false, peer(100), snap, 10.0) == Refusal::None ? 1 : 0;
  }
  EXPECT_EQ(accepted, 3);  // the burst
  EXPECT_EQ(in.counters().rate_limited, 997u);
  EXPECT_EQ(in.take(summary({0}), false, peer(200), snap, 10.0), Refusal::None);
  // A second later the flooder has one more.
  EXPECT_EQ(in.take(summary({0}), false, peer(100), snap, 11.0), Refusal::None);
  EXPECT_EQ(in.take(summary({0}), false, peer(100), snap, 11.0), Refusal::RateLimited);
  EXPECT_EQ(store.size(), 5u);
}

TEST(SummaryIntake, NamesAreMadeSafeAndAProcessThatLeftIsRememberedAWhile) {
  KernelStore store;
  SummaryIntake in(store);
  EXPECT_EQ(in.take(summary({0}, "evil\x1b[2J\xff"), false, peer(100), snapshot(), 0),
            Refusal::None);
  const auto r = store.query({0, 2e9, {}, {}, 100});
  ASSERT_EQ(r.windows.size(), 1u);
  EXPECT_EQ(r.windows[0].top[0].name.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.windows[0].top[0].name.find('\xff'), std::string::npos);
  // Its last summary comes at its exit, after the sampler saw it gone.
  LiveSnapshot gone = snapshot(0, 2);
  gone.gpus[0].sample->procs->erase(gone.gpus[0].sample->procs->begin());
  EXPECT_EQ(in.take(summary({0}), false, peer(100), gone, 60), Refusal::None);
  EXPECT_EQ(in.take(summary({0}), false, peer(100), snapshot(0, 3), 500), Refusal::None);
  gone.seq = 4;
  EXPECT_EQ(in.take(summary({0}), false, peer(100), gone, 700), Refusal::NotOnGpu);
}

// Issue 47, 2: senders with no GPU made a rate bucket each before the on-GPU
// check, filled the table and had a real job's summaries refused.
TEST(SummaryIntake, SendersWithoutAGpuCannotFillTheRateTable) {
  KernelStore store;
  SummaryIntake in(store, RateLimit{5, 1, 8});
  const LiveSnapshot snap = snapshot();
  for (std::int32_t pid = 1000; pid < 1100; ++pid) {
    EXPECT_EQ(in.take(summary({0}), false, peer(pid), snap, 10.0), Refusal::NotOnGpu);
  }
  EXPECT_EQ(in.take(summary({0}), false, peer(100), snap, 10.0), Refusal::None);
  EXPECT_EQ(in.counters().rate_limited, 0u);
}

ProcessSample owned(std::uint32_t pid, std::uint32_t uid, std::uint64_t start) {
  ProcessSample p = proc(pid, "train");
  p.uid = uid;
  p.start_ticks = start;
  return p;
}

// One GPU whose process list is `procs`.
LiveSnapshot one_gpu(std::vector<ProcessSample> procs, std::uint64_t seq) {
  LiveSnapshot snap;
  snap.seq = seq;
  GpuLive g;
  Sample s;
  s.gpu = 0;
  s.procs = std::move(procs);
  g.sample = s;
  snap.gpus.push_back(g);
  return snap;
}

// Issue 47, 3: after a job exits, whoever gets its pid must not be stored as
// the job. The sampler saw pid 300 as uid 1000, started at tick 5000.
TEST(SummaryIntake, APidReusedAfterTheJobIsNotTheJob) {
  KernelStore store;
  SummaryIntake in(store);
  std::optional<std::uint64_t> sender_start = 5000;
  in.set_start_time_reader([&](std::uint32_t) { return sender_start; });
  const LiveSnapshot on = one_gpu({owned(300, 1000, 5000)}, 1);
  EXPECT_EQ(in.take(summary({0}), false, PeerCredentials{300, 1000, 1000}, on, 0), Refusal::None);
  // The job exits; the sampler sees the GPU empty. Another user gets pid 300.
  const LiveSnapshot gone = one_gpu({}, 2);
  EXPECT_EQ(in.take(summary({0}), false, PeerCredentials{300, 2000, 2000}, gone, 10),
            Refusal::NotOnGpu);
  // The same user's later process, started after the job: refused too.
  sender_start = 9000;
  EXPECT_EQ(in.take(summary({0}), false, PeerCredentials{300, 1000, 1000}, gone, 20),
            Refusal::NotOnGpu);
  // The job's own last summary, sent at its exit (it is gone from /proc): taken.
  sender_start = std::nullopt;
  EXPECT_EQ(in.take(summary({0}), false, PeerCredentials{300, 1000, 1000}, gone, 30),
            Refusal::None);
  // Another user's process that the sampler sees on the GPU under that pid is its own.
  sender_start = 7000;
  const LiveSnapshot reused = one_gpu({owned(300, 2000, 7000)}, 3);
  EXPECT_EQ(in.take(summary({0}), false, PeerCredentials{300, 2000, 2000}, reused, 40),
            Refusal::None);
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(in.counters().not_on_gpu, 2u);
}

// Issue 47, 5 and 6: one datagram listing a device 16 times stored 16 windows;
// one dated 2199 froze other processes' traced time.
TEST(SummaryIntake, ADeviceListedTwiceOrAWindowFarFromTheClockIsRefused) {
  KernelStore store;
  SummaryIntake in(store);
  const LiveSnapshot snap = snapshot();
  EXPECT_EQ(in.take(summary(std::vector<std::uint32_t>(16, 0)), false, peer(200), snap, 0),
            Refusal::Malformed);
  EXPECT_EQ(in.take(summary({1, 0, 1}), false, peer(200), snap, 10), Refusal::Malformed);
  kernels::WindowSummary late;
  late.start_unix_ns = 7'258'118'400'000'000'000;  // 2200-01-01
  late.end_unix_ns = late.start_unix_ns + 2'000'000'000;
  EXPECT_EQ(in.take(kernels::encode_summary(late), false, peer(100), snap, 20), Refusal::Malformed);
  kernels::WindowSummary old = late;
  old.start_unix_ns = kReceiverBase - 86'400'000'000'000;  // a day ago
  old.end_unix_ns = old.start_unix_ns + 2'000'000'000;
  EXPECT_EQ(in.take(kernels::encode_summary(old), false, peer(100), snap, 30), Refusal::Malformed);
  EXPECT_EQ(store.size(), 0u);
  EXPECT_EQ(in.take(summary({0, 1}), false, peer(200), snap, 40), Refusal::None);
  EXPECT_EQ(store.size(), 2u);
}

std::string temp_socket(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) /
          ("gpulens-recv-" + name + "-" + std::to_string(getpid()) + ".sock"))
      .string();
}

// Polls (a few ms at a time) until the receiver has taken `n` datagrams.
IntakeCounters wait_for(const KernelReceiver& r, std::uint64_t n) {
  for (int i = 0; i < 1000 && r.counters().received < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return r.counters();
}

void send_raw(const std::string& path, const std::string& bytes) {
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  EXPECT_GE(
      sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0)
      << std::strerror(errno);
  close(fd);
}

std::string launch_datagram(std::uint64_t gemm) {
  kernels::LaunchRecord r;
  r.pid = 999;  // a lie: the kernel's pid is the one used
  // After the intake started: launches before the agent are not counted.
  r.first_ns = static_cast<std::int64_t>(unix_now() * 1e9);
  r.written_ns = r.first_ns;
  r.kernels = {{"gemm\x1b[31m", gemm}};
  r.kernel_launches = gemm;
  return kernels::launch_datagram_of(r);
}

// Launch counts come by the same socket and the same checks as summaries.
TEST(SummaryIntake, LaunchCountsFromAProcessOnAGpuFeedItsSeries) {
  KernelStore store;
  KernelSeries series;
  SummaryIntake in(store, {}, &series);
  const LiveSnapshot snap = snapshot();
  EXPECT_EQ(in.take(launch_datagram(100), false, peer(100), snap, 0), Refusal::None);
  EXPECT_EQ(in.take(launch_datagram(150), false, peer(100), snap, 1), Refusal::None);
  EXPECT_EQ(in.take(launch_datagram(120), false, peer(100), snap, 2), Refusal::Malformed)
      << "counts that go back";
  EXPECT_EQ(in.take(launch_datagram(100), false, peer(300), snap, 2), Refusal::NotOnGpu);
  EXPECT_EQ(in.take(R"({"x_launches": 1, "pid": "x"})", false, peer(200), snap, 2),
            Refusal::Malformed);
  EXPECT_EQ(in.take(R"({"x_launches": 1, )", false, peer(200), snap, 2), Refusal::Malformed);
  const IntakeCounters c = in.counters();
  EXPECT_EQ(c.launch_records, 2u);
  EXPECT_EQ(c.accepted, 2u);
  EXPECT_EQ(store.size(), 0u) << "counts are not windows";
  const auto rows = series.rows(2);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].gpu, 0);
  EXPECT_DOUBLE_EQ(rows[0].launches, 150);
  ASSERT_EQ(rows[0].named_launches.size(), 1u);
  EXPECT_EQ(rows[0].named_launches[0].first.find('\x1b'), std::string::npos)
      << "names are made safe";
}

TEST(KernelReceiver, TakesThePidFromTheKernelNeverFromTheDatagram) {
  const std::string path = temp_socket("creds");
  KernelStore store;
  const auto me = static_cast<std::uint32_t>(getpid());
  auto snap = std::make_shared<const LiveSnapshot>(snapshot(me));
  auto r = KernelReceiver::start({path, 0600, {}}, store, [snap] { return snap; });
  ASSERT_TRUE(r) << r.error().message;
  struct stat st {};
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The job's real sender, from this process (on GPU 1 in the snapshot).
  inject::AgentLink link(path);
  kernels::NamesRecord names;
  names.kernel_names.emplace_back(0, "void step(float*)");
  names.configs.push_back(kernels::ConfigEntry{0, 0, 0, {1, 1, 1}, {1, 1, 1}, 0, 0, 0});
  kernels::ChunkRecord chunk;
  chunk.end_ns = 2'000'000'000;
  chunk.kernels.push_back(kernels::KernelEntry{0, 4, 1000, 1, 1, {}});
  link.on_chunk(names, chunk, kReceiverBase);
  EXPECT_EQ(link.sent(), 1u);
  // A datagram that claims to be pid 100 (which is on GPU 0) is stored as ours.
  auto claim = nlohmann::json::parse(summary({0}, "claimed"));
  claim["pid"] = 100;
  send_raw(path, claim.dump());
  // A child process (not on any GPU) sends a valid summary: refused.
  const pid_t child = fork();
  if (child == 0) {
    send_raw(path, summary({0}));
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  send_raw(path, "garbage");
  send_raw(path, std::string(kernels::kMaxSummaryBytes + 100, 'x'));
  const IntakeCounters c = wait_for(**r, 5);
  EXPECT_EQ(c.received, 5u);
  EXPECT_EQ(c.accepted, 2u);
  EXPECT_EQ(c.not_on_gpu, 1u);
  EXPECT_EQ(c.malformed, 1u);
  EXPECT_EQ(c.oversized, 1u);
  const auto stored = store.query({0, 2e9, {}, {}, 100});
  ASSERT_EQ(stored.windows.size(), 2u);
  for (const auto& w : stored.windows) {
    EXPECT_EQ(w.pid, me);
    EXPECT_EQ(w.gpu, 1);
    EXPECT_EQ(w.uid, getuid());
  }
  EXPECT_TRUE(store.query({0, 2e9, {}, {100}, 100}).windows.empty());
  (*r)->stop();
  EXPECT_FALSE(std::filesystem::exists(path));  // removed at the end
}

TEST(KernelReceiver, ReplacesAStaleSocketButNoOtherFile) {
  const std::string path = temp_socket("stale");
  KernelStore store;
  auto snap = std::make_shared<const LiveSnapshot>(snapshot());
  {
    auto first = KernelReceiver::start({path, 0666, {}}, store, [snap] { return snap; });
    ASSERT_TRUE(first) << first.error().message;
    // Left behind as by an agent killed with -9: the socket file stays.
    const int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::filesystem::remove(path);
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    close(fd);
  }
  ASSERT_TRUE(std::filesystem::exists(path));  // not ours: the first left it alone
  auto second = KernelReceiver::start({path, 0666, {}}, store, [snap] { return snap; });
  ASSERT_TRUE(second) << second.error().message;
  (*second)->stop();
  std::ofstream(path) << "not a socket";
  auto third = KernelReceiver::start({path, 0666, {}}, store, [snap] { return snap; });
  ASSERT_FALSE(third);
  EXPECT_NE(third.error().message.find("not a socket"), std::string::npos);
  std::filesystem::remove(path);
  EXPECT_FALSE(KernelReceiver::start({"relative.sock", 0666, {}}, store, [snap] { return snap; }));
}

}  // namespace
}  // namespace gpulens::agent
