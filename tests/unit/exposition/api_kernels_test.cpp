// SPDX-License-Identifier: Apache-2.0
// /api/v1/kernels, /api/v1/health's `kernels` and the self-metrics of the jobs'
// kernel summaries.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "exposition/api_json.hpp"
#include "server_support.hpp"

namespace gpulens::exposition {
namespace {

agent::KernelWindow window(int gpu, std::uint32_t pid, double start_s) {
  agent::KernelWindow w;
  w.gpu = gpu;
  w.pid = pid;
  w.process = "python";
  w.start_unix_ns = static_cast<std::int64_t>(start_s * 1e9);
  w.end_unix_ns = w.start_unix_ns + 2'000'000'000;
  w.busy_ns = 1'500'000'000;
  w.idle_ns = 500'000'000;
  w.top = {{"void gemm<\"bf16\">(float*)", 30, 900'000'000},
           {"ncclDevKernel_AllReduce", 2, 300'000'000}};
  w.other_kernels = 4;
  w.other_launches = 40;
  w.other_ns = 300'000'000;
  w.collectives = {2, 0, 300'000'000};
  w.copies = {3, 4096, 1'000'000};
  return w;
}

TEST(ApiKernels, AWindowSaysWhereItsTimeWent) {
  const Json j = kernel_window_json(window(1, 4242, 1700000000));
  EXPECT_EQ(j["gpu"], 1);
  EXPECT_EQ(j["pid"], 4242);
  EXPECT_EQ(j["start"], 1700000000.0);
  EXPECT_EQ(j["end"], 1700000002.0);
  EXPECT_EQ(j["busy_s"], 1.5);
  EXPECT_EQ(j["idle_share"], 0.25);
  ASSERT_EQ(j["kernels"].size(), 2u);
  EXPECT_EQ(j["kernels"][0]["name"], "void gemm<\"bf16\">(float*)");
  EXPECT_EQ(j["kernels"][0]["time_s"], 0.9);
  EXPECT_EQ(j["kernels"][0]["share"], 0.6);
  EXPECT_EQ(j["other"]["kernels"], 4);
  EXPECT_EQ(j["other"]["share"], 0.2);
  EXPECT_EQ(j["kernel_time_s"], 1.5);
  EXPECT_EQ(j["collectives"]["share"], 0.2);
  EXPECT_EQ(j["copies"]["bytes"], 4096);
}

struct KernelServer {
  agent::KernelStore store{100};
  agent::IntakeCounters counters;
  agent::KernelHistoryCounts history;
  gpulens::testing::RunningServer server{
      ServerOptions{}, "", [this](ApiContext& ctx) {
        ctx.kernels = &store;
        ctx.kernel_status = [this] {
          return std::optional<agent::KernelIntakeStatus>(agent::KernelIntakeStatus{
              "/run/gpulens/kernels.sock", counters, store.size(), 100, store.bytes(), history});
        };
      }};
};

TEST(ApiKernels, ServesTheStoredWindowsByTimeGpuAndPid) {
  KernelServer k;
  ASSERT_TRUE(k.server.server) << k.server.error;
  for (int i = 0; i < 6; ++i)
    k.store.add(window(i % 2, 100 + static_cast<std::uint32_t>(i % 2), 1700000000 + 20 * i));
  auto c = k.server.client();
  auto all = c.Get("/api/v1/kernels?from=1700000000&to=1700000200");
  ASSERT_TRUE(all);
  ASSERT_EQ(all->status, 200) << all->body;
  auto j = nlohmann::json::parse(all->body);
  EXPECT_EQ(j["source"], "memory");
  EXPECT_EQ(j["windows"].size(), 6u);
  auto one = nlohmann::json::parse(
      c.Get("/api/v1/kernels?from=1700000000&to=1700000200&gpu=1&pid=101")->body);
  ASSERT_EQ(one["windows"].size(), 3u);
  for (const auto& w : one["windows"]) {
    EXPECT_EQ(w["gpu"], 1);
    EXPECT_EQ(w["pid"], 101);
  }
  EXPECT_TRUE(nlohmann::json::parse(
                  c.Get("/api/v1/kernels?from=1700000000&to=1700000200&pid=5")->body)["windows"]
                  .empty());
  auto limited =
      nlohmann::json::parse(c.Get("/api/v1/kernels?from=1700000000&to=1700000200&limit=2")->body);
  EXPECT_EQ(limited["windows"].size(), 2u);
  EXPECT_EQ(limited["truncated"], true);
  for (const char* bad :
       {"/api/v1/kernels?pid=abc", "/api/v1/kernels?pid=0", "/api/v1/kernels?pid=1,,2",
        "/api/v1/kernels?limit=0", "/api/v1/kernels?gpu=x", "/api/v1/kernels?from=now&to=-1h"}) {
    auto res = c.Get(bad);
    ASSERT_TRUE(res) << bad;
    EXPECT_EQ(res->status, 400) << bad << " " << res->body;
  }
}

TEST(ApiKernels, HealthAndMetricsCountWhatCameAndWhatWasRefused) {
  KernelServer k;
  ASSERT_TRUE(k.server.server) << k.server.error;
  k.counters.received = 10;
  k.counters.accepted = 6;
  k.counters.malformed = 3;
  k.counters.rate_limited = 1;
  auto c = k.server.client();
  const auto health = nlohmann::json::parse(c.Get("/api/v1/health")->body);
  EXPECT_EQ(health["kernels"]["enabled"], true);
  EXPECT_EQ(health["kernels"]["socket"], "/run/gpulens/kernels.sock");
  EXPECT_EQ(health["kernels"]["accepted"], 6);
  EXPECT_EQ(health["kernels"]["refused"]["malformed"], 3);
  EXPECT_EQ(health["kernels"]["refused"]["rate_limited"], 1);
  const std::string metrics = c.Get("/metrics")->body;
  EXPECT_NE(metrics.find("gpulens_kernel_summaries_total{result=\"malformed\"} 3"),
            std::string::npos);
  EXPECT_NE(metrics.find("gpulens_kernel_summaries_total{result=\"accepted\"} 6"),
            std::string::npos);
}

// The windows and the SQLite history: what was written, dropped for a full
// queue, and skipped as corrupt on start; nothing of it without a history file.
TEST(ApiKernels, HealthAndMetricsCountTheHistorysWindows) {
  KernelServer k;
  ASSERT_TRUE(k.server.server) << k.server.error;
  auto c = k.server.client();
  auto health = nlohmann::json::parse(c.Get("/api/v1/health")->body);
  EXPECT_EQ(health["kernels"]["history"]["enabled"], false);
  EXPECT_EQ(c.Get("/metrics")->body.find("gpulens_kernel_windows_history_total"),
            std::string::npos);
  k.history = {true, 40, 2, 17, 5};
  health = nlohmann::json::parse(c.Get("/api/v1/health")->body);
  const auto& h = health["kernels"]["history"];
  EXPECT_EQ(h["enabled"], true);
  EXPECT_EQ(h["loaded"], 40);
  EXPECT_EQ(h["skipped"], 2);
  EXPECT_EQ(h["written"], 17);
  EXPECT_EQ(h["dropped"], 5);
  const std::string metrics = c.Get("/metrics")->body;
  for (const char* line : {"gpulens_kernel_windows_history_total{result=\"written\"} 17",
                           "gpulens_kernel_windows_history_total{result=\"dropped\"} 5",
                           "gpulens_kernel_windows_history_total{result=\"skipped\"} 2"}) {
    EXPECT_NE(metrics.find(line), std::string::npos) << line;
  }
}

TEST(ApiKernels, WithoutTheSocketTheEndpointSaysSo) {
  gpulens::testing::RunningServer r(ServerOptions{});
  ASSERT_TRUE(r.server) << r.error;
  auto c = r.client();
  auto res = c.Get("/api/v1/kernels");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_NE(res->body.find("--kernels-socket"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(c.Get("/api/v1/health")->body)["kernels"]["enabled"], false);
  EXPECT_EQ(c.Get("/metrics")->body.find("gpulens_kernel_summaries_total"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::exposition
