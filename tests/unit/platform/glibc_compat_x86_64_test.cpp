// SPDX-License-Identifier: Apache-2.0
// The x86_64 rebinding to glibc 2.28's symbol versions (src/platform/
// glibc_compat_x86_64*.cpp) against the build's glibc: the __wrap_ functions,
// which call the old versions, give what the current ones give (reached through
// --wrap's __real_ names): the same numbers and errno from libm, the same file
// from stat, threads, keys, locks and libraries that work (what 2.28 lacks:
// glibc_compat_x86_64_gaps_test.cpp). Every other test of the suite runs
// through them too.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>

#if GPULENS_GLIBC_REBOUND
extern "C" {
double __wrap_exp(double);
double __real_exp(double);
double __wrap_exp2(double);
double __real_exp2(double);
double __wrap_log(double);
double __real_log(double);
double __wrap_log2(double);
double __real_log2(double);
double __wrap_pow(double, double);
double __real_pow(double, double);
int __wrap_stat(const char*, struct stat*);
int __real_stat(const char*, struct stat*);
int __wrap_stat64(const char*, struct stat64*);
int __wrap_lstat(const char*, struct stat*);
int __real_lstat(const char*, struct stat*);
int __wrap_lstat64(const char*, struct stat64*);
int __wrap_fstat(int, struct stat*);
int __real_fstat(int, struct stat*);
int __wrap_fstat64(int, struct stat64*);
int __wrap_fstatat(int, const char*, struct stat*, int);
int __wrap_fstatat64(int, const char*, struct stat64*, int);
int __wrap_pthread_create(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
int __wrap_pthread_join(pthread_t, void**);
int __wrap_pthread_detach(pthread_t);
int __wrap_pthread_once(pthread_once_t*, void (*)());
int __wrap_pthread_key_create(pthread_key_t*, void (*)(void*));
int __wrap___pthread_key_create(pthread_key_t*, void (*)(void*));
int __wrap_pthread_key_delete(pthread_key_t);
void* __wrap_pthread_getspecific(pthread_key_t);
int __wrap_pthread_setspecific(pthread_key_t, const void*);
int __wrap_pthread_mutex_trylock(pthread_mutex_t*);
int __wrap_pthread_mutexattr_init(pthread_mutexattr_t*);
int __wrap_pthread_mutexattr_destroy(pthread_mutexattr_t*);
int __wrap_pthread_mutexattr_settype(pthread_mutexattr_t*, int);
int __wrap_pthread_rwlock_init(pthread_rwlock_t*, const pthread_rwlockattr_t*);
int __wrap_pthread_rwlock_destroy(pthread_rwlock_t*);
int __wrap_pthread_rwlock_rdlock(pthread_rwlock_t*);
int __wrap_pthread_rwlock_wrlock(pthread_rwlock_t*);
int __wrap_pthread_rwlock_unlock(pthread_rwlock_t*);
int __wrap_pthread_sigmask(int, const sigset_t*, sigset_t*);
int __wrap_pthread_setname_np(pthread_t, const char*);
void* __wrap_dlopen(const char*, int);
void* __wrap_dlsym(void*, const char*);
void* __real_dlsym(void*, const char*);
int __wrap_dlclose(void*);
char* __wrap_dlerror();
int __wrap_dladdr(const void*, Dl_info*);
}
#endif

namespace {

#if GPULENS_GLIBC_REBOUND
template <typename Wrapped, typename Real, typename... Args>
void expect_same_math(Wrapped wrapped, Real real, Args... args) {
  errno = 0;
  const double ours = wrapped(args...);
  const int our_errno = errno;
  errno = 0;
  const double theirs = real(args...);
  const int their_errno = errno;
  if (std::isnan(theirs)) {
    EXPECT_TRUE(std::isnan(ours));
  } else {
    EXPECT_EQ(std::memcmp(&ours, &theirs, sizeof ours), 0) << ours << " vs " << theirs;
  }
  EXPECT_EQ(our_errno, their_errno);
}
#endif

TEST(GlibcCompatX86_64, MathGivesTheSameNumbersAndErrors) {
#if GPULENS_GLIBC_REBOUND
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double x : {0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 3.7, 88.5, 709.78, 710.0, -745.2, -1080.0,
                   1024.0, 1e308, inf, -inf, nan}) {
    SCOPED_TRACE(x);
    expect_same_math(__wrap_exp, __real_exp, x);
    expect_same_math(__wrap_exp2, __real_exp2, x);
    expect_same_math(__wrap_log, __real_log, x);  // log(0): ERANGE, log(-1): EDOM
    expect_same_math(__wrap_log2, __real_log2, x);
  }
  const std::pair<double, double> powers[] = {{2.0, 10.0}, {2.0, 0.5},    {-2.0, 3.0}, {-1.0, 0.5},
                                              {0.0, -1.0}, {10.0, 400.0}, {0.5, 1e10}, {1.0, nan},
                                              {nan, 0.0},  {-inf, -3.0}};
  for (auto [x, y] : powers) {
    SCOPED_TRACE(std::to_string(x) + " ^ " + std::to_string(y));
    expect_same_math(__wrap_pow, __real_pow, x, y);
  }
#else
  GTEST_SKIP() << "glibc symbols are rebound to 2.28 versions on x86_64 only";
#endif
}

TEST(GlibcCompatX86_64, StatFindsTheSameFiles) {
#if GPULENS_GLIBC_REBOUND
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpulens-glibc-stat-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "file").string();
  const std::string link = (dir / "link").string();
  std::ofstream(file) << "12345";
  std::filesystem::create_symlink(file, link);

  struct stat ours {};
  struct stat theirs {};
  ASSERT_EQ(__wrap_stat(link.c_str(), &ours), 0);
  ASSERT_EQ(__real_stat(link.c_str(), &theirs), 0);
  EXPECT_TRUE(S_ISREG(ours.st_mode));
  EXPECT_EQ(ours.st_size, 5);
  EXPECT_EQ(ours.st_ino, theirs.st_ino);
  EXPECT_EQ(ours.st_dev, theirs.st_dev);
  EXPECT_EQ(ours.st_mtim.tv_nsec, theirs.st_mtim.tv_nsec);

  ASSERT_EQ(__wrap_lstat(link.c_str(), &ours), 0);
  ASSERT_EQ(__real_lstat(link.c_str(), &theirs), 0);
  EXPECT_TRUE(S_ISLNK(ours.st_mode));
  EXPECT_EQ(ours.st_ino, theirs.st_ino);
  EXPECT_EQ(ours.st_size, static_cast<off_t>(file.size()));

  const int fd = ::open(file.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(__wrap_fstat(fd, &ours), 0);
  ASSERT_EQ(__real_fstat(fd, &theirs), 0);
  EXPECT_EQ(ours.st_ino, theirs.st_ino);
  struct stat64 ours64 {};
  ASSERT_EQ(__wrap_fstat64(fd, &ours64), 0);
  EXPECT_EQ(ours64.st_ino, theirs.st_ino);
  ::close(fd);
  ASSERT_EQ(__wrap_stat64(file.c_str(), &ours64), 0);
  EXPECT_EQ(ours64.st_ino, theirs.st_ino);
  ASSERT_EQ(__wrap_lstat64(link.c_str(), &ours64), 0);
  EXPECT_TRUE(S_ISLNK(ours64.st_mode));

  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir_fd, 0);
  ASSERT_EQ(__wrap_fstatat(dir_fd, "link", &ours, AT_SYMLINK_NOFOLLOW), 0);
  EXPECT_TRUE(S_ISLNK(ours.st_mode));
  ASSERT_EQ(__wrap_fstatat64(dir_fd, "link", &ours64, 0), 0);
  EXPECT_EQ(ours64.st_ino, theirs.st_ino);
  ::close(dir_fd);

  // A device is told apart from a file (a writer that mistook /dev/zero for one
  // would replace it): the same type and device number as glibc's stat gives.
  ASSERT_EQ(__wrap_stat("/dev/zero", &ours), 0);
  ASSERT_EQ(__real_stat("/dev/zero", &theirs), 0);
  EXPECT_TRUE(S_ISCHR(ours.st_mode));
  EXPECT_EQ(ours.st_rdev, theirs.st_rdev);

  errno = 0;
  EXPECT_EQ(__wrap_stat((dir / "missing").c_str(), &ours), -1);
  EXPECT_EQ(errno, ENOENT);
  std::filesystem::remove_all(dir);
#else
  GTEST_SKIP() << "glibc symbols are rebound to 2.28 versions on x86_64 only";
#endif
}

