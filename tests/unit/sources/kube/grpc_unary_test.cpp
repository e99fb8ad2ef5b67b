// SPDX-License-Identifier: Apache-2.0
// The pod-resources call when the kubelet is absent, refuses, hangs, speaks
// something else or hangs up: each ends by its deadline with the reason in
// words. The reader's thread around it is kube_allocations_test.cpp; a real gRPC
// server answering is tests/e2e/kubelet_pod_resources.sh.
#include "sources/kube/grpc_unary.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "fake_kubelet.hpp"
#include "sources/kube/kube_allocations.hpp"

namespace gpulens::sources::kube {
namespace {

using gpulens::testing::drain;
using gpulens::testing::FakeKubelet;
using std::chrono::milliseconds;

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

}  // namespace
}  // namespace gpulens::sources::kube
