// SPDX-License-Identifier: Apache-2.0
// The pod-resources call when the kubelet is absent, refuses, hangs, speaks
// something else or hangs up: each ends by its deadline with the reason in
// words, and the reader's thread never holds up its owner. A real gRPC server
// answering is tests/e2e/kubelet_pod_resources.sh.
#include "sources/kube/grpc_unary.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>

#include "sources/kube/kube_allocations.hpp"
#include "wait_for.hpp"

namespace gpulens::sources::kube {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A unix socket in a fresh directory; with `listen_too`, a thread accepts each
// connection and hands it to `serve`, which owns it until it returns.
class FakeKubelet {
 public:
  FakeKubelet(bool listen_too, std::function<void(int)> serve) : serve_(std::move(serve)) {
    char tmpl[] = "/tmp/gpulens-kubelet-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    path_ = dir_ + "/kubelet.sock";
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    if (!listen_too) return;
    EXPECT_EQ(::listen(fd_, 8), 0);
    thread_ = std::thread([this] {
      for (;;) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0 || stop_) {
          if (c >= 0) ::close(c);
          return;
        }
        serve_(c);
        ::close(c);
      }
    });
  }
  ~FakeKubelet() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
    fs::remove_all(dir_);
  }
  const std::string& path() const { return path_; }

 private:
  std::function<void(int)> serve_;
  std::string dir_, path_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

GrpcCall list_call(const std::string& path, milliseconds deadline = milliseconds(2000)) {
  GrpcCall call;
  call.socket_path = path;
  call.method = kPodResourcesListMethod;
  call.deadline = deadline;
  return call;
}

std::string error_of(const Result<std::string>& r) {
  return r ? std::string("(answered)") : r.error().message;
}

// Reads what the client sends until it hangs up or `until` passes.
void drain(int fd, milliseconds until) {
  timeval tv{0, static_cast<long>(until.count()) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[4096];
  while (::recv(fd, buf, sizeof buf, 0) > 0) {
  }
}

TEST(GrpcUnary, AbsentAndRefusingSocketsAreSaidSo) {
  EXPECT_EQ(error_of(grpc_unary_call(list_call("/nonexistent/kubelet.sock"))),
            "no socket at /nonexistent/kubelet.sock");
  const FakeKubelet bound_only(false, nullptr);
  EXPECT_EQ(error_of(grpc_unary_call(list_call(bound_only.path()))),
            "nothing listens on " + bound_only.path());
}

TEST(GrpcUnary, AHungKubeletEndsAtTheDeadline) {
  const FakeKubelet hung(true, [](int fd) { drain(fd, milliseconds(10000)); });
  const auto start = std::chrono::steady_clock::now();
  const auto r = grpc_unary_call(list_call(hung.path(), milliseconds(200)));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(error_of(r), hung.path() + " gave no answer within 0.2 s");
  EXPECT_LT(took, milliseconds(5000));  // not the server's 10 s
}

TEST(GrpcUnary, NotHttp2AndHangingUpAreErrorsNotAnswers) {
  const FakeKubelet http1(true, [](int fd) {
    const char reply[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    [[maybe_unused]] auto n = ::send(fd, reply, sizeof reply - 1, MSG_NOSIGNAL);
    drain(fd, milliseconds(500));
  });
  const std::string e = error_of(grpc_unary_call(list_call(http1.path())));
  EXPECT_TRUE(e.find("did not speak HTTP/2") != std::string::npos ||
              e.find("closed the connection") != std::string::npos)
      << e;
  const FakeKubelet hangs_up(true, [](int) {});
  EXPECT_EQ(error_of(grpc_unary_call(list_call(hangs_up.path()))),
            hangs_up.path() + " closed the connection before answering");
}

TEST(GrpcUnary, ACancelAbandonsTheCall) {
  const FakeKubelet hung(true, [](int fd) { drain(fd, milliseconds(10000)); });
  int cancel[2];
  ASSERT_EQ(::pipe(cancel), 0);
  auto call = list_call(hung.path(), milliseconds(10000));
  call.cancel_fd = cancel[0];
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(100));
    [[maybe_unused]] auto n = ::write(cancel[1], "x", 1);
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of(grpc_unary_call(call)), "cancelled");
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
  canceller.join();
  ::close(cancel[0]);
  ::close(cancel[1]);
}

TEST(GrpcUnary, StatusCodesAreNamed) {
  EXPECT_EQ(grpc_status_name(12), "12 (UNIMPLEMENTED)");
  EXPECT_EQ(grpc_status_name(16), "16 (UNAUTHENTICATED)");
  EXPECT_EQ(grpc_status_name(99), "code 99");
}

TEST(KubeAllocationReader, WithoutAKubeletItFallsBackAndSaysWhy) {
  KubeAllocationOptions options;
  options.socket = "/nonexistent/kubelet.sock";
  options.period_s = 0.05;
  KubeAllocationReader reader(options, {});
  ASSERT_TRUE(gpulens::testing::wait_for([&] { return reader.calls() >= 1; }, 20));
  const auto scan = reader.read();
  ASSERT_NE(scan, nullptr);
  EXPECT_FALSE(scan->usable);
  EXPECT_EQ(scan->scheduler, "kubernetes");
  EXPECT_EQ(scan->fallback, "no socket at /nonexistent/kubelet.sock");
}