TEST(GlibcCompatX86_64, ThreadsKeysAndLocksWork) {
#if GPULENS_GLIBC_REBOUND
  static std::atomic<int> destroyed{0};
  pthread_key_t key{};
  ASSERT_EQ(__wrap_pthread_key_create(&key, [](void*) { ++destroyed; }), 0);
  pthread_key_t other{};
  ASSERT_EQ(__wrap___pthread_key_create(&other, nullptr), 0);
  pthread_t thread{};
  ASSERT_EQ(__wrap_pthread_create(
                &thread, nullptr,
                [](void* arg) -> void* {
                  auto k = *static_cast<pthread_key_t*>(arg);
                  __wrap_pthread_setspecific(k, arg);
                  return __wrap_pthread_getspecific(k);
                },
                &key),
            0);
  void* result = nullptr;
  ASSERT_EQ(__wrap_pthread_join(thread, &result), 0);
  EXPECT_EQ(result, &key);
  EXPECT_EQ(destroyed.load(), 1);  // the key's destructor ran at the thread's exit
  EXPECT_EQ(__wrap_pthread_key_delete(key), 0);
  EXPECT_EQ(__wrap_pthread_key_delete(other), 0);

  ASSERT_EQ(__wrap_pthread_create(
                &thread, nullptr, [](void*) -> void* { return nullptr; }, nullptr),
            0);
  EXPECT_EQ(__wrap_pthread_detach(thread), 0);
  std::thread([] {
    EXPECT_EQ(__wrap_pthread_setname_np(pthread_self(), "gpulens-compat"), 0);
    char name[16] = {};
    ASSERT_EQ(pthread_getname_np(pthread_self(), name, sizeof name), 0);
    EXPECT_STREQ(name, "gpulens-compat");
  }).join();

  static int once_runs = 0;
  pthread_once_t once = PTHREAD_ONCE_INIT;
  __wrap_pthread_once(&once, [] { ++once_runs; });
  __wrap_pthread_once(&once, [] { ++once_runs; });
  EXPECT_EQ(once_runs, 1);

  pthread_mutexattr_t attr{};
  ASSERT_EQ(__wrap_pthread_mutexattr_init(&attr), 0);
  ASSERT_EQ(__wrap_pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE), 0);
  pthread_mutex_t mutex{};
  ASSERT_EQ(pthread_mutex_init(&mutex, &attr), 0);
  EXPECT_EQ(__wrap_pthread_mutexattr_destroy(&attr), 0);
  EXPECT_EQ(__wrap_pthread_mutex_trylock(&mutex), 0);
  EXPECT_EQ(__wrap_pthread_mutex_trylock(&mutex), 0);  // recursive: the owner may again
  std::thread([&] { EXPECT_EQ(__wrap_pthread_mutex_trylock(&mutex), EBUSY); }).join();
  pthread_mutex_unlock(&mutex);
  pthread_mutex_unlock(&mutex);
  pthread_mutex_destroy(&mutex);

  pthread_rwlock_t lock{};
  ASSERT_EQ(__wrap_pthread_rwlock_init(&lock, nullptr), 0);
  EXPECT_EQ(__wrap_pthread_rwlock_rdlock(&lock), 0);
  EXPECT_EQ(__wrap_pthread_rwlock_rdlock(&lock), 0);  // readers share
  std::thread([&] { EXPECT_EQ(pthread_rwlock_trywrlock(&lock), EBUSY); }).join();
  EXPECT_EQ(__wrap_pthread_rwlock_unlock(&lock), 0);
  EXPECT_EQ(__wrap_pthread_rwlock_unlock(&lock), 0);
  EXPECT_EQ(__wrap_pthread_rwlock_wrlock(&lock), 0);
  std::thread([&] { EXPECT_EQ(pthread_rwlock_tryrdlock(&lock), EBUSY); }).join();
  EXPECT_EQ(__wrap_pthread_rwlock_unlock(&lock), 0);
  EXPECT_EQ(__wrap_pthread_rwlock_destroy(&lock), 0);

  sigset_t block{};
  sigset_t before{};
  sigset_t during{};
  sigemptyset(&block);
  sigaddset(&block, SIGUSR2);
  ASSERT_EQ(__wrap_pthread_sigmask(SIG_BLOCK, &block, &before), 0);
  ASSERT_EQ(__wrap_pthread_sigmask(SIG_SETMASK, &before, &during), 0);
  EXPECT_TRUE(sigismember(&during, SIGUSR2));
  EXPECT_EQ(sigismember(&before, SIGUSR2), 0);
