// SPDX-License-Identifier: Apache-2.0
// Which libcupti the injection library opens in the job (src/inject/cupti_loader.cpp),
// with the stand-in libcupti of tests/fakes for a real one.
#include "inject/cupti_loader.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "inject_env.hpp"

namespace gpulens::inject {
namespace {

using testing::ScopedEnv;

TEST(CuptiLoader, TheUsersChoiceIsTheOnlyPlaceLookedAt) {
  const std::string missing = "/nonexistent/gpulens/libcupti.so.13";
  ScopedEnv env("GPULENS_CUPTI", missing.c_str());
  const CuptiLibrary lib = open_cupti();
  EXPECT_EQ(lib.handle, nullptr);
  EXPECT_TRUE(lib.path.empty());
  ASSERT_EQ(lib.searched.size(), 1u);  // the report lists it, and nothing else was tried
  EXPECT_EQ(lib.searched[0], missing);
}

#ifdef GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY
TEST(CuptiLoader, TheUsersChoiceIsOpened) {
  ScopedEnv env("GPULENS_CUPTI", GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY);
  const CuptiLibrary lib = open_cupti();
  ASSERT_NE(lib.handle, nullptr);
  EXPECT_EQ(lib.path, GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY);
  EXPECT_NE(dlsym(lib.handle, "cuptiActivityEnable"), nullptr);
  dlclose(lib.handle);
}

TEST(CuptiLoader, ACuptiTheJobHasLoadedComesBeforeAnyOther) {
  // The job's own copy (PyTorch's kineto loads one): named as a libcupti.
  const auto dir = testing::fresh_dir("loader");
  const auto own = dir / "libcupti.so.13";
  std::filesystem::copy_file(GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY, own,
                             std::filesystem::copy_options::overwrite_existing);
  void* jobs = dlopen(own.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(jobs, nullptr) << dlerror();
  {
    ScopedEnv env("GPULENS_CUPTI", "/nonexistent/gpulens/libcupti.so.13");
    const CuptiLibrary lib = open_cupti();
    EXPECT_EQ(lib.handle, jobs);
    EXPECT_EQ(std::filesystem::path(lib.path).filename(), "libcupti.so.13");
    ASSERT_EQ(lib.searched.size(), 1u);
    EXPECT_NE(lib.searched[0].find("(loaded)"), std::string::npos) << lib.searched[0];
    if (lib.handle != nullptr) dlclose(lib.handle);
  }
  dlclose(jobs);
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace
}  // namespace gpulens::inject
