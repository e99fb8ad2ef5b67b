// SPDX-License-Identifier: Apache-2.0
#pragma once
// A fixed snapshot (two GPUs, an alert, processes with awkward names), a scratch
// directory and a running server, shared by the exposition, API and HTTP tests.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "agent/snapshot.hpp"
#include "cli_support.hpp"
#include "exposition/http_server.hpp"
#include "h100_live.hpp"
#include "http_test_client.hpp"

namespace gpulens::testing {

inline std::string scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("gpulens-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline agent::LiveSnapshot fixed_snapshot() {
  agent::LiveSnapshot snap;
  snap.seq = 7;
  snap.hostname = "node-17";
  snap.driver = "580.159.04";
  snap.cpu_count = 16;
  snap.interval_s = 1.0;
  snap.host_cpu_pct = 12.5;
  snap.t = 1732200000.5;
  snap.started_at = 1732199000;
  for (int i = 0; i < 2; ++i) {
    agent::GpuLive g = h100_live(i, "GPU-0000000" + std::to_string(i));
    Sample s;
    s.t = snap.t;
    s.gpu = i;
    s.values.set(Metric::GpuUtil, 100);
    s.values.set(Metric::SmActive, i == 0 ? 0.8 : 95.25);
    s.values.set(Metric::SmOccupancy, 0.1);
    s.values.set(Metric::TensorActive, i == 0 ? 0 : 92.5);
    s.values.set(Metric::DramActive, 24.9);
    s.values.set(Metric::PcieRxMibs, 54800);
    s.values.set(Metric::PcieTxMibs, 12.5);
    s.values.set(Metric::PowerW, 697.25);
    s.values.set(Metric::EnergyMj, 137317533);
    s.values.set(Metric::TempC, 59);
    s.values.set(Metric::SmClockMhz, 1365);
    s.values.set(Metric::MemClockMhz, 2619);
    s.values.set(Metric::ClockEventReasons, 4);
    s.values.set(Metric::MemUsedMib, 40960);
    // GPU 1 has no HBM temperature: the series must be absent, not 0.
    if (i == 0) s.values.set(Metric::MemTempC, 61);
    // dcgm-exporter's extra fields: GPU 0 has them all, GPU 1 (no NVLink, no row
    // remapping) only the video engines and the PCIe replays.
    s.values.set(Metric::EncUtil, i == 0 ? 0 : 17);
    s.values.set(Metric::DecUtil, 3);
    s.values.set(Metric::PcieReplays, i == 0 ? 0 : 12);
    if (i == 0) {
      s.values.set(Metric::RemappedRowsCorrectable, 2);
      s.values.set(Metric::RemappedRowsUncorrectable, 1);
      s.values.set(Metric::RowRemapFailure, 0);
      s.values.set(Metric::NvlinkCrcFlitErrors, 4);
      s.values.set(Metric::NvlinkCrcDataErrors, 0);
      s.values.set(Metric::NvlinkReplayErrors, 9);
      s.values.set(Metric::NvlinkRecoveryErrors, 1);
    }
    ProcessSample p;
    p.pid = 4242 + static_cast<std::uint32_t>(i);
    p.name = i == 0 ? "python" : "we\"ird\\na\nme";
    p.used_mib = 40000;
    p.sm_util = 50;
    p.container = i == 0 ? "abc123" : "";
    p.pod = i == 0 ? "pod-uid-1" : "";
    p.cmdline = "python train.py --token=SECRET";
    s.procs = std::vector<ProcessSample>{p};
    g.sample = s;
    g.state = i == 0 ? "sm_underused" : "compute_bound";
    g.state_meaning = "meaning";
    g.summary = i == 0 ? "A kernel runs 100 % of the time but only about 1 of 132 SMs is busy."
                       : "SMs are busy.";
    g.fixes = {"Launch more blocks."};
    g.confidence = 0.9;
    g.state_since = snap.t - 30;
    g.throttled = i == 1;
    g.throttle_cause = i == 1 ? "power cap (software)" : "";
    g.efficiency = i == 0 ? 0.8 : 95.25;
    g.xid_count = 0;
    snap.gpus.push_back(std::move(g));
  }
  agent::FiringAlert a;
  a.alert.rule = "high_util_low_activity";
  a.alert.gpu = 0;
  a.alert.severity = diagnosis::Severity::Warning;
  a.alert.since = snap.t - 60;
  a.alert.fired_at = snap.t - 30;
  a.alert.message = "Your GPU shows high utilization but low compute activity.";
  a.fixes = {"Look at the kernel's grid size."};
  snap.firing.push_back(a);
  snap.source.live = false;
  snap.source.description = "replay of test";
  snap.source.ticks = 100;
  return snap;
}

// The agent's HTTP server on an ephemeral loopback port, serving fixed_snapshot()
// (and `history`, when given), stopped when the test ends.
class RunningServer {
 public:
  // `more` adds to what the server reads (the kernel summaries' store).
  explicit RunningServer(exposition::ServerOptions options, std::string history = "",
                         const std::function<void(exposition::ApiContext&)>& more = {}) {
    options.listen = "127.0.0.1:0";
    exposition::ApiContext ctx;
    auto snap = std::make_shared<const agent::LiveSnapshot>(fixed_snapshot());
    ctx.snapshot = [snap] { return snap; };
    ctx.store_status = [] { return std::optional<store::StoreStatus>(); };
    ctx.history_path = std::move(history);
    if (more) more(ctx);
    auto s = exposition::HttpServer::create(std::move(options), ctx);
    if (!s) {
      error = s.error().message;
      return;
    }
    server = std::move(*s);
    EXPECT_TRUE(server->bind().ok());
    thread = std::thread([this] { server->serve(); });
  }
  ~RunningServer() {
    if (server) server->stop();
    if (thread.joinable()) thread.join();
  }
  RunningServer(const RunningServer&) = delete;
  RunningServer& operator=(const RunningServer&) = delete;
  int port() const { return server->port(); }
  TestClient client() const {
    TestClient c("127.0.0.1", server->port());
    c.set_read_timeout(5, 0);
    return c;
  }
  std::unique_ptr<exposition::HttpServer> server;
  std::thread thread;
  std::string error;
};

// Runs `promtool check metrics` on `text`: its exit code and what it printed;
// nullopt when promtool is not installed.
inline std::optional<std::pair<int, std::string>> promtool(const std::string& text) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) return std::nullopt;
  // Unique names: ctest runs tests in parallel processes sharing TempDir().
  const std::string base = ::testing::TempDir() + "/gpulens-" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
                           std::to_string(getpid());
  const std::string in = base + ".prom";
  const std::string out = base + ".out";
  std::ofstream(in) << text;
  const int status =
      std::system(("promtool check metrics < '" + in + "' > '" + out + "' 2>&1").c_str());
  return std::make_pair(WEXITSTATUS(status), read_file(out));
}

