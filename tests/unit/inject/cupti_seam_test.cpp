// SPDX-License-Identifier: Apache-2.0
// The injection library's seam onto CUPTI (src/inject/cupti_seam.cpp), against the
// stand-in libcupti of tests/fakes: which libcupti it takes, what it switches on,
// and what the record's end line will say.
#ifdef GPULENS_INJECTION_SEAMS
#include "inject/cupti_seam.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "inject/records.hpp"
#include "inject_env.hpp"

namespace gpulens::inject {
namespace {

using testing::ScopedEnv;

bool seam_called(const std::vector<std::string>& calls, const std::string& call) {
  return std::find(calls.begin(), calls.end(), call) != calls.end();
}

TEST(CuptiSeam, NoLibcuptiIsSaidSo) {
  ScopedEnv cupti("GPULENS_CUPTI", "/nonexistent/gpulens/libcupti.so.13");
  CuptiSeam seam;
  EXPECT_FALSE(seam.resolve());
  const CuptiStatus s = seam.status();
  EXPECT_EQ(s.status, "no_cupti");
  EXPECT_EQ(s.reason, "libcupti was not found");
  EXPECT_EQ(seam.library().searched.size(), 1u);
}

TEST(CuptiSeam, ALibcuptiWithoutTheActivityApiIsSaidSo) {
  ScopedEnv cupti("GPULENS_CUPTI", GPULENS_KERNELS_FAKE_CUPTI);  // NVTX's entry point only
  CuptiSeam seam;
  EXPECT_FALSE(seam.resolve());
  EXPECT_EQ(seam.status().status, "no_cupti");
  EXPECT_EQ(seam.status().reason,
            std::string(GPULENS_KERNELS_FAKE_CUPTI) + " lacks the CUPTI Activity API");
}

TEST(CuptiSeam, AttachingRegistersOurBuffersAndSwitchesEveryKindOn) {
  const auto dir = testing::fresh_dir("seam-attach");
  const std::string log = (dir / "cupti.log").string();
  ScopedEnv cupti("GPULENS_CUPTI", GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY);
  ScopedEnv logged("FAKE_CUPTI_LOG", log.c_str());
  CuptiSeam seam;
  ASSERT_TRUE(seam.resolve());
  EXPECT_FALSE(seam.attached());
  ASSERT_TRUE(seam.attach(buffer_requested, buffer_completed));
  EXPECT_TRUE(seam.attached());
  auto calls = testing::fake_cupti_calls(log);
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls[0], "register 0");
  for (CUpti_ActivityKind k : kKinds) {
    EXPECT_TRUE(seam_called(calls, "enable " + std::to_string(static_cast<int>(k)))) << k;
  }
  // A window's end: the per-launch kinds go off, the device kind stays.
  seam.disable_per_launch_kinds();
  calls = testing::fake_cupti_calls(log);
  EXPECT_TRUE(seam_called(calls, "disable 10"));
  EXPECT_TRUE(seam_called(calls, "disable 12"));
  EXPECT_FALSE(seam_called(calls, "disable 8"));
  seam.stop();  // for good: every kind
  EXPECT_TRUE(seam_called(testing::fake_cupti_calls(log), "disable 8"));
  EXPECT_EQ(seam.status().status, "ok");
  EXPECT_FALSE(seam.syncs_withheld());  // a CUPTI we found ourselves: no profiler of the job's
  EXPECT_EQ(seam.recorded_kinds(), "kernel,memcpy,memset,sync,nvtx");
  std::filesystem::remove_all(dir);
}

TEST(CuptiSeam, AJobCarryingItsOwnCuptiGetsNoSynchronisationRecordsUnlessAsked) {
  // The job had libcupti loaded before we looked (PyTorch links it for its
  // profiler): every kind goes on but CUPTI's synchronisation records, which can
  // break that profiler later (docs/kernels.md, "A profiler inside the job").
  const auto dir = testing::fresh_dir("seam-job-cupti");
  const std::string log = (dir / "cupti.log").string();
  const auto own = dir / "libcupti.so.13";
  std::filesystem::copy_file(GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY, own,
                             std::filesystem::copy_options::overwrite_existing);
  void* jobs = dlopen(own.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(jobs, nullptr) << dlerror();
  // Attaches a seam as the library would in that job, GPULENS_KERNELS_SYNCS as given.
  auto check = [&](const char* syncs_asked, bool withheld) {
    ScopedEnv cupti("GPULENS_CUPTI", nullptr);
    ScopedEnv kinds("GPULENS_KERNELS_KINDS", nullptr);
    ScopedEnv asked("GPULENS_KERNELS_SYNCS", syncs_asked);
    ScopedEnv logged("FAKE_CUPTI_LOG", log.c_str());
    std::filesystem::remove(log);
    CuptiSeam seam;
    ASSERT_TRUE(seam.resolve());
    ASSERT_TRUE(seam.library().job_loaded);
    ASSERT_TRUE(seam.attach(buffer_requested, buffer_completed));
    EXPECT_EQ(seam.syncs_withheld(), withheld);
    EXPECT_EQ(seam.recorded_kinds(),
              withheld ? "kernel,memcpy,memset,nvtx" : "kernel,memcpy,memset,sync,nvtx");
    const auto calls = testing::fake_cupti_calls(log);
    EXPECT_TRUE(seam_called(calls, "enable 10"));  // kernels
    EXPECT_TRUE(seam_called(calls, "enable 1"));   // copies
    EXPECT_EQ(seam_called(calls, "enable 38"), !withheld);
    EXPECT_TRUE(seam.enable_per_launch_kinds());  // the next window: the same kinds
    EXPECT_EQ(seam_called(testing::fake_cupti_calls(log), "enable 38"), !withheld);
    seam.stop();
    // The seam's own reference: left open, the copy would stay loaded and be "the
    // job's" for every later test of this process.
    dlclose(seam.library().handle);
  };
  check(nullptr, true);
  check("1", false);  // `gpulens run --kernels-syncs`: the user knows the job starts no profiler
  dlclose(jobs);
  std::filesystem::remove_all(dir);
}

TEST(CuptiSeam, AKindTheViewCannotDoWithoutRefusedLeavesCuptiQuiet) {
  const auto dir = testing::fresh_dir("seam-refused");
  const std::string log = (dir / "cupti.log").string();
  ScopedEnv cupti("GPULENS_CUPTI", GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY);
  ScopedEnv logged("FAKE_CUPTI_LOG", log.c_str());
  ScopedEnv refused("FAKE_CUPTI_REFUSE", "10");  // CONCURRENT_KERNEL
  CuptiSeam seam;
  ASSERT_TRUE(seam.resolve());
  EXPECT_FALSE(seam.attach(buffer_requested, buffer_completed));
  const CuptiStatus s = seam.status();
  EXPECT_EQ(s.status, "cupti_error");
  EXPECT_EQ(s.reason, "cuptiActivityEnable(10): fake CUPTI error");
  const auto calls = testing::fake_cupti_calls(log);
  for (CUpti_ActivityKind k : kKinds) {
    EXPECT_TRUE(seam_called(calls, "disable " + std::to_string(static_cast<int>(k)))) << k;
  }
  std::filesystem::remove_all(dir);
}

TEST(CuptiSeam, AnOptionalKindRefusedCostsAColumnNotTheView) {
  ScopedEnv cupti("GPULENS_CUPTI", GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY);
  ScopedEnv refused("FAKE_CUPTI_REFUSE", "38");  // SYNCHRONIZATION
  CuptiSeam seam;
  ASSERT_TRUE(seam.resolve());
  EXPECT_TRUE(seam.attach(buffer_requested, buffer_completed));
  EXPECT_EQ(seam.status().status, "ok");
  EXPECT_EQ(seam.status().reason, "cuptiActivityEnable(38): fake CUPTI error");
  EXPECT_TRUE(seam.enable_per_launch_kinds());  // the next window: said once
  EXPECT_EQ(seam.status().reason, "cuptiActivityEnable(38): fake CUPTI error");
}

TEST(CuptiSeam, RefusedMarkersCostTheNvtxRangesOnly) {
  ScopedEnv cupti("GPULENS_CUPTI", GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY);
  ScopedEnv refused("FAKE_CUPTI_REFUSE", "12");  // MARKER
  CuptiSeam seam;
  ASSERT_TRUE(seam.resolve());
  EXPECT_TRUE(seam.attach(buffer_requested, buffer_completed));
  const CuptiStatus s = seam.status();
  EXPECT_EQ(s.status, "ok");
  EXPECT_TRUE(s.reason.empty());
  EXPECT_EQ(s.nvtx_status, "cupti_error");
  EXPECT_EQ(s.nvtx_reason, "cuptiActivityEnable(12): fake CUPTI error");
}

TEST(CuptiSeam, TheNvtxStatusSaysWhetherTheRangesReachedUs) {
  ScopedEnv cupti("GPULENS_CUPTI", GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY);
  {
    ScopedEnv nvtx("NVTX_INJECTION64_PATH", nullptr);
    CuptiSeam seam;
    EXPECT_EQ(seam.status().nvtx_status, "not_set");
  }
  {
    ScopedEnv nvtx("NVTX_INJECTION64_PATH", "/opt/other/libnvtx_tool.so");
    CuptiSeam seam;
    EXPECT_EQ(seam.status().nvtx_status, "injection_taken");
    EXPECT_NE(seam.status().nvtx_reason.find("/opt/other/libnvtx_tool.so"), std::string::npos);
  }
  CuptiSeam seam;
  seam.open();
  seam.nvtx_called(true, "");
  EXPECT_EQ(seam.status().nvtx_status, "ok");
  seam.nvtx_called(false, "InitializeInjectionNvtx2 failed");
  EXPECT_EQ(seam.status().nvtx_status, "cupti_error");
  EXPECT_EQ(seam.status().nvtx_reason, "InitializeInjectionNvtx2 failed");
}

TEST(CuptiSeam, TheJobsProfilerTakingOverIsTheLastWord) {
  CuptiSeam seam;
  seam.add_reason("cuptiActivityEnable(38): x");
  seam.add_reason("cuptiActivityEnable(38): x");
  seam.add_reason("cuptiActivityEnable(8): y");
  EXPECT_EQ(seam.status().reason, "cuptiActivityEnable(38): x; cuptiActivityEnable(8): y");
  seam.job_profiler_took_over(1234, "the job started its own CUPTI profiler");
  const CuptiStatus s = seam.status();
  EXPECT_EQ(s.status, "job_profiler");
  EXPECT_EQ(s.reason, "the job started its own CUPTI profiler");
  ASSERT_TRUE(s.yielded_ns.has_value());
  EXPECT_EQ(*s.yielded_ns, 1234);
}

}  // namespace
}  // namespace gpulens::inject
#endif