TEST(KubeAllocationReader, ItsOwnerIsNeverHeldUpByAHungKubelet) {
  const FakeKubelet hung(true, [](int fd) { drain(fd, milliseconds(10000)); });
  KubeAllocationOptions options;
  options.socket = hung.path();
  options.trusted_uid = ::getuid();
  options.deadline_s = 30;
  const auto start = std::chrono::steady_clock::now();
  {
    KubeAllocationReader reader(options, {});
    // The first call is in flight: the last scan is at hand at once and says so.
    const auto scan = reader.read();
    EXPECT_FALSE(scan->usable);
    EXPECT_EQ(scan->fallback, "the kubelet's pod-resources API was not asked yet");
    std::this_thread::sleep_for(milliseconds(100));
  }  // the destructor cancels the call in flight
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
}

// Only a socket of the trusted uid, in a directory no one else can write, is
// asked: another user's socket would let them charge GPUs to pods of their
// choosing. Each refusal says why, and the socket hears nothing.
TEST(KubeAllocationReader, OnlyATrustedSocketIsAsked) {
  std::atomic<int> connections{0};
  const FakeKubelet kubelet(true, [&](int) { ++connections; });
  const std::string& path = kubelet.path();
  const std::string dir = path.substr(0, path.rfind('/'));
  const std::uint32_t me = ::getuid();
  EXPECT_EQ(untrusted_socket(path, me), std::nullopt);
  EXPECT_EQ(
      untrusted_socket(path, me + 1).value_or(""),
      fmt::format("{} is owned by uid {}: only a socket of uid {} names pods", path, me, me + 1));
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  EXPECT_EQ(
      untrusted_socket(path, me).value_or(""),
      dir + " is not a directory of uid " + std::to_string(me) + " that no one else can write");
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  const std::string link = dir + "/link.sock";
  ASSERT_EQ(::symlink(path.c_str(), link.c_str()), 0);
  EXPECT_EQ(untrusted_socket(link, me).value_or(""),
            link + " is not a socket (a link is not followed)");
  EXPECT_EQ(untrusted_socket(dir + "/absent.sock", me).value_or(""),
            "no socket at " + dir + "/absent.sock");

  KubeAllocationOptions options;
  options.socket = path;
  options.trusted_uid = me + 1;
  options.period_s = 0.05;
  KubeAllocationReader reader(options, {});
  ASSERT_TRUE(gpulens::testing::wait_for([&] { return reader.calls() >= 1; }, 20));
  EXPECT_FALSE(reader.read()->usable);
  EXPECT_NE(reader.read()->fallback.find("is owned by uid"), std::string::npos);
  EXPECT_FALSE(reader.read()->absent);
  EXPECT_EQ(connections.load(), 0);
  ::unlink(link.c_str());
}

// A kubelet that answered once and then fails: its answer stays for keep_s with
// the error said, then the GPUs' owners come from processes with the reason.
TEST(KubeAllocationReader, AnAnswerOutlivesAFailureForKeepSecondsOnly) {
  // One pod holding GPU 0 by index: List's answer encoded by hand (field numbers
  // of the kubelet's api.proto).
  const auto bytes = [](int field, const std::string& v) {
    return std::string(1, static_cast<char>(field << 3 | 2)) +
           std::string(1, static_cast<char>(v.size())) + v;
  };
  const std::string answer =
      bytes(1, bytes(1, "p") + bytes(2, "ns") +
                   bytes(3, bytes(1, "c") + bytes(2, bytes(1, "nvidia.com/gpu") + bytes(2, "0"))));
  for (const double keep_s : {1e6, 0.0}) {
    std::atomic<int> calls{0};
    KubeAllocationOptions options;
    options.socket = "/fake";
    options.period_s = 0.01;
    options.keep_s = keep_s;
    KubeAllocationReader reader(options, {{0, "GPU-0", "", {}}},
                                [&](const GrpcCall& call) -> Result<std::string> {
                                  EXPECT_EQ(call.method, "/v1.PodResourcesLister/List");
                                  if (calls++ == 0) return answer;
                                  return Error{"kubelet restarting"};
                                });
    ASSERT_TRUE(gpulens::testing::wait_for([&] { return reader.calls() >= 2; }, 20));
    const auto scan = reader.read();
    if (keep_s > 0) {
      ASSERT_TRUE(scan->usable);
      ASSERT_EQ(scan->by_gpu.at(0).size(), 1u);
      EXPECT_EQ(scan->by_gpu.at(0)[0].namespace_name, "ns");
      EXPECT_EQ(scan->by_gpu.at(0)[0].pod, "p");
      EXPECT_EQ(scan->by_gpu.at(0)[0].container, "c");
      EXPECT_EQ(scan->last_error, "kubelet restarting");
    } else {
      EXPECT_FALSE(scan->usable);
      EXPECT_EQ(scan->fallback, "kubelet restarting");
    }
  }
}

}  // namespace
}  // namespace gpulens::sources::kube
