// SPDX-License-Identifier: Apache-2.0
// What one job process's launch counts cost the node agent (docs/kernels-agent.md,
// "Launch counts"): SummaryIntake::take of one launch record as the counter sends it
// (launch_datagram_of: 32 kernels of about 120-byte names), through the checks, the
// JSON read, the ledger and the per-GPU series. A process sends one 1, 2, 4 and 8 s
// after its first launch and then one every 10 s, so the agent of an 8-GPU node with
// one process per GPU takes 0.8 a second; the figure per call times that is the
// agent's share of a core. The argument: kernels that grew since the last send (the
// rest are unchanged, as in a steady training loop).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/kernel_receiver.hpp"
#include "core/clock.hpp"
#include "kernels/record/launch_record.hpp"

namespace gpulens::agent {
namespace {

constexpr int kGpus = 8;
constexpr std::uint32_t kFirstPid = 4000;

// One process per GPU, as the sampler lists them.
LiveSnapshot eight_gpus() {
  LiveSnapshot snap;
  snap.seq = 1;
  for (int g = 0; g < kGpus; ++g) {
    GpuLive live;
    Sample s;
    s.gpu = g;
    ProcessSample p;
    p.pid = kFirstPid + static_cast<std::uint32_t>(g);
    p.name = "python3";
    s.procs = std::vector<ProcessSample>{p};
    live.sample = s;
    snap.gpus.push_back(live);
  }
  return snap;
}

// The record after `sends` sends: 32 kernels, `growing` of them launched 1,000 more
// times a send, the rest fixed.
kernels::LaunchRecord record(std::uint64_t sends, int growing) {
  kernels::LaunchRecord r;
  r.comm = "python3";
  r.first_ns = static_cast<std::int64_t>(unix_now() * 1e9);
  r.written_ns = r.first_ns;
  for (int k = 0; k < 32; ++k) {
    std::string name = fmt::format(
        "void at::native::vectorized_elementwise_kernel<4, at::native::Functor_{}<float>, ", k);
    name.resize(120, 'T');
    const std::uint64_t n =
        50'000 - 1000 * static_cast<std::uint64_t>(k) + (k < growing ? 1000 * sends : 0);
    r.kernels.push_back({std::move(name), n});
    r.kernel_launches += n;
  }
  return r;
}

void BM_LaunchRecordIntake(benchmark::State& state) {
  const int growing = static_cast<int>(state.range(0));
  KernelStore store(16);
  KernelSeries series;
  // No rate limit and no /proc reads: the cost of a record taken, not of a refusal.
  std::optional<SummaryIntake> intake;
  const auto fresh_intake = [&] {
    intake.emplace(store, RateLimit{1e12, 1e-12, 4096}, &series);
    intake->set_start_time_reader([](std::uint32_t) { return std::nullopt; });
  };
  fresh_intake();
  const LiveSnapshot snap = eight_gpus();
  // Each GPU's process sends in turn; a round's datagrams are made before timing.
  constexpr std::uint64_t kRounds = 64;
  std::vector<std::string> datagrams;
  for (std::uint64_t round = 0; round < kRounds; ++round) {
    datagrams.push_back(kernels::launch_datagram_of(record(round, growing)));
  }
  std::uint64_t sent = 0, bytes = 0;
  double now = 0;
  for (auto _ : state) {
    const auto gpu = static_cast<std::int32_t>(sent % kGpus);
    const std::uint64_t round = (sent / kGpus) % kRounds;
    const PeerCredentials peer{static_cast<std::int32_t>(kFirstPid) + gpu, 0, 0};
    const std::string& d = datagrams[round];
    // A process's counts may not go back: past the last round, a new process.
    if (round == 0 && sent > 0) {
      state.PauseTiming();
      fresh_intake();
      state.ResumeTiming();
    }
    const Refusal r = intake->take(d, false, peer, snap, now);
    if (r != Refusal::None) {
      state.SkipWithError(fmt::format("refused: {}", refusal_id(r)).c_str());
      break;
    }
    bytes += d.size();
    ++sent;
    now += 0.1;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(sent));
  state.counters["bytes"] = sent > 0 ? static_cast<double>(bytes) / static_cast<double>(sent) : 0;
  state.SetLabel(fmt::format("{} of 32 kernels growing", growing));
}
BENCHMARK(BM_LaunchRecordIntake)->Arg(1)->Arg(8)->Arg(32);

}  // namespace
}  // namespace gpulens::agent
