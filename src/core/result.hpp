// SPDX-License-Identifier: Apache-2.0
#pragma once
// Errors as values inside the library: exceptions never cross component edges.
#include <string>
#include <utility>
#include <variant>

namespace gpulens {

struct Error {
  std::string message;
};

// A small stand-in for std::expected (C++23) so that the library builds with GCC 12.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

// For operations that produce nothing but may fail.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() {
  return Ok{};
}

}  // namespace gpulens
