// SPDX-License-Identifier: Apache-2.0
// Two programs that tests/e2e/static_binaries.sh must reject with a floor of
// 2.28 (tests/CMakeLists.txt), so that it is seen to fail, not only to pass.
// Built as is, without the glibc compatibility objects, it needs what the
// build's glibc gives (pthread_create@GLIBC_2.34, dlopen@GLIBC_2.34, ...).
// With GPULENS_PROBE_OLD_VERSIONS it binds pthread_create and dlopen to their
// 2.2.5 versions but NEEDs neither libpthread.so.0 nor libdl.so.2: it runs on
// 2.34+, whose libc has both, and on 2.28 stops at its first call ("symbol
// lookup error").
#include <dlfcn.h>
#include <pthread.h>

#if GPULENS_PROBE_OLD_VERSIONS
extern "C" int probe_pthread_create(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
extern "C" void* probe_dlopen(const char*, int);
__asm__(".symver probe_pthread_create, pthread_create@GLIBC_2.2.5");
__asm__(".symver probe_dlopen, dlopen@GLIBC_2.2.5");
#define GPULENS_PROBE(name) probe_##name
#else
#define GPULENS_PROBE(name) name
#endif

namespace {
void* nothing(void*) {
  return nullptr;
}
}  // namespace

int main() {
  pthread_t thread;
  if (GPULENS_PROBE(pthread_create)(&thread, nullptr, &nothing, nullptr) != 0) return 1;
  pthread_join(thread, nullptr);
  return GPULENS_PROBE(dlopen)("libm.so.6", RTLD_NOW) != nullptr ? 0 : 1;
}
