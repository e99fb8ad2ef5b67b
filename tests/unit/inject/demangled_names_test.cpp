// SPDX-License-Identifier: Apache-2.0
// Kernel names as the injection library writes them (src/inject/demangled_names.cpp).
#include "inject/demangled_names.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpulens::inject {
namespace {

TEST(DemangledNames, CppNamesAreDemangledAndOthersKeptAsTheyAre) {
  DemangledNames names;
  EXPECT_EQ(names("_Z6kernelPfi"), "kernel(float*, int)");
  EXPECT_EQ(names("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"),
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  EXPECT_EQ(names(nullptr), "(unnamed)");
}

TEST(DemangledNames, ANameIsDemangledOnceWhereverItsTextLies) {
  DemangledNames names;
  const std::string a = "_Z4gemmv";
  const std::string b = a;  // the same name at another address
  const std::string& first = names(a.c_str());
  EXPECT_EQ(&names(a.c_str()), &first);
  EXPECT_EQ(&names(b.c_str()), &first);
  EXPECT_EQ(names.size(), 1u);
  EXPECT_EQ(names.addresses(), 2u);
}

TEST(DemangledNames, LongNamesAreCut) {
  DemangledNames names;
  const std::string huge(5000, 'x');
  EXPECT_EQ(names(huge.c_str()).size(), DemangledNames::kMaxNameChars);
}

TEST(DemangledNames, NamesBuiltAtRunTimeDoNotGrowTheAddressTableWithoutEnd) {
  DemangledNames names;
  std::vector<std::string> texts;
  texts.reserve(DemangledNames::kMaxAddresses + 10);
  for (std::size_t i = 0; i < DemangledNames::kMaxAddresses + 10; ++i)
    texts.push_back("jit_" + std::to_string(i));
  for (const auto& t : texts) names(t.c_str());
  EXPECT_EQ(names.addresses(), DemangledNames::kMaxAddresses);
  EXPECT_EQ(names(texts.back().c_str()), texts.back());  // still found by its content
}

}  // namespace
}  // namespace gpulens::inject
