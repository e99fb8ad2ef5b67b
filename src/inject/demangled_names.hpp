// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kernel names as the record gives them: demangled once per name, cut to
// kMaxNameChars (cutlass templates run to kilobytes). Pure C++: no CUPTI here, so
// it is tested without a GPU; records.cpp calls it for every kernel record.
#include <cstddef>
#include <string>
#include <unordered_map>

namespace gpulens::inject {

class DemangledNames {
 public:
  static constexpr std::size_t kMaxNameChars = 1000;
  // Past this many name addresses, names are found by their content only.
  static constexpr std::size_t kMaxAddresses = 100000;

  // The demangled name of `mangled` (its text when it is not a C++ name; null:
  // "(unnamed)"). The reference stays valid for the object's life.
  const std::string& operator()(const char* mangled);

  std::size_t size() const { return names_.size(); }
  std::size_t addresses() const { return by_address_.size(); }

 private:
  std::unordered_map<std::string, std::string> names_;  // mangled -> demangled
  // CUPTI shares one name string among all records of a kernel, so its address
  // finds the demangled name without hashing a mangled name of hundreds of bytes
  // per record (this runs for every kernel the job launches). Bounded: a job that
  // builds kernel names at run time (JIT) must not grow it without end.
  std::unordered_map<const char*, const std::string*> by_address_;
};

}  // namespace gpulens::inject
