// SPDX-License-Identifier: Apache-2.0
// What glibc 2.28 lacks, or does otherwise, that a pass-through to an old
// symbol version (glibc_compat_x86_64.cpp, which has the table of where every
// symbol was at 2.28) cannot cover: the start-up contract of __libc_start_main,
// pthread_cond_clockwait (2.30) and __libc_single_threaded (2.32). Each NAME is
// replaced by __wrap_NAME through -Wl,--wrap=NAME (CMakeLists.txt). x86_64 only.
#include <pthread.h>
#include <time.h>

#include <cerrno>
#include <climits>

// __GLIBC__ comes from the headers above.
#if !defined(__x86_64__) || defined(__ILP32__) || !defined(__GLIBC__)
#error "GLIBC_2.2.5 is the base version of x86_64 glibc only; CMakeLists.txt adds this file there"
#endif

namespace {
using MainFn = int (*)(int, char**, char**);
using InitFn = void (*)(int, char**, char**);
using FiniFn = void (*)();
}  // namespace

extern "C" {
int gpulens_glibc___libc_start_main(MainFn main, int argc, char** argv, InitFn init, FiniFn fini,
                                    FiniFn rtld_fini, void* stack_end);
// The NPTL condition variable; pthread_cond_timedwait@GLIBC_2.2.5 is the older,
// LinuxThreads-sized one and must not be reached.
int gpulens_glibc_pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex,
                                         const timespec* deadline);
// Given by crti.o and by the linker's script, as glibc 2.28's csu/elf-init.c uses them.
void _init();
extern InitFn __init_array_start[] __attribute__((visibility("hidden")));
extern InitFn __init_array_end[] __attribute__((visibility("hidden")));
}
__asm__(".symver gpulens_glibc___libc_start_main, __libc_start_main@GLIBC_2.2.5");
__asm__(".symver gpulens_glibc_pthread_cond_timedwait, pthread_cond_timedwait@GLIBC_2.3.2");

namespace {

// The executable's constructors, as glibc 2.28's __libc_csu_init (from
// libc_nonshared.a, linked into every program of its day) ran them: _init, then
// .init_array in order. The preinit array is the loader's job in a dynamic
// executable, on every version.
void run_constructors(int argc, char** argv, char** envp) {
  _init();
  for (InitFn* f = __init_array_start; f != __init_array_end; ++f) (*f)(argc, argv, envp);
}

constexpr long kNanos = 1'000'000'000;

bool before(const timespec& a, const timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

// `base + (deadline - now)`, saturated at the largest time rather than wrapped.
timespec moved(const timespec& deadline, const timespec& now, const timespec& base) {
  if (!before(now, deadline)) return base;    // already past: time out at once
  time_t sec = deadline.tv_sec - now.tv_sec;  // > 0 or 0, no overflow: now >= 0
  long nsec = deadline.tv_nsec - now.tv_nsec;
  if (nsec < 0) {
    nsec += kNanos;
    --sec;
  }
  timespec out{};
  nsec += base.tv_nsec;
  if (nsec >= kNanos) {
    nsec -= kNanos;
    ++sec;  // sec <= deadline.tv_sec, so this cannot overflow either
  }
  if (__builtin_add_overflow(base.tv_sec, sec, &out.tv_sec)) return timespec{LONG_MAX, kNanos - 1};
  out.tv_nsec = nsec;
  return out;
}

}  // namespace

extern "C" {

// Since glibc 2.34, crt1.o passes no init function (NULL) and
// __libc_start_main@GLIBC_2.34 finds the executable's constructors itself.
// The 2.2.5 version on glibc before 2.34 calls init only if it is given and the
// loader skips the executable, so with NULL no constructor would run: no
// iostreams, no static objects. Hence run_constructors, which glibc 2.34+ calls
// too when given (its 2.2.5 version is the same function: init if given, else
// its own search), so the same path runs on the build machine and in the tests.
// fini is NULL on both sides: the loader runs .fini_array, on 2.28 as well.
int __wrap___libc_start_main(MainFn main, int argc, char** argv, InitFn init, FiniFn fini,
                             FiniFn rtld_fini, void* stack_end) {
  return gpulens_glibc___libc_start_main(main, argc, argv, init ? init : run_constructors, fini,
                                         rtld_fini, stack_end);
}

// pthread_cond_clockwait (glibc 2.30), which libstdc++ 12 calls for every wait
// on std::condition_variable against steady_clock (wait_for, wait_until). 2.28
// has no such function; this is what libstdc++ itself does on a glibc without
// it: the CLOCK_MONOTONIC deadline becomes a CLOCK_REALTIME one, `now + what is
// left`, for pthread_cond_timedwait. Lost: immunity to the wall clock being set
// while waiting. Set forward, the wait ends early, and is then reported as a
// wakeup (0), which callers treat as spurious and wait again; set back, the wait
// lasts that much longer (the one difference a caller can see).
int __wrap_pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                                  const timespec* deadline) {
  if (deadline->tv_nsec < 0 || deadline->tv_nsec >= kNanos) return EINVAL;
  if (clock == CLOCK_REALTIME) return gpulens_glibc_pthread_cond_timedwait(cond, mutex, deadline);
  if (clock != CLOCK_MONOTONIC) return EINVAL;
  timespec mono{};
  timespec real{};
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  const timespec wall_deadline = moved(*deadline, mono, real);
  const int result = gpulens_glibc_pthread_cond_timedwait(cond, mutex, &wall_deadline);
  if (result != ETIMEDOUT) return result;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  return before(mono, *deadline) ? 0 : ETIMEDOUT;
}

// __libc_single_threaded (glibc 2.32), which libstdc++ reads to skip atomic
// reference counts (shared_ptr, locale) while the process has one thread. 2.28
// has no such variable; 0, "maybe several threads", is always a correct answer
// and costs an atomic operation where a plain one would do.
char __wrap___libc_single_threaded = 0;

}  // extern "C"
