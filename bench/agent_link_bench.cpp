// SPDX-License-Identifier: Apache-2.0
// What a job pays to tell the node agent about one closed trace window (issue 29,
// item 4): AgentLink::on_chunk builds the window's summary from the chunk (top
// kernels by time, collectives, copies) and sends it as one non-blocking datagram.
// libgpulens_kernels.so runs this on its own window thread once per window (every
// 20 s by default), never on the job's launching thread; the figure per call over
// the window period is the job's share of one core. Arguments: kernel
// configurations in the chunk, and whether an agent is listening (1) or not (0:
// the send fails at once and is counted as dropped).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "inject/agent_link.hpp"

namespace {

using gpulens::inject::AgentLink;
namespace kernels = gpulens::kernels;

// A bound datagram socket, read after each send outside the timing (the agent's work).
struct Listener {
  explicit Listener(std::string p) : path(std::move(p)) {
    std::filesystem::remove(path);
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fd = -1;
  }
  ~Listener() {
    if (fd >= 0) close(fd);
    std::filesystem::remove(path);
  }
  void drain() const {
    char buf[kernels::kMaxSummaryBytes + 1];
    while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) {
    }
  }
  std::string path;
  int fd = -1;
};

// `n` kernels, each its own name of about 120 bytes (templated PyTorch and CUTLASS
// names run to that), on one device, over a 2-s window.
void make_window(int n, kernels::NamesRecord& names, kernels::ChunkRecord& chunk) {
  for (int i = 0; i < n; ++i) {
    const auto id = static_cast<std::uint32_t>(i);
    names.kernel_names.emplace_back(
        id, fmt::format("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_"
                        "nocast<at::native::BinaryFunctor<float, float, float>>>(int, {})",
                        i));
    names.configs.push_back(kernels::ConfigEntry{id, id, 0, {1024, 1, 1}, {128, 1, 1}, 32, 0, 0});
    chunk.kernels.push_back(kernels::KernelEntry{id,
                                                 100 + static_cast<std::uint64_t>(i),
                                                 1'000'000 + 997ULL * static_cast<std::uint64_t>(i),
                                                 1000,
                                                 20000,
                                                 {{10, 50}, {14, 50}}});
  }
  chunk.seq = 1;
  chunk.start_ns = 0;
  chunk.end_ns = 2'000'000'000;
  chunk.window = true;
}

void BM_AgentLinkOnChunk(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const bool listening = state.range(1) != 0;
  const std::string path = fmt::format("/tmp/gpulens-bench-link-{}.sock", getpid());
  std::filesystem::remove(path);
  std::optional<Listener> agent;
  if (listening) agent.emplace(path);
  if (agent && agent->fd < 0) {
    state.SkipWithError("cannot bind the agent's socket");
    return;
  }
  kernels::NamesRecord names;
  kernels::ChunkRecord chunk;
  make_window(n, names, chunk);
  AgentLink link(path);
  link.on_chunk(names, chunk, 0);  // the names arrive once, with the first chunk
  const kernels::NamesRecord none;
  for (auto _ : state) {
    link.on_chunk(none, chunk, 0);
    if (agent) {
      state.PauseTiming();
      agent->drain();
      state.ResumeTiming();
    }
  }
  state.counters["sent"] = static_cast<double>(link.sent());
  state.counters["dropped"] = static_cast<double>(link.dropped());
}
BENCHMARK(BM_AgentLinkOnChunk)
    ->ArgsProduct({{10, 200, 2000}, {1}})
    ->Args({200, 0})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
