// SPDX-License-Identifier: Apache-2.0
// The stderr relay (stderr_relay.cpp) with our stderr pointed at a file, so it
// is a pipe: every byte reaches both the callback and our stderr; a relay that
// never ran, or whose stream stays open after the job, is still "read"; a
// stderr that refuses the bytes (EPIPE) makes the reading "incomplete".
#include "jobs/stderr_relay.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <sstream>

namespace gpulens::jobs {
namespace {

// Points our stderr at `fd` for the scope (gtest writes nothing meanwhile).
class StderrSwap {
 public:
  explicit StderrSwap(int fd) : saved_(::dup(STDERR_FILENO)) { ::dup2(fd, STDERR_FILENO); }
  ~StderrSwap() {
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
  }
  StderrSwap(const StderrSwap&) = delete;
  StderrSwap& operator=(const StderrSwap&) = delete;

 private:
  int saved_;
};

// The bytes the callback saw, from the relay's thread.
struct Seen {
  std::mutex mutex;
  std::string bytes;
  std::string get() {
    std::lock_guard lock(mutex);
    return bytes;
  }
};

std::shared_ptr<StderrRelay> open_relay(const std::shared_ptr<Seen>& seen) {
  std::string why;
  auto relay = StderrRelay::open(
      [seen](std::string_view b) {
        std::lock_guard lock(seen->mutex);
        seen->bytes.append(b);
      },
      why);
  EXPECT_NE(relay, nullptr) << why;
  return relay;
}

std::chrono::steady_clock::time_point far_deadline() {
  return std::chrono::steady_clock::now() + std::chrono::minutes(5);
}

std::string relay_file(const std::string& name) {
  return ::testing::TempDir() + "/stderr_relay_" + std::to_string(getpid()) + "_" + name;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(StderrRelay, EveryBytePassesToOurStderrAndTheCallback) {
  const std::string path = relay_file("bytes");
  const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(file, 0);
  const std::string bytes("line 1\n\0\xff\x1b[31mred\x1b[0m no newline", 32);
  auto seen = std::make_shared<Seen>();
  std::string state;
  {
    StderrSwap swap(file);
    auto relay = open_relay(seen);
    ASSERT_NE(relay, nullptr);
    EXPECT_FALSE(relay->terminal());
    const int job = ::dup(relay->child_end());  // the job's stderr
    relay->start(relay);
    EXPECT_EQ(::write(job, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ::close(job);
    state = relay->finish(far_deadline());
  }
  ::close(file);
  EXPECT_EQ(state, "read");
  EXPECT_EQ(seen->get(), bytes);
  EXPECT_EQ(file_text(path), bytes);
}

TEST(StderrRelay, AnAbandonedRelayCopiesNothing) {
  auto seen = std::make_shared<Seen>();
  auto relay = open_relay(seen);
  ASSERT_NE(relay, nullptr);
  relay->abandon();
  EXPECT_EQ(relay->child_end(), -1);
  EXPECT_EQ(relay->finish(far_deadline()), "read");
  EXPECT_EQ(seen->get(), "");
}

TEST(StderrRelay, AStreamKeptOpenAfterTheJobIsReadOnceCaughtUp) {
  const int file = ::open("/dev/null", O_WRONLY);
  ASSERT_GE(file, 0);
  auto seen = std::make_shared<Seen>();
  std::string state;
  int grandchild = -1;
  {
    StderrSwap swap(file);
    auto relay = open_relay(seen);
    ASSERT_NE(relay, nullptr);
    grandchild = ::dup(relay->child_end());
    relay->start(relay);
    EXPECT_EQ(::write(grandchild, "bye\n", 4), 4);
    state = relay->finish(far_deadline());
  }
  ::close(grandchild);  // the relay's thread then ends on its own
  ::close(file);
  EXPECT_EQ(state, "read");
  EXPECT_EQ(seen->get(), "bye\n");
}

TEST(StderrRelay, AStderrWhoseReaderWentAwayLeavesTheReadingIncomplete) {
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  ::close(out[0]);  // nobody reads our stderr: writes fail with EPIPE
  struct sigaction ignore {
  }, saved{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &saved);
  auto seen = std::make_shared<Seen>();
  std::string state;
  {
    StderrSwap swap(out[1]);
    auto relay = open_relay(seen);
    ASSERT_NE(relay, nullptr);
    const int job = ::dup(relay->child_end());
    relay->start(relay);
    EXPECT_EQ(::write(job, "lost\n", 5), 5);
    state = relay->finish(far_deadline());
    ::close(job);
  }
  ::sigaction(SIGPIPE, &saved, nullptr);
  ::close(out[1]);
  EXPECT_EQ(state, "incomplete");
  EXPECT_EQ(seen->get(), "");
}

}  // namespace
}  // namespace gpulens::jobs