// dcgm-exporter's labels (UUID, modelName, Hostname) are camelCase, its energy,
// PCIe replay and remapped-row counters have no _total and one is named
// ..._REPLAY_COUNTER: kept as they are so its dashboards work. Nothing else in
// promtool's output may be flagged.
inline void expect_only_dcgm_naming_flagged(const std::string& promtool_output) {
  std::istringstream in(promtool_output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    EXPECT_TRUE(line.starts_with("DCGM_FI_")) << line;
    EXPECT_TRUE(line.find("camelCase") != std::string::npos ||
                line.find("\"_total\" suffix") != std::string::npos ||
                line.starts_with("DCGM_FI_DEV_PCIE_REPLAY_COUNTER metric name should not "
                                 "include type 'counter'"))
        << line;
  }
}

// A self-signed certificate and a web config that serves TLS with it, in `dir`;
// the web config's path, or nullopt when openssl is not installed.
inline std::optional<std::string> self_signed_web_config(const std::string& dir) {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) return std::nullopt;
  const std::string make =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost -keyout '" + dir +
      "/tls.key' -out '" + dir + "/tls.crt' >/dev/null 2>&1";
  EXPECT_EQ(std::system(make.c_str()), 0);
  std::ofstream(dir + "/web.yml")
      << "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n";
  return dir + "/web.yml";
}

}  // namespace gpulens::testing
