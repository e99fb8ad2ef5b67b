// SPDX-License-Identifier: Apache-2.0
// The allocation reader (src/sources/kube/kube_allocations.cpp): its thread of
// calls to the kubelet, which socket it trusts, and how long an answer outlives
// a failure. The call itself is grpc_unary_test.cpp; one answer's scan is
// pod_resources_test.cpp.
#include "sources/kube/kube_allocations.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "fake_kubelet.hpp"
#include "wait_for.hpp"

namespace gpulens::sources::kube {
namespace {

using gpulens::testing::drain;
using gpulens::testing::FakeKubelet;
using std::chrono::milliseconds;

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
