// SPDX-License-Identifier: Apache-2.0
// The replacements of src/platform/glibc_compat.cpp against glibc's own
// functions (reached through --wrap's __real_ names): the same unwind tables for
// code in the executable and in a shared library, none for an unmapped address,
// and random bytes that fill the whole buffer.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#if GPULENS_GLIBC_COMPAT
extern "C" {
int __wrap__dl_find_object(void* address, dl_find_object* result);
int __real__dl_find_object(void* address, dl_find_object* result);
void __wrap_arc4random_buf(void* buffer, std::size_t size);
}
#endif

namespace {

#if GPULENS_GLIBC_COMPAT
[[gnu::noinline]] int thrower(int depth) {
  if (depth == 0) throw std::runtime_error("unwound");
  return thrower(depth - 1) + 1;
}

void expect_same_object(void* address) {
  dl_find_object ours{};
  dl_find_object theirs{};
  ASSERT_EQ(__real__dl_find_object(address, &theirs), 0);
  ASSERT_EQ(__wrap__dl_find_object(address, &ours), 0);
  EXPECT_EQ(ours.dlfo_eh_frame, theirs.dlfo_eh_frame);
  EXPECT_NE(ours.dlfo_eh_frame, nullptr);
  EXPECT_LE(ours.dlfo_map_start, address);
  EXPECT_GT(ours.dlfo_map_end, address);
}
#endif

TEST(GlibcCompat, FindsTheUnwindTablesGlibcFinds) {
#if GPULENS_GLIBC_COMPAT
  expect_same_object(reinterpret_cast<void*>(&thrower));  // the test executable
  // libm, a shared library of glibc's.
  void* cosine = dlsym(RTLD_DEFAULT, "cos");
  ASSERT_NE(cosine, nullptr);
  expect_same_object(cosine);
  dl_find_object none{};
  EXPECT_EQ(__wrap__dl_find_object(reinterpret_cast<void*>(16), &none), -1);
  // And the unwinder, which calls it for every frame, still finds its way.
  EXPECT_THROW(thrower(20), std::runtime_error);
#else
  GTEST_SKIP() << "built without GPULENS_STATIC: glibc's own functions are used";
#endif
}

TEST(GlibcCompat, RandomBytesFillTheBuffer) {
#if GPULENS_GLIBC_COMPAT
  std::array<unsigned char, 16384> a{};
  std::array<unsigned char, 16384> b{};
  __wrap_arc4random_buf(a.data(), a.size());
  __wrap_arc4random_buf(b.data(), b.size());
  EXPECT_NE(a, b);
  // 16 KiB of random bytes miss one of the 256 values with odds of about 1e-25.
  for (int v = 0; v < 256; ++v)
    EXPECT_NE(std::count(a.begin(), a.end(), static_cast<unsigned char>(v)), 0) << v;
  __wrap_arc4random_buf(nullptr, 0);  // nothing asked, nothing touched
#else
  GTEST_SKIP() << "built without GPULENS_STATIC: glibc's own functions are used";
#endif
}

}  // namespace
