// SPDX-License-Identifier: Apache-2.0
// The job's side of the node agent, without CUPTI: what libgpulens_kernels.so
// does with each chunk when $GPULENS_KERNELS_AGENT is set.
#include "inject/agent_link.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace gpulens::inject {
namespace {

std::string temp_socket(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) /
          ("gpulens-link-" + name + "-" + std::to_string(getpid()) + ".sock"))
      .string();
}

// A bound datagram socket that nobody reads until the test does.
struct Listener {
  explicit Listener(const std::string& p) : path(p) {
    std::filesystem::remove(path);
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << path;
  }
  ~Listener() {
    close(fd);
    std::filesystem::remove(path);
  }
  std::string receive() const {
    std::string buf(kernels::kMaxSummaryBytes + 1, '\0');
    const ssize_t n = recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
    return n < 0 ? std::string() : buf.substr(0, static_cast<std::size_t>(n));
  }
  std::string path;
  int fd = -1;
};

kernels::NamesRecord names() {
  kernels::NamesRecord n;
  n.kernel_names.emplace_back(0, "void step_kernel(float*)");
  n.configs.push_back(kernels::ConfigEntry{0, 0, 0, {1, 1, 1}, {1, 1, 1}, 0, 0, 0});
  return n;
}

kernels::ChunkRecord chunk(std::uint64_t seq) {
  kernels::ChunkRecord c;
  c.seq = seq;
  c.start_ns = 0;
  c.end_ns = 2'000'000'000;
  c.window = true;
  c.kernels.push_back(kernels::KernelEntry{0, 10, 5'000'000, 1, 1, {}});
  return c;
}

TEST(AgentLink, SendsEachChunksSummaryAsOneDatagram) {
  Listener agent(temp_socket("send"));
  AgentLink link(agent.path);
  link.on_chunk(names(), chunk(0), 1'700'000'000'000'000'000);
  link.on_chunk({}, chunk(1), 1'700'000'000'000'000'000);  // names known from before
  EXPECT_EQ(link.sent(), 2u);
  EXPECT_EQ(link.dropped(), 0u);
  for (std::uint64_t seq = 0; seq < 2; ++seq) {
    std::string why;
    const auto s = kernels::decode_summary(agent.receive(), why);
    ASSERT_TRUE(s) << why;
    EXPECT_EQ(s->seq, seq);
    ASSERT_EQ(s->devices.size(), 1u);
    ASSERT_EQ(s->devices[0].top.size(), 1u);
    EXPECT_EQ(s->devices[0].top[0].name, "void step_kernel(float*)");
    EXPECT_EQ(s->devices[0].top[0].launches, 10u);
  }
}

TEST(AgentLink, NoAgentDropsAndCountsWithoutWaiting) {
  const std::string path = temp_socket("absent");
  std::filesystem::remove(path);
  AgentLink link(path);
  link.on_chunk(names(), chunk(0), 1'700'000'000'000'000'000);
  link.on_chunk({}, chunk(1), 1'700'000'000'000'000'000);
  EXPECT_EQ(link.sent(), 0u);
  EXPECT_EQ(link.dropped(), 2u);
  EXPECT_EQ(link.last_errno(), ENOENT);
  // The agent comes back: the next summary reaches it and says what was lost.
  Listener agent(path);
  link.on_chunk({}, chunk(2), 1'700'000'000'000'000'000);
  EXPECT_EQ(link.sent(), 1u);
  std::string why;
  const auto s = kernels::decode_summary(agent.receive(), why);
  ASSERT_TRUE(s) << why;
  EXPECT_EQ(s->summaries_dropped, 2u);
}

TEST(AgentLink, AFullAgentNeverBlocksTheJob) {
  Listener agent(temp_socket("full"));
  const int small = 4096;
  setsockopt(agent.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  AgentLink link(agent.path);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < 2000; ++i)
    link.on_chunk(i == 0 ? names() : kernels::NamesRecord{}, chunk(i), 1'700'000'000'000'000'000);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(link.sent() + link.dropped(), 2000u);
  EXPECT_GT(link.dropped(), 0u);  // nobody read: the queue filled and the rest were dropped
  EXPECT_EQ(link.last_errno(), EAGAIN);
  EXPECT_LT(took, 5.0);  // no send waited for the reader
}

#ifdef GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY
// The real libgpulens_kernels.so in a job started without gpulens run, as an
// opted-in job anywhere on the node: the driver loads it (the fake job does what
// cuInit does), CUPTI is a stand-in, GPULENS_KERNELS_DIR is unset. Each closed
// window's summary reaches the socket, and no record file is written.
TEST(AgentLink, TheLibraryOutsideGpulensRunSendsEachWindowToTheAgent) {
  Listener agent(temp_socket("library"));
  const std::string dir = std::filesystem::path(::testing::TempDir()) /
                          ("gpulens-link-cwd-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string lib =
      (std::filesystem::path(GPULENS_BINARY).parent_path() / "libgpulens_kernels.so").string();
  const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::string cmd = "cd '" + dir + "' && env -u GPULENS_KERNELS_DIR CUDA_INJECTION64_PATH='" + lib;
  cmd += "' GPULENS_CUPTI='" + std::string(GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY);
  cmd += "' GPULENS_KERNELS_AGENT='" + agent.path;
  cmd += "' GPULENS_KERNELS_SCHEDULE=" + std::to_string(now_ns) + ":0.05:0.1:0.2";
  cmd += " FAKE_JOB_SLEEP_MS=450 '" + std::string(GPULENS_KERNELS_FAKE_JOB) + "' 0 >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  int windows = 0;
  for (std::string d = agent.receive(); !d.empty(); d = agent.receive()) {
    std::string why;
    const auto s = kernels::decode_summary(d, why);
    ASSERT_TRUE(s) << why << ": " << d;
    EXPECT_EQ(s->summaries_dropped, 0u);
    EXPECT_GE(s->end_unix_ns, s->start_unix_ns);
    windows += s->window ? 1 : 0;
  }
  EXPECT_GE(windows, 2);  // at 0.05, 0.25 (and 0.45, cut by the exit) s
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace
}  // namespace gpulens::inject
