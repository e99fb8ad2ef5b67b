// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the injection library's tests share: an environment variable set for one
// test, and the stand-in libcupti's call log (tests/fakes/kernels_fake_cupti_activity.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace gpulens::inject::testing {

// Sets an environment variable for one test (nullptr: unsets it) and puts the
// old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A fresh directory of this test process's own.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("gpulens-inject-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The stand-in libcupti's calls, "what kind" each ("enable 10", "register 0").
inline std::vector<std::string> fake_cupti_calls(const std::filesystem::path& log) {
  std::vector<std::string> out;
  std::ifstream in(log);
  for (std::string what, ns; in >> what;) {
    int n = 0;
    in >> n >> ns;
    out.push_back(what + " " + std::to_string(n));
  }
  return out;
}

}  // namespace gpulens::inject::testing
