// SPDX-License-Identifier: Apache-2.0
// Kernel names as Prometheus label values: short, one line, valid UTF-8, bounded,
// whatever a job sends.
#include "kernels/record/kernel_label.hpp"

#include <gtest/gtest.h>

#include "core/text_safety.hpp"

namespace gpulens::kernels {
namespace {

TEST(KernelLabel, StripsTemplatesParametersAndNamespaces) {
  EXPECT_EQ(kernel_label("void at::native::(anonymous namespace)::softmax_kernel<float, "
                         "at::native::Max<float> >(float*, int)"),
            "softmax_kernel");
  EXPECT_EQ(kernel_label("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn"),
            "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn");
  // Two instantiations of one template are one label, so one series.
  EXPECT_EQ(kernel_label("void k<1>(int)"), kernel_label("void k<2>(int)"));
}

TEST(KernelLabel, CapsTheLengthOnACharacterBoundary) {
  EXPECT_EQ(kernel_label(std::string(300, 'a')).size(), kKernelLabelBytes);
  // 63 ASCII bytes then a 2-byte character: the character does not fit and goes whole.
  const std::string label = kernel_label(std::string(63, 'a') + "\xC3\xA9" + "zzz");
  EXPECT_EQ(label, std::string(63, 'a'));
  EXPECT_TRUE(is_terminal_safe(label, false));
  EXPECT_LE(kernel_label(std::string(100, 'b'), 10).size(), 10u);
}

TEST(KernelLabel, HostileNamesBecomeOneSafeLine) {
  const std::string hostile[] = {
      std::string("evil\xFF\xFE", 6),      // not UTF-8
      "a\nb\tc\rd",                        // line breaks and tabs
      "\x1b[31mred\x1b[0m",                // terminal escapes
      "x\xE2\x80\xAEreversed",             // a bidi override
      "quote\"and\\backslash",             // label syntax
      std::string("nul\0inside", 10),      // NUL
      std::string(5000, '<'),              // unbalanced templates, long
      "((((((((((",                        // unbalanced parameters
      "   ",                               // blank
      "\xF0\x9F\x98\x80\xF0\x9F\x98\x80",  // emoji: valid, kept
  };
  for (const auto& name : hostile) {
    const std::string label = kernel_label(name);
    EXPECT_FALSE(label.empty()) << name;
    EXPECT_LE(label.size(), kKernelLabelBytes) << name;
    EXPECT_TRUE(is_terminal_safe(label, false)) << label;
    EXPECT_EQ(label.find('\n'), std::string::npos);
    EXPECT_NE(label, kOtherKernelLabel);
  }
  EXPECT_EQ(kernel_label("a\nb"), "a b");
  EXPECT_EQ(kernel_label("   "), "(unnamed)");
  EXPECT_EQ(kernel_label(""), "(unnamed)");
  EXPECT_EQ(kernel_label("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
}

TEST(KernelLabel, AKernelNamedOtherIsNotTheOtherBucket) {
  EXPECT_EQ(kernel_label("other"), "other_");
  EXPECT_EQ(kernel_label("void ns::other(int)"), "other_");
}

}  // namespace
}  // namespace gpulens::kernels
