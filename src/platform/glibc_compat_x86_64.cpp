// SPDX-License-Identifier: Apache-2.0
// glibc 2.28 (RHEL 8) as the floor of the x86_64 binaries, as manylinux builds
// get it: the build's glibc (2.36, Debian 12) binds about forty symbols to
// versions newer than 2.28, and each is rebound here to the version 2.28
// exports. The link passes -Wl,--wrap=NAME for every NAME below (CMakeLists.txt),
// so every reference to NAME in every object and archive (crt1.o, libstdc++.a,
// libcrypto.a, libsqlite3.a, ...) goes to __wrap_NAME, which calls NAME at the
// old version through a local alias that `.symver` binds (NAME@GLIBC_2.2.5).
// glibc keeps every old version as a compat symbol, so on 2.34+ the same calls
// reach the same functions; tests/unit/platform/glibc_compat_test.cpp compares them.
//
// Where each symbol was at 2.28, from glibc's sysdeps/unix/sysv/linux/x86_64/64/
// *.abilist at tag glibc-2.28 (versions checked in Debian 12's libraries too):
//
//   symbol                            2.28 library      old version   newer (2.36)
//   __libc_start_main                 libc.so.6         2.2.5         2.34
//   stat, lstat, fstat (and *64)      libc.so.6         __xstat, __lxstat, __fxstat 2.2.5    2.33
//   fstatat, fstatat64                libc.so.6         __fxstatat 2.4                       2.33
//   pthread_create, _join, _detach, _once, _key_create, _key_delete, _getspecific,
//   _setspecific, _mutex_trylock, _mutexattr_init/_destroy/_settype,
//   _rwlock_init/_destroy/_rdlock/_wrlock/_unlock, __pthread_key_create
//                                     libpthread.so.0   2.2.5         2.34
//   pthread_setname_np                libpthread.so.0   2.12          2.34
//   pthread_sigmask                   libpthread.so.0   2.2.5         2.32
//   pthread_cond_timedwait            libpthread.so.0 and libc.so.6   2.3.2   (2.3.2)
//   dlopen, dlsym, dlvsym, dlclose, dlerror, dladdr
//                                     libdl.so.2        2.2.5         2.34
//   exp, exp2, log, log2, pow         libm.so.6         2.2.5         2.29
//   pthread_cond_clockwait            absent (2.30)     emulated      2.34
//   __libc_single_threaded            absent (2.32)     our own 0     2.32
//
// A version binds a name, not a library: at run time the loader takes
// pthread_create@GLIBC_2.2.5 from whichever loaded object defines it. On 2.28
// that is libpthread.so.0 (dl* in libdl.so.2), so both are NEEDED even though
// 2.34+ makes them empty stubs; tests/e2e/static_binaries.sh fails when a binary
// binds a pthread_* or dl* symbol this way without them.
//
// Not verified on a glibc 2.28 system (none at hand): the symbol versions and
// NEEDED entries are checked by the static_binaries test, the behaviour on 2.36.
// To rebind another symbol, add it here and to the --wrap list in CMakeLists.txt.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

// __GLIBC__ comes from the headers above.
#if !defined(__x86_64__) || defined(__ILP32__) || !defined(__GLIBC__)
#error "GLIBC_2.2.5 is the base version of x86_64 glibc only; CMakeLists.txt adds this file there"
#endif

// NAME as glibc VERSION exported it, under the local name gpulens_glibc_NAME.
#define GPULENS_GLIBC_OLD(version, ret, name, params) \
  extern "C" ret gpulens_glibc_##name params;         \
  __asm__(".symver gpulens_glibc_" #name ", " #name "@" version)
// __wrap_NAME, which the link puts in place of NAME: NAME at VERSION.
#define GPULENS_GLIBC_REBIND(version, ret, name, params, args) \
  GPULENS_GLIBC_OLD(version, ret, name, params);               \
  extern "C" ret __wrap_##name params {                        \
    return gpulens_glibc_##name args;                          \
  }

