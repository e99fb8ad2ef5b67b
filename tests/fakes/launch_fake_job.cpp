// SPDX-License-Identifier: Apache-2.0
// A job for the launch hook's test (tests/e2e/launch_hook.sh), linked against the
// stand-in libcuda.so.1 (launch_fake_driver.cpp), reaching the launch calls each way
// a real job does:
//   cudart N    as cudart, cuBLAS and cuDNN do: dlopen libcuda, dlsym its
//               cuGetProcAddress_v2, and fetch the launch calls through it, legacy and
//               per-thread-stream, and through the cuGetProcAddress it hands out
//   plt N       as Triton's launchers do: cuLaunchKernel called by name (the PLT)
//   threads N   8 threads, 4 at a time, each launching N times by name
//   rtld_next   dlsym(RTLD_NEXT) from the job still resolves from the job
//   fork N      N launches by name, then a fork whose child launches another kernel
//               N times and exits; the parent waits for it
//   quit N      N launches by name, a wait for the counting library's periodic record in
//               $GPULENS_LAUNCHES_DIR (30 s at most), then _exit: no exit handlers
// It prints one JSON object: the launches it made of each function by the name the
// driver gives it, the graph launches, and what the driver received, for the test to
// hold the hook's tally against.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

extern "C" {
void* fake_driver_function(int i);
std::uint64_t fake_driver_received();
int cuLaunchKernel(void* f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   void*, void**, void**);
}

namespace {

using LaunchFn = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void*, void**, void**);
using LaunchExFn = int (*)(const void*, void*, void**, void**);
using GraphFn = int (*)(void*, void*);
using GetProcV2Fn = int (*)(const char*, void**, int, std::uint64_t, int*);

constexpr std::uint64_t kPerThread = 1U << 1;

std::map<std::string, std::uint64_t> g_made;
std::uint64_t g_graphs = 0;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "launch_fake_job: %s\n", what);
  std::exit(2);
}

void* fetch(GetProcV2Fn gpa, const char* symbol, std::uint64_t flags) {
  void* p = nullptr;
  int status = -1;
  if (gpa(symbol, &p, 12000, flags, &status) != 0 || p == nullptr) fail(symbol);
  return p;
}

void launch(LaunchFn fn, int i, long n) {
  for (long k = 0; k < n; ++k) {
    if (fn(fake_driver_function(i), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr) != 0)
      fail("launch refused");
  }
  g_made["kernel_" + std::to_string(i)] += static_cast<std::uint64_t>(n);
}

void cudart(long n) {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) fail("dlopen libcuda.so.1");
  auto gpa = reinterpret_cast<GetProcV2Fn>(dlsym(h, "cuGetProcAddress_v2"));
  if (gpa == nullptr) fail("dlsym cuGetProcAddress_v2");
  // Functions 8-11 are CUkernel handles, named only by cuKernelGetName.
  auto legacy = reinterpret_cast<LaunchFn>(fetch(gpa, "cuLaunchKernel", 0));
  for (int i = 8; i < 12; ++i) launch(legacy, i, n);
  launch(reinterpret_cast<LaunchFn>(fetch(gpa, "cuLaunchKernel", kPerThread)), 0, n);
  for (std::uint64_t flags : {std::uint64_t{0}, kPerThread}) {
    auto ex = reinterpret_cast<LaunchExFn>(fetch(gpa, "cuLaunchKernelEx", flags));
    const int i = flags == 0 ? 1 : 2;
    for (long k = 0; k < n; ++k) {
      if (ex(nullptr, fake_driver_function(i), nullptr, nullptr) != 0) fail("launch refused");
    }
    g_made["kernel_" + std::to_string(i)] += static_cast<std::uint64_t>(n);
    auto graph = reinterpret_cast<GraphFn>(fetch(gpa, "cuGraphLaunch", flags));
    for (long k = 0; k < n; ++k) {
      if (graph(fake_driver_function(15), nullptr) != 0) fail("graph launch refused");
    }
    g_graphs += static_cast<std::uint64_t>(n);
  }
  // cuGetProcAddress asked of itself, as cudart does, then a launch call through it.
  auto again = reinterpret_cast<GetProcV2Fn>(fetch(gpa, "cuGetProcAddress", 0));
  launch(reinterpret_cast<LaunchFn>(fetch(again, "cuLaunchKernel", 0)), 3, n);
}

