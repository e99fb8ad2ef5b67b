// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fake libdcgm of tests/fakes/dcgm_fake_lib.cpp, opened by path: gpulens loads
// it with load_dcgm_library as it would load DCGM, and the test drives its host
// engine through the fake_dcgm_* functions of the same (shared) library instance.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "sources/dcgm/dcgm_api.hpp"

namespace gpulens::testing {

class FakeDcgm {
 public:
  static constexpr const char* kPath = GPULENS_FAKE_DCGM;

  FakeDcgm() {
    handle_ = dlopen(kPath, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw std::runtime_error(std::string("dlopen fake libdcgm: ") + kPath);
    reset_ = symbol<void (*)()>("fake_dcgm_reset");
    add_gpu_ = symbol<void (*)(const char*)>("fake_dcgm_add_gpu");
    set_double_ = symbol<void (*)(unsigned, unsigned short, double, std::int64_t, int)>(
        "fake_dcgm_set_double");
    set_int64_ = symbol<void (*)(unsigned, unsigned short, std::int64_t, std::int64_t, int)>(
        "fake_dcgm_set_int64");
    set_connect_result_ = symbol<void (*)(int)>("fake_dcgm_set_connect_result");
    push_watch_result_ = symbol<void (*)(int)>("fake_dcgm_push_watch_result");
    set_engine_up_ = symbol<void (*)(int)>("fake_dcgm_set_engine_up");
    counter_ = symbol<long long (*)(int)>("fake_dcgm_counter");
    reset_();
    const std::array<const char*, 1> names{kPath};
    auto api = sources::load_dcgm_library(names);
    if (!api) throw std::runtime_error(api.error().message);
    api_ = std::make_unique<sources::DcgmApi>(std::move(api).value());
  }
  ~FakeDcgm() {
    api_.reset();
    dlclose(handle_);
  }
  FakeDcgm(const FakeDcgm&) = delete;
  FakeDcgm& operator=(const FakeDcgm&) = delete;

  const sources::DcgmApi& api() const { return *api_; }
  void add_gpu(const std::string& uuid) { add_gpu_(uuid.c_str()); }
  void set_double(unsigned gpu, unsigned short field, double v, double t_s, int status = 0) {
    set_double_(gpu, field, v, static_cast<std::int64_t>(t_s * 1e6), status);
  }
  void set_int64(unsigned gpu, unsigned short field, std::int64_t v, double t_s, int status = 0) {
    set_int64_(gpu, field, v, static_cast<std::int64_t>(t_s * 1e6), status);
  }
  void set_connect_result(int r) { set_connect_result_(r); }
  void push_watch_result(int r) { push_watch_result_(r); }
  void set_engine_up(bool up) { set_engine_up_(up ? 1 : 0); }
  long long connects() const { return counter_(0); }
  long long watches() const { return counter_(1); }
  long long unwatches() const { return counter_(2); }
  long long update_us() const { return counter_(3); }
  long long watched_fields() const { return counter_(4); }
  long long timeout_ms() const { return counter_(5); }
  bool initialized() const { return counter_(6) == 1; }
  long long embedded_starts() const { return counter_(7); }
  long long embedded_stops() const { return counter_(8); }
  long long embedded_mode() const { return counter_(9); }

 private:
  template <typename Fn>
  Fn symbol(const char* name) {
    void* address = dlsym(handle_, name);
    if (address == nullptr) throw std::runtime_error(std::string("fake libdcgm lacks ") + name);
    return reinterpret_cast<Fn>(address);
  }

  void* handle_ = nullptr;
  std::unique_ptr<sources::DcgmApi> api_;
  void (*reset_)() = nullptr;
  void (*add_gpu_)(const char*) = nullptr;
  void (*set_double_)(unsigned, unsigned short, double, std::int64_t, int) = nullptr;
  void (*set_int64_)(unsigned, unsigned short, std::int64_t, std::int64_t, int) = nullptr;
  void (*set_connect_result_)(int) = nullptr;
  void (*push_watch_result_)(int) = nullptr;
  void (*set_engine_up_)(int) = nullptr;
  long long (*counter_)(int) = nullptr;
};

}  // namespace gpulens::testing
