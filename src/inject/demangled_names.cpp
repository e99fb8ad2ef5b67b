// SPDX-License-Identifier: Apache-2.0
#include "inject/demangled_names.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <utility>

namespace gpulens::inject {

const std::string& DemangledNames::operator()(const char* mangled) {
  if (mangled == nullptr) mangled = "(unnamed)";
  if (auto at = by_address_.find(mangled); at != by_address_.end()) return *at->second;
  auto it = names_.find(mangled);
  if (it == names_.end()) {
    int status = 0;
    char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    std::string name = (status == 0 && d != nullptr) ? d : mangled;
    std::free(d);
    if (name.size() > kMaxNameChars) name.resize(kMaxNameChars);
    it = names_.emplace(mangled, std::move(name)).first;
  }
  if (by_address_.size() < kMaxAddresses) by_address_.emplace(mangled, &it->second);
  return it->second;
}

}  // namespace gpulens::inject
