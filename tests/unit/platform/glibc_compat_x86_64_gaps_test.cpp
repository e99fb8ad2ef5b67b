// SPDX-License-Identifier: Apache-2.0
// What glibc 2.28 lacks and glibc_compat_x86_64_gaps.cpp fills in, against the
// build's glibc: the executable's constructors run once through the wrapped
// __libc_start_main, __libc_single_threaded says "maybe several threads", and
// the emulated pthread_cond_clockwait keeps its deadline and its errors.
#include <gtest/gtest.h>
#include <pthread.h>
#include <time.h>

#include <cerrno>
#include <chrono>
#include <limits>
#include <thread>
#include <utility>

#if GPULENS_GLIBC_REBOUND
extern "C" {
int __wrap_pthread_cond_clockwait(pthread_cond_t*, pthread_mutex_t*, clockid_t, const timespec*);
int __real_pthread_cond_clockwait(pthread_cond_t*, pthread_mutex_t*, clockid_t, const timespec*);
extern char __wrap___libc_single_threaded;
}
#endif

namespace {

#if GPULENS_GLIBC_REBOUND
int constructor_runs = 0;
[[gnu::constructor]] void count_constructor_run() {
  ++constructor_runs;
}

timespec monotonic_in(long millis) {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  const long nanos = t.tv_nsec + millis * 1'000'000;
  t.tv_sec += nanos / 1'000'000'000;
  t.tv_nsec = nanos % 1'000'000'000;
  if (t.tv_nsec < 0) {
    t.tv_nsec += 1'000'000'000;
    --t.tv_sec;
  }
  return t;
}

double seconds_since(const timespec& start) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec - start.tv_sec) +
         static_cast<double>(now.tv_nsec - start.tv_nsec) / 1e9;
}

struct Waiter {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  bool flag = false;
};
#endif

TEST(GlibcCompatX86_64, ConstructorsRunOnce) {
#if GPULENS_GLIBC_REBOUND
  // Once, not twice: glibc 2.34+ runs them itself only when given no init.
  EXPECT_EQ(constructor_runs, 1);
  EXPECT_EQ(__wrap___libc_single_threaded, 0);
#else
  GTEST_SKIP() << "glibc symbols are rebound to 2.28 versions on x86_64 only";
#endif
}

TEST(GlibcCompatX86_64, ClockwaitTimesOutOnTheMonotonicDeadline) {
#if GPULENS_GLIBC_REBOUND
  Waiter w;
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  const timespec deadline = monotonic_in(60);
  pthread_mutex_lock(&w.mutex);
  int result = 0;
  int wakeups = -1;
  while (result == 0) {
    ++wakeups;
    result = __wrap_pthread_cond_clockwait(&w.cond, &w.mutex, CLOCK_MONOTONIC, &deadline);
  }
  pthread_mutex_unlock(&w.mutex);
  EXPECT_EQ(result, ETIMEDOUT);
  EXPECT_GE(seconds_since(start), 0.060);
  EXPECT_LE(wakeups, 2);  // it slept: a deadline moved wrong would return at once, again and again
  EXPECT_LT(seconds_since(start), 5.0);

  // A deadline already past, on either clock, times out at once.
  const timespec past = monotonic_in(-1000);
  timespec wall_past{};
  clock_gettime(CLOCK_REALTIME, &wall_past);
  pthread_mutex_lock(&w.mutex);
  EXPECT_EQ(__wrap_pthread_cond_clockwait(&w.cond, &w.mutex, CLOCK_MONOTONIC, &past), ETIMEDOUT);
  EXPECT_EQ(__wrap_pthread_cond_clockwait(&w.cond, &w.mutex, CLOCK_REALTIME, &wall_past),
            ETIMEDOUT);
  pthread_mutex_unlock(&w.mutex);
#else
  GTEST_SKIP() << "glibc symbols are rebound to 2.28 versions on x86_64 only";
#endif
}

TEST(GlibcCompatX86_64, ClockwaitWakesWhenSignalled) {
#if GPULENS_GLIBC_REBOUND
  // As far ahead as a timespec goes: the moved deadline saturates, not wraps.
  for (const timespec deadline :
       {monotonic_in(30'000), timespec{std::numeric_limits<time_t>::max(), 999'999'999}}) {
    Waiter w;
    timespec start{};
    clock_gettime(CLOCK_MONOTONIC, &start);
    std::thread signaller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      pthread_mutex_lock(&w.mutex);
      w.flag = true;
      pthread_cond_signal(&w.cond);
      pthread_mutex_unlock(&w.mutex);
    });
    pthread_mutex_lock(&w.mutex);
    int result = 0;
    while (!w.flag && result == 0)
      result = __wrap_pthread_cond_clockwait(&w.cond, &w.mutex, CLOCK_MONOTONIC, &deadline);
    pthread_mutex_unlock(&w.mutex);
    signaller.join();
    EXPECT_EQ(result, 0);
    EXPECT_TRUE(w.flag);
    EXPECT_LT(seconds_since(start), 10.0);
  }
#else
  GTEST_SKIP() << "glibc symbols are rebound to 2.28 versions on x86_64 only";
#endif
}

TEST(GlibcCompatX86_64, ClockwaitRefusesWhatGlibcRefuses) {
#if GPULENS_GLIBC_REBOUND
  Waiter w;
  const timespec soon = monotonic_in(10);
  const timespec bad_nanos{soon.tv_sec, 1'000'000'000};
  const timespec negative_nanos{soon.tv_sec, -1};
  pthread_mutex_lock(&w.mutex);
  const std::pair<clockid_t, timespec> refused[] = {{CLOCK_PROCESS_CPUTIME_ID, soon},
                                                    {CLOCK_MONOTONIC, bad_nanos},
                                                    {CLOCK_MONOTONIC, negative_nanos}};
  for (const auto& [clock, deadline] : refused) {
    EXPECT_EQ(__wrap_pthread_cond_clockwait(&w.cond, &w.mutex, clock, &deadline), EINVAL);
    EXPECT_EQ(__real_pthread_cond_clockwait(&w.cond, &w.mutex, clock, &deadline), EINVAL);
  }
  pthread_mutex_unlock(&w.mutex);
#else
  GTEST_SKIP() << "glibc symbols are rebound to 2.28 versions on x86_64 only";
#endif
}

}  // namespace