void plt(long n) {
  launch(&cuLaunchKernel, 4, n);
}

void threads(long n) {
  for (int round = 0; round < 2; ++round) {  // the second round reuses ended threads' tallies
    std::vector<std::thread> pool;
    for (int t = 0; t < 4; ++t) {
      pool.emplace_back([n, t] {
        for (long k = 0; k < n; ++k) {
          cuLaunchKernel(fake_driver_function(5 + t % 2), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr,
                         nullptr);
        }
      });
    }
    for (auto& th : pool) th.join();
  }
  g_made["kernel_5"] += 4 * static_cast<std::uint64_t>(n);
  g_made["kernel_6"] += 4 * static_cast<std::uint64_t>(n);
}

// The child's launches are its own: printed by the parent, which made none of them.
void fork_job(long n) {
  plt(n);
  const pid_t child = fork();
  if (child < 0) fail("fork");
  if (child == 0) {
    launch(&cuLaunchKernel, 7, n);
    std::exit(0);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fail("the child failed");
  }
}

// Until a record file is in $GPULENS_LAUNCHES_DIR: what the test holds against the
// counts is the library's periodic write, however slow the machine. At most 30 s, or
// $FAKE_JOB_RECORD_WAIT_MS (a test that expects no record).
void wait_for_record() {
  const char* dir = std::getenv("GPULENS_LAUNCHES_DIR");
  if (dir == nullptr) return;
  const char* wait_ms = std::getenv("FAKE_JOB_RECORD_WAIT_MS");
  const long rounds = wait_ms != nullptr ? std::atol(wait_ms) / 10 : 3000;
  for (long i = 0; i < rounds; ++i) {
    if (DIR* d = opendir(dir)) {
      bool found = false;
      while (const dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        found = found || (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0);
      }
      closedir(d);
      if (found) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void print_made() {
  std::printf("{\"made\": {");
  const char* sep = "";
  for (const auto& [name, count] : g_made) {
    std::printf("%s\"%s\": %llu", sep, name.c_str(), static_cast<unsigned long long>(count));
    sep = ", ";
  }
  std::printf("}, \"graphs\": %llu, \"received\": %llu}\n",
              static_cast<unsigned long long>(g_graphs),
              static_cast<unsigned long long>(fake_driver_received()));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) fail("usage: launch_fake_job cudart|plt|threads|fork|quit N | rtld_next");
  const std::string mode = argv[1];
  const long n = argc > 2 ? std::atol(argv[2]) : 0;
  if (mode == "rtld_next") {
    // From the job, RTLD_NEXT starts after the job: the preloaded hook's cuLaunchKernel,
    // the same as the global lookup finds. Resolved from the hook, it would be the
    // driver's.
    void* next = dlsym(RTLD_NEXT, "cuLaunchKernel");
    void* global = dlsym(RTLD_DEFAULT, "cuLaunchKernel");
    std::printf("{\"rtld_next_is_global\": %s}\n",
                next != nullptr && next == global ? "true" : "false");
    return 0;
  }
  if (mode == "cudart") {
    cudart(n);
  } else if (mode == "plt") {
    plt(n);
  } else if (mode == "threads") {
    threads(n);
  } else if (mode == "fork") {
    fork_job(n);
  } else if (mode == "quit") {
    plt(n);
    print_made();
    wait_for_record();
    _exit(0);
  } else {
    fail("unknown mode");
  }
  print_made();
  return 0;
}
