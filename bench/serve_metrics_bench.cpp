// SPDX-License-Identifier: Apache-2.0
// /metrics for an 8-GPU node: render time of the exposition (native, and with
// dcgm-exporter's names too), and scrapes per second through the real HTTP
// server on loopback, with keep-alive as Prometheus does.
#include <benchmark/benchmark.h>

#include <mutex>
#include <thread>

#include "exposition/exposition.hpp"
#include "exposition/http_server.hpp"
#include "h100_live.hpp"         // tests/unit/support: an H100 in the snapshot
#include "http_test_client.hpp"  // tests/unit/support: the tests' small HTTP client

namespace gpulens::exposition {
namespace {

// Eight H100s at work, each with two processes: a busy node's /metrics.
agent::LiveSnapshot eight_gpus() {
  agent::LiveSnapshot snap;
  snap.hostname = "node-17";
  snap.driver = "580.159.04";
  snap.t = 1732200000;
  snap.host_cpu_pct = 35;
  for (int i = 0; i < 8; ++i) {
    agent::GpuLive g =
        testing::h100_live(i, "GPU-6c9027b2-1b96-8024-3bc4-b07603d35bd" + std::to_string(i));
    g.limits.pcie_mibs = 60082;
    Sample s;
    s.gpu = i;
    s.t = snap.t;
    for (const auto& info : all_metrics())
      s.values.set(info.id, 10.0 + i + 0.37 * static_cast<double>(index_of(info.id)));
    s.values.set(Metric::ClockEventReasons, 4);
    std::vector<ProcessSample> procs(2);
    for (std::size_t p = 0; p < procs.size(); ++p) {
      procs[p].pid = static_cast<std::uint32_t>(1000 + i * 10 + p);
      procs[p].name = "python3";
      procs[p].used_mib = 30000;
      procs[p].sm_util = 45;
      procs[p].container = "4f1c2a9be0d1";
      procs[p].pod = "0b7c9d1e-pod";
    }
    s.procs = procs;
    g.sample = s;
    g.state = "compute_bound";
    g.confidence = 0.9;
    g.efficiency = 95;
    snap.gpus.push_back(std::move(g));
  }
  return snap;
}

void BM_RenderMetrics8Gpus(benchmark::State& state) {
  const agent::LiveSnapshot snap = eight_gpus();
  ExpositionOptions o;
  o.dcgm = state.range(0) != 0;
  o.process_metrics = true;
  const SelfStats self;
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto text = render_metrics(snap, o, self);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.SetLabel(o.dcgm ? "native + dcgm names" : "native names");
}
BENCHMARK(BM_RenderMetrics8Gpus)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Scrapes per second: `threads` clients, each on its own keep-alive connection.
// The server outlives the benchmark's threads and is stopped at exit.
struct Served {
  std::unique_ptr<HttpServer> server;
  std::thread thread;
  ~Served() {
    if (server) server->stop();
    if (thread.joinable()) thread.join();
  }
};

void BM_ScrapeOverHttp8Gpus(benchmark::State& state) {
  static Served served;
  static std::once_flag started;
  std::call_once(started, [] {
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.exposition.process_metrics = true;
    ApiContext ctx;
    auto snap = std::make_shared<const agent::LiveSnapshot>(eight_gpus());
    ctx.snapshot = [snap] { return snap; };
    ctx.store_status = [] { return std::optional<store::StoreStatus>(); };
    auto created = HttpServer::create(o, ctx);
    served.server = std::move(created.value());
    (void)served.server->bind();
    served.thread = std::thread([] { served.server->serve(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  });
  auto& server = served.server;
  gpulens::testing::TestClient client("127.0.0.1", server->port());
  std::int64_t failures = 0;
  for (auto _ : state) {
    auto res = client.Get("/metrics");
    if (!res || res->status != 200) ++failures;
  }
  state.counters["scrapes_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["failures"] = static_cast<double>(failures);
}
BENCHMARK(BM_ScrapeOverHttp8Gpus)
    ->Threads(1)
    ->Threads(4)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpulens::exposition