// libpthread.so.0 at 2.28. pthread_once, pthread_key_create & co. are what
// libstdc++ uses for std::call_once, thread_local and exception handling;
// __pthread_key_create is the weak reference by which it tells whether threads
// are linked in (gthr-posix.h).
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_create,
                     (pthread_t * t, const pthread_attr_t* a, void* (*f)(void*), void* arg),
                     (t, a, f, arg));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_join, (pthread_t t, void** r), (t, r));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_detach, (pthread_t t), (t));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_once, (pthread_once_t * o, void (*f)()), (o, f));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_key_create, (pthread_key_t * k, void (*d)(void*)),
                     (k, d));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, __pthread_key_create,
                     (pthread_key_t * k, void (*d)(void*)), (k, d));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_key_delete, (pthread_key_t k), (k));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", void*, pthread_getspecific, (pthread_key_t k), (k));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_setspecific, (pthread_key_t k, const void* v),
                     (k, v));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_mutex_trylock, (pthread_mutex_t * m), (m));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_mutexattr_init, (pthread_mutexattr_t * a), (a));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_mutexattr_destroy, (pthread_mutexattr_t * a), (a));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_mutexattr_settype,
                     (pthread_mutexattr_t * a, int type), (a, type));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_rwlock_init,
                     (pthread_rwlock_t * l, const pthread_rwlockattr_t* a), (l, a));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_rwlock_destroy, (pthread_rwlock_t * l), (l));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_rwlock_rdlock, (pthread_rwlock_t * l), (l));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_rwlock_wrlock, (pthread_rwlock_t * l), (l));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_rwlock_unlock, (pthread_rwlock_t * l), (l));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, pthread_sigmask,
                     (int how, const sigset_t* set, sigset_t* old), (how, set, old));
GPULENS_GLIBC_REBIND("GLIBC_2.12", int, pthread_setname_np, (pthread_t t, const char* name),
                     (t, name));

// libdl.so.2 at 2.28. dlopen and dlsym(RTLD_NEXT) look at their caller to pick
// the object whose search path or successor they mean; the caller here is in the
// same executable as the real one, so the answer is the same.
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", void*, dlopen, (const char* file, int mode), (file, mode));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", void*, dlsym, (void* handle, const char* name), (handle, name));
// The launch counter (src/launch_count) finds glibc's dlsym behind its own with it.
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", void*, dlvsym,
                     (void* handle, const char* name, const char* version),
                     (handle, name, version));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, dlclose, (void* handle), (handle));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", char*, dlerror, (), ());
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", int, dladdr, (const void* address, Dl_info* info),
                     (address, info));

// libm.so.6 at 2.28. The 2.29 versions are the same code (the new exp/log/pow of
// 2.28) without the SVID error wrapper; in the POSIX mode every program runs in,
// the wrapper sets the same errno and returns the same values.
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", double, exp, (double x), (x));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", double, exp2, (double x), (x));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", double, log, (double x), (x));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", double, log2, (double x), (x));
GPULENS_GLIBC_REBIND("GLIBC_2.2.5", double, pow, (double x, double y), (x, y));

// libc.so.6 at 2.28: stat and friends were inline functions in <sys/stat.h>
// that called __xstat & co. with the layout's version, _STAT_VER_LINUX (1 on
// x86_64, where struct stat and struct stat64 are the same kernel layout).
GPULENS_GLIBC_OLD("GLIBC_2.2.5", int, __xstat, (int ver, const char* path, struct stat* buf));
GPULENS_GLIBC_OLD("GLIBC_2.2.5", int, __lxstat, (int ver, const char* path, struct stat* buf));
GPULENS_GLIBC_OLD("GLIBC_2.2.5", int, __fxstat, (int ver, int fd, struct stat* buf));
GPULENS_GLIBC_OLD("GLIBC_2.4", int, __fxstatat,
                  (int ver, int dirfd, const char* path, struct stat* buf, int flags));

namespace {
constexpr int kStatVer = 1;  // _STAT_VER_LINUX of glibc 2.28's x86_64 <bits/stat.h>
// struct stat64 is struct stat on x86_64 (glibc's *64 functions are aliases).
struct stat* same_layout(struct stat64* buf) {
  return reinterpret_cast<struct stat*>(buf);
}
static_assert(sizeof(struct stat) == sizeof(struct stat64));
}  // namespace

extern "C" {
int __wrap_stat(const char* path, struct stat* buf) {
  return gpulens_glibc___xstat(kStatVer, path, buf);
}
int __wrap_stat64(const char* path, struct stat64* buf) {
  return gpulens_glibc___xstat(kStatVer, path, same_layout(buf));
}
int __wrap_lstat(const char* path, struct stat* buf) {
  return gpulens_glibc___lxstat(kStatVer, path, buf);
}
int __wrap_lstat64(const char* path, struct stat64* buf) {
  return gpulens_glibc___lxstat(kStatVer, path, same_layout(buf));
}
int __wrap_fstat(int fd, struct stat* buf) {
  return gpulens_glibc___fxstat(kStatVer, fd, buf);
}
int __wrap_fstat64(int fd, struct stat64* buf) {
  return gpulens_glibc___fxstat(kStatVer, fd, same_layout(buf));
}
int __wrap_fstatat(int dirfd, const char* path, struct stat* buf, int flags) {
  return gpulens_glibc___fxstatat(kStatVer, dirfd, path, buf, flags);
}
int __wrap_fstatat64(int dirfd, const char* path, struct stat64* buf, int flags) {
  return gpulens_glibc___fxstatat(kStatVer, dirfd, path, same_layout(buf), flags);
}
}  // extern "C"
