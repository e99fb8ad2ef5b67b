// SPDX-License-Identifier: Apache-2.0
#pragma once
// A kubelet's pod-resources socket for the tests of the gRPC call and of the
// allocation reader (tests/unit/sources/kube): a unix socket in a fresh
// directory, optionally served by a thread.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <utility>

namespace gpulens::testing {

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
    std::filesystem::remove_all(dir_);
  }
  const std::string& path() const { return path_; }

 private:
  std::function<void(int)> serve_;
  std::string dir_, path_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Reads what the client sends until it hangs up or `until` passes.
inline void drain(int fd, std::chrono::milliseconds until) {
  timeval tv{0, static_cast<long>(until.count()) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[4096];
  while (::recv(fd, buf, sizeof buf, 0) > 0) {
  }
}

}  // namespace gpulens::testing
