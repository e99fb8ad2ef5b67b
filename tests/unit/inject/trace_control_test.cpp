// SPDX-License-Identifier: Apache-2.0
// When the injection library has CUPTI record (src/inject/trace_control.cpp),
// against the stand-in libcupti of tests/fakes: windows opened at cuInit and
// closed at the exit, a window to come, a whole-job trace, a refusal. The
// window thread's own timing is seen end to end (run_kernels_test.cpp).
#ifdef GPULENS_INJECTION_SEAMS
#include "inject/trace_control.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "inject/injection.hpp"
#include "inject_env.hpp"
#include "inject_records.hpp"

namespace gpulens::inject {
namespace {

using testing::ScopedEnv;

// A process's injection object with the stand-in's entry points resolved. Never
// freed: a thread of trace_control.cpp may still wake for it after the test.
Injection& traced_process(const std::filesystem::path& dir) {
  auto* in = new Injection;
  in->sender.out_dir = dir.string();
  in->started = true;
  EXPECT_TRUE(in->cupti.resolve());
  in->windows.active = true;
  return *in;
}

// Windows of `window_s` every 1000 s, the first at `first_s` from now.
TraceSchedule windows_from_now(double first_s, double window_s) {
  TraceSchedule s;
  s.epoch_unix_ns = unix_now_ns();
  s.first_s = first_s, s.window_s = window_s, s.every_s = 1000;
  return s;
}

int trace_call_at(const std::vector<std::string>& calls, const std::string& call) {
  const auto it = std::find(calls.begin(), calls.end(), call);
  return it == calls.end() ? -1 : static_cast<int>(it - calls.begin());
}

TEST(TraceControl, AWindowOpenAtCuInitRecordsUntilTheExit) {
  const auto dir = testing::fresh_dir("trace-open");
  const std::string log = (dir / "cupti.log").string();
  ScopedEnv cupti("GPULENS_CUPTI", GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY);
  ScopedEnv logged("FAKE_CUPTI_LOG", log.c_str());
  Injection& in = traced_process(dir);
  in.windows.schedule = windows_from_now(-1, 100);  // opened a second ago, for 100 s
  open_window_if_due(in);
  EXPECT_TRUE(in.windows.tracing);
  EXPECT_TRUE(in.cupti.attached());
  EXPECT_TRUE(in.records.started());
  stop_tracing(in);
  EXPECT_FALSE(in.windows.tracing);
  EXPECT_FALSE(in.windows.active);
  ASSERT_EQ(in.windows.windows.size(), 1u);
  EXPECT_LE(in.windows.windows[0].first, in.windows.windows[0].second);
  const auto calls = testing::fake_cupti_calls(log);
  EXPECT_EQ(trace_call_at(calls, "register 0"), 0);
  EXPECT_LT(trace_call_at(calls, "enable 10"), trace_call_at(calls, "disable 10"));
  // The exit: the window, not yet written by the window thread, is the last chunk.
  write_last_chunk(in);
  write_end(in);
  const auto lines = testing::record_lines(dir);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1]["record"], "chunk");
  EXPECT_TRUE(lines[1]["window"].get<bool>());
  EXPECT_EQ(lines[2]["record"], "end");
  EXPECT_EQ(lines[2]["status"], "ok");
  std::filesystem::remove_all(dir);
}

TEST(TraceControl, AWindowToComeLeavesCuptiUntouched) {
  const auto dir = testing::fresh_dir("trace-later");
  const std::string log = (dir / "cupti.log").string();
  ScopedEnv cupti("GPULENS_CUPTI", GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY);
  ScopedEnv logged("FAKE_CUPTI_LOG", log.c_str());
  Injection& in = traced_process(dir);
  in.windows.schedule = windows_from_now(500, 2);
  open_window_if_due(in);
  EXPECT_FALSE(in.windows.tracing);
  EXPECT_FALSE(in.cupti.attached());
  stop_tracing(in);  // the job ended before its first window
  write_last_chunk(in);
  EXPECT_TRUE(in.windows.windows.empty());
  EXPECT_TRUE(testing::fake_cupti_calls(log).empty());
  std::filesystem::remove_all(dir);
}

TEST(TraceControl, ARefusedWindowStopsTheWindowsAndSaysWhy) {
  const auto dir = testing::fresh_dir("trace-refused");
  ScopedEnv cupti("GPULENS_CUPTI", GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY);
  ScopedEnv refused("FAKE_CUPTI_REFUSE", "10");
  Injection& in = traced_process(dir);
  in.windows.schedule = windows_from_now(-1, 100);
  open_window_if_due(in);
  EXPECT_FALSE(in.windows.tracing);
  EXPECT_TRUE(in.windows.stopping);
  EXPECT_FALSE(in.windows.active);
  EXPECT_EQ(in.cupti.status().status, "cupti_error");
  std::filesystem::remove_all(dir);
}

TEST(TraceControl, TracedWholeTheLastChunkRunsToTheExit) {
  const auto dir = testing::fresh_dir("trace-whole");
  ScopedEnv cupti("GPULENS_CUPTI", GPULENS_KERNELS_FAKE_CUPTI_ACTIVITY);
  Injection& in = traced_process(dir);
  ASSERT_TRUE(trace_whole_job(in));
  EXPECT_TRUE(in.cupti.attached());
  EXPECT_FALSE(in.windows.tracing);  // no windows: CUPTI records throughout
  stop_tracing(in);
  write_last_chunk(in);
  const auto lines = testing::record_lines(dir);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["record"], "chunk");
  EXPECT_FALSE(lines[1]["window"].get<bool>());
  EXPECT_EQ(lines[1]["span"][0], 0);  // from the attach
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpulens::inject
#endif
