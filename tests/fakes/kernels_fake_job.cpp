// SPDX-License-Identifier: Apache-2.0
// A stand-in for a CUDA process under `gpulens run --kernels`, for machines with
// no GPU. It first does what NVTX's loader does at a job's first NVTX call when
// NVTX_INJECTION64_PATH is set (dlopen the library, call its
// InitializeInjectionNvtx2 with an export-table getter), then what the CUDA
// driver does at cuInit when CUDA_INJECTION64_PATH is set (dlopen the library,
// call InitializeInjection), then prints a line and exits with the status given
// as its argument. With FAKE_JOB_SAY_NVTX set it also says what NVTX's
// initialisation returned and which export table the tool asked for; with
// FAKE_JOB_SLEEP_MS it sleeps that long after CUDA's start. With
// FAKE_JOB_OWN_PROFILER=before or after it registers CUPTI activity buffers of its
// own, as torch.profiler does, before or after CUDA's start, through the
// library's stand-in for cuptiActivityRegisterCallbacks (as LD_PRELOAD puts it in
// front); with FAKE_JOB_FORK set it forks a child that exits at once, as a
// DataLoader worker does (tests/unit/inject/entry_points_test.cpp).
#include <dlfcn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

std::uint32_t table_asked = 0;

const void* export_table(std::uint32_t id) {
  table_asked = id;
  return nullptr;
}

void own_buffer_requested(std::uint8_t**, std::size_t*, std::size_t*) {}
void own_buffer_completed(void*, std::uint32_t, std::uint8_t*, std::size_t, std::size_t) {}

// The job's profiler setting an activity attribute (per-thread buffers, 9 in
// cupti_activity.h's enum), then registering its buffers, as kineto does (cupti.h's
// signatures, without cupti.h).
void register_own_buffers(void* lib) {
  using SetAttribute = int (*)(int, std::size_t*, void*);
  if (auto set = reinterpret_cast<SetAttribute>(dlsym(lib, "cuptiActivitySetAttribute"))) {
    std::uint8_t one = 1;
    std::size_t size = sizeof one;
    set(9, &size, &one);
  }
  using Register = int (*)(void (*)(std::uint8_t**, std::size_t*, std::size_t*),
                           void (*)(void*, std::uint32_t, std::uint8_t*, std::size_t, std::size_t));
  if (auto reg = reinterpret_cast<Register>(dlsym(lib, "cuptiActivityRegisterCallbacks"))) {
    reg(own_buffer_requested, own_buffer_completed);
  }
}

bool own_profiler(const char* when) {
  const char* v = std::getenv("FAKE_JOB_OWN_PROFILER");
  return v != nullptr && std::strcmp(v, when) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int nvtx_result = -1;
  if (const char* lib = std::getenv("NVTX_INJECTION64_PATH"); lib != nullptr) {
    if (void* h = dlopen(lib, RTLD_NOW)) {
      using Init = int (*)(const void* (*)(std::uint32_t));
      if (auto init = reinterpret_cast<Init>(dlsym(h, "InitializeInjectionNvtx2"))) {
        nvtx_result = init(export_table);
      }
    }
  }
  if (const char* lib = std::getenv("CUDA_INJECTION64_PATH"); lib != nullptr) {
    if (void* h = dlopen(lib, RTLD_NOW)) {
      if (own_profiler("before")) register_own_buffers(h);
      using Init = int (*)();
      if (auto init = reinterpret_cast<Init>(dlsym(h, "InitializeInjection"))) init();
      if (own_profiler("after")) register_own_buffers(h);
    }
  }
  if (std::getenv("FAKE_JOB_FORK") != nullptr) {
    std::fflush(stdout);
    if (const pid_t child = fork(); child == 0) {
      std::exit(0);  // its exit handlers run, the library's among them
    } else if (child > 0) {
      waitpid(child, nullptr, 0);
    }
  }
  if (const char* ms = std::getenv("FAKE_JOB_SLEEP_MS"); ms != nullptr) {
    // A job that runs a while, so that the library's trace windows open and close.
    const long n = std::atol(ms);
    timespec ts{n / 1000, (n % 1000) * 1000000};
    nanosleep(&ts, nullptr);
  }
  if (std::getenv("FAKE_JOB_SAY_NVTX") != nullptr) {
    std::printf("nvtx init %d table %u\n", nvtx_result, static_cast<unsigned>(table_asked));
  }
  std::printf("fake cuda job output\n");
  return argc > 1 ? std::atoi(argv[1]) : 0;
}
