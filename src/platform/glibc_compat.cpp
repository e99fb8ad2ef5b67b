// SPDX-License-Identifier: Apache-2.0
// Two glibc functions newer than any floor we keep, which static archives we
// link reach for, replaced on every architecture: the link passes
// -Wl,--wrap=NAME for each, so every reference to NAME in every object and
// archive (crt files, libgcc_eh, libcrypt) goes to __wrap_NAME here.
//
// GPULENS_GLIBC_FLOOR in CMakeLists.txt is the newest glibc the binaries may
// need: 2.28 (RHEL 8) on x86_64, where glibc_compat_x86_64.cpp rebinds the
// forty-odd symbols that the build's glibc gives 2.29..2.34 versions and
// glibc_compat_x86_64_gaps.cpp fills in what 2.28 lacks; 2.34 on other
// architectures, which need only this file. docs/serve.md says which
// distributions each covers; tests/e2e/static_binaries.sh checks the binaries.
#include <dlfcn.h>
#include <link.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace {

struct Search {
  std::uintptr_t pc;
  dl_find_object* out;
  bool found;
};

int find_in_object(dl_phdr_info* info, std::size_t, void* data) {
  auto& s = *static_cast<Search*>(data);
  std::uintptr_t start = UINTPTR_MAX;
  std::uintptr_t end = 0;
  bool contains = false;
  const void* eh_frame = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    const std::uintptr_t at = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      if (at < start) start = at;
      if (at + ph.p_memsz > end) end = at + ph.p_memsz;
      if (s.pc >= at && s.pc < at + ph.p_memsz) contains = true;
    } else if (ph.p_type == PT_GNU_EH_FRAME) {
      eh_frame = reinterpret_cast<const void*>(at);
    }
  }
  if (!contains) return 0;
  s.out->dlfo_flags = 0;
  s.out->dlfo_map_start = reinterpret_cast<void*>(start);
  s.out->dlfo_map_end = reinterpret_cast<void*>(end);
  s.out->dlfo_link_map = nullptr;  // libgcc's unwinder reads only the eh_frame
  s.out->dlfo_eh_frame = const_cast<void*>(eh_frame);
#if DLFO_STRUCT_HAS_EH_DBASE
  s.out->dlfo_eh_dbase = nullptr;  // as libgcc's own dl_iterate_phdr path has it
#endif
  s.found = true;
  return 1;
}

}  // namespace

extern "C" {

// glibc 2.35's _dl_find_object, which GCC 12's libgcc_eh.a calls to find the
// unwind tables of the object a return address is in, with no fallback of its
// own. dl_iterate_phdr (glibc 2.2.4) is what libgcc used before 2.35: slower
// per frame, which only an exception pays for.
int __wrap__dl_find_object(void* address, dl_find_object* result) {
  Search s{reinterpret_cast<std::uintptr_t>(address), result, false};
  dl_iterate_phdr(&find_in_object, &s);
  return s.found ? 0 : -1;
}

// glibc 2.36's arc4random_buf, which libxcrypt (libcrypt.a) uses for the salt of
// a new bcrypt hash: getrandom (glibc 2.25) from the kernel's pool. Like glibc's,
// it cannot fail: without randomness the process stops.
void __wrap_arc4random_buf(void* buffer, std::size_t size) {
  auto* out = static_cast<unsigned char*>(buffer);
  while (size > 0) {
    const ssize_t n = getrandom(out, size, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::abort();
    }
    out += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // extern "C"