#else
  GTEST_SKIP() << "glibc symbols are rebound to 2.28 versions on x86_64 only";
#endif
}

TEST(GlibcCompatX86_64, LibrariesOpenAndResolve) {
#if GPULENS_GLIBC_REBOUND
  void* libm = __wrap_dlopen("libm.so.6", RTLD_NOW);
  ASSERT_NE(libm, nullptr);
  void* cosine = __wrap_dlsym(libm, "cos");
  ASSERT_NE(cosine, nullptr);
  EXPECT_EQ(cosine, __real_dlsym(libm, "cos"));
  Dl_info info{};
  ASSERT_NE(__wrap_dladdr(cosine, &info), 0);
  EXPECT_NE(std::string(info.dli_fname).find("libm.so.6"), std::string::npos);
  EXPECT_EQ(__wrap_dlclose(libm), 0);
  EXPECT_EQ(__wrap_dlopen("/nonexistent/libgpulens-none.so", RTLD_NOW), nullptr);
  const char* error = __wrap_dlerror();
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("libgpulens-none.so"), std::string::npos);
  EXPECT_EQ(__wrap_dlerror(), nullptr);  // read once
#else
  GTEST_SKIP() << "glibc symbols are rebound to 2.28 versions on x86_64 only";
#endif
}

}  // namespace
